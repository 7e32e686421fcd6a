"""``streams-assign compare FILE [--assignor NAME...] [--plot OUT.png] [--report OUT.html] ...``.

Kafka's assignors beside both optima, as one table and optionally a bar chart (needs the
``optimal`` extra: OR-Tools and matplotlib), then each assignor's whole convergence until stable
beside the target optimum's one-step cost.
"""

from __future__ import annotations

import argparse

from streams_assign.commands._solver import add_solver_options

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``compare`` to its parser."""
    parser.add_argument("file", metavar="FILE", help="cluster-state JSON file")
    parser.add_argument(
        "--plot", metavar="OUT.png", help="also draw a bar chart (.png, .svg or .pdf)"
    )
    add_solver_options(parser)
    parser.add_argument(
        "--assignor",
        action="append",
        metavar="NAME",
        help="assignor to compare (repeatable; default every registered one that imports)",
    )
    parser.add_argument(
        "--restore-rate",
        type=float,
        default=10_000.0,
        metavar="R",
        help="records/s one client restores for one task, for the whole convergence "
        "(default 10000)",
    )
    parser.add_argument(
        "--max-rounds", type=int, default=50, help="rebalances at most per convergence (50)"
    )
    parser.add_argument("--report", metavar="OUT.html", help="write a self-contained HTML report")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")


def run(args: argparse.Namespace) -> int:
    """Compare and print the table (see ``optimal.commands``)."""
    from streams_assign.commands._common import naming
    from streams_assign.optimal.commands import cmd_compare

    with naming(args.file):
        return cmd_compare(args)
