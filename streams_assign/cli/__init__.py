"""The ``streams-assign`` command: a fixed table of subcommands, each imported when it runs.

:data:`COMMANDS` lists every subcommand as a :class:`Command`: its name, the module of this
package that implements it and the pip extra it needs. Each subcommand module exposes
``configure(parser)``, which adds its arguments and imports nothing heavy, and
``run(args) -> int``, which imports what it needs (OR-Tools, matplotlib, PySpark), calls the
library, shows the result through :mod:`streams_assign.views` and returns the exit status
(raising a :class:`~streams_assign.errors.StreamsAssignError` for bad input). Only the chosen
subcommand's module is imported, so ``--help`` is quick and the base install (no extras) runs
``assign`` and ``simulate``. A subcommand whose extra is missing says which one to install.
Adding a subcommand is one module here and one line in :data:`COMMANDS`.

Exit status: 0 on success, 2 on bad input or usage (one line on stderr, nothing written).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from streams_assign.errors import MissingExtraError, StreamsAssignError, UsageError

__all__ = [
    "COMMANDS",
    "EXTRA_MODULES",
    "PROG",
    "Command",
    "UsageError",
    "build_parser",
    "main",
    "run",
]

PROG = "streams-assign"


@dataclass(frozen=True)
class Command:
    """One subcommand of ``streams-assign``.

    Attributes
    ----------
    name:
        The subcommand's name on the command line.
    module:
        The module exposing ``configure(parser) -> None`` and ``run(args) -> int``.
    help:
        One line for ``streams-assign --help``.
    extra:
        The pip extra its dependencies come from (``optimal``, ``lag``), or ``None`` when the
        base install runs it.
    """

    name: str
    module: str
    help: str
    extra: str | None = None


#: Every subcommand, in the order ``--help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("assign", "streams_assign.cli.assign", "compute the next rebalance's assignment"),
    Command(
        "simulate",
        "streams_assign.cli.simulate",
        "replay probing rebalances until convergence",
    ),
    Command(
        "optimal",
        "streams_assign.cli.optimal",
        "solve the assignment to proven optimality with CP-SAT (OR-Tools)",
        extra="optimal",
    ),
    Command(
        "score",
        "streams_assign.cli.score",
        "measure an assignment (restore records, moves, balance, ...)",
        extra="optimal",
    ),
    Command(
        "compare",
        "streams_assign.cli.compare",
        "compare Kafka's assignors with the optimum of each problem",
        extra="optimal",
    ),
    Command(
        "plan",
        "streams_assign.cli.plan",
        "what-if: add, remove, kill or bounce instances and plan the whole convergence",
    ),
    Command(
        "lags",
        "streams_assign.cli.lags",
        "the changelog lag of every replica, caught up or not, and when it will be",
    ),
    Command(
        "init",
        "streams_assign.cli.init",
        "write a commented example cluster state to start from",
    ),
    Command(
        "protocols",
        "streams_assign.cli.protocols",
        "the classic HA decision beside the KIP-1071 streams-group decision for one cluster",
    ),
    Command(
        "streams-chain",
        "streams_assign.cli.streams_chain",
        "every target computation a kill, join, leave or bounce causes in a streams group",
    ),
    Command(
        "consumer-assign",
        "streams_assign.cli.consumer_assign",
        "run Kafka's consumer assignors (range, roundrobin, sticky, cooperative-sticky)",
    ),
    Command(
        "connect-replay",
        "streams_assign.cli.connect_replay",
        "replay Kafka Connect's eager or incremental cooperative assignor round by round",
    ),
    Command(
        "group-trace",
        "streams_assign.cli.group_trace",
        "replay classic-group request traces on Kafka's coordinator state machine",
    ),
    Command(
        "protocol-simulate",
        "streams_assign.cli.protocol_simulate",
        "simulate a group's rebalances over a timeline, eager vs cooperative",
    ),
)

#: Top-level module of an optional dependency -> the pip extra that installs it.
EXTRA_MODULES: dict[str, str] = {
    "ortools": "optimal",
    "matplotlib": "optimal",
    "networkx": "optimal",
    "pyspark": "lag",
    "pandas": "lag",
    "pyarrow": "lag",
    "duckdb": "bench",
    "yaml": "yaml",
    "jinja2": "report",
}


def _chosen(argv: Sequence[str]) -> Command | None:
    """The subcommand named on the command line (the first argument not an option)."""
    for token in argv:
        if token == "--":
            return None
        if not token.startswith("-"):
            return next((c for c in COMMANDS if c.name == token), None)
    return None


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The argument parser of ``streams-assign``.

    Every subcommand of :data:`COMMANDS` is listed; only the one ``argv`` names gets its
    arguments (its module's ``configure``), so building the parser imports nothing heavy.

    Parameters
    ----------
    argv:
        The command-line arguments (without the program name).

    Raises
    ------
    MissingExtraError
        When the chosen subcommand's module cannot be imported for want of an extra.
    """
    parser = argparse.ArgumentParser(prog=PROG, description="Plan where Kafka Streams tasks run.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log the assignors' warnings")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = _chosen(argv)
    for command in COMMANDS:
        sub_parser = sub.add_parser(command.name, help=command.help, description=command.help)
        if command is chosen:
            _import(command).configure(sub_parser)
    return parser


def _import(command: Command) -> ModuleType:
    try:
        return importlib.import_module(command.module)
    except ModuleNotFoundError as exc:
        raise _missing_extra(command, exc) from None


def _missing_extra(command: Command, exc: ModuleNotFoundError) -> Exception:
    root = (exc.name or "").split(".")[0]
    extra = EXTRA_MODULES.get(root)
    if extra is None:
        return exc
    return MissingExtraError(f"{PROG} {command.name}", extra, root)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns its exit status (2 on bad input, with one line on stderr).

    Parameters
    ----------
    argv:
        The arguments without the program name; ``sys.argv[1:]`` when ``None``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(argv)
    except MissingExtraError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
    )
    command = next(c for c in COMMANDS if c.name == args.command)
    try:
        try:
            status = int(_import(command).run(args))
        except ModuleNotFoundError as exc:
            raise _missing_extra(command, exc) from None
    except StreamsAssignError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        status = 2
    except BrokenPipeError:
        status = 0
    return status


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
