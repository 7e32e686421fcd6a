"""``streams-assign protocol-simulate TIMELINE [--json] [--plot FILE]``: a group over time.

Runs the timeline (see :mod:`streams_assign.protocol.timeline`) under each protocol it lists
(eager and cooperative by default) and prints, per event, the rebalances, the generation, the
task-seconds unavailable and the time until the group was stable again, then the totals.
``--json`` prints the results as JSON; ``--plot FILE`` writes the running-tasks timeline and a
Gantt of the rebalances (matplotlib). Bad input exits 2 with one line on stderr.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = [
    "configure",
    "run",
]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``protocol-simulate``."""
    parser.add_argument("timeline", metavar="TIMELINE", help="timeline JSON file")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--plot", metavar="FILE", help="write a figure (png, svg, pdf)")
    parser.add_argument(
        "--protocol",
        choices=("eager", "cooperative", "both"),
        help="override the timeline's protocols",
    )
    parser.add_argument("--assignor", help="override the timeline's assignor")


def run(args: argparse.Namespace) -> int:
    """Simulate and print; returns 0.

    Raises
    ------
    InvalidTimelineError
        For a bad timeline file or option (the CLI exits 2).
    """
    from streams_assign.protocol.simulator import InvalidTimelineError
    from streams_assign.protocol.timeline import load_timeline, simulate

    timeline = load_timeline(args.timeline)
    if args.protocol is not None:
        timeline["protocols"] = (
            ["eager", "cooperative"] if args.protocol == "both" else [args.protocol]
        )
    if args.assignor is not None:
        timeline["assignor"] = args.assignor
    if args.plot is not None and not Path(args.plot).resolve().parent.is_dir():
        raise InvalidTimelineError(f"--plot {args.plot}: the folder does not exist")
    try:
        results = [simulate(timeline, p, source=args.timeline) for p in timeline["protocols"]]
    except ValueError as exc:
        raise InvalidTimelineError(f"{args.timeline}: {exc}") from None
    if args.plot is not None:
        from streams_assign.protocol.plot import plot_timelines

        plot_timelines(results, args.plot, title=Path(args.timeline).name)
    if args.json:
        print(json.dumps({r.protocol: r.to_json() for r in results}, indent=1))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for result in results:
        table = Table(title=f"{result.protocol}: {Path(args.timeline).name}")
        for column in ("event", "t (s)", "type", "rebalances", "generation",
                       "task-s unavailable", "records restored", "time to stable (s)"):
            table.add_column(column, justify="right")
        for e in result.events:
            table.add_row(
                str(e.index), f"{e.t_ms / 1000:.1f}", e.kind, str(e.rebalances),
                str(e.generation), f"{sum(e.task_seconds_unavailable.values()):.1f}",
                f"{e.records_restored:,}",
                "-" if e.time_to_stable_ms is None else f"{e.time_to_stable_ms / 1000:.2f}",
            )
        console.print(table)
        reasons = ", ".join(f"{k} {v:.1f}" for k, v in result.task_seconds_unavailable.items())
        console.print(
            f"total: {result.rebalances} rebalances, generation {result.generation}, "
            f"{result.total_task_seconds_unavailable:.1f} task-s unavailable ({reasons}), "
            f"stop-the-world {result.stop_the_world_ms / 1000:.2f} s, "
            f"{result.records_restored:,} records restored"
        )
        stopped = {t: s for t, s in result.final_status.items() if s != "running"}
        if stopped:
            console.print(f"[yellow]not running at the end:[/] {stopped}")
        for violation in result.violations:
            console.print(f"[red]violation:[/] {violation}")
    return 0
