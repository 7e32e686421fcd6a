"""The ``streams-assign`` command: argument parsing and printing only.

Subcommands:
- ``assign FILE... [--json] [--output-dir DIR] [--assignor NAME]``: the next rebalance's
  assignment of each cluster-state file.

Exit status: 0 on success, 2 on bad input or usage (one line on stderr, nothing written).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from streams_assign.api import ASSIGNORS, UnknownAssignorError, assign, load_document
from streams_assign.errors import StreamsAssignError
from streams_assign.io import dumps_json, write_atomic
from streams_assign.report import print_assignment
from streams_assign.streams_group import StreamsGroupState
from streams_assign.streams_group_cli import (
    assign_streams_group_cli,
    print_streams_group_assignment,
)

PROG = "streams-assign"


class UsageError(StreamsAssignError):
    """Bad command-line usage (exit status 2)."""


def _cmd_assign(args: argparse.Namespace) -> int:
    results: list[tuple[Path, Any, Any]] = []
    for path in args.files:
        try:
            cluster = load_document(path)
            if isinstance(cluster, StreamsGroupState):  # KIP-1071: decided per member
                results.append((Path(path), cluster, assign_streams_group_cli(cluster, args)))
                continue
            assignor = args.assignor or "high_availability"
            results.append((Path(path), cluster, assign(cluster, assignor=assignor)))
        except StreamsAssignError as exc:
            raise UsageError(f"{path}: {exc}") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if args.output_dir is not None:
        out = Path(args.output_dir)
        if not out.is_dir():
            raise UsageError(f"--output-dir {out}: not a directory")
        names = [p.name for p, _, _ in results]
        if len(set(names)) != len(names):
            raise UsageError("--output-dir: two inputs share a file name")
        for path, _, assignment in results:
            write_atomic(out / path.name, dumps_json(assignment.to_json()))
        print(f"wrote {len(results)} assignment(s) to {out}", file=sys.stderr)
        return 0
    if args.json:
        if len(results) == 1:
            print(json.dumps(results[0][2].to_json(), indent=1))
        else:
            print(json.dumps({str(p): a.to_json() for p, _, a in results}, indent=1))
        return 0
    console = Console()
    for _, cluster, assignment in results:
        if isinstance(cluster, StreamsGroupState):
            print_streams_group_assignment(cluster, assignment, console=console)
            continue
        print_assignment(cluster, assignment, console=console)
        for warning in cluster.warnings:
            console.print(f"[yellow]warning:[/] {warning}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``streams-assign`` (subcommands registered here)."""
    parser = argparse.ArgumentParser(prog=PROG, description="Plan where Kafka Streams tasks run.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log the assignors' warnings")
    sub = parser.add_subparsers(dest="command", required=True)

    p_assign = sub.add_parser("assign", help="compute the next rebalance's assignment")
    p_assign.add_argument("files", nargs="+", metavar="FILE", help="cluster-state JSON file(s)")
    p_assign.add_argument("--json", action="store_true", help="print the output JSON")
    p_assign.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write DIR/<input file name> for each input (batch mode)",
    )
    p_assign.add_argument(
        "--assignor",
        default=None,
        choices=sorted(ASSIGNORS),
        help="which of Kafka's assignors decides (default high_availability; fallback_prior "
        "runs instead when every stateful lag is -3, as Kafka does after a failed lag fetch; "
        "a streams-group state is always decided by streams_group_sticky)",
    )
    p_assign.set_defaults(handler=_cmd_assign)

    for register in _extra_commands():
        register(sub)
    return parser


def _extra_commands() -> list[Callable[[argparse._SubParsersAction], None]]:  # type: ignore[type-arg]
    """Subcommands defined beside their features (optimal scoring, simulation)."""
    registrars = []
    for module_name in (
        "streams_assign.optimal.commands",
        "streams_assign.simulation.commands",
        "streams_assign.streams_group_compare",
    ):
        try:
            module = __import__(module_name, fromlist=["register"])
        except ModuleNotFoundError as exc:
            # Only an absent feature module is skipped; a missing dependency inside it is an error.
            if exc.name is not None and module_name.startswith(exc.name):
                continue
            raise
        registrars.append(module.register)
    return registrars


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns (and exits with) its status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        status = int(args.handler(args))
    except (UsageError, UnknownAssignorError, StreamsAssignError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        status = 2
    except BrokenPipeError:
        status = 0
    return status


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
