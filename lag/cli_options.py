"""Option types shared by the ``streams-lag`` subcommands (:mod:`lag.cli`, :mod:`lag.cli_live`)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from lag.kafka_rules import LONG_MAX

__all__ = [
    "EXIT_INPUT",
    "STREAMS_GROUP_UNUSED",
    "add_config_flags",
    "bounded",
    "parse_time",
    "refuse_for_streams_group",
    "tag_list",
]

#: Exit status of a missing or unusable input.
EXIT_INPUT = 2

_REPORTED_ONLY = "the broker's assignor reads only the task offsets the members reported"
_GROUP_CONFIG = (
    "a classic assignor's config; the broker's assignor reads the group's own configs "
    "(kafka-configs --entity-type groups)"
)
#: Options of the live mode that a streams group (KIP-1071) has no use for, and why: the
#: broker's ``TaskAssignor`` reads the members' reports and the group's configs, nothing else.
STREAMS_GROUP_UNUSED = {
    "--command-config": "the streams-group reader (Kafka's Admin client, "
    "DescribeStreamsGroup.java) connects in plaintext only",
    "--streams-config": "the broker's assignor reads the group's configs "
    "(streams.num.standby.replicas ...), not the application's properties",
    "--metrics": _REPORTED_ONLY,
    "--state-dirs": _REPORTED_ONLY,
    "--topology": "the broker describes the group's topology itself",
    "--acceptable-recovery-lag": _GROUP_CONFIG,
    "--max-warmup-replicas": _GROUP_CONFIG,
    "--probing-rebalance-interval-ms": "a streams group has no probing rebalances",
    "--rack-aware-assignment-tags": _GROUP_CONFIG,
}


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


def refuse_for_streams_group(given: Iterable[str], application_id: str) -> None:
    """Refuse the first option of ``given`` that a streams group has no use for.

    Parameters
    ----------
    given:
        The options the user gave (``--metrics`` ...), in the order to check them.
    application_id:
        The group, for the message.

    Raises
    ------
    LagInputError
        Naming the option, the group and why (:data:`STREAMS_GROUP_UNUSED`).
    """
    from streams_assign.errors import LagInputError

    for option in given:
        why = STREAMS_GROUP_UNUSED.get(option)
        if why is not None:
            raise LagInputError(
                f"{option}: group {application_id!r} is a streams group (KIP-1071, "
                f"group.protocol=streams): {why}; leave {option} out"
            )
