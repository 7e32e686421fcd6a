"""The streams-group state and decision as typed values (KIP-1071's ``GroupSpec`` and
``GroupAssignment``), Java's ``String`` order of subtopology ids, and the streams group a classic
cluster state would form.

A streams group (``group.protocol=streams``, KIP-1071) is assigned by the group coordinator on
the broker, not by a Streams client acting as leader. What its ``TaskAssignor`` sees is a
``GroupSpec`` (the members, each one stream thread, with its process id, rack, client tags,
currently owned active / standby / warm-up tasks and reported changelog offset sums), a
``TopologyDescriber`` (subtopologies with their partition counts and whether they are stateful)
and the group's ``AssignmentConfigs``. :mod:`streams_assign.formats.streams_group` reads and
writes these values in the JSON format of ``tests/corpora/kafka-streams-group/FORMAT.md``;
:func:`from_cluster_state` builds them from a classic cluster state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from streams_assign.errors import InvalidStreamsGroupError
from streams_assign.model import ClusterState, TaskId

__all__ = [
    "StreamsGroupAssignment",
    "StreamsGroupConfigs",
    "StreamsGroupMember",
    "StreamsGroupMemberAssignment",
    "StreamsGroupState",
    "StreamsGroupSubtopology",
    "TaskOffsets",
    "TaskSet",
    "from_cluster_state",
    "java_string_order",
]

#: Largest value of a Java ``int`` (partition numbers and counts are ``int`` in Kafka).
_JAVA_INT_MAX = (1 << 31) - 1

#: Tasks of one member: subtopology id -> partitions (sorted, no duplicates).
TaskSet = Mapping[str, tuple[int, ...]]
#: Offset sums of one member: subtopology id -> partition -> offset sum (records).
TaskOffsets = Mapping[str, Mapping[int, int]]


@dataclass(frozen=True, slots=True)
class StreamsGroupSubtopology:
    """One subtopology as ``TopologyDescriber`` describes it.

    The group coordinator's assignor sees task counts, not topics; the topics of a sub-topology
    are :class:`streams_assign.model.Subtopology`.

    Attributes
    ----------
    partitions:
        ``maxNumInputPartitions``: the number of tasks of the subtopology (>= 1).
    stateful:
        ``isStateful``: the subtopology has state changelog topics, so its tasks get standby
        tasks.
    """

    partitions: int
    stateful: bool


@dataclass(frozen=True, slots=True)
class StreamsGroupConfigs:
    """The group's ``AssignmentConfigs`` (``AssignmentConfigsImpl``).

    Attributes
    ----------
    num_standby_replicas:
        ``num.standby.replicas`` (>= 0): standby tasks wanted per stateful task.
    rack_aware_assignment_tags:
        ``rack.aware.assignment.tags``: client-tag keys (not read by Kafka 4.4's
        ``StickyTaskAssignor``).
    """

    num_standby_replicas: int = 0
    rack_aware_assignment_tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StreamsGroupMember:
    """One member: a stream thread (``MemberAssignmentMetadata`` and ``MemberAssignmentState``).

    Attributes
    ----------
    member_id:
        The member id (unique in the group).
    process_id:
        The Streams instance's process id; members sharing it are threads of one process.
    instance_id, rack_id, client_tags:
        ``group.instance.id``, rack and client tags (not read by Kafka 4.4's assignor).
    active_tasks, standby_tasks, warmup_tasks:
        Tasks the member currently owns: subtopology id -> partitions.
    task_offsets:
        Changelog offset sums the member last reported (records), per subtopology and partition.
    task_end_offsets:
        End-offset sums (records), same shape (not read by the assignor).
    """

    member_id: str
    process_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    active_tasks: TaskSet = field(default_factory=dict)
    standby_tasks: TaskSet = field(default_factory=dict)
    warmup_tasks: TaskSet = field(default_factory=dict)
    task_offsets: TaskOffsets = field(default_factory=dict)
    task_end_offsets: TaskOffsets = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StreamsGroupState:
    """What a streams group's coordinator hands its ``TaskAssignor``.

    Attributes
    ----------
    configs:
        The group's assignment configs.
    topology:
        Subtopology id -> :class:`StreamsGroupSubtopology`, in the order of the document.
    members:
        The members in the order Kafka iterates ``GroupSpec.memberIds()`` (the document's order).
    meta:
        Free-form information about the state; ignored by every assignor.
    """

    configs: StreamsGroupConfigs
    topology: Mapping[str, StreamsGroupSubtopology]
    members: tuple[StreamsGroupMember, ...]
    meta: Mapping[str, Any] | None = None


class StreamsGroupMemberAssignment(NamedTuple):
    """One member's target assignment (``MemberAssignment``): subtopology -> sorted partitions.

    ``warmup`` is always empty for Kafka 4.4's ``StickyTaskAssignor``. (A named tuple: immutable
    and cheap to build for thousands of members.)
    """

    active: TaskSet
    standby: TaskSet
    warmup: TaskSet = {}

    def to_json(self) -> dict[str, Any]:
        """The member's entry of the output format (subtopologies in Java ``String`` order)."""
        return {
            "active": _task_set_json(self.active),
            "standby": _task_set_json(self.standby),
            "warmup": _task_set_json(self.warmup),
        }


@dataclass(frozen=True, slots=True)
class StreamsGroupAssignment:
    """A streams group's target assignment (``GroupAssignment``): one entry per member.

    Attributes
    ----------
    members:
        Member id -> :class:`StreamsGroupMemberAssignment`, in the input's member order.
    """

    members: Mapping[str, StreamsGroupMemberAssignment]

    def to_json(self) -> dict[str, Any]:
        """The output document: ``{"members": {id: {"active", "standby", "warmup"}}}``."""
        return {"members": {m: a.to_json() for m, a in self.members.items()}}


def java_string_order(text: str) -> bytes:
    """A sort key that orders strings as ``java.lang.String.compareTo`` (UTF-16 code units).

    Parameters
    ----------
    text:
        A subtopology id (any string).

    Returns
    -------
    bytes
        Its UTF-16BE encoding; byte order equals code-unit order, so ``"10" < "2"`` as in Java.
    """
    return text.encode("utf-16-be", "surrogatepass")


def _task_set_json(tasks: TaskSet) -> dict[str, list[int]]:
    return {s: sorted(tasks[s]) for s in sorted(tasks, key=java_string_order) if tasks[s]}


def _error(source: str | None, path: str, message: str) -> InvalidStreamsGroupError:
    error = InvalidStreamsGroupError(path, message)
    if source:
        error.args = (f"{source}: {error.args[0]}",)
    return error


def from_cluster_state(cluster: ClusterState) -> StreamsGroupState:
    """The streams group a classic cluster state would form under ``group.protocol=streams``.

    For operators migrating an application to KIP-1071 groups: the same processes, tasks and
    prior ownership, as the broker-side assignor would see them.

    - Each client becomes a process; each of its stream threads a member. With ``consumers``
      listed, a member per consumer keeps that consumer's id and previous tasks; otherwise the
      client gets ``capacity`` members ``<client id>-<i>`` and its previous active and standby
      tasks are dealt to them round-robin in task order.
    - Subtopology ``s`` has as many partitions as the highest partition of ``s`` plus one;
      it is stateful when its tasks are stateful tasks of the cluster state.
    - Each member reports the client's non-negative ``task_offset_sums`` (sentinels dropped),
      leaving out its own active tasks, as a 4.4 Streams client does.
    - Members are listed in the iteration order of Kafka's ``HashMap`` keyed by member id
      (``TargetAssignmentBuilder``), filled client by client.

    Parameters
    ----------
    cluster:
        A classic cluster state (see :mod:`streams_assign.formats.cluster_state`).

    Returns
    -------
    StreamsGroupState

    Raises
    ------
    InvalidStreamsGroupError
        For named topologies (``name__1_3``), which streams groups do not have.
    """
    from streams_assign.java.hash_order import JavaHashMap, java_string_hash_code

    partitions: dict[str, int] = {}
    stateful: dict[str, bool] = {}
    for task in cluster.all_tasks:
        if task.topology_name is not None:
            raise _error(
                None, "stateful_tasks", f"named topology task {task} has no streams-group form"
            )
        sub = str(task.subtopology)
        partitions[sub] = max(partitions.get(sub, 0), task.partition + 1)
        stateful.setdefault(sub, False)
    for task in cluster.stateful_tasks:
        stateful[str(task.subtopology)] = True
    topology = {
        s: StreamsGroupSubtopology(partitions=partitions[s], stateful=stateful[s])
        for s in sorted(partitions, key=java_string_order)
    }
    ordered: JavaHashMap[str, StreamsGroupMember] = JavaHashMap(java_string_hash_code)
    for client in cluster.clients:
        offsets = {
            t: o
            for t, o in (client.task_offset_sums or {}).items()
            if o >= 0 and t.topology_name is None
        }
        if client.consumers is not None:
            owned = [
                (c.member_id, list(c.prev_active), list(c.prev_standby)) for c in client.consumers
            ]
        else:
            owned = [(f"{client.id}-{i}", [], []) for i in range(client.capacity)]
            for i, task in enumerate(sorted(client.prev_active)):
                owned[i % len(owned)][1].append(task)
            for i, task in enumerate(sorted(client.prev_standby)):
                owned[i % len(owned)][2].append(task)
        for member_id, active, standby in owned:
            own = set(active)
            ordered.put(
                member_id,
                StreamsGroupMember(
                    member_id=member_id,
                    process_id=client.id,
                    rack_id=client.rack,
                    client_tags=dict(client.tags),
                    active_tasks=_grouped(active),
                    standby_tasks=_grouped(standby),
                    task_offsets=_grouped_offsets(
                        {t: o for t, o in offsets.items() if t not in own}
                    ),
                ),
            )
    return StreamsGroupState(
        configs=StreamsGroupConfigs(
            num_standby_replicas=cluster.configs.num_standby_replicas,
            rack_aware_assignment_tags=tuple(cluster.configs.rack_aware_assignment_tags),
        ),
        topology=topology,
        members=tuple(ordered[m] for m in ordered),
        meta={"kind": "from_cluster_state", "name": cluster.name},
    )


def _grouped(tasks: list[TaskId]) -> dict[str, tuple[int, ...]]:
    grouped: dict[str, list[int]] = {}
    for task in tasks:
        grouped.setdefault(str(task.subtopology), []).append(task.partition)
    return {s: tuple(sorted(ps)) for s, ps in grouped.items()}


def _grouped_offsets(offsets: Mapping[TaskId, int]) -> dict[str, dict[int, int]]:
    grouped: dict[str, dict[int, int]] = {}
    for task in sorted(offsets):
        grouped.setdefault(str(task.subtopology), {})[task.partition] = offsets[task]
    return grouped
