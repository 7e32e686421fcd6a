"""The shared core of the client adapters: what a member sends, what the leader decides.

Both adapters (:mod:`streams_assign.clients.aiokafka_adapter`,
:mod:`streams_assign.clients.kafka_python_adapter`) only translate their client's protocol
structs to and from the plain data here:

* :class:`StreamsProcess` holds what one app process shares between its consumers (process
  id, topology, settings, local-state offset sums, endpoint, client tags);
* :class:`MemberState` is one consumer's (stream thread's) memory between rebalances, and
  builds its subscription user data and reads its assignment;
* :func:`decide` is the leader's decision: subscriptions -> cluster state (lags from offset
  sums and changelog end offsets) -> streams-assign -> tasks spread over each process's
  consumers -> per-member partitions and assignment user data.

Follows Kafka Streams' ``StreamsPartitionAssignor`` (``subscriptionUserData``, ``assign``,
``populateClientStatesMap``, ``computeNewAssignment``, ``onAssignment``) for an eager group.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from streams_assign.clients.codec import (
    LATEST_SUPPORTED_VERSION,
    NO_PROBING,
    AssignmentInfo,
    SubscriptionInfo,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from streams_assign.clients.topology import EndOffsetFetcher, Topology
from streams_assign.errors import CodecError
from streams_assign.model import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    Assignment,
    TaskId,
    TopicPartition,
)

log = logging.getLogger(__name__)

#: Name the assignor registers under in the group protocol.
PROTOCOL_NAME = "streams-assign"

_NAMESPACE = uuid.UUID("6c1f2b8e-41b7-4d0e-9f5e-7a3c2d9e0b11")


@dataclass(frozen=True, slots=True)
class StreamsSettings:
    """Kafka Streams' assignment configs as the adapters take them.

    Attributes
    ----------
    num_standby_replicas:
        ``num.standby.replicas``. Default 0.
    acceptable_recovery_lag:
        ``acceptable.recovery.lag`` in records. Default 10000.
    max_warmup_replicas:
        ``max.warmup.replicas``. Default 2.
    probing_rebalance_interval_ms:
        ``probing.rebalance.interval.ms`` in milliseconds. Kafka requires >= 60000; here any
        value >= 1 is accepted so tests can probe quickly (the assignor itself never reads it).
    rack_aware_assignment_tags:
        ``rack.aware.assignment.tags`` (KIP-708); members send ``client_tags``.
    assignor:
        A name registered in :data:`streams_assign.assignors.ASSIGNORS`; default
        ``high_availability``.
    """

    num_standby_replicas: int = 0
    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    probing_rebalance_interval_ms: int = 600_000
    rack_aware_assignment_tags: tuple[str, ...] = ()
    assignor: str = "high_availability"

    def configs_document(self) -> dict[str, Any]:
        """The ``configs`` object of a cluster-state document."""
        return {
            "num_standby_replicas": self.num_standby_replicas,
            "acceptable_recovery_lag": self.acceptable_recovery_lag,
            "max_warmup_replicas": self.max_warmup_replicas,
            "probing_rebalance_interval_ms": max(60_000, self.probing_rebalance_interval_ms),
            "rack_aware_assignment_tags": list(self.rack_aware_assignment_tags),
        }


@dataclass(frozen=True, slots=True)
class MemberAssignment:
    """What the leader gives one member: protocol partitions and assignment user data.

    Attributes
    ----------
    partitions:
        ``[(topic, [partition, ...]), ...]`` sorted: the source partitions of its active tasks.
    user_data:
        The encoded :class:`~streams_assign.clients.codec.AssignmentInfo`.
    info:
        The same, decoded (for logging and tests).
    """

    partitions: list[tuple[str, list[int]]]
    user_data: bytes
    info: AssignmentInfo


@dataclass(slots=True)
class StreamsProcess:
    """What all consumers (stream threads) of one app process share.

    Parameters
    ----------
    topology:
        The app's topology.
    settings:
        The assignment configs (the leader's are the ones that count).
    process_id:
        The process id (a UUID string); a fresh random one by default. Give the id stored
        with the local state to keep it across restarts.
    offset_sums:
        Called at every join: per stateful task with local state in this process, the sum of
        its checkpointed changelog offsets in records (the state helper's
        :meth:`~streams_assign.clients.state.StateDirectory.task_offset_sums`). Running actives
        are reported as -2 by the members themselves.
    end_offsets:
        Used by the leader: changelog end offsets (``listOffsets`` latest), ``None`` on failure.
    endpoint:
        ``host:port`` of the process for interactive queries, or ``None``.
    client_tags:
        ``client.tag.*`` values (zone, ...).
    clock_ms:
        The wall clock in epoch milliseconds (probing deadlines); replaceable in tests.

    Attributes
    ----------
    last_decision:
        The most recent :class:`~streams_assign.model.Assignment` this process made as group
        leader, or ``None``.
    """

    topology: Topology
    settings: StreamsSettings = field(default_factory=StreamsSettings)
    process_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    offset_sums: Callable[[], Mapping[TaskId, int]] = dict
    end_offsets: EndOffsetFetcher | None = None
    endpoint: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    clock_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    last_decision: Assignment | None = None


class MemberState:
    """One consumer's (stream thread's) protocol state between rebalances.

    Parameters
    ----------
    process:
        The process it belongs to.
    on_assignment_cb:
        Called with each decoded :class:`AssignmentInfo` after SyncGroup (the app starts its
        standbys and warmups there).

    Notes
    -----
    Kafka's ``StreamsPartitionAssignor.subscriptionUserData`` / ``onAssignment``: the member
    remembers its tasks, sends them with its process's offset sums at the next join, adopts the
    leader's version (version probing) and keeps the probing deadline.
    """

    def __init__(
        self,
        process: StreamsProcess,
        on_assignment_cb: Callable[[AssignmentInfo], None] | None = None,
    ) -> None:
        self.process = process
        self.used_version = LATEST_SUPPORTED_VERSION
        self.assignment = AssignmentInfo()
        self.rejoin_requested = False
        self._on_assignment_cb = on_assignment_cb
        self._lock = threading.Lock()

    def subscription_user_data(self) -> bytes:
        """The member's subscription user data for the next JoinGroup."""
        current = self.assignment
        sums: dict[TaskId, int] = {}
        for task, value in self.process.offset_sums().items():
            sums[task] = value if value >= 0 or value in (-2, -3) else UNKNOWN_OFFSET_SUM
        for task in current.active:
            if task in sums or self.process.topology.subtopology(task.subtopology).stateful:
                sums[task] = LATEST_OFFSET
        info = SubscriptionInfo(
            process_id=self.process.process_id,
            prev_active=current.active,
            prev_standby=tuple(sorted({*current.standby, *current.warmup})),
            task_offset_sums=sums,
            endpoint=self.process.endpoint,
            client_tags=dict(self.process.client_tags),
            version=self.used_version,
        )
        return encode_subscription(info)

    def on_assignment(self, user_data: bytes) -> AssignmentInfo:
        """Read the leader's assignment user data; decide whether to rejoin (version probing).

        An undecodable assignment counts as an empty one and asks for a rejoin.
        """
        try:
            info = decode_assignment(user_data)
        except CodecError as exc:
            log.warning("undecodable assignment user data, rejoining: %s", exc)
            info = AssignmentInfo()
            with self._lock:
                self.assignment = info
                self.rejoin_requested = True
            return info
        version = min(LATEST_SUPPORTED_VERSION, info.latest_supported_version)
        with self._lock:
            if version != self.used_version:
                log.info(
                    "subscription version %d -> %d (version probing)", self.used_version, version
                )
                self.rejoin_requested = True
            self.used_version = version
            self.assignment = info
        if self._on_assignment_cb is not None:
            self._on_assignment_cb(info)
        return info

    def rejoin_due(self, now_ms: int | None = None) -> bool:
        """Whether this member should rejoin now: version probing, or the probing deadline."""
        now = self.process.clock_ms() if now_ms is None else now_ms
        with self._lock:
            if self.rejoin_requested:
                return True
            deadline = self.assignment.next_probing_ms
            return deadline != NO_PROBING and now >= deadline

    def rejoin_started(self) -> None:
        """Clear the rejoin request and the probing deadline once the rejoin is asked for."""
        with self._lock:
            self.rejoin_requested = False
            self.assignment = AssignmentInfo(
                self.assignment.active,
                self.assignment.standby,
                self.assignment.warmup,
                self.assignment.endpoints,
                NO_PROBING,
                self.assignment.error_code,
                self.assignment.version,
                self.assignment.latest_supported_version,
            )


