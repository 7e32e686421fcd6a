"""The CP-SAT options shared by ``optimal`` and ``compare`` (declared without OR-Tools), their
check, and the spinner shown while the solver runs."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from streams_assign.errors import UsageError

__all__ = [
    "DEFAULT_NUM_WORKERS",
    "DEFAULT_RANDOM_SEED",
    "DEFAULT_TIME_LIMIT",
    "add_solver_options",
    "check_solver_options",
    "spinner",
]

# Same values as streams_assign.optimal.solve (which imports OR-Tools); a test checks they agree.
DEFAULT_NUM_WORKERS = 2
DEFAULT_RANDOM_SEED = 0
DEFAULT_TIME_LIMIT = 10.0


def add_solver_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--time-limit`` (seconds), ``--workers`` and ``--seed`` to a subcommand's parser."""
    parser.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        metavar="S",
        help=f"CP-SAT wall-time limit per problem in seconds (default {DEFAULT_TIME_LIMIT:g})",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=DEFAULT_NUM_WORKERS,
        help=f"CP-SAT workers (default {DEFAULT_NUM_WORKERS})",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_RANDOM_SEED,
        help=f"CP-SAT random seed (default {DEFAULT_RANDOM_SEED})",
    )


def check_solver_options(args: argparse.Namespace) -> None:
    """Refuse a time limit <= 0 seconds or fewer than one worker.

    Raises
    ------
    UsageError
        Naming the option and the value.
    """
    if not args.time_limit > 0:
        raise UsageError(f"--time-limit must be > 0 seconds, got {args.time_limit:g}")
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")


@contextmanager
def spinner(message: str) -> Iterator[Any]:
    """A rich spinner on stderr while the solver runs (silent when stderr is not a terminal)."""
    from rich.console import Console

    console = Console(stderr=True)
    with console.status(message) as status:
        yield status
