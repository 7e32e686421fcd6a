"""streams-assign as a kafka-python (3.x) partition assignor.

Pass an instance (one per consumer, sharing one :class:`StreamsProcess` per process) in
``partition_assignment_strategy``; kafka-python uses instances of
``AbstractPartitionAssignor`` as they are::

    assignor = KafkaPythonStreamsAssignor(process)
    consumer = KafkaConsumer(*topology.source_topics, group_id="app",
                             partition_assignment_strategy=[assignor])

kafka-python 3.x's interface: ``assign(cluster, members)`` takes a list of
``JoinGroupResponseMember`` (``member_id``, ``group_instance_id``, ``metadata`` already decoded
to ``ConsumerProtocolSubscription``), returns ``ConsumerProtocolAssignment`` per member id;
``on_assignment(assignment, generation)``; ``supported_protocols()`` (KIP-429). With
``cooperative=True`` this assignor runs the cooperative protocol: members send the partitions
they own (subscription v1 ``owned_partitions``) and the leader withholds a task whose partitions
another member still owns until that member released them, as Kafka Streams'
``addClientAssignments`` does; kafka-python then rejoins for the follow-up itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from streams_assign.clients.codec import AssignmentInfo
from streams_assign.clients.core import (
    PROTOCOL_NAME,
    MemberState,
    MemberSubscription,
    StreamsProcess,
    decide,
    partition_counts,
)

__all__ = [
    "KafkaPythonStreamsAssignor",
]


log = logging.getLogger(__name__)


class KafkaPythonStreamsAssignor(AbstractPartitionAssignor):
    """A Kafka Streams-style task assignor for one kafka-python consumer (stream thread).

    Parameters
    ----------
    process:
        The process this consumer belongs to (shared by its consumers).
    on_assignment:
        Called with the decoded :class:`AssignmentInfo` after each rebalance.

    Notes
    -----
    Kafka's ``StreamsPartitionAssignor`` for the eager protocol. Probing rebalances: call
    :meth:`maybe_rejoin` from the poll loop.
    """

    name = PROTOCOL_NAME

    def __init__(
        self,
        process: StreamsProcess,
        on_assignment: Callable[[AssignmentInfo], None] | None = None,
        cooperative: bool = False,
    ) -> None:
        self.process = process
        self.member = MemberState(process, on_assignment)
        self.cooperative = cooperative
        #: The generation of the last assignment received (-1 before the first).
        self.generation = -1

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """EAGER, or COOPERATIVE (KIP-429) when made with ``cooperative=True``."""
        if self.cooperative:
            return [RebalanceProtocol.COOPERATIVE]
        return [RebalanceProtocol.EAGER]

    def metadata(self, topics: Iterable[str]) -> ConsumerProtocolSubscription:
        """JoinGroup metadata: topics, user data and (cooperative) the partitions it owns."""
        user_data = self.member.subscription_user_data()
        if not self.cooperative:
            return ConsumerProtocolSubscription(0, sorted(topics), user_data)
        owned: dict[str, list[int]] = {}
        for task in self.member.assignment.active:
            for topic, partition in self.process.topology.source_partitions(task):
                owned.setdefault(topic, []).append(partition)
        entry = ConsumerProtocolSubscription.TopicPartition
        return ConsumerProtocolSubscription(
            version=1,
            topics=sorted(topics),
            user_data=user_data,
            owned_partitions=[
                entry(topic=t, partitions=sorted(parts)) for t, parts in sorted(owned.items())
            ],
        )

    def assign(self, cluster: Any, members: list[Any]) -> dict[str, ConsumerProtocolAssignment]:
        """The leader's decision (:func:`streams_assign.clients.core.decide`) per member id."""
        subscriptions = []
        topics: set[str] = set()
        for member in members:
            meta = member.metadata
            user_data = meta.user_data if isinstance(meta.user_data, bytes) else b""
            topics.update(meta.topics)
            owned = None
            if self.cooperative:
                owned = tuple(
                    (entry.topic, partition)
                    for entry in getattr(meta, "owned_partitions", None) or ()
                    for partition in entry.partitions
                )
            subscriptions.append(
                MemberSubscription(
                    member.member_id,
                    list(meta.topics),
                    user_data,
                    getattr(member, "group_instance_id", None),
                    owned,
                )
            )
        counts = partition_counts(sorted(topics), cluster.partitions_for_topic)
        decision = decide(self.process, subscriptions, counts)
        return {
            member_id: ConsumerProtocolAssignment(0, a.partitions, a.user_data)
            for member_id, a in decision.items()
        }

    def on_assignment(self, assignment: ConsumerProtocolAssignment, generation: int) -> None:
        """Remember the member's tasks and the probing deadline."""
        user_data = assignment.user_data if isinstance(assignment.user_data, bytes) else b""
        self.generation = generation
        self.member.on_assignment(user_data)

    def maybe_rejoin(self, consumer: Any) -> bool:
        """Ask for a rebalance when a probing rebalance (or version probing) is due.

        Call from the poll loop. kafka-python has no public "rejoin now" call; this uses the
        coordinator's ``request_rejoin()`` (``consumer._coordinator``), as kafka-python does
        itself after a cooperative revocation. Returns whether a rejoin was requested.
        """
        if not self.member.rejoin_due():
            return False
        coordinator = getattr(consumer, "_coordinator", None)
        if coordinator is None:
            return False
        log.info("requesting a probing rebalance")
        self.member.rejoin_started()
        coordinator.request_rejoin()
        return True
