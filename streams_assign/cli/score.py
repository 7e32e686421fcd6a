"""``streams-assign score FILE ASSIGNMENT.json [--json]``: the metrics of an assignment.

Needs the ``optimal`` extra (the scorer shares the optimum's cost model).
"""

from __future__ import annotations

import argparse

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``score`` to its parser."""
    parser.add_argument("file", metavar="FILE", help="cluster-state JSON file")
    parser.add_argument(
        "assignment", metavar="ASSIGNMENT.json", help="an assignment in the output format"
    )
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")


def run(args: argparse.Namespace) -> int:
    """Score the assignment and print the metrics (see ``optimal.commands``)."""
    from streams_assign.commands._common import naming
    from streams_assign.optimal.commands import cmd_score

    with naming(args.file, args.assignment):
        return cmd_score(args)
