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
    """Score the assignment and print the metrics (or their JSON).

    Raises
    ------
    UsageError
        For an unreadable or invalid cluster-state or assignment file (named, with the JSON
        path and the value).
    """
    import json
    from pathlib import Path

    from rich.console import Console

    from streams_assign.cli._common import load_cluster, load_json, naming
    from streams_assign.errors import StreamsAssignError, UsageError
    from streams_assign.optimal.metrics import parse_assignment, score
    from streams_assign.views.optimal_tables import print_metrics

    with naming(args.file, args.assignment):
        cluster = load_cluster(args.file)
        document = load_json(args.assignment)
        try:
            assignment = parse_assignment(cluster, document, source=args.assignment)
        except StreamsAssignError as exc:
            raise UsageError(str(exc)) from None
        metrics = score(cluster, assignment)
        if args.json:
            print(json.dumps(metrics.to_json(), indent=1))
        else:
            title = f"{Path(args.assignment).name} on {Path(args.file).name}"
            print_metrics(metrics, Console(), title=title)
        return 0
