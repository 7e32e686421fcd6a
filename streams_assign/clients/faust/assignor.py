"""The faust partition assignor that runs a streams-assign assignor at the group leader.

A faust app enables it with one setting::

    app = faust.App(
        "app", PartitionAssignor="streams_assign.clients.faust:StreamsPartitionAssignor"
    )

It is faust's own ``faust.assignor.PartitionAssignor`` (same protocol name ``faust`` and
version, same records, same table routing) with three changes:

* ``metadata``: the worker adds its process id and its stores' changelog offsets
  (:mod:`~streams_assign.clients.faust.store_offsets`) to faust's ``ClientMetadata``;
* ``_perform_assignment`` (the leader): topic groups as tasks, the registered assignor of
  :attr:`StreamsPartitionAssignor.settings` (``high_availability`` by default), answers in
  faust's exact format, warmup replicas sent as standbys and listed apart
  (:mod:`~streams_assign.clients.faust.decision`);
* ``on_assignment``: after faust's own checks, a member holding warmups rejoins for a probing
  rebalance as soon as each warmup is within ``acceptable_recovery_lag`` of its changelog's end
  (at the probing deadline at the latest).

Rolling upgrade: workers with and without the setting share the protocol. A leader without it
runs faust's assignor on every member (it ignores the extension); a leader with it counts a
member without the extension as a process with no local state but its running actives.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from aiokafka.coordinator.protocol import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)
from faust.assignor import PartitionAssignor
from faust.assignor.client_assignment import ClientAssignment, ClientMetadata
from faust.types import TP

from streams_assign.clients.core import StreamsSettings
from streams_assign.clients.faust.decision import FaustDecision, decide_faust
from streams_assign.clients.faust.metadata import (
    NO_PROBING,
    AssignmentExtension,
    FaustMember,
    decode_assignment_extension,
    decode_member_metadata,
    encode_assignment_user_data,
    encode_member_metadata,
)
from streams_assign.clients.faust.store_offsets import store_changelog_offsets
from streams_assign.clients.topology import EndOffsetFetcher
from streams_assign.errors import CodecError

__all__ = [
    "LagAwareStickyPartitionAssignor",
    "StreamsPartitionAssignor",
]

log = logging.getLogger(__name__)

#: The file in faust's ``tabledir`` that keeps the worker's process id across restarts.
PROCESS_ID_FILE = "streams-assign.process-id"


def _process_id(tabledir: Path) -> str:
    path = Path(tabledir) / PROCESS_ID_FILE
    try:
        return str(uuid.UUID(path.read_text().strip()))
    except (OSError, ValueError):
        pass
    process_id = str(uuid.uuid4())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(process_id + "\n")
    except OSError as exc:
        log.warning("cannot keep the process id in %s: %r", path, exc)
    return process_id


class StreamsPartitionAssignor(PartitionAssignor):  # type: ignore[misc]
    """faust's partition assignor with a streams-assign assignor at the leader.

    Parameters
    ----------
    app:
        The faust app (faust constructs the assignor itself).
    replicas:
        faust's ``table_standby_replicas``: Kafka's ``num.standby.replicas``.

    Attributes
    ----------
    settings:
        Class attribute: the assignor name and Kafka's ``acceptable.recovery.lag``,
        ``max.warmup.replicas``, ``probing.rebalance.interval.ms`` (``num_standby_replicas``
        comes from faust's ``table_standby_replicas``). :meth:`with_settings` makes a subclass
        with others.
    probe_check_s:
        Seconds between two checks of the warmups' lag.
    last_decision:
        The most recent :class:`~streams_assign.clients.faust.decision.FaustDecision` this
        worker made as leader, or ``None``.
    extension:
        streams-assign's part of the worker's latest assignment (``None`` when a leader
        without the setting decided).
    end_offsets:
        The leader's changelog end-offset fetcher; a
        :class:`~streams_assign.clients.offsets.KafkaEndOffsets` on the app's brokers is made
        at the first decision when none is set.

    Notes
    -----
    Follows Kafka Streams' ``StreamsPartitionAssignor`` (``subscriptionUserData``, ``assign``,
    ``onAssignment``) on faust's group protocol. Changelog end offsets are fetched with
    :class:`~streams_assign.clients.offsets.KafkaEndOffsets` (kafka-python, in the ``faust``
    extra); a failure makes every lag unknown and the leader runs ``fallback_prior``.
    """

    settings: ClassVar[StreamsSettings] = StreamsSettings()
    probe_check_s: ClassVar[float] = 0.5

    def __init__(self, app: Any, replicas: int = 0) -> None:
        super().__init__(app, replicas=replicas)
        self.streams_settings = replace(self.settings, num_standby_replicas=replicas)
        self.process_id = _process_id(app.conf.tabledir)
        self.last_decision: FaustDecision | None = None
        self.extension: AssignmentExtension | None = None
        self.end_offsets: EndOffsetFetcher | None = None
        self._probe: asyncio.Task[None] | None = None
        self._refresh: asyncio.Task[None] | None = None

    @classmethod
    def with_settings(cls, **settings: Any) -> type[StreamsPartitionAssignor]:
        """A subclass whose :attr:`settings` are ``StreamsSettings(**settings)``.

        Raises
        ------
        TypeError
            For a keyword :class:`~streams_assign.clients.core.StreamsSettings` does not have.
        """
        return type(cls.__name__, (cls,), {"settings": StreamsSettings(**settings)})

    # ------------------------------------------------------------------ member side
    def metadata(self, topics: Any) -> ConsumerProtocolMemberMetadata:
        """faust's subscription with the process id and the stores' changelog offsets."""
        offsets = store_changelog_offsets(self.app.tables.values())
        data = encode_member_metadata(self._metadata.dumps(), self.process_id, offsets)
        return ConsumerProtocolMemberMetadata(self.version, list(topics), data)

    def on_assignment(self, assignment: Any) -> None:
        """faust's ``on_assignment``, then the probing rejoin for warmups (if any)."""
        super().on_assignment(assignment)
        try:
            self.extension = decode_assignment_extension(assignment.user_data)
        except CodecError as exc:
            log.warning("unreadable streams-assign assignment extension: %s", exc)
            self.extension = None
        if self._probe is not None:
            self._probe.cancel()
            self._probe = None
        extension = self.extension
        if extension is None or (
            not extension.warmups and extension.probing_deadline_ms == NO_PROBING
        ):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            log.warning("no running event loop: the probing rejoin cannot be scheduled")
            return
        self._probe = loop.create_task(self._probe_when_caught_up(extension))

    def warmup_lags(self, extension: AssignmentExtension) -> dict[TP, int | None]:
        """Per warmup changelog partition, records behind its end (``None``: not known yet)."""
        recovery: Any = getattr(self.app.tables, "recovery")  # noqa: B009 - not in TableManagerT
        lags: dict[TP, int | None] = {}
        for topic, partitions in extension.warmups.items():
            for partition in partitions:
                tp = TP(topic, partition)
                try:
                    highwater = self.app.consumer.highwater(tp)
                except Exception:  # noqa: BLE001 - not assigned (yet): unknown
                    highwater = None
                offset = recovery.standby_offsets.get(tp)
                if highwater is None or offset is None:
                    lags[tp] = None
                else:
                    lags[tp] = max(0, int(highwater) - (int(offset) + 1))
        return lags

    async def _probe_when_caught_up(self, extension: AssignmentExtension) -> None:
        while self.extension is extension:
            await asyncio.sleep(self.probe_check_s)
            if self.extension is not extension:
                return
            deadline = extension.probing_deadline_ms
            due = deadline != NO_PROBING and time.time() * 1000 >= deadline
            lags = self.warmup_lags(extension)
            caught_up = bool(lags) and all(
                lag is not None and lag <= extension.acceptable_recovery_lag
                for lag in lags.values()
            )
            if due or caught_up:
                log.info("probing rebalance: warmups caught up=%s, lags %s", caught_up, lags)
                self.request_rejoin()
                return

    def request_rejoin(self) -> None:
        """Ask the worker's consumer to rejoin the group (a probing rebalance)."""
        thread: Any = getattr(self.app.consumer, "_thread")  # noqa: B009 - faust's aiokafka driver
        consumer = thread._ensure_consumer()
        consumer._coordinator.request_rejoin()

    # ------------------------------------------------------------------ leader side
    def refresh_metadata_until_found(self, topics: list[str]) -> None:
        """Refresh the leader's metadata until ``topics`` exist (every 0.5 s, for 30 s).

        Workers starting at once create faust's internal topics concurrently, and a leader
        whose metadata lacks one assigns without it. aiokafka reassigns when the leader's
        metadata changes, but refreshes it only every ``consumer_metadata_max_age_ms`` (5
        minutes in faust): asking for it sooner makes the group rebalance as soon as the topic
        is seen.
        """
        log.warning("subscribed topics missing from the leader's metadata: %s", topics)
        try:
            loop = asyncio.get_running_loop()
            thread: Any = getattr(self.app.consumer, "_thread")  # noqa: B009 - aiokafka driver
            client = thread._ensure_consumer()._client
        except Exception as exc:  # noqa: BLE001 - no refresh: aiokafka's own interval applies
            log.warning("cannot refresh the metadata: %r", exc)
            return

        async def refresh() -> None:
            for _ in range(60):
                await asyncio.sleep(0.5)
                await client.force_metadata_update()
                if all(client.cluster.partitions_for_topic(t) for t in topics):
                    return

        self._refresh = loop.create_task(refresh())

    def _end_offset_fetcher(self) -> EndOffsetFetcher:
        if self.end_offsets is None:
            from streams_assign.clients.offsets import KafkaEndOffsets

            servers = ",".join(f"{url.host}:{url.port or 9092}" for url in self.app.conf.broker)
            self.end_offsets = KafkaEndOffsets(servers, timeout_s=5.0)
        return self.end_offsets

    def _decode_members(
        self, member_metadata: Any
    ) -> tuple[dict[str, FaustMember], dict[str, list[str]], list[str]]:
        decoded: dict[str, FaustMember] = {}
        subscriptions: dict[str, list[str]] = {}
        undecodable: list[str] = []
        for member_id, metadata in member_metadata.items():
            try:
                decoded[member_id] = decode_member_metadata(metadata.user_data)
                subscriptions[member_id] = [str(t) for t in metadata.subscription]
            except Exception as exc:  # noqa: BLE001 - one member's bytes never crash the leader
                log.warning(
                    "member %s sent undecodable metadata, it gets nothing: %r", member_id, exc
                )
                undecodable.append(member_id)
        return decoded, subscriptions, undecodable

    def _perform_assignment(self, cluster: Any, member_metadata: Any) -> dict[str, Any]:
        """The leader's decision, in faust's ``ConsumerProtocolMemberAssignment`` per member."""
        decoded, subscriptions, undecodable = self._decode_members(member_metadata)
        topics = {t for subscribed in subscriptions.values() for t in subscribed}
        partitions = {t: len(cluster.partitions_for_topic(t) or ()) for t in topics}
        missing = sorted(t for t, count in partitions.items() if count == 0)
        if missing:
            self.refresh_metadata_until_found(missing)
        tables = list(self._table_manager.data.values())
        global_changelogs = frozenset(t._changelog_topic_name() for t in tables if t.is_global)
        changelogs = frozenset(self._table_manager.changelog_topics) - global_changelogs
        decision = decide_faust(
            decoded,
            subscriptions,
            partitions,
            changelogs,
            self.streams_settings,
            self._end_offset_fetcher(),
            global_changelogs,
        )
        self.last_decision = decision
        log.info(
            "%s decided for %d members: %s",
            self.streams_settings.assignor,
            len(decoded),
            {m: a["actives"] for m, a in decision.assignments.items()},
        )
        assignments: Any = {
            member_id: ClientAssignment(actives=fields["actives"], standbys=fields["standbys"])
            for member_id, fields in decision.assignments.items()
        }
        self._member_urls = {member_id: member.url for member_id, member in decoded.items()}
        assignments = self._global_table_standby_assignments(assignments, partitions)
        changelog_distribution = self._get_changelog_distribution(assignments)
        external_distribution = self._get_external_topic_distribution(assignments)
        deadline = NO_PROBING
        if decision.probing_rebalance_needed:
            deadline = int(time.time() * 1000) + self.streams_settings.probing_rebalance_interval_ms
        result: dict[str, Any] = {}
        for member_id, assignment in assignments.items():
            record = ClientMetadata(
                assignment=assignment,
                url=self._member_urls[member_id],
                changelog_distribution=changelog_distribution,
                external_topic_distribution=external_distribution,
                topic_groups=decision.topic_groups,
            )
            extension = AssignmentExtension(
                assignor=self.streams_settings.assignor,
                warmups=decision.warmups.get(member_id, {}),
                acceptable_recovery_lag=self.streams_settings.acceptable_recovery_lag,
                probing_deadline_ms=deadline,
            )
            result[member_id] = ConsumerProtocolMemberAssignment(
                self.version,
                sorted(assignment.kafka_protocol_assignment(self._table_manager)),
                encode_assignment_user_data(record.dumps(), extension),
            )
        for member_id in undecodable:
            record = ClientMetadata(
                assignment=ClientAssignment(actives={}, standbys={}),
                url="",
                changelog_distribution=changelog_distribution,
                external_topic_distribution=external_distribution,
                topic_groups=decision.topic_groups,
            )
            result[member_id] = ConsumerProtocolMemberAssignment(
                self.version, [], encode_assignment_user_data(record.dumps(), None)
            )
        return result


class LagAwareStickyPartitionAssignor(StreamsPartitionAssignor):
    """:class:`StreamsPartitionAssignor` running ``lag_aware_sticky`` at the leader."""

    settings: ClassVar[StreamsSettings] = StreamsSettings(assignor="lag_aware_sticky")
