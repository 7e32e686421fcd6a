"""``streams-assign simulate``: replay probing rebalances from a cluster state."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from rich.console import Console
from rich.table import Table

from streams_assign.api import ASSIGNORS
from streams_assign.errors import StreamsAssignError
from streams_assign.scenario import load_cluster_state
from streams_assign.simulation.replay import replay


class SimulationUsageError(StreamsAssignError):
    """Bad arguments to ``simulate``."""


def _cmd_simulate(args: argparse.Namespace) -> int:
    if args.restore_rate <= 0:
        raise SimulationUsageError(f"--restore-rate must be > 0 records/s, got {args.restore_rate}")
    if args.max_rounds < 1:
        raise SimulationUsageError(f"--max-rounds must be >= 1, got {args.max_rounds}")
    try:
        cluster = load_cluster_state(args.file)
    except OSError as exc:
        raise SimulationUsageError(f"{args.file}: cannot read: {exc.strerror or exc}") from None
    reports = replay(cluster, args.restore_rate, assignor=args.assignor, max_rounds=args.max_rounds)
    converged = not reports[-1].probing_rebalance_needed
    if args.json:
        print(
            json.dumps({"converged": converged, "rounds": [asdict(r) for r in reports]}, indent=1)
        )
        return 0
    interval = cluster.configs.probing_rebalance_interval_ms
    table = Table(
        title=f"{cluster.name or args.file}: rebalance every {interval} ms, "
        f"restore {args.restore_rate:g} records/s"
    )
    for column in (
        "round",
        "time (min)",
        "moved actives",
        "warmups",
        "unavailable actives",
        "records to restore",
        "probing next",
    ):
        table.add_column(column, justify="right")
    for r in reports:
        table.add_row(
            str(r.round),
            f"{r.time_ms / 60000:g}",
            str(r.moved_actives),
            str(r.warmups),
            str(r.unavailable_actives),
            f"{r.restore_records:,}",
            "yes" if r.probing_rebalance_needed else "no",
        )
    console = Console()
    console.print(table)
    last = reports[-1]
    if converged:
        console.print(f"Converged after {last.round} rebalance(s), {last.time_ms / 60000:g} min.")
    else:
        console.print(f"Not converged after {last.round} rebalances (--max-rounds).")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``simulate`` to the ``streams-assign`` command."""
    parser = subparsers.add_parser("simulate", help="replay probing rebalances until convergence")
    parser.add_argument("file", metavar="FILE", help="starting cluster-state JSON file")
    parser.add_argument(
        "--restore-rate",
        type=float,
        default=10_000.0,
        help="records per second restored per task and client (default 10000)",
    )
    parser.add_argument(
        "--max-rounds", type=int, default=50, help="rebalances at most (default 50)"
    )
    parser.add_argument("--assignor", default="high_availability", choices=sorted(ASSIGNORS))
    parser.add_argument("--json", action="store_true", help="print the rounds as JSON")
    parser.set_defaults(handler=_cmd_simulate)
