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
    from streams_assign.errors import InvalidTimelineError
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
        from streams_assign.formats.atomic import write_atomic
        from streams_assign.views.plots import render, timelines_figure

        figure = timelines_figure(results, title=Path(args.timeline).name)
        write_atomic(args.plot, render(figure, Path(args.plot).suffix))
    if args.json:
        print(json.dumps({r.protocol: r.to_json() for r in results}, indent=1))
        return 0
    from streams_assign.views.tables import print_simulations

    print_simulations(results, Path(args.timeline).name)
    return 0
