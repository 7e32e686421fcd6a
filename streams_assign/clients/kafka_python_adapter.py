"""streams-assign as a kafka-python (3.x) partition assignor.

Pass an instance (one per consumer, sharing one :class:`StreamsProcess` per process) in
``partition_assignment_strategy``; kafka-python uses instances of
``AbstractPartitionAssignor`` as they are::

    assignor = KafkaPythonStreamsAssignor(process)
    consumer = KafkaConsumer(group_id="app", partition_assignment_strategy=[assignor])
    subscribe_with_metadata(consumer, topology.source_topics, listener)

kafka-python 3.x's interface: ``assign(cluster, members)`` takes a list of
``JoinGroupResponseMember`` (``member_id``, ``group_instance_id``, ``metadata`` already decoded
to ``ConsumerProtocolSubscription``), returns ``ConsumerProtocolAssignment`` per member id;
``on_assignment(assignment, generation)``; ``supported_protocols()`` (KIP-429). With
``cooperative=True`` this assignor runs the cooperative protocol: members send the partitions
they own (subscription v1 ``owned_partitions``) and the leader withholds a task whose partitions
another member still owns until that member released them, as Kafka Streams'
``addClientAssignments`` does; kafka-python then rejoins for the follow-up itself.

:func:`subscribe_with_metadata` (rather than ``consumer.subscribe`` or topics given to the
constructor) works around a kafka-python 3.0.x bug that can leave a member out of the group for
good (``docs/clients.md``, "A member that stopped following the group").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.errors import KafkaError
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
from streams_assign.errors import MissingSourceTopicError

__all__ = [
    "KafkaPythonStreamsAssignor",
    "subscribe_with_metadata",
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
    :meth:`maybe_rejoin` from the poll loop. Subscribe with :func:`subscribe_with_metadata`,
    which also attaches the assignor to its consumer (:meth:`attach`).
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
        self._coordinator: Any = None

    def attach(self, consumer: Any) -> None:
        """Bind this assignor to the consumer it serves, so each join stays pending until done.

        :func:`subscribe_with_metadata` and :meth:`maybe_rejoin` call this. From then on
        :meth:`metadata`, which kafka-python calls as it sends each JoinGroup, marks a rejoin as
        needed (``request_rejoin()`` on ``consumer._coordinator``); kafka-python clears the mark
        only when that JoinGroup/SyncGroup round has completed. Kafka's Java consumer keeps
        joining while a join is pending (``AbstractCoordinator.rejoinNeededOrPending``); without
        the mark, kafka-python 3.0.x ends its join loop when a rebalance started by the leader's
        metadata snapshot no longer looks needed, and leaves that round unfinished: the member
        stops heartbeating and silently drops out of the group (``docs/clients.md``). With it,
        the next ``poll`` completes that round instead.

        A round that completed while no ``poll`` was waiting for it (``poll``'s timeout expired
        before the round ended, and the round then finished in the client's IO thread) is
        finished on the next ``poll``: its assignment is applied
        (:func:`_finish_completed_rounds`). kafka-python 3.0.12 alone drops that round's
        assignment and sends a new JoinGroup, so a new leader after a failover never applies
        the assignment it computed and the group rebalances again without it.

        A group coordinator lookup that fails while the broker is unreachable (a broker
        restart) is retried on the next ``poll`` instead of raising out of it
        (:func:`_retry_coordinator_lookups`).
        """
        self._coordinator = getattr(consumer, "_coordinator", None)
        if self._coordinator is not None:
            _finish_completed_rounds(self._coordinator)
            _retry_coordinator_lookups(self._coordinator)

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """EAGER, or COOPERATIVE (KIP-429) when made with ``cooperative=True``."""
        if self.cooperative:
            return [RebalanceProtocol.COOPERATIVE]
        return [RebalanceProtocol.EAGER]

    def metadata(self, topics: Iterable[str]) -> ConsumerProtocolSubscription:
        """JoinGroup metadata: topics, user data and (cooperative) the partitions it owns."""
        if self._coordinator is not None:
            self._coordinator.request_rejoin()  # pending until this join completes: see attach
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
        if self._coordinator is None:
            self.attach(consumer)
        if not self.member.rejoin_due():
            return False
        coordinator = self._coordinator
        if coordinator is None:
            return False
        log.info("requesting a probing rebalance")
        self.member.rejoin_started()
        coordinator.request_rejoin()
        return True


class _CompletedRound:
    """A finished JoinGroup/SyncGroup round shown to kafka-python's join loop as in flight.

    ``AbstractCoordinator.join_group_async`` sends a new JoinGroup when its ``_join_task`` is
    done, and awaits the task otherwise (``KafkaConnectionManager.wait_for``, which only adds
    a callback and an errback). Wrapped in this object, a round that is done is awaited
    instead: the callbacks run at once with its assignment bytes (or its error), and the loop
    completes the join exactly as when it waited for the round: ``rejoin_needed`` cleared,
    heartbeats enabled, ``_on_join_complete_async`` applying the assignment, errors handled
    as usual. The loop then sets ``_join_task`` to ``None``.
    """

    is_done = False

    def __init__(self, round_: Any) -> None:
        self._round = round_

    def add_callback(self, f: Callable[..., Any], *args: Any, **kwargs: Any) -> _CompletedRound:
        self._round.add_callback(f, *args, **kwargs)
        return self

    def add_errback(self, f: Callable[..., Any], *args: Any, **kwargs: Any) -> _CompletedRound:
        self._round.add_errback(f, *args, **kwargs)
        return self


def _finish_completed_rounds(coordinator: Any) -> None:
    """Make ``coordinator`` apply a round that completed while no ``poll`` waited for it.

    kafka-python 3.0.12 (``AbstractCoordinator.join_group_async``) runs each JoinGroup/SyncGroup
    round as a task in the client's IO thread, and ``poll(timeout_ms=...)`` stops waiting for
    it when its timeout expires, leaving the task in flight. When the round then completes
    before the next ``poll``, that ``poll`` finds the task done and, the rejoin still needed,
    sends a new JoinGroup: the round's assignment is never applied. A group leader that does
    this keeps its tasks unstarted, and its new JoinGroup (``Leader ... re-joining group ...
    during Stable`` in the broker's log) starts another rebalance whose assignment no longer
    counts it as holding them. Kafka's Java consumer completes a finished join future instead
    (``AbstractCoordinator.joinGroupIfNeeded``); this wraps the coordinator's
    ``join_group_async`` so that a done round is awaited (:class:`_CompletedRound`) rather
    than replaced. Idempotent.
    """
    join_group_async = coordinator.join_group_async
    if getattr(join_group_async, "finishes_completed_rounds", False):
        return

    async def finishing_join_group_async(timeout_ms: float | None = None) -> bool:
        round_ = coordinator._join_task
        if round_ is not None and round_.is_done and coordinator.need_rejoin():
            coordinator._join_task = _CompletedRound(round_)
        return bool(await join_group_async(timeout_ms=timeout_ms))

    finishing_join_group_async.finishes_completed_rounds = True  # type: ignore[attr-defined]
    coordinator.join_group_async = finishing_join_group_async


def _retry_coordinator_lookups(coordinator: Any) -> None:
    """Make ``coordinator`` retry a group coordinator lookup that failed on a retriable error.

    kafka-python 3.0.12's ``AbstractCoordinator.ensure_coordinator_ready_async``, when the
    FindCoordinator request fails with an invalid-metadata error, waits for a metadata refresh
    and catches only a time-out there: with the broker unreachable (a restart) the refresh
    fails with ``KafkaConnectionError`` (retriable), which escapes ``KafkaConsumer.poll`` and
    ends the application's poll loop. Kafka's Java consumer keeps looking for the coordinator,
    backing off ``retry.backoff.ms``, until the poll's timer expires
    (``AbstractCoordinator.ensureCoordinatorReady``). This wraps the coordinator's
    ``ensure_coordinator_ready_async`` so that a retriable error backs off
    ``retry_backoff_ms`` and reports the coordinator as not ready (``poll`` returns no records;
    the next one looks again); other errors still raise. Idempotent.
    """
    ensure_coordinator_ready_async = coordinator.ensure_coordinator_ready_async
    if getattr(ensure_coordinator_ready_async, "retries_lookups", False):
        return

    async def retrying_ensure_coordinator_ready_async(timeout_ms: float | None = None) -> bool:
        try:
            return bool(await ensure_coordinator_ready_async(timeout_ms=timeout_ms))
        except KafkaError as exc:
            if not getattr(exc, "retriable", False):
                raise
            log.info("group coordinator lookup failed, retrying on the next poll: %s", exc)
            await coordinator._manager._net.sleep(coordinator.config["retry_backoff_ms"] / 1000)
            return False

    retrying_ensure_coordinator_ready_async.retries_lookups = True  # type: ignore[attr-defined]
    coordinator.ensure_coordinator_ready_async = retrying_ensure_coordinator_ready_async


def subscribe_with_metadata(
    consumer: Any,
    topics: Iterable[str],
    listener: Any = None,
    timeout_s: float = 30.0,
) -> dict[str, int]:
    """Subscribe a kafka-python consumer, then wait until its metadata holds every topic.

    Call this instead of ``consumer.subscribe`` before the first ``poll``: the group leader's
    first assignment then sees every partition of the source topics, so the group never needs
    the rebalance kafka-python starts when the leader's metadata snapshot changes after an
    assignment. That rebalance can strand a member in kafka-python 3.0.x (``docs/clients.md``,
    "A member that stopped following the group"): its join loop ends on
    ``need_rejoin() == False`` while the leader's JoinGroup/SyncGroup round is still in flight,
    so the member never completes that round, never heartbeats again and is dropped from the
    group, for good. Every :class:`KafkaPythonStreamsAssignor` of the consumer is also
    attached to it (:meth:`KafkaPythonStreamsAssignor.attach`), which makes such a member
    complete that round should that rebalance still happen (a source topic given more
    partitions).

    Parameters
    ----------
    consumer:
        A ``kafka.KafkaConsumer`` with a ``group_id``, not yet polled.
    topics:
        The source topics (``Topology.source_topics``).
    listener:
        A ``kafka.ConsumerRebalanceListener`` passed on to ``subscribe``, or ``None``.
    timeout_s:
        Longest wait for the topics to appear, in seconds.

    Returns
    -------
    dict[str, int]
        The partition count of each topic.

    Raises
    ------
    MissingSourceTopicError
        When a topic still has no partitions after ``timeout_s``; the message names it.
    kafka.errors.KafkaError
        A metadata error that is not retriable (an authorization failure, for instance).

    Notes
    -----
    ``KafkaConsumer.topics()`` fetches fresh metadata for every topic and waits for it; the
    consumer's coordinator rebuilds its metadata snapshot of the subscribed topics from each
    metadata response (``ConsumerCoordinator._handle_metadata_update``), so a fetch made after
    ``subscribe`` leaves that snapshot complete before the group is joined. Kafka's Java
    consumer has the same check (``ConsumerCoordinator.rejoinNeededOrPending``) but also keeps
    rejoining while a join is pending (``joinFuture != null``), which is what kafka-python 3.0.x
    lacks.
    """
    wanted = sorted(set(topics))
    coordinator = getattr(consumer, "_coordinator", None)
    for assignor in getattr(coordinator, "_assignors", {}).values():
        if isinstance(assignor, KafkaPythonStreamsAssignor):
            assignor.attach(consumer)
    consumer.subscribe(wanted, listener=listener)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            consumer.topics()  # a metadata fetch issued after the subscription, awaited
        except KafkaError as exc:
            # A fetch for the subscribed topic alone fails with UnknownTopicOrPartition while
            # it does not exist yet: retriable, like any other retriable error here.
            if not getattr(exc, "retriable", False):
                raise
        counts = {topic: len(consumer.partitions_for_topic(topic) or ()) for topic in wanted}
        missing = [topic for topic, count in counts.items() if count == 0]
        if not missing:
            return counts
        if time.monotonic() >= deadline:
            raise MissingSourceTopicError(
                f"source topics {missing} have no partitions in the metadata of "
                f"{consumer.config.get('bootstrap_servers')!r} after {timeout_s:g} s"
            )
        time.sleep(0.1)
