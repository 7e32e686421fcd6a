"""The target problem at scale: 500, 1000 and 2000 clients (4 tasks per client), flows and faces
against the whole CP-SAT model, side by side in one run.

Prints one Markdown table (the figures of ``docs/optimal.md``): per cluster and solve path, the
status, restore records and moves (value / proven bound), the worst relative gap, wall and CPU
seconds, and the 1-minute load average before and after the solve. CPU seconds are this
process's user + system time (every CP-SAT worker thread and the flows counted), the honest
measure on a shared machine; wall seconds depend on the load.

Paths: ``flows`` is :func:`~streams_assign.optimal.solve_optimal` as it runs by default (restore
records by min-cost flows, moves by CP-SAT over the restore-optimal faces); ``whole`` is the
whole staged CP-SAT model (``flows=False``), the path before issue #31, run up to
``--whole-max-clients`` clients.

Usage::

    .venv/bin/python benchmarks/optimal_scale.py [--clients 500 1000 2000] [--time-limit 60]
        [--whole-max-clients 1000] [--whole-time-limit 60] [--seed 0] [--workers 2]
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.cluster_states import synthetic_cluster  # noqa: E402
from streams_assign.optimal import OptimalResult, PlacementCosts, solve_optimal  # noqa: E402


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process, every thread included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _pair(result: OptimalResult, name: str) -> str:
    value = result.objective.get(name)
    bound = result.bound.get(name)
    if value is None:
        return "-"
    return f"{value:,} / {'-' if bound is None else f'{bound:,}'}"


def _row(*cells: object) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def run(clients: int, path: str, args: argparse.Namespace) -> None:
    """Solve one cluster's target on one path and print its row."""
    cluster = synthetic_cluster(4 * clients, clients, seed=args.seed)
    load_before = os.getloadavg()[0]
    wall, cpu = time.monotonic(), _cpu_seconds()
    costs = PlacementCosts.of(cluster)
    result = solve_optimal(
        cluster,
        "target",
        time_limit=args.time_limit if path == "flows" else args.whole_time_limit,
        num_workers=args.workers,
        random_seed=args.seed,
        costs=costs,
        flows=path == "flows",
    )
    wall, cpu = time.monotonic() - wall, _cpu_seconds() - cpu
    gaps = [g for g in (result.gap(n) for n in result.objective) if g is not None]
    _row(
        f"{clients} x {4 * clients}",
        path,
        result.status,
        " / ".join(s.status for s in result.stages),
        _pair(result, "restore_records"),
        _pair(result, "moves"),
        f"{max(gaps):.2%}" if gaps else "-",
        f"{wall:.1f}",
        f"{cpu:.1f}",
        f"{load_before:.1f} / {os.getloadavg()[0]:.1f}",
    )


def main(argv: list[str] | None = None) -> int:
    """Parse the options, print the machine line and the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--whole-max-clients", type=int, default=1000)
    parser.add_argument("--whole-time-limit", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; CP-SAT {args.workers} "
        f"workers, seed {args.seed}; CP-SAT time limit {args.time_limit:g} s (flows), "
        f"{args.whole_time_limit:g} s (whole)\n"
    )
    _row(
        "clients x tasks",
        "path",
        "status",
        "stages",
        "restore records (value / bound)",
        "moves (value / bound)",
        "gap",
        "wall s",
        "CPU s",
        "load 1 min (before / after)",
    )
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for clients in args.clients:
        run(clients, "flows", args)
        if clients <= args.whole_max_clients:
            run(clients, "whole", args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
