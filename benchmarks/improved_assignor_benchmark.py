"""The lag-aware sticky assignor beside Kafka's HA (and the CP-SAT optimum): one table per question.

1. **One rebalance on the shared states** (kafka-diff 160 + kafka-ext 120), per group of states:
   restore records, moved actives, all moves, warmups, active-load spread, subtopology skew,
   zone violations (a standby sharing a client-tag value with its active while a client with
   another value held no copy of the task), states where ours is worse than HA, and with
   ``--optimum`` three CP-SAT optima of :data:`OPTIMA` per state (the relaxed immediate
   problem, and the same-rules problem without and with the zone rule, 1 search worker,
   :data:`OPTIMUM_TIME_LIMIT` seconds each): their totals, how many each proved optimal, each
   assignor's ratios to them over the states solved, and the states where an assignor (less
   its warmups) is lexicographically better than a proven optimum; then each state where ours
   is worse than HA, with the reason category of :func:`why_worse_than_ha` (the test suite
   pins that table).
2. **Seeded scale states** (``scale_scenario``: 4 threads per client, 2000 stateful + 1000
   stateless tasks, 1 standby, half the standbys caught up) at 10 / 100 / 1000 clients: median
   in-process time of one assignment, and the same metrics.
3. **Over time**: Kafka's ``TaskAssignorConvergenceTest`` perturbations (probing rebalances until
   stable, per seed), the replay simulator on the shared scale-out and crash states (rounds
   to stable, records restored in total), and on all 280 shared states the moves summed over
   the replay until stable (:func:`moves_over_replay`).

    .venv/bin/python benchmarks/improved_assignor_benchmark.py [--optimum] [--seeds 200]
        [--sizes 10,100,1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.cluster_states import scale_scenario  # noqa: E402
from devtools.generators.convergence_harness import run_randomized_scenario  # noqa: E402
from devtools.paths import CORPORA  # noqa: E402
from streams_assign.assignors import assign  # noqa: E402
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state  # noqa: E402
from streams_assign.model import Assignment, ClusterState  # noqa: E402
from streams_assign.optimal.costs import PlacementCosts  # noqa: E402
from streams_assign.optimal.metrics import Metrics, score  # noqa: E402
from streams_assign.optimal.same_rules import without_warmups, zone_violations  # noqa: E402
from streams_assign.simulation.replay import rebalances, replay, with_changelog_sizes  # noqa: E402

ASSIGNORS = ("high_availability", "lag_aware_sticky")
#: Also in the one-rebalance tables (shared and scale states), not in the optimum ratios or over
#: time: the broker-side assignor of KIP-1071 streams groups (Kafka 4.2+ ``StickyTaskAssignor``),
#: sticky but blind to lag, without warmups, and dropping standbys it has no room for.
ONE_REBALANCE = (*ASSIGNORS, "streams_group_sticky")
#: The optima solved with ``--optimum``: (row name, solve_optimal keyword arguments). The
#: relaxed immediate optimum (no balance, no tags, least active spread first), the same-rules
#: optimum with the rules ours keeps (converged active balance), and with KIP-708's zone rule.
OPTIMA = (
    ("optimal_relaxed", {}),
    ("optimal_same_rules", {"same_rules": True, "zone_rule": False}),
    ("optimal_same_rules_zones", {"same_rules": True, "zone_rule": True}),
)
#: CP-SAT wall seconds per state and problem, and search workers (one: a shared machine).
OPTIMUM_TIME_LIMIT = 30.0
OPTIMUM_WORKERS = 1


def why_worse_than_ha(
    cluster: ClusterState,
    kafka: Assignment,
    ours: Assignment,
    kafka_metrics: Metrics,
    ours_metrics: Metrics,
) -> dict[str, str]:
    """Why ours is worse than Kafka's HA on one state: per worse metric, a reason category.

    Metrics are ``restore`` (records to restore) and ``moved actives``. Categories, the first
    that holds: ``zone rule`` (the state has client tags and HA places more standbys in their
    active's tag value while another value was free: it restores less by breaking the rule;
    restore only), ``stateful balance`` (ours has the smaller stateful load spread: its
    standbys move towards Kafka's stateful balance bound; restore only), ``active balance``
    (HA's active load spread exceeds Kafka's bound of one task per thread and ours is smaller;
    moved actives only), ``trade`` (ours is better on the other metric), ``unexplained``.
    """
    zones = bool(cluster.configs.rack_aware_assignment_tags) and zone_violations(
        cluster, kafka
    ) > zone_violations(cluster, ours)
    active_balance = (
        kafka_metrics.active_load_spread > 1
        and ours_metrics.active_load_spread < kafka_metrics.active_load_spread
    )
    stateful_balance = ours_metrics.stateful_load_spread < kafka_metrics.stateful_load_spread
    reasons = {}
    if ours_metrics.restore_records > kafka_metrics.restore_records:
        reasons["restore"] = (
            "zone rule"
            if zones
            else "stateful balance"
            if stateful_balance
            else "trade"
            if ours_metrics.active_moves < kafka_metrics.active_moves
            else "unexplained"
        )
    if ours_metrics.active_moves > kafka_metrics.active_moves:
        reasons["moved actives"] = (
            "active balance"
            if active_balance
            else "trade"
            if ours_metrics.restore_records < kafka_metrics.restore_records
            else "unexplained"
        )
    return reasons


def shared_states(with_optimum: bool, console: Console) -> None:
    files = sorted((CORPORA / "kafka-diff" / "input").glob("*.json"))
    files += sorted((CORPORA / "kafka-ext" / "input").glob("*.json"))
    totals: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    worse_states: list[tuple[str, dict[str, str], Metrics, Metrics]] = []
    for path in files:
        group = "kafka-diff" if path.name.startswith("s") else path.name.split("-")[1]
        cluster = load_cluster_state(path)
        costs = PlacementCosts.of(cluster)
        metrics = {}
        results = {}
        for name in ONE_REBALANCE:
            start = time.perf_counter()
            result = assign(cluster, assignor=name)
            seconds = time.perf_counter() - start
            m = score(cluster, result, costs)
            metrics[name] = m
            results[name] = result
            for g in (group, "all"):
                row = totals[(g, name)]
                row["states"] += 1
                row["restore"] += m.restore_records
                row["active_moves"] += m.active_moves
                row["moves"] += m.moves
                row["warmups"] += m.warmups
                row["spread_x100"] += round(100 * float(m.active_load_spread))
                row["skew"] += m.subtopology_skew
                row["zone"] += zone_violations(cluster, result)
                row["moves_no_warmups"] += score(cluster, without_warmups(result), costs).moves
                row["ms"] += round(1000 * seconds)
        ours, kafka = metrics["lag_aware_sticky"], metrics["high_availability"]
        for g in (group, "all"):
            row = totals[(g, "lag_aware_sticky")]
            row["worse_restore"] += ours.restore_records > kafka.restore_records
            row["worse_active_moves"] += ours.active_moves > kafka.active_moves
        reasons = why_worse_than_ha(
            cluster, results["high_availability"], results["lag_aware_sticky"], kafka, ours
        )
        if reasons:
            worse_states.append((path.stem, reasons, ours, kafka))
        if with_optimum:
            solve_optima(group, cluster, costs, results, metrics, totals, path.stem)
    table = Table(title="One rebalance on the shared states (totals over each group)")
    columns = (
        "group",
        "assignor",
        "states",
        "restore records",
        "moved actives",
        "moves",
        "moves w/o warmups",
        "warmups",
        "mean spread",
        "skew",
        "zone viol.",
        "worse than HA (restore / moved)",
        "ms",
    )
    for column in columns:
        table.add_column(column, justify="right")
    for (group, name), row in sorted(totals.items()):
        worse = (
            f"{row['worse_restore']} / {row['worse_active_moves']}"
            if name == "lag_aware_sticky"
            else ""
        )
        table.add_row(
            group,
            name,
            str(row["states"]),
            f"{row['restore']:,}",
            str(row["active_moves"]),
            str(row["moves"]),
            str(row["moves_no_warmups"]) if name in ASSIGNORS else "",
            str(row["warmups"]),
            f"{row['spread_x100'] / 100 / max(row['states'], 1):.2f}",
            str(row["skew"]),
            str(row["zone"]),
            worse,
            str(row["ms"]),
        )
    console.print(table)
    if with_optimum:
        print_optimum_ratios(totals, console)
    table = Table(title="States where ours is worse than HA, and why")
    for column in ("state", "reason", "restore ours", "restore HA", "moved ours", "moved HA"):
        table.add_column(column, justify="right")
    for name, reasons, ours_m, kafka_m in worse_states:
        table.add_row(
            name,
            "; ".join(f"{metric}: {why}" for metric, why in reasons.items()),
            f"{ours_m.restore_records:,}",
            f"{kafka_m.restore_records:,}",
            str(ours_m.active_moves),
            str(kafka_m.active_moves),
        )
    console.print(table)


def solve_optima(
    group: str,
    cluster: ClusterState,
    costs: PlacementCosts,
    results: dict[str, Assignment],
    metrics: dict[str, Metrics],
    totals: dict[tuple[str, str], Counter[str]],
    state: str,
) -> None:
    """Solve each optimum of :data:`OPTIMA` on one state and add it to the group totals.

    Besides the optimum's totals, each row sums every assignor's restore records and moves
    (with and without warmups) over the states it solved, for the ratios, and counts the states
    it proved optimal and those where an assignor's output less its warmups is lexicographically
    better than it (zone violations when the problem has them, then restore records, then
    moves), which for the same-rules optima without the zone rule would mean a wrong model.
    """
    from streams_assign.optimal import Problem, solve_optimal

    stripped = {name: without_warmups(results[name]) for name in ASSIGNORS}
    for row_name, options in OPTIMA:
        result = solve_optimal(
            cluster,
            Problem.IMMEDIATE,
            time_limit=OPTIMUM_TIME_LIMIT,
            num_workers=OPTIMUM_WORKERS,
            costs=costs,
            hint=stripped["lag_aware_sticky"] if options else None,
            **options,  # type: ignore[arg-type]
        )
        if result.metrics is None:
            continue
        # The relaxed optimum minimises the active-load spread first, the same-rules ones the
        # zone violations (with tags): compare lexicographically in each one's own order.
        zones = "zone_violations" in result.objective
        first: int | Fraction = (
            result.metrics.active_load_spread
            if not options
            else int(result.objective.get("zone_violations", 0))
        )
        best = (first, result.metrics.restore_records, result.metrics.moves)
        for g in (group, "all"):
            row = totals[(g, row_name)]
            row["states"] += 1
            row["proven"] += result.status == "OPTIMAL"
            row["restore"] += result.metrics.restore_records
            row["active_moves"] += result.metrics.active_moves
            row["moves"] += result.metrics.moves
            row["zone"] += zone_violations(cluster, result.assignment) if result.assignment else 0
            row["spread_x100"] += round(100 * float(result.metrics.active_load_spread))
            row["skew"] += result.metrics.subtopology_skew
            row["seconds_x10"] += round(10 * result.solve_seconds)
            for name in ASSIGNORS:
                mine = score(cluster, stripped[name], costs)
                row[f"{name} restore"] += metrics[name].restore_records
                row[f"{name} moves"] += metrics[name].moves
                row[f"{name} moves_no_warmups"] += mine.moves
                mine_first: int | Fraction = (
                    mine.active_load_spread
                    if not options
                    else zone_violations(cluster, stripped[name])
                    if zones
                    else 0
                )
                key = (mine_first, mine.restore_records, mine.moves)
                if key < best and result.status == "OPTIMAL":
                    row[f"{name} better"] += 1
                    if g == "all":
                        print(f"{state}: {name} better than {row_name}: {key} < {best}")


def print_optimum_ratios(totals: dict[tuple[str, str], Counter[str]], console: Console) -> None:
    """Per group and optimum: states proven optimal, and each assignor's ratios to it."""
    table = Table(title="Against the optima (totals over the states each solved)")
    columns = ("group", "optimum", "solved", "proven", "solve s", "assignor")
    for column in (*columns, "restore ratio", "moves ratio", "moves w/o warmups ratio"):
        table.add_column(column, justify="right")
    table.add_column("states better than the optimum", justify="right")
    for group in sorted({g for g, _ in totals}):
        for row_name, _ in OPTIMA:
            best = totals.get((group, row_name))
            if not best:
                continue
            for name in ASSIGNORS:
                table.add_row(
                    group,
                    row_name,
                    str(best["states"]),
                    str(best["proven"]),
                    f"{best['seconds_x10'] / 10:.1f}",
                    name,
                    f"{best[f'{name} restore'] / max(best['restore'], 1):.4f}",
                    f"{best[f'{name} moves'] / max(best['moves'], 1):.3f}",
                    f"{best[f'{name} moves_no_warmups'] / max(best['moves'], 1):.3f}",
                    str(best[f"{name} better"]),
                )
    console.print(table)


def scale_states(sizes: list[int], repeat: int, console: Console) -> None:
    table = Table(title="Seeded scale states (4 threads, 2000 + 1000 tasks, 1 standby)")
    columns = ("clients", "assignor", "median s", "median CPU s", "restore records")
    for column in (*columns, "moved actives", "moves"):
        table.add_column(column, justify="right")
    for size in sizes:
        cluster = parse_cluster_state(scale_scenario(size, seed=0))
        costs = PlacementCosts.of(cluster)
        for name in ONE_REBALANCE:
            times, cpu = [], []
            result = None
            for _ in range(repeat):
                start, start_cpu = time.perf_counter(), time.process_time()
                result = assign(cluster, assignor=name)
                times.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
            assert result is not None
            m = score(cluster, result, costs)
            table.add_row(
                str(size),
                name,
                f"{statistics.median(times):.3f}",
                f"{statistics.median(cpu):.3f}",
                f"{m.restore_records:,}",
                str(m.active_moves),
                str(m.moves),
            )
    console.print(table)


def over_time(seeds: int, console: Console) -> None:
    runs = {
        name: [run_randomized_scenario(seed, name) for seed in range(seeds)] for name in ASSIGNORS
    }
    ours, kafka = runs["lag_aware_sticky"], runs["high_availability"]
    fewer = sum(o < k for o, k in zip(ours, kafka, strict=True))
    more = sum(o > k for o, k in zip(ours, kafka, strict=True))
    console.print(
        f"Convergence harness, {seeds} seeds: rebalances HA {sum(kafka)}, ours {sum(ours)}; "
        f"ours fewer on {fewer} seeds, more on {more}"
    )
    table = Table(title="Replay (10,000 records/s per copy), scale-out and crash states")
    for column in ("assignor", "states", "rounds to stable", "records restored", "moved actives"):
        table.add_column(column, justify="right")
    files = [
        p
        for p in sorted((CORPORA / "kafka-diff" / "input").glob("*.json"))
        if "scale_out" in p.name or "crash" in p.name
    ]
    for name in ASSIGNORS:
        rounds = restored = moved = 0
        for path in files:
            reports = replay(load_cluster_state(path), 10_000.0, assignor=name)
            rounds += len(reports)
            restored += sum(r.restore_records for r in reports)
            moved += sum(r.moved_actives for r in reports)
        table.add_row(name, str(len(files)), str(rounds), f"{restored:,}", str(moved))
    console.print(table)
    moves_over_replay(console)


def moves_over_replay(console: Console, max_rounds: int = 50) -> None:
    """Moves summed over every rebalance until stable, on all 280 shared states.

    The replay of :func:`~streams_assign.simulation.replay.replay` (10,000 records/s per
    restoring copy), each round scored like one rebalance (``docs/optimal.md``): a move
    deferred to a later rebalance (a pending move, a warmup) is counted when it happens, so
    this total shows whether fewer moves in the first rebalance are fewer moves, or later ones.
    States still probing after ``max_rounds`` rounds are counted up to there.
    """
    files = sorted((CORPORA / "kafka-diff" / "input").glob("*.json"))
    files += sorted((CORPORA / "kafka-ext" / "input").glob("*.json"))
    table = Table(title=f"Replay of all {len(files)} shared states: moves until stable")
    columns = ("assignor", "rounds", "moves over the replay", "first rebalance")
    for column in (*columns, f"still probing at {max_rounds}"):
        table.add_column(column, justify="right")
    for name in ASSIGNORS:
        rounds = moves = first = probing = 0
        for path in files:
            state = with_changelog_sizes(load_cluster_state(path))
            restored = int(10_000 * state.configs.probing_rebalance_interval_ms / 1000)
            for number, round_state, result in rebalances(state, restored, name, max_rounds):
                metrics = score(round_state, result)
                rounds += 1
                moves += metrics.moves
                first += metrics.moves if number == 1 else 0
            probing += result.probing_rebalance_needed
        table.add_row(name, str(rounds), f"{moves:,}", f"{first:,}", str(probing))
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--optimum", action="store_true", help="also solve the CP-SAT optimum")
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=200)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    console = Console(width=220)
    shared_states(args.optimum, console)
    scale_states([int(s) for s in args.sizes.split(",")], args.repeat, console)
    over_time(args.seeds, console)


if __name__ == "__main__":
    main()
