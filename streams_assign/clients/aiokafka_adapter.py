"""streams-assign as an aiokafka partition assignor.

Pass an instance (one per consumer, sharing one :class:`StreamsProcess` per process) in
``partition_assignment_strategy``::

    process = StreamsProcess(topology, StreamsSettings(num_standby_replicas=1))
    assignor = AiokafkaStreamsAssignor(process)
    consumer = AIOKafkaConsumer(*topology.source_topics, group_id="app",
                                partition_assignment_strategy=(assignor,))

aiokafka's ``AbstractPartitionAssignor`` declares ``assign``, ``metadata`` and
``on_assignment`` as class methods taking ``ConsumerProtocolMemberMetadata`` (fields
``version``, ``subscription``, ``user_data``) keyed by member id; the coordinator calls them on
the instance it was given, so per-consumer state works. aiokafka runs the eager protocol only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from aiokafka.coordinator.protocol import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
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
    "AiokafkaStreamsAssignor",
]


log = logging.getLogger(__name__)


class AiokafkaStreamsAssignor(AbstractPartitionAssignor):
    """A Kafka Streams-style task assignor for one aiokafka consumer (stream thread).

    Parameters
    ----------
    process:
        The process this consumer belongs to (shared by its consumers).
    on_assignment:
        Called with the decoded :class:`AssignmentInfo` after each rebalance (the app starts
        standbys and warmups and restores promoted actives there).

    Notes
    -----
    Kafka's ``StreamsPartitionAssignor`` for the eager protocol. Probing rebalances: run
    :meth:`watch_probing` as a task next to the consumer.
    """

    name = PROTOCOL_NAME  # type: ignore[assignment]

    def __init__(
        self,
        process: StreamsProcess,
        on_assignment: Callable[[AssignmentInfo], None] | None = None,
    ) -> None:
        self.process = process
        self.member = MemberState(process, on_assignment)

    def metadata(self, topics: Iterable[str]) -> ConsumerProtocolMemberMetadata:  # type: ignore[override]
        """JoinGroup metadata: subscribed topics and the member's subscription user data."""
        return ConsumerProtocolMemberMetadata(
            0, sorted(topics), self.member.subscription_user_data()
        )

    def assign(  # type: ignore[override]
        self, cluster: Any, members: Mapping[str, ConsumerProtocolMemberMetadata]
    ) -> dict[str, ConsumerProtocolMemberAssignment]:
        """The leader's decision (:func:`streams_assign.clients.core.decide`) per member id."""
        subscriptions = [
            MemberSubscription(member_id, list(meta.subscription), meta.user_data or b"")
            for member_id, meta in members.items()
        ]
        topics = sorted({t for meta in members.values() for t in meta.subscription})
        counts = partition_counts(topics, cluster.partitions_for_topic)
        decision = decide(self.process, subscriptions, counts)
        return {
            member_id: ConsumerProtocolMemberAssignment(0, a.partitions, a.user_data)
            for member_id, a in decision.items()
        }

    def on_assignment(self, assignment: ConsumerProtocolMemberAssignment) -> None:  # type: ignore[override]
        """Remember the member's tasks and the probing deadline."""
        self.member.on_assignment(assignment.user_data or b"")

    async def watch_probing(self, consumer: Any, interval_s: float = 0.2) -> None:
        """Rejoin the group when a probing rebalance (or version probing) is due; runs forever.

        aiokafka has no public "rejoin now" call; this uses the group coordinator's
        ``request_rejoin()`` (``consumer._coordinator``), the call aiokafka itself makes when
        the metadata or subscription changes.
        """
        while True:
            await asyncio.sleep(interval_s)
            if self.member.rejoin_due():
                coordinator = getattr(consumer, "_coordinator", None)
                if coordinator is None:
                    continue
                log.info("requesting a probing rebalance")
                self.member.rejoin_started()
                coordinator.request_rejoin()
