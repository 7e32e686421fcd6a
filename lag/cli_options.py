"""Option types shared by the ``streams-lag`` subcommands (:mod:`lag.cli`, :mod:`lag.cli_live`)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from lag.kafka_rules import LONG_MAX

__all__ = ["EXIT_INPUT", "add_config_flags", "bounded", "parse_time", "tag_list"]

#: Exit status of a missing or unusable input.
EXIT_INPUT = 2


def parse_time(text: str) -> int:
    """Epoch milliseconds from ``1767225600000`` or an ISO-8601 time (UTC when no zone is given).

    Raises
    ------
    argparse.ArgumentTypeError
        For anything else.
    """
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not epoch ms or ISO-8601: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def bounded(low: int, high: int = LONG_MAX) -> Any:
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {value}")
        return value

    return convert


def tag_list(text: str) -> tuple[str, ...]:
    from lag.sources.streams_config import CONFIG_FLAGS

    try:
        tags: tuple[str, ...] = CONFIG_FLAGS["--rack-aware-assignment-tags"].parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    return tags


def add_config_flags(parser: Any) -> None:
    """The assignment configs as flags; each wins over ``--streams-config``."""
    parser.add_argument(
        "--acceptable-recovery-lag", type=bounded(0), help="default: file, else 10000"
    )
    parser.add_argument(
        "--max-warmup-replicas", type=bounded(1, 2**31 - 1), help="default: file, else 2"
    )
    parser.add_argument(
        "--num-standby-replicas", type=bounded(0, 2**31 - 1), help="default: file, else 0"
    )
    parser.add_argument(
        "--probing-rebalance-interval-ms", type=bounded(60_000), help="default: file, else 600000"
    )
    parser.add_argument(
        "--rack-aware-assignment-tags",
        type=tag_list,
        metavar="TAG[,TAG...]",
        help="rack.aware.assignment.tags (default: file, else none)",
    )