@dataclass(frozen=True, slots=True)
class MemberSubscription:
    """One member as the leader sees it.

    Attributes
    ----------
    member_id, topics, user_data, group_instance_id:
        From the JoinGroup response.
    owned_partitions:
        ``(topic, partition)`` pairs the member still owns, under the cooperative protocol
        (KIP-429, consumer protocol subscription v1+); ``None`` under the eager protocol.
    """

    member_id: str
    topics: Sequence[str]
    user_data: bytes
    group_instance_id: str | None = None
    owned_partitions: tuple[TopicPartition, ...] | None = None


def decode_member(member: MemberSubscription) -> SubscriptionInfo:
    """The member's subscription; undecodable user data counts as a member with no state.

    Never raises: a member whose user data cannot be read gets a process id of its own
    (derived from its member id), no previous tasks and no offset sums, with a warning, as
    Kafka's leader must not fail the whole group for one bad member.
    """
    try:
        return decode_subscription(member.user_data)
    except CodecError as exc:
        log.warning(
            "member %s sent undecodable subscription user data (%s); treating it as a "
            "process with no local state",
            member.member_id,
            exc,
        )
    except Exception as exc:  # noqa: BLE001 - one member's bytes must never crash the leader
        log.warning("member %s: unexpected error decoding user data: %r", member.member_id, exc)
    return SubscriptionInfo(
        str(uuid.uuid5(_NAMESPACE, member.member_id)), version=LATEST_SUPPORTED_VERSION
    )


