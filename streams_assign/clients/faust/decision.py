"""The leader's decision for a faust group: topic groups as tasks, an assignor, faust's format.

faust groups the subscribed topics as its ``PartitionAssignor._get_copartitioned_groups`` does:
topics with the same partition count that the same members subscribe to are co-partitioned.
Here each such group is a sub-topology and partition ``p`` of the group is task ``<group>_p``
(faust's own assignor gives every topic of a group the same partitions, too). A group that
contains the changelog topic of a (non-global) table is stateful: its tasks get standbys and
lags. Global tables are left to faust (every worker reads all of their partitions).

From the members' metadata (:mod:`streams_assign.clients.faust.metadata`) the leader builds a
cluster-state document (``docs/scenario-format.md``): one client per process id, previous
actives and standbys from faust's ``assignment`` field, offset sums from the extension (a
stateful task a member ran as active counts as running, ``-2``), changelog end offsets from the
broker. :func:`streams_assign.assignors.assign` decides; the answer is turned back into faust's
``ClientAssignment`` fields per member, the warmups listed apart.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from streams_assign.clients.core import StreamsSettings
from streams_assign.clients.faust.metadata import FaustMember
from streams_assign.clients.topology import EndOffsetFetcher
from streams_assign.model import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    Assignment,
    TaskId,
)

__all__ = [
    "FaustDecision",
    "TopicGroup",
    "cluster_document",
    "decide_faust",
    "faust_topic_groups",
    "process_id_of",
]

log = logging.getLogger(__name__)

_NAMESPACE = uuid.UUID("0b7c3c52-52a4-4e0f-8f84-5b1f0d7e6a21")


@dataclass(frozen=True, slots=True)
class TopicGroup:
    """One co-partitioned topic group: a sub-topology of the decision.

    Attributes
    ----------
    id:
        The sub-topology number (groups sorted by partition count, then topics).
    topics:
        Its topics, sorted (sources and changelogs).
    partitions:
        Their common partition count (= the number of tasks).
    changelog_topics:
        The table changelogs among ``topics``; empty for a stateless group.
    """

    id: int
    topics: tuple[str, ...]
    partitions: int
    changelog_topics: tuple[str, ...]

    @property
    def stateful(self) -> bool:
        """Whether the group feeds a table."""
        return bool(self.changelog_topics)


@dataclass(frozen=True, slots=True)
class FaustDecision:
    """The leader's decision, per member id.

    Attributes
    ----------
    assignments:
        Per member id, faust's ``ClientAssignment`` fields: ``{"actives": {topic: [p]},
        "standbys": {topic: [p]}}``, every topic of every group present.
    warmups:
        Per member id, its standby changelog partitions that are warmup replicas.
    probing_rebalance_needed:
        Whether the assignor asked for a probing rebalance.
    topic_groups:
        faust's ``topic_groups`` (topic -> group number, one number per partition count, as
        faust's ``_perform_assignment`` computes it; faust derives transactional ids from it).
    groups:
        The topic groups (sub-topologies) of the decision.
    assignment:
        The assignor's :class:`~streams_assign.model.Assignment`, or ``None`` with no member.
    document:
        The cluster-state document it decided on.
    """

    assignments: dict[str, dict[str, dict[str, list[int]]]]
    warmups: dict[str, dict[str, list[int]]]
    probing_rebalance_needed: bool
    topic_groups: dict[str, int]
    groups: tuple[TopicGroup, ...]
    assignment: Assignment | None = None
    document: dict[str, Any] = field(default_factory=dict)


def faust_topic_groups(
    subscriptions: Mapping[str, Sequence[str]],
    partitions_per_topic: Mapping[str, int],
    changelog_topics: frozenset[str],
    excluded_topics: frozenset[str] = frozenset(),
) -> tuple[tuple[TopicGroup, ...], dict[str, int]]:
    """The co-partitioned topic groups and faust's ``topic_groups`` map.

    Parameters
    ----------
    subscriptions:
        Per member id, its subscribed topics.
    partitions_per_topic:
        Partition count per topic; a topic with 0 (missing) is ignored, as faust ignores it.
    changelog_topics:
        The changelog topics of the (non-global) tables.
    excluded_topics:
        Topics left out of the groups (global tables' changelogs).

    Returns
    -------
    tuple
        The groups, sorted by partition count then topics and numbered from 0; and topic ->
        faust's group number (the index of its partition count among the sorted counts).
    """
    subscribers: dict[str, set[str]] = {}
    for member_id, topics in subscriptions.items():
        for topic in topics:
            subscribers.setdefault(topic, set()).add(member_id)
    by_key: dict[tuple[int, frozenset[str]], set[str]] = {}
    for topic, members in subscribers.items():
        count = partitions_per_topic.get(topic, 0)
        if count <= 0:
            log.warning("ignoring missing topic %r", topic)
            continue
        by_key.setdefault((count, frozenset(members)), set()).add(topic)
    counts = sorted({count for count, _ in by_key})
    topic_groups = {
        topic: counts.index(count) for (count, _), topics in by_key.items() for topic in topics
    }
    groups: list[TopicGroup] = []
    keyed = sorted((count, tuple(sorted(topics))) for (count, _), topics in by_key.items())
    for count, topics in keyed:
        kept = tuple(t for t in topics if t not in excluded_topics)
        if kept:
            changelogs = tuple(t for t in kept if t in changelog_topics)
            groups.append(TopicGroup(len(groups), kept, count, changelogs))
    return tuple(groups), topic_groups


def _tasks_of(
    partitions: Mapping[str, list[int]], group_of: Mapping[str, TopicGroup]
) -> set[TaskId]:
    tasks: set[TaskId] = set()
    for topic, numbers in partitions.items():
        group = group_of.get(topic)
        if group is not None:
            tasks.update(TaskId(group.id, p) for p in numbers if 0 <= p < group.partitions)
    return tasks


def _member_offset_sums(
    member: FaustMember, prev_active: set[TaskId], groups: Sequence[TopicGroup]
) -> dict[TaskId, int]:
    """Offset sums (records) of the stateful tasks the member has local state for."""
    sums: dict[TaskId, int] = {}
    for group in groups:
        if not group.stateful:
            continue
        for p in range(group.partitions):
            task = TaskId(group.id, p)
            if task in prev_active:
                sums[task] = LATEST_OFFSET
                continue
            held = [member.changelog_offsets.get((t, p)) for t in group.changelog_topics]
            if any(offset is not None for offset in held):
                sums[task] = min(LONG_MAX_VALUE, sum(o for o in held if o is not None))
    return sums


def _end_offset_sums(
    groups: Sequence[TopicGroup], fetch: EndOffsetFetcher | None
) -> dict[TaskId, int] | None:
    partitions = [
        (t, p)
        for g in groups
        if g.stateful
        for t in g.changelog_topics
        for p in range(g.partitions)
    ]
    if fetch is None:
        return None
    try:
        offsets = fetch(partitions) if partitions else {}
    except Exception as exc:  # noqa: BLE001 - a failed fetch degrades to unknown lags
        log.warning("changelog end offsets could not be fetched: %r", exc)
        return None
    if offsets is None or any(tp not in offsets for tp in partitions):
        return None
    return {
        TaskId(g.id, p): min(
            LONG_MAX_VALUE, sum(max(0, offsets[(t, p)]) for t in g.changelog_topics)
        )
        for g in groups
        if g.stateful
        for p in range(g.partitions)
    }


def process_id_of(member_id: str, member: FaustMember) -> str:
    """The member's process id, or one derived from its member id (a worker without it)."""
    return member.process_id or str(uuid.uuid5(_NAMESPACE, member_id))


def cluster_document(
    members: Mapping[str, FaustMember],
    groups: Sequence[TopicGroup],
    settings: StreamsSettings,
    end_offsets: EndOffsetFetcher | None,
) -> dict[str, Any]:
    """The cluster-state document of this rebalance; one consumer per member, grouped by process."""
    group_of = {t: g for g in groups for t in g.topics}
    stateful = [TaskId(g.id, p) for g in groups if g.stateful for p in range(g.partitions)]
    stateless = [TaskId(g.id, p) for g in groups if not g.stateful for p in range(g.partitions)]
    all_tasks = set(stateful)
    end_sums = _end_offset_sums(groups, end_offsets)
    claimed: set[TaskId] = set()
    clients: dict[str, dict[str, Any]] = {}
    for member_id in sorted(members):
        member = members[member_id]
        prev_active = _tasks_of(member.actives, group_of) - claimed
        claimed |= prev_active
        prev_standby = (_tasks_of(member.standbys, group_of) & all_tasks) - prev_active
        client = clients.setdefault(process_id_of(member_id, member), {"consumers": [], "sums": {}})
        client["consumers"].append(
            {
                "member_id": member_id,
                "prev_active": [str(t) for t in sorted(prev_active)],
                "prev_standby": [str(t) for t in sorted(prev_standby)],
            }
        )
        sums: dict[TaskId, int] = client["sums"]
        for task, value in _member_offset_sums(member, prev_active, groups).items():
            old = sums.get(task)
            if old is None or value == LATEST_OFFSET or (old != LATEST_OFFSET and value > old):
                sums[task] = value
    documents = []
    for process_id, client in sorted(clients.items()):
        entry: dict[str, Any] = {"id": process_id, "consumers": client["consumers"]}
        if end_sums is None:
            entry["task_lags"] = {str(t): UNKNOWN_OFFSET_SUM for t in stateful}
        else:
            entry["task_offset_sums"] = {str(t): v for t, v in sorted(client["sums"].items())}
        documents.append(entry)
    document: dict[str, Any] = {
        "configs": settings.configs_document(),
        "stateful_tasks": [str(t) for t in stateful],
        "stateless_tasks": [str(t) for t in stateless],
        "clients": documents,
    }
    if end_sums is not None:
        document["changelog_end_offset_sums"] = {str(t): v for t, v in end_sums.items()}
    return document


def _faust_fields(
    groups: Sequence[TopicGroup], active: Sequence[TaskId], standby: Sequence[TaskId]
) -> dict[str, dict[str, list[int]]]:
    actives: dict[str, list[int]] = {}
    standbys: dict[str, list[int]] = {}
    for group in groups:
        mine = sorted(t.partition for t in active if t.subtopology == group.id)
        copies = sorted(t.partition for t in standby if t.subtopology == group.id)
        for topic in group.topics:
            actives[topic] = list(mine)
            standbys[topic] = list(copies) if group.stateful else []
    return {"actives": actives, "standbys": standbys}


def decide_faust(
    members: Mapping[str, FaustMember],
    subscriptions: Mapping[str, Sequence[str]],
    partitions_per_topic: Mapping[str, int],
    changelog_topics: frozenset[str],
    settings: StreamsSettings,
    end_offsets: EndOffsetFetcher | None = None,
    excluded_topics: frozenset[str] = frozenset(),
) -> FaustDecision:
    """Decide a faust group's rebalance with a registered assignor.

    Parameters
    ----------
    members:
        Per member id, its decoded metadata (members whose metadata could not be decoded are
        left out by the caller and get nothing).
    subscriptions:
        Per member id of ``members``, its subscribed topics.
    partitions_per_topic:
        Partition count per topic (the leader's cluster metadata).
    changelog_topics:
        Changelog topics of the non-global tables.
    settings:
        Assignor name, standbys (faust's ``table_standby_replicas``), warmups, recovery lag.
    end_offsets:
        Fetches changelog end offsets; ``None`` or a failure makes every lag unknown and the
        leader runs ``fallback_prior``, as Kafka's leader does.
    excluded_topics:
        Global tables' changelogs (faust gives every worker all of their partitions).

    Returns
    -------
    FaustDecision
        Per member its faust ``actives`` / ``standbys`` and warmups.

    Raises
    ------
    streams_assign.errors.StreamsAssignError
        Only for the leader's own configuration (an unknown assignor name).
    """
    from streams_assign.assignors import assign

    groups, topic_groups = faust_topic_groups(
        subscriptions, partitions_per_topic, changelog_topics, excluded_topics
    )
    if not members:
        return FaustDecision({}, {}, False, topic_groups, groups)
    document = cluster_document(members, groups, settings, end_offsets)
    result = assign(document, settings.assignor)
    assignments: dict[str, dict[str, dict[str, list[int]]]] = {}
    warmups: dict[str, dict[str, list[int]]] = {}
    for client in result.clients.values():
        warm = set(client.warmup)
        for member_id, roles in (client.consumers or {}).items():
            active = tuple(roles.get("active", ()))
            standby = tuple(roles.get("standby", ()))
            assignments[member_id] = _faust_fields(groups, active, standby)
            warmups[member_id] = {}
            for group in groups:
                parts = sorted(
                    t.partition for t in standby if t in warm and t.subtopology == group.id
                )
                for topic in group.changelog_topics if parts else ():
                    warmups[member_id][topic] = parts
    for member_id in members.keys() - assignments.keys():
        assignments[member_id] = _faust_fields(groups, (), ())
        warmups[member_id] = {}
    return FaustDecision(
        assignments,
        warmups,
        result.probing_rebalance_needed,
        topic_groups,
        groups,
        result,
        document,
    )
