"""``streams-assign simulate FILE [--restore-rate R] [--max-rounds N] [--json]``.

Replays probing rebalances from a cluster state until no probing rebalance is needed (see
``streams_assign.simulation.replay``); base install only (no extras).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from streams_assign.cli.assign import ASSIGNOR_CHOICES
from streams_assign.errors import UsageError

if TYPE_CHECKING:
    from streams_assign.simulation.replay import RoundReport

__all__ = ["configure", "replay_json", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``simulate`` to its parser."""
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
    parser.add_argument("--assignor", default="high_availability", choices=ASSIGNOR_CHOICES)
    parser.add_argument("--json", action="store_true", help="print the rounds as JSON")
    parser.add_argument(
        "--plot", metavar="OUT.png", help="draw the convergence (.png/.svg/.pdf; report extra)"
    )
    parser.add_argument(
        "--report", metavar="OUT.html", help="write a self-contained HTML report (report extra)"
    )


def run(args: argparse.Namespace) -> int:
    """Replay the rebalances and print one row per rebalance (or the JSON).

    Raises
    ------
    UsageError
        For a rate <= 0 records/s, fewer than one round, or a bad input file (named).
    """
    if args.restore_rate <= 0:
        raise UsageError(f"--restore-rate must be > 0 records/s, got {args.restore_rate}")
    if args.max_rounds < 1:
        raise UsageError(f"--max-rounds must be >= 1, got {args.max_rounds}")
    from streams_assign.cli._common import console, load_cluster, naming
    from streams_assign.simulation.replay import replay
    from streams_assign.views.tables import print_replay

    plot, report = getattr(args, "plot", None), getattr(args, "report", None)
    if plot is not None or report is not None:
        from streams_assign.cli._common import check_output

        check_output(plot, "--plot", (".png", ".svg", ".pdf"))
        check_output(report, "--report", (".html", ".htm"))
    cluster = load_cluster(args.file)
    with naming(args.file):
        reports = replay(
            cluster, args.restore_rate, assignor=args.assignor, max_rounds=args.max_rounds
        )
        if plot is not None or report is not None:
            _write_views(args, cluster)
    if args.json:
        print(replay_json(reports))
    else:
        print_replay(cluster, reports, args.file, args.restore_rate, console())
    return 0


def replay_json(reports: Sequence[RoundReport]) -> str:
    """The rounds of a replay as the JSON text ``simulate --json`` prints."""
    converged = not reports[-1].probing_rebalance_needed
    return json.dumps({"converged": converged, "rounds": [asdict(r) for r in reports]}, indent=1)


def _write_views(args: argparse.Namespace, cluster: object) -> None:
    """Render the convergence's plot and report, then write each whole."""
    from pathlib import Path

    from streams_assign.cli._common import write_rendered
    from streams_assign.simulation.probing import RestoreRates, plan_convergence
    from streams_assign.views.page import convergence_tables, render_page
    from streams_assign.views.plots import convergence_figure, render

    convergence = plan_convergence(
        cluster,  # type: ignore[arg-type]
        args.assignor,
        RestoreRates(args.restore_rate),
        max_rounds=args.max_rounds,
    )
    outputs: list[tuple[str, str, str | bytes]] = []
    if args.plot is not None:
        outputs.append(
            ("--plot", args.plot, render(convergence_figure([convergence]), Path(args.plot).suffix))
        )
    if args.report is not None:
        name = getattr(cluster, "name", None) or args.file
        page = render_page(
            f"{name}: {args.assignor} until stable",
            [f"Restore rate {args.restore_rate:g} records/s per task."],
            convergence_tables([convergence]),
            [("Convergence", convergence_figure([convergence]))],
        )
        outputs.append(("--report", args.report, page))
    write_rendered(outputs)
