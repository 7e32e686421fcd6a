"""Kafka's consumer partition assignors: range, roundrobin, sticky, cooperative-sticky.

Faithful to Kafka 4.x ``RangeAssignor``, ``RoundRobinAssignor``, ``StickyAssignor`` and
``CooperativeStickyAssignor`` on the leader's view of a consumer group
(:class:`ConsumerGroupState`, read from the ``kafka-consumer`` scenario format by
:mod:`streams_assign.formats.consumer_group`)::

    from streams_assign.consumer import assign_consumer_group
    from streams_assign.formats.consumer_group import load_consumer_state

    assignment = assign_consumer_group(load_consumer_state("c0000_range.json"))
"""

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
]
