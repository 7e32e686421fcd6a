"""What every consumer assignor shares: the leader's view of metadata and subscriptions.

``AbstractPartitionAssignor.assign(Cluster, GroupSubscription)`` keeps only the subscribed
topics that have metadata (at least one partition) and hands the assignor a ``HashMap`` of
subscriptions keyed by member id; where Kafka iterates that map its order decides, so it is
replayed with :class:`~streams_assign.java.hash_order.JavaHashMap`.
"""

from __future__ import annotations

from streams_assign.consumer.model import ConsumerGroupState, MemberSubscription, TopicPartition
from streams_assign.java.hash_order import JavaHashMap, java_string_hash_code

__all__ = ["empty_assignment", "member_info_key", "partitions_per_topic", "subscriptions_map"]

Assignment = dict[str, list[TopicPartition]]
"""Member id -> assigned partitions (Kafka's ``Map<String, List<TopicPartition>>``)."""


def subscriptions_map(state: ConsumerGroupState) -> JavaHashMap[str, MemberSubscription]:
    """The leader's ``HashMap<String, Subscription>``, filled in JoinGroup order."""
    subscriptions: JavaHashMap[str, MemberSubscription] = JavaHashMap(java_string_hash_code)
    for member in state.members:
        subscriptions.put(member.member_id, member)
    return subscriptions


def partitions_per_topic(
    state: ConsumerGroupState, subscriptions: JavaHashMap[str, MemberSubscription]
) -> JavaHashMap[str, int]:
    """Partition count of each subscribed topic that has metadata (count >= 1).

    ``AbstractPartitionAssignor.assign`` skips a subscribed topic without metadata or without
    partitions; the result is its ``HashMap`` (keyed by topic, in Java order).
    """
    subscribed: JavaHashMap[str, bool] = JavaHashMap(java_string_hash_code)
    for member_id in subscriptions:
        for topic in subscriptions[member_id].topics:
            subscribed.put(topic, True)
    counts: JavaHashMap[str, int] = JavaHashMap(java_string_hash_code)
    for topic in subscribed:
        if state.topics.get(topic, 0) > 0:
            counts.put(topic, state.topics[topic])
    return counts


def member_info_key(member: MemberSubscription) -> tuple[int, str]:
    """Sort key of ``AbstractPartitionAssignor.MemberInfo``: static members (by
    ``group.instance.id``) first, then dynamic members by member id."""
    if member.group_instance_id is not None:
        return (0, member.group_instance_id)
    return (1, member.member_id)


def empty_assignment(state: ConsumerGroupState) -> Assignment:
    """Every member with an empty list, in JoinGroup order."""
    return {member.member_id: [] for member in state.members}
