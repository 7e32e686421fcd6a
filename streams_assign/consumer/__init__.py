"""Kafka's consumer partition assignors: range, roundrobin, sticky, cooperative-sticky.

Faithful to Kafka 4.x ``RangeAssignor``, ``RoundRobinAssignor``, ``StickyAssignor`` and
``CooperativeStickyAssignor`` on the leader's view of a consumer group
(:class:`ConsumerGroupState`, the ``kafka-consumer`` scenario format)::

    from streams_assign.consumer import assign_consumer_group, load_consumer_state
    assignment = assign_consumer_group(load_consumer_state("c0000_range.json"))
"""

import importlib
from typing import Any

from streams_assign.consumer.api import CONSUMER_ASSIGNORS, assign_consumer_group
from streams_assign.consumer.model import (
    ASSIGNOR_NAMES,
    ConsumerGroupState,
    MemberSubscription,
    TopicPartition,
)
from streams_assign.errors import InvalidConsumerStateError

__all__ = [
    "ASSIGNOR_NAMES",
    "CONSUMER_ASSIGNORS",
    "ConsumerGroupState",
    "InvalidConsumerStateError",
    "MemberSubscription",
    "TopicPartition",
    "assign_consumer_group",
    "assignment_to_json",
    "load_consumer_state",
    "parse_consumer_state",
]

#: The document functions, defined in :mod:`streams_assign.formats.consumer_group` and imported on
#: first use (that module imports this package's model: an eager import here is a cycle).
_FORMAT_NAMES = frozenset({"assignment_to_json", "load_consumer_state", "parse_consumer_state"})


def __getattr__(name: str) -> Any:
    if name in _FORMAT_NAMES:
        value = getattr(importlib.import_module("streams_assign.formats.consumer_group"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
