"""Value types of a consumer group as Kafka's consumer partition assignors see it.

A :class:`ConsumerGroupState` is what ``ConsumerPartitionAssignor.assign(Cluster,
GroupSubscription)`` receives on the group leader: the partition count of each topic (cluster
metadata) and one :class:`MemberSubscription` per member, in JoinGroup order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from streams_assign.java.hash_order import int32, java_string_hash_code

__all__ = [
    "ASSIGNOR_NAMES",
    "ConsumerGroupState",
    "DEFAULT_GENERATION",
    "MemberSubscription",
    "TopicPartition",
]

ASSIGNOR_NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")
"""The ``partition.assignment.strategy`` names of Kafka's four consumer assignors."""

DEFAULT_GENERATION = -1
"""``AbstractStickyAssignor.DEFAULT_GENERATION``: a member that never had an assignment."""


class TopicPartition(NamedTuple):
    """Kafka's ``TopicPartition``: a topic name and a partition number (>= 0).

    Tuples order by topic then partition, as the expected files list them.
    """

    topic: str
    partition: int

    def java_hash_code(self) -> int:
        """``TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``.

        Examples
        --------
        >>> TopicPartition("t0", 0).java_hash_code()
        4605
        """
        return int32(31 * (31 + self.partition) + java_string_hash_code(self.topic))


@dataclass(frozen=True)
class MemberSubscription:
    """One member's JoinGroup subscription (``ConsumerPartitionAssignor.Subscription``).

    Attributes
    ----------
    member_id:
        The member id the coordinator gave the member.
    group_instance_id:
        ``group.instance.id`` of a static member, else ``None``; static members sort first in
        ``AbstractPartitionAssignor.MemberInfo``.
    topics:
        The subscribed topics, in the member's order (duplicates kept as Kafka keeps them).
    owned_partitions:
        The partitions the member owned after the previous rebalance: cooperative-sticky reads
        them from ``Subscription.ownedPartitions``, sticky from its user data.
    generation:
        The generation of that previous assignment; ``None`` if the member never had one.
    rack:
        ``client.rack`` of the member, or ``None``.
    """

    member_id: str
    group_instance_id: str | None = None
    topics: tuple[str, ...] = ()
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    rack: str | None = None

    @property
    def generation_id(self) -> int:
        """``Subscription.generationId().orElse(DEFAULT_GENERATION)`` (negative means absent)."""
        if self.generation is None or self.generation < 0:
            return DEFAULT_GENERATION
        return self.generation


@dataclass(frozen=True)
class ConsumerGroupState:
    """A consumer group at a rebalance: the leader's input to the assignor.

    Attributes
    ----------
    assignor:
        One of :data:`ASSIGNOR_NAMES`.
    topics:
        Partition count of each topic in the cluster metadata (topics absent here have no
        metadata; Kafka skips them).
    members:
        The members in JoinGroup order (the insertion order of Kafka's ``HashMap`` of
        subscriptions).
    partition_racks:
        Optional replica racks per partition (``{topic: [racks of partition 0, ...]}``); only
        the range assignor's rack-aware mode reads them. Empty: partitions have no racks.
    """

    assignor: str
    topics: dict[str, int]
    members: tuple[MemberSubscription, ...]
    partition_racks: dict[str, tuple[frozenset[str], ...]] = field(default_factory=dict)
