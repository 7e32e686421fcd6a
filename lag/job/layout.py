"""The task layout: which tasks exist, which are stateful, which changelogs they restore from,
and which tasks each process runs as active now (no Spark here).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from lag.error_rows import ErrorRow
from lag.kafka_rules import sorted_task_ids
from lag.sources.members import Membership
from lag.sources.topology import Topology
from streams_assign.errors import LagInputError
from streams_assign.model import AssignmentConfigs


def configs_json(configs: AssignmentConfigs) -> dict[str, Any]:
    """The ``configs`` object the cluster state carries: the configs the lag job sets.

    Parameters
    ----------
    configs:
        The core's ``AssignmentConfigs`` (Kafka's ``StreamsConfig`` ranges, checked there).

    Returns
    -------
    dict
        ``acceptable_recovery_lag`` (records), ``max_warmup_replicas``,
        ``num_standby_replicas``, ``probing_rebalance_interval_ms`` (ms), and
        ``rack_aware_assignment_tags`` when any are set.
    """
    document: dict[str, Any] = {
        "acceptable_recovery_lag": configs.acceptable_recovery_lag,
        "max_warmup_replicas": configs.max_warmup_replicas,
        "num_standby_replicas": configs.num_standby_replicas,
        "probing_rebalance_interval_ms": configs.probing_rebalance_interval_ms,
    }
    if configs.rack_aware_assignment_tags:
        document["rack_aware_assignment_tags"] = list(configs.rack_aware_assignment_tags)
    return document


@dataclass(frozen=True, slots=True)
class TaskLayout:
    """Which tasks exist, which are stateful, and which changelog topics they restore from.

    Attributes
    ----------
    changelogs:
        Logged changelog topic -> (sub-topology, store). A store's changelog counts as logged
        when the end offsets list it.
    partitions:
        Sub-topology -> number of partitions (= tasks), for every sub-topology whose count is
        known.
    stateful_subtopologies:
        Sub-topologies with at least one logged changelog.
    source_topics:
        Source topic (both spellings of internal topics) -> sub-topology.
    """

    changelogs: dict[str, tuple[int, str]]
    partitions: dict[int, int]
    stateful_subtopologies: frozenset[int]
    source_topics: dict[str, int] = field(default_factory=dict)

    def expected_changelogs(self) -> dict[int, int]:
        """Sub-topology -> number of logged changelog partitions each of its tasks has."""
        counts: dict[int, int] = defaultdict(int)
        for sub, _store in self.changelogs.values():
            counts[sub] += 1
        return dict(counts)

    def stateful_tasks(self) -> list[str]:
        """Stateful task ids in Kafka's TaskId order."""
        return sorted_task_ids(
            f"{sub}_{p}"
            for sub in self.stateful_subtopologies
            for p in range(self.partitions.get(sub, 0))
        )

    def stateless_tasks(self) -> list[str]:
        """Stateless task ids in Kafka's TaskId order."""
        return sorted_task_ids(
            f"{sub}_{p}"
            for sub, count in self.partitions.items()
            if sub not in self.stateful_subtopologies
            for p in range(count)
        )


