"""Solve time and gap of the CP-SAT optimum, the flow bound, and Kafka's gap to the optimum.

Prints Markdown tables (the figures of ``docs/optimal.md``):

1. synthetic clusters of 50x10, 200x20 and 500x25 (tasks x clients), a few seeds each: time to
   proven optimality of both problems, and the gap when the time limit stops the search;
2. a 1000-client cluster: the min-cost-flow lower bounds, and CP-SAT within a time limit, with
   its gap to them;
3. the public kafka-diff scenarios: how many each problem solves to optimality, and Kafka's HA
   assignment against the optima (total restore records and moves).

Usage::

    .venv/bin/python benchmarks/optimal_benchmark.py [--seeds 3] [--time-limit 60]
        [--large-tasks 4000] [--skip-large] [--skip-kafka] [--scenarios DIR]

CP-SAT runs with the pinned defaults of ``streams_assign.optimal`` (2 workers, seed 0).
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.cluster_states import synthetic_cluster  # noqa: E402
from devtools.paths import CORPORA  # noqa: E402
from streams_assign.assignors import assign  # noqa: E402
from streams_assign.formats.cluster_state import load_cluster_state  # noqa: E402
from streams_assign.optimal import (  # noqa: E402
    PlacementCosts,
    Problem,
    flow_lower_bound,
    model_violations,
    score,
    solve_optimal,
)

SIZES = ((50, 10), (200, 20), (500, 25))
DEFAULT_SCENARIOS = CORPORA / "kafka-diff" / "input"


def _row(*cells: object) -> None:
    """Print one Markdown table row."""
    print("| " + " | ".join(str(c) for c in cells) + " |")


def _header(*names: str) -> None:
    """Print a Markdown table header; the first column left-aligned, the others right."""
    _row(*names)
    print("|---|" + "---:|" * (len(names) - 1))


def _gap(result: Any) -> str:
    gaps = [result.gap(name) for name in result.objective]
    known = [g for g in gaps if g is not None]
    return f"{max(known):.2%}" if known else "-"


def synthetic_table(seeds: int, time_limit: float) -> None:
    print("### Synthetic clusters (after a crash and a scale-out; 20% stateless, 1 standby)\n")
    _header(
        "tasks x clients",
        "problem",
        "seeds",
        "proven optimal",
        "solve s (median)",
        "solve s (max)",
        "worst gap",
    )
    for tasks, clients in SIZES:
        for problem in Problem:
            times, optimal, gaps = [], 0, []
            for seed in range(seeds):
                cluster = synthetic_cluster(tasks, clients, seed=seed)
                hint = assign(cluster) if problem is Problem.IMMEDIATE else None
                began = time.monotonic()
                result = solve_optimal(cluster, problem, time_limit=time_limit, hint=hint)
                times.append(time.monotonic() - began)
                optimal += result.status == "OPTIMAL"
                gaps.append(_gap(result))
            worst = max(gaps, key=lambda g: float(g.rstrip("%")) if g != "-" else -1.0)
            _row(
                f"{tasks} x {clients}",
                problem.value,
                seeds,
                f"{optimal}/{seeds}",
                f"{statistics.median(times):.2f}",
                f"{max(times):.2f}",
                worst,
            )
            sys.stdout.flush()
    print()


def large_table(tasks: int, clients: int, time_limit: float) -> None:
    print(f"### {clients} clients, {tasks} tasks: flow bound and CP-SAT within {time_limit:g} s\n")
    cluster = synthetic_cluster(tasks, clients, seed=0)
    costs = PlacementCosts.of(cluster)
    began = time.monotonic()
    ha = assign(cluster)
    ha_seconds = time.monotonic() - began
    ha_metrics = score(cluster, ha, costs)
    ha_line = ""
    _header(
        "problem",
        "flow bound (records)",
        "flow s",
        "CP-SAT status",
        "restore records",
        "moves",
        "gap to bound",
        "CP-SAT s",
    )
    for problem in Problem:
        flow = flow_lower_bound(cluster, problem, costs)
        result = solve_optimal(
            cluster,
            problem,
            time_limit=time_limit,
            costs=costs,
            hint=ha if problem is Problem.IMMEDIATE else None,
        )
        restore = result.objective.get("restore_records")
        gap = "-"
        if restore is not None and flow.restore_records is not None and restore:
            gap = f"{(restore - flow.restore_records) / restore:.2%}"
        _row(
            problem.value,
            f"{flow.restore_records:,}",
            f"{flow.seconds:.2f}",
            result.status,
            "-" if restore is None else f"{restore:,}",
            result.objective.get("moves", "-"),
            gap,
            f"{result.solve_seconds:.2f}",
        )
        sys.stdout.flush()
        if problem is Problem.IMMEDIATE and flow.restore_records:
            ha_gap = (
                ha_metrics.restore_records - flow.restore_records
            ) / ha_metrics.restore_records
            ha_line = (
                f"\nKafka's HA on this cluster ({ha_seconds:.2f} s): "
                f"{ha_metrics.restore_records:,} restore records ({ha_gap:.2%} above the "
                f"immediate flow bound), {ha_metrics.moves} moves, active spread "
                f"{float(ha_metrics.active_load_spread):.3g}.\n"
            )
    print(ha_line)


def kafka_table(scenarios: Path, time_limit: float) -> None:
    files = sorted(scenarios.glob("*.json"))
    print(f"### Kafka's HA against the optimum on the {len(files)} public kafka-diff scenarios\n")
    solved = {p: 0 for p in Problem}
    infeasible = {p: 0 for p in Problem}
    seconds: dict[Problem, list[float]] = {p: [] for p in Problem}
    totals: dict[Problem, dict[str, Fraction | int]] = {
        p: {
            "n": 0,
            "ha_restore": 0,
            "opt_restore": 0,
            "ha_moves": 0,
            "opt_moves": 0,
            "ha_unavailable": 0,
            "opt_unavailable": 0,
            "ha_spread": Fraction(0),
            "opt_spread": Fraction(0),
            "ha_at_optimum": 0,
        }
        for p in Problem
    }
    ha_invalid = 0
    for path in files:
        cluster = load_cluster_state(path)
        ha = assign(cluster)
        ha_metrics = score(cluster, ha)
        ha_invalid += not ha_metrics.valid
        for problem in Problem:
            result = solve_optimal(
                cluster,
                problem,
                time_limit=time_limit,
                hint=ha if problem is Problem.IMMEDIATE else None,
            )
            seconds[problem].append(result.solve_seconds)
            if result.status == "INFEASIBLE":
                infeasible[problem] += 1
                continue
            if result.status != "OPTIMAL" or result.metrics is None:
                continue
            solved[problem] += 1
            if problem is Problem.IMMEDIATE and model_violations(cluster, ha, problem):
                continue  # HA's output is not a point of the model (Kafka's lag -3 ranking)
            t = totals[problem]
            t["n"] += 1
            t["ha_restore"] += ha_metrics.restore_records
            t["opt_restore"] += result.metrics.restore_records
            t["ha_moves"] += ha_metrics.moves
            t["opt_moves"] += result.metrics.moves
            t["ha_unavailable"] += ha_metrics.unavailable_actives
            t["opt_unavailable"] += result.metrics.unavailable_actives
            t["ha_spread"] += ha_metrics.active_load_spread
            t["opt_spread"] += result.metrics.active_load_spread
            names = ("active_load_spread", "restore_records", "moves")
            if problem is Problem.IMMEDIATE and all(
                getattr(ha_metrics, n) == getattr(result.metrics, n) for n in names
            ):
                t["ha_at_optimum"] += 1
    print("| problem | OPTIMAL | INFEASIBLE | other | solve s (median) | solve s (max) |")
    print("|---|---:|---:|---:|---:|---:|")
    for problem in Problem:
        other = len(files) - solved[problem] - infeasible[problem]
        print(
            f"| {problem.value} | {solved[problem]} | {infeasible[problem]} | {other} | "
            f"{statistics.median(seconds[problem]):.2f} | {max(seconds[problem]):.2f} |"
        )
    print(f"\nHA assignments scored invalid: {ha_invalid} of {len(files)}.\n")
    _header(
        "compared with",
        "scenarios",
        "restore records HA",
        "restore records optimum",
        "HA excess",
        "moves HA",
        "moves optimum",
        "unavailable actives HA / optimum",
        "mean active spread HA / optimum",
    )
    for problem in Problem:
        t = totals[problem]
        n = int(t["n"]) or 1
        excess = (t["ha_restore"] - t["opt_restore"]) / t["opt_restore"] if t["opt_restore"] else 0
        _row(
            f"{problem.value} optimum",
            t["n"],
            f"{t['ha_restore']:,}",
            f"{t['opt_restore']:,}",
            f"{float(excess):.1%}",
            f"{t['ha_moves']:,}",
            f"{t['opt_moves']:,}",
            f"{t['ha_unavailable']} / {t['opt_unavailable']}",
            f"{float(t['ha_spread']) / n:.3g} / {float(t['opt_spread']) / n:.3g}",
        )
    at, of = totals[Problem.IMMEDIATE]["ha_at_optimum"], totals[Problem.IMMEDIATE]["n"]
    print(
        "\nHA's assignment is itself an immediate optimum (same spread, restore records and "
        f"moves) in {at} of {of} scenarios.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--large-tasks", type=int, default=4000)
    parser.add_argument("--large-clients", type=int, default=1000)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-kafka", action="store_true")
    parser.add_argument("--scenarios", type=Path, default=DEFAULT_SCENARIOS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the assignors' "unable to assign" warnings
    import ortools

    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, OR-Tools {ortools.__version__}; "
        "CP-SAT 2 workers, seed 0.\n"
    )
    synthetic_table(args.seeds, args.time_limit)
    if not args.skip_large:
        large_table(args.large_tasks, args.large_clients, args.time_limit)
    if not args.skip_kafka and args.scenarios.is_dir():
        kafka_table(args.scenarios, args.time_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