def changelog_end_offset_sums(
    topology: Topology, stateful: Sequence[TaskId], fetch: EndOffsetFetcher | None
) -> dict[TaskId, int] | None:
    """Per stateful task, the sum of its changelog partitions' end offsets (records).

    Kafka's ``computeEndOffsetSumsByTask``: an overflow pins the sum at ``Long.MAX_VALUE``.
    ``None`` when there is no fetcher, the fetch fails, or a partition is missing (Kafka then
    marks every lag unknown and runs the fallback assignor).
    """
    if fetch is None:
        return None
    partitions = [p for task in stateful for p in topology.changelog_partitions(task)]
    try:
        offsets = fetch(partitions) if partitions else {}
    except Exception as exc:  # noqa: BLE001 - a failed fetch degrades to unknown lags
        log.warning("changelog end offsets could not be fetched: %r", exc)
        return None
    if offsets is None:
        return None
    sums: dict[TaskId, int] = {}
    for task in stateful:
        total = 0
        for partition in topology.changelog_partitions(task):
            if partition not in offsets:
                log.warning("no end offset for changelog partition %s", partition)
                return None
            total += max(0, offsets[partition])
        sums[task] = min(total, LONG_MAX_VALUE)
    return sums


def cluster_document(
    process: StreamsProcess,
    subscriptions: Mapping[str, SubscriptionInfo],
    partitions_per_topic: Mapping[str, int],
    owned: Mapping[str, tuple[TopicPartition, ...]] | None = None,
) -> dict[str, Any]:
    """The cluster-state document of this rebalance (``docs/scenario-format.md``).

    Parameters
    ----------
    process:
        The leader's process (topology, settings, end-offset fetcher).
    subscriptions:
        Per member id, its decoded subscription.
    partitions_per_topic:
        Partition count per topic from the leader's metadata.
    owned:
        Under the cooperative protocol, per member id the partitions it still owns; the
        document then has ``owned_partitions`` per consumer and the ``task_partitions``,
        ``leader`` (this process) and ``now_ms`` extensions, so tasks still owned elsewhere are
        withheld as Kafka's ``addClientAssignments`` does.

    Returns
    -------
    dict
        With ``stateful_tasks``, ``stateless_tasks``, one client per process id (capacity =
        its member count, ``consumers`` = its members with their previous tasks) and either
        ``task_offset_sums`` plus ``changelog_end_offset_sums``, or all lags ``-3`` when the
        end offsets are unknown (Kafka's failed lag computation).
    """
    tasks = process.topology.tasks(partitions_per_topic)
    stateful = sorted(t for t, is_stateful in tasks.items() if is_stateful)
    stateless = sorted(t for t, is_stateful in tasks.items() if not is_stateful)
    end_sums = changelog_end_offset_sums(process.topology, stateful, process.end_offsets)
    by_process: dict[str, list[tuple[str, SubscriptionInfo]]] = {}
    for member_id in sorted(subscriptions):
        info = subscriptions[member_id]
        by_process.setdefault(info.process_id, []).append((member_id, info))
    claimed_active: set[TaskId] = set()
    clients: list[dict[str, Any]] = []
    for process_id, members in by_process.items():
        sums: dict[TaskId, int] = {}
        consumers: list[dict[str, Any]] = []
        tags: dict[str, str] = {}
        for member_id, info in members:
            tags.update(info.client_tags)
            prev_active = [t for t in info.prev_active if t in tasks and t not in claimed_active]
            claimed_active.update(prev_active)
            prev_standby = [t for t in info.prev_standby if t in tasks and t not in prev_active]
            consumer: dict[str, Any] = {
                "member_id": member_id,
                "prev_active": [str(t) for t in prev_active],
                "prev_standby": [str(t) for t in prev_standby],
            }
            if owned is not None:
                consumer["owned_partitions"] = [
                    [t, p] for t, p in owned.get(member_id, ()) if process.topology.task_of((t, p))
                ]
            consumers.append(consumer)
            for task, value in info.task_offset_sums.items():
                if task not in tasks or not tasks[task]:
                    continue
                old = sums.get(task)
                if old is None or value == LATEST_OFFSET or (old != LATEST_OFFSET and value > old):
                    sums[task] = value
        client: dict[str, Any] = {"id": process_id, "consumers": consumers}
        if tags:
            client["tags"] = tags
        if end_sums is None:
            client["task_lags"] = {str(t): UNKNOWN_OFFSET_SUM for t in stateful}
        else:
            client["task_offset_sums"] = {str(t): v for t, v in sorted(sums.items())}
        clients.append(client)
    document: dict[str, Any] = {
        "configs": process.settings.configs_document(),
        "stateful_tasks": [str(t) for t in stateful],
        "stateless_tasks": [str(t) for t in stateless],
        "clients": clients,
    }
    if end_sums is not None:
        document["changelog_end_offset_sums"] = {str(t): v for t, v in end_sums.items()}
    if owned is not None:
        document["task_partitions"] = {
            str(t): [[topic, p] for topic, p in process.topology.source_partitions(t)]
            for t in sorted(tasks)
        }
        if process.process_id in by_process:
            document["leader"] = process.process_id
        document["now_ms"] = process.clock_ms()
    return document


