"""``streams-assign assign FILE... [--json] [--output-dir DIR] [--assignor NAME]``.

The next rebalance's assignment of each cluster-state file (Kafka's
``HighAvailabilityTaskAssignor`` by default). With ``--output-dir`` (batch mode) every good
input's assignment is written whole to ``DIR/<input file name>``, the bad inputs are listed on
one line and the exit status is 2 when there is any.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from streams_assign.errors import StreamsAssignError, UsageError

__all__ = ["configure", "run"]

#: The assignor names of ``api.ASSIGNORS`` (kept here so that ``--help`` imports no assignor;
#: a test checks both lists agree).
ASSIGNOR_CHOICES = ("fallback_prior", "high_availability", "sticky")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``assign`` to its parser."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="cluster-state JSON file(s)")
    parser.add_argument("--json", action="store_true", help="print the output JSON")
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write DIR/<input file name> for each input (batch mode; DIR is created)",
    )
    parser.add_argument(
        "--assignor",
        default="high_availability",
        choices=ASSIGNOR_CHOICES,
        help="which of Kafka's assignors decides (default high_availability; fallback_prior "
        "runs instead when every stateful lag is -3, as Kafka does after a failed lag fetch)",
    )


def run(args: argparse.Namespace) -> int:
    """Assign each input; print a table per input, the JSON, or write the batch.

    Returns
    -------
    int
        0 on success.

    Raises
    ------
    UsageError
        For an unreadable or invalid input (naming the file, JSON path and value); in batch
        mode after the good inputs are written.
    """
    from streams_assign.api import assign
    from streams_assign.commands._common import load_cluster

    if args.output_dir is not None:
        return _batch(args)
    results = []
    for path in args.files:
        cluster = load_cluster(path)
        try:
            results.append((Path(path), cluster, assign(cluster, assignor=args.assignor)))
        except StreamsAssignError as exc:
            raise UsageError(f"{path}: {exc}") from None
    if args.json:
        import json

        if len(results) == 1:
            print(json.dumps(results[0][2].to_json(), indent=1))
        else:
            print(json.dumps({str(p): a.to_json() for p, _, a in results}, indent=1))
        return 0
    from streams_assign.commands._common import console
    from streams_assign.report import print_assignment

    out = console()
    for _, cluster, assignment in results:
        print_assignment(cluster, assignment, console=out)
        for warning in cluster.warnings:
            out.print(f"[yellow]warning:[/] {warning}")
    return 0


def _batch(args: argparse.Namespace) -> int:
    from streams_assign.api import assign
    from streams_assign.commands._common import load_cluster, output_dir
    from streams_assign.io import dumps_json, write_atomic

    names = [Path(p).name for p in args.files]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise UsageError(f"--output-dir: two inputs share a file name: {', '.join(twice)}")
    out = output_dir(args.output_dir)
    failures: list[str] = []
    written = 0
    for path in args.files:
        try:
            cluster = load_cluster(path)
            assignment = assign(cluster, assignor=args.assignor)
        except UsageError as exc:
            failures.append(str(exc))
            continue
        except StreamsAssignError as exc:
            failures.append(f"{path}: {exc}")
            continue
        try:
            write_atomic(out / Path(path).name, dumps_json(assignment.to_json()))
        except OSError as exc:
            failures.append(f"{out / Path(path).name}: cannot write: {exc.strerror or exc}")
            continue
        written += 1
    if failures:
        raise UsageError(
            f"wrote {written} assignment(s) to {out}; {len(failures)} of {len(args.files)} "
            "input(s) not assigned: " + "; ".join(failures)
        )
    print(f"wrote {written} assignment(s) to {out}", file=sys.stderr)
    return 0