def plan_tasks(
    topology: Topology,
    application_id: str,
    end_offset_partitions: dict[str, int],
    membership: Membership,
    end_source: str = "end-offsets",
) -> tuple[TaskLayout, list[ErrorRow]]:
    """Derive the task layout from the topology, the end offsets and the members' ownership.

    Parameters
    ----------
    topology:
        Sub-topologies with their source topics and stores.
    application_id:
        Kafka Streams' ``application.id`` (prefix of changelog and internal topics).
    end_offset_partitions:
        Topic -> number of partitions seen in the end offsets (max partition + 1).
    membership:
        Members and their owned partitions.
    end_source:
        Name of the end-offsets input, for error rows.

    Returns
    -------
    layout : TaskLayout
    errors : list of ErrorRow
        Stores without end offsets (treated as not logged, as Kafka treats a store without a
        changelog) and sub-topologies whose partition count is unknown.

    Raises
    ------
    LagInputError
        When the topology has stores but no changelog topic appears in the end offsets (a wrong
        ``--application-id`` or end-offsets file), since no lag could be computed at all.

    Notes
    -----
    A sub-topology has as many tasks as the largest partition count of its source topics
    (``PartitionGrouper``); its changelog topics are created with that count. The count is the
    maximum over the changelog and source topics in the end offsets and the partitions the
    members own.
    """
    errors: list[ErrorRow] = []
    all_changelogs = topology.changelog_topics(application_id)
    logged = {t: owner for t, owner in all_changelogs.items() if t in end_offset_partitions}
    if all_changelogs and not logged:
        example = next(iter(all_changelogs))
        raise LagInputError(
            f"--end-offsets {end_source}: no end offset for any changelog topic of the topology "
            f"(expected names like {example}; is --application-id right?)"
        )
    for topic, (sub, store) in sorted(all_changelogs.items()):
        if topic not in logged:
            errors.append(
                ErrorRow(
                    end_source,
                    None,
                    topic,
                    f"no end offsets for changelog: store {store!r} of sub-topology {sub} "
                    "is treated as not logged (no lag for it)",
                )
            )
    sources = topology.source_topics(application_id)
    counts: dict[int, int] = defaultdict(int)
    for topic, (sub, _store) in logged.items():
        counts[sub] = max(counts[sub], end_offset_partitions[topic])
    for topic, source_sub in sources.items():
        if topic in end_offset_partitions:
            counts[source_sub] = max(counts[source_sub], end_offset_partitions[topic])
    for owned in membership.owned_partitions().values():
        for topic, partition in owned:
            reader = topology.subtopology_of_source(topic, application_id)
            if reader is not None:
                counts[reader] = max(counts[reader], partition + 1)
    for sub_id in topology.subtopologies:
        if counts.get(sub_id, 0) == 0:
            errors.append(
                ErrorRow(
                    "topology",
                    None,
                    f"Sub-topology: {sub_id}",
                    f"partition count unknown: no member owns, and no end offset lists, a source "
                    f"partition of sub-topology {sub_id}; its tasks are left out",
                )
            )
    layout = TaskLayout(
        changelogs=logged,
        partitions={sub: n for sub, n in sorted(counts.items()) if n > 0},
        stateful_subtopologies=frozenset(sub for sub, _store in logged.values()),
        source_topics=sources,
    )
    return layout, errors


def previous_active_tasks(
    membership: Membership, topology: Topology, application_id: str, layout: TaskLayout
) -> tuple[dict[str, set[tuple[int, int]]], list[ErrorRow]]:
    """Tasks each process runs now as active, from the partitions its threads own.

    Partition ``p`` of any source topic of sub-topology ``s`` belongs to task ``s_p``
    (``PartitionGrouper``; Kafka's ``ClientState.initializePrevTasks`` maps owned partitions to
    tasks the same way).

    Parameters
    ----------
    membership:
        The members and their owned partitions.
    topology:
        Source topics (and patterns) of each sub-topology.
    application_id:
        Prefix of internal topic names.
    layout:
        Partition counts: an owned partition beyond them is an error row.

    Returns
    -------
    actives : dict
        Process id -> set of (sub-topology, partition); every member process has an entry.
    errors : list of ErrorRow
        Owned partitions of topics no sub-topology reads.
    """
    actives: dict[str, set[tuple[int, int]]] = {pid: set() for pid in membership.processes()}
    errors: list[ErrorRow] = []
    for member in membership.members.values():
        for topic, partition in member.owned or ():
            sub = topology.subtopology_of_source(topic, application_id)
            if sub is None or partition >= layout.partitions.get(sub, 0):
                errors.append(
                    ErrorRow(
                        "members",
                        None,
                        f"{member.member_id} {topic}({partition})",
                        f"not a source partition: {topic}-{partition} is read by no sub-topology",
                    )
                )
                continue
            actives[member.process_id].add((sub, partition))
    return actives, errors
