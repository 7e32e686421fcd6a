"""One entry point over the four consumer assignors."""

from __future__ import annotations

from collections.abc import Callable

from streams_assign.consumer.common import Assignment
from streams_assign.consumer.model import ConsumerGroupState
from streams_assign.consumer.range import assign_range
from streams_assign.consumer.roundrobin import assign_roundrobin
from streams_assign.consumer.sticky import assign_cooperative_sticky, assign_sticky
from streams_assign.errors import InvalidConsumerStateError

__all__ = ["CONSUMER_ASSIGNORS", "assign_consumer_group"]

CONSUMER_ASSIGNORS: dict[str, Callable[[ConsumerGroupState], Assignment]] = {
    "range": assign_range,
    "roundrobin": assign_roundrobin,
    "sticky": assign_sticky,
    "cooperative-sticky": assign_cooperative_sticky,
}
"""``partition.assignment.strategy`` name -> assignor function."""


def assign_consumer_group(state: ConsumerGroupState, assignor: str | None = None) -> Assignment:
    """Run Kafka's consumer assignor named by ``state.assignor`` (or ``assignor``).

    Parameters
    ----------
    state:
        The consumer group at the rebalance.
    assignor:
        Overrides ``state.assignor``: ``range``, ``roundrobin``, ``sticky`` or
        ``cooperative-sticky``.

    Returns
    -------
    dict[str, list[TopicPartition]]
        Member id -> its partitions, every member present, in input order.

    Raises
    ------
    InvalidConsumerStateError
        Unknown assignor, or partition racks given to an assignor other than range.
    TaskAssignmentError
        Where Kafka's assignor throws ``IllegalStateException``.
    """
    name = assignor or state.assignor
    if name not in CONSUMER_ASSIGNORS:
        raise InvalidConsumerStateError(
            "assignor", f"must be one of {', '.join(CONSUMER_ASSIGNORS)}, got {name!r}"
        )
    if state.partition_racks and name in ("sticky", "cooperative-sticky"):
        raise InvalidConsumerStateError(
            "partition_racks", f"rack-aware {name} assignment is not supported; got racks"
        )
    return CONSUMER_ASSIGNORS[name](state)
