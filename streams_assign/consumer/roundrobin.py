"""Kafka's ``RoundRobinAssignor`` (``partition.assignment.strategy=roundrobin``)."""

from __future__ import annotations

from streams_assign.consumer.common import (
    Assignment,
    empty_assignment,
    member_info_key,
    partitions_per_topic,
    subscriptions_map,
)
from streams_assign.consumer.model import ConsumerGroupState, TopicPartition

__all__ = ["assign_roundrobin"]


def assign_roundrobin(state: ConsumerGroupState) -> Assignment:
    """Deal all partitions, topic by topic in name order, round robin over the members.

    The members are sorted as ``MemberInfo`` sorts them (static members first, by
    ``group.instance.id``, then member id); a member not subscribed to a partition's topic is
    skipped, and the circular position carries over from partition to partition.

    Parameters
    ----------
    state:
        The group; racks and owned partitions are ignored, as in Kafka.

    Returns
    -------
    Assignment
        Every member of ``state`` (in input order) with its partitions.

    References
    ----------
    ``org.apache.kafka.clients.consumer.RoundRobinAssignor`` (Kafka 4.x).
    """
    subscriptions = subscriptions_map(state)
    counts = partitions_per_topic(state, subscriptions)
    assignment = empty_assignment(state)
    members = sorted((subscriptions[m] for m in subscriptions), key=member_info_key)
    all_topics = sorted({t for m in members for t in m.topics})
    position = 0
    for topic in all_topics:
        if topic not in counts:
            continue
        for partition in range(counts[topic]):
            while topic not in members[position].topics:
                position = (position + 1) % len(members)
            assignment[members[position].member_id].append(TopicPartition(topic, partition))
            position = (position + 1) % len(members)
    return assignment