def decide(
    process: StreamsProcess,
    members: Sequence[MemberSubscription],
    partitions_per_topic: Mapping[str, int],
) -> dict[str, MemberAssignment]:
    """The leader's decision for one rebalance, per member id.

    Parameters
    ----------
    process:
        The leader's process: topology, settings (assignor name, standbys, warmups), clock and
        changelog end-offset fetcher.
    members:
        Every member of the group with its user data.
    partitions_per_topic:
        Partition count per topic (the leader's metadata).

    Returns
    -------
    dict
        Per member id, its :class:`MemberAssignment`: the source partitions of its active
        tasks, and user data with its active, standby and warmup tasks, the endpoint map and
        the next probing time (now + ``probing_rebalance_interval_ms`` when the assignor asks
        for a probing rebalance).

    Raises
    ------
    streams_assign.errors.StreamsAssignError
        Only for the leader's own configuration (an unknown assignor name, a topology whose
        source topics are not co-partitioned); members' user data never raises.

    Notes
    -----
    Version probing as Kafka's: every assignment is encoded at the lowest version any member
    used (capped at :data:`LATEST_SUPPORTED_VERSION`) and carries the lowest version every
    member can read, which members adopt at their next join.
    """
    from streams_assign.assignors import assign

    subscriptions = {m.member_id: decode_member(m) for m in members}
    if not subscriptions:
        return {}
    used = min(min(s.version for s in subscriptions.values()), LATEST_SUPPORTED_VERSION)
    common = min(
        min(s.latest_supported_version for s in subscriptions.values()), LATEST_SUPPORTED_VERSION
    )
    owned = None
    if any(m.owned_partitions is not None for m in members):
        owned = {m.member_id: tuple(m.owned_partitions or ()) for m in members}
    document = cluster_document(process, subscriptions, partitions_per_topic, owned)
    result = assign(document, process.settings.assignor)
    process.last_decision = result
    probing_ms = NO_PROBING
    if result.probing_rebalance_needed:
        probing_ms = process.clock_ms() + process.settings.probing_rebalance_interval_ms
    # Cooperative: Kafka's follow-up times per member (0: at once, after a withheld task).
    follow_ups: Mapping[str, int] | None = result.extras.get("next_rebalance_ms")
    endpoints: dict[str, tuple[TaskId, ...]] = {}
    for process_id, client in result.clients.items():
        endpoint = next(
            (
                s.endpoint
                for s in subscriptions.values()
                if s.process_id == process_id and s.endpoint
            ),
            None,
        )
        if endpoint is not None:
            endpoints[endpoint] = tuple(sorted({*endpoints.get(endpoint, ()), *client.active}))
    out: dict[str, MemberAssignment] = {}
    for client in result.clients.values():
        warmups = set(client.warmup)
        for member_id, roles in (client.consumers or {}).items():
            active = tuple(roles.get("active", ()))
            standby_all = roles.get("standby", ())
            info = AssignmentInfo(
                active=active,
                standby=tuple(t for t in standby_all if t not in warmups),
                warmup=tuple(t for t in standby_all if t in warmups),
                endpoints=endpoints,
                next_probing_ms=(
                    probing_ms if follow_ups is None else follow_ups.get(member_id, NO_PROBING)
                ),
                version=used,
                latest_supported_version=common,
            )
            out[member_id] = MemberAssignment(
                protocol_partitions(process.topology, active), encode_assignment(info), info
            )
    for member_id in subscriptions.keys() - out.keys():
        info = AssignmentInfo(
            endpoints=endpoints,
            next_probing_ms=probing_ms,
            version=used,
            latest_supported_version=common,
        )
        out[member_id] = MemberAssignment([], encode_assignment(info), info)
    return out


def protocol_partitions(
    topology: Topology, active: Sequence[TaskId]
) -> list[tuple[str, list[int]]]:
    """The consumer protocol's assignment of a member: its actives' source partitions."""
    by_topic: dict[str, list[int]] = {}
    for task in active:
        for topic, partition in topology.source_partitions(task):
            by_topic.setdefault(topic, []).append(partition)
    return [(topic, sorted(parts)) for topic, parts in sorted(by_topic.items())]


def partition_counts(topics: Sequence[str], partitions_for: Callable[[str], Any]) -> dict[str, int]:
    """Partition count per topic from a client's cluster metadata (``partitions_for_topic``)."""
    counts: dict[str, int] = {}
    for topic in topics:
        partitions = partitions_for(topic)
        counts[topic] = len(partitions) if partitions else 0
    return counts


__all__ = [
    "PROTOCOL_NAME",
    "MemberAssignment",
    "MemberState",
    "MemberSubscription",
    "StreamsProcess",
    "StreamsSettings",
    "TopicPartition",
    "changelog_end_offset_sums",
    "cluster_document",
    "decide",
    "decode_member",
    "partition_counts",
    "protocol_partitions",
]
