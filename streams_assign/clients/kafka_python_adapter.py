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
``on_assignment(assignment, generation)``; ``supported_protocols()`` (KIP-429). This assignor
declares the eager protocol only.
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
    ) -> None:
        self.process = process
        self.member = MemberState(process, on_assignment)

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """Eager only: tasks move whole, as with Kafka Streams' eager protocol."""
        return [RebalanceProtocol.EAGER]

    def metadata(self, topics: Iterable[str]) -> ConsumerProtocolSubscription:
        """JoinGroup metadata: subscribed topics and the member's subscription user data."""
        return ConsumerProtocolSubscription(
            0, sorted(topics), self.member.subscription_user_data()
        )

    def assign(self, cluster: Any, members: list[Any]) -> dict[str, ConsumerProtocolAssignment]:
        """The leader's decision (:func:`streams_assign.clients.core.decide`) per member id."""
        subscriptions = []
        topics: set[str] = set()
        for member in members:
            meta = member.metadata
            user_data = meta.user_data if isinstance(meta.user_data, bytes) else b""
            topics.update(meta.topics)
            subscriptions.append(
                MemberSubscription(
                    member.member_id,
                    list(meta.topics),
                    user_data,
                    getattr(member, "group_instance_id", None),
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
