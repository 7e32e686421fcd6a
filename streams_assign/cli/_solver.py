"""The CP-SAT options shared by ``optimal`` and ``compare`` (declared without OR-Tools)."""

from __future__ import annotations

import argparse

__all__ = ["DEFAULT_NUM_WORKERS", "DEFAULT_RANDOM_SEED", "DEFAULT_TIME_LIMIT", "add_solver_options"]

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
