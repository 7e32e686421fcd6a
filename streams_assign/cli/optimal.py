"""``streams-assign optimal FILE [--problem target|immediate] [--same-rules [--no-zone-rule]]
[--time-limit S] [--json]``.

The proven optimum of one problem with CP-SAT (needs the ``optimal`` extra: OR-Tools).
"""

from __future__ import annotations

import argparse

from streams_assign.commands._solver import add_solver_options

__all__ = ["PROBLEMS", "configure", "run"]

#: ``streams_assign.optimal.model.Problem`` values (a test checks they agree).
PROBLEMS = ("target", "immediate")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``optimal`` to its parser."""
    parser.add_argument("file", metavar="FILE", help="cluster-state JSON file")
    parser.add_argument(
        "--problem",
        choices=PROBLEMS,
        default=PROBLEMS[0],
        help="target: best balanced converged assignment; immediate: best next assignment "
        "under Kafka's availability rule (default target)",
    )
    parser.add_argument(
        "--same-rules",
        action="store_true",
        help="immediate problem with the hard rules of the lag_aware_sticky assignor: converged "
        "active balance, stateless tasks to the least loaded, KIP-708 zone violations "
        "minimised first (docs/improved-assignor.md)",
    )
    parser.add_argument(
        "--no-zone-rule",
        action="store_true",
        help="with --same-rules: leave the zone rule out (the rules lag_aware_sticky keeps)",
    )
    add_solver_options(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    """Solve and print; 1 when CP-SAT finds no assignment (see ``optimal.commands``)."""
    from streams_assign.commands._common import naming
    from streams_assign.optimal.commands import cmd_optimal

    with naming(args.file):
        return cmd_optimal(args)
