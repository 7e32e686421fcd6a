"""The streams-group state format (KIP-1071): load, validate, dump.

A streams group (``group.protocol=streams``, KIP-1071) is assigned by the group coordinator on
the broker, not by a Streams client acting as leader. What its ``TaskAssignor`` sees is a
``GroupSpec`` (the members, each one stream thread, with its process id, rack, client tags,
currently owned active / standby / warm-up tasks and reported changelog offset sums), a
``TopologyDescriber`` (subtopologies with their partition counts and whether they are stateful)
and the group's ``AssignmentConfigs``. This module reads and writes that state in the JSON
format of ``../shared/scenarios/kafka-streams-group/FORMAT.md`` and the assignor's decision in
the matching output format.

The two formats of this project are told apart by their fields: a streams-group state has
``members`` and ``topology``; a classic cluster state (:mod:`streams_assign.scenario`) has
``clients``. See :func:`is_streams_group_document`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from streams_assign.errors import InvalidScenarioError
from streams_assign.model import ClusterState, TaskId

__all__ = [
    "InvalidStreamsGroupError",
    "StreamsGroupAssignment",
    "StreamsGroupConfigs",
    "StreamsGroupMember",
    "StreamsGroupMemberAssignment",
    "StreamsGroupState",
    "Subtopology",
    "dump_streams_group",
    "from_cluster_state",
    "is_streams_group_document",
    "load_streams_group",
    "loads_streams_group",
    "parse_streams_group",
]

#: Largest value of a Java ``long`` (offset sums are ``long`` in Kafka).
_JAVA_LONG_MAX = (1 << 63) - 1
#: Largest value of a Java ``int`` (partition numbers and counts are ``int`` in Kafka).
_JAVA_INT_MAX = (1 << 31) - 1

_TOP_KEYS = frozenset({"meta", "configs", "topology", "members"})
_CONFIG_KEYS = frozenset({"num.standby.replicas", "rack.aware.assignment.tags"})
_SUBTOPOLOGY_KEYS = frozenset({"partitions", "stateful"})
_MEMBER_KEYS = frozenset(
    {
        "member_id",
        "process_id",
        "instance_id",
        "rack_id",
        "client_tags",
        "active_tasks",
        "standby_tasks",
        "warmup_tasks",
        "task_offsets",
        "task_end_offsets",
    }
)

#: Tasks of one member: subtopology id -> partitions (sorted, no duplicates).
TaskSet = Mapping[str, tuple[int, ...]]
#: Offset sums of one member: subtopology id -> partition -> offset sum (records).
TaskOffsets = Mapping[str, Mapping[int, int]]


class InvalidStreamsGroupError(InvalidScenarioError):
    """A streams-group state document breaks the format's rules.

    The message names the file (when read from one), the JSON path and the offending value,
    for example ``sg.json: members[2].task_offsets.0.5: must be an integer >= 0, got -1``.
    """


@dataclass(frozen=True, slots=True)
class Subtopology:
    """One subtopology as ``TopologyDescriber`` describes it.

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
        Subtopology id -> :class:`Subtopology`, in the order of the document.
    members:
        The members in the order Kafka iterates ``GroupSpec.memberIds()`` (the document's order).
    meta:
        Free-form information about the state; ignored by every assignor.
    """

    configs: StreamsGroupConfigs
    topology: Mapping[str, Subtopology]
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


def is_streams_group_document(document: Any) -> bool:
    """True when a parsed JSON document is a streams-group state (has ``members`` and ``topology``).

    A classic cluster state has ``clients`` instead; the CLI and :func:`streams_assign.assign`
    use this to accept both formats.
    """
    return isinstance(document, Mapping) and "members" in document and "topology" in document


def load_streams_group(path: str | Path) -> StreamsGroupState:
    """Read and validate a streams-group state file.

    Parameters
    ----------
    path:
        A JSON file in the format of ``kafka-streams-group/FORMAT.md``.

    Returns
    -------
    StreamsGroupState

    Raises
    ------
    InvalidStreamsGroupError
        For malformed JSON or any broken rule; the message starts with the file name and names
        the JSON path and the value.
    OSError
        When the file cannot be read.
    """
    text = Path(path).read_text(encoding="utf-8")
    return loads_streams_group(text, source=str(path))


def loads_streams_group(text: str, source: str | None = None) -> StreamsGroupState:
    """Parse and validate streams-group JSON text (see :func:`load_streams_group`)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _error(source, "", f"not valid JSON: {exc.msg} at line {exc.lineno}") from None
    return parse_streams_group(document, source=source)


def parse_streams_group(document: Any, source: str | None = None) -> StreamsGroupState:
    """Validate a parsed streams-group document and build a :class:`StreamsGroupState`.

    Parameters
    ----------
    document:
        The parsed JSON object.
    source:
        The file it came from, put in front of error messages.

    Raises
    ------
    InvalidStreamsGroupError
        Naming the JSON path (``members[3].active_tasks.0[1]``) and the offending value.
    """
    if not isinstance(document, Mapping):
        raise _error(source, "", f"must be a JSON object, got {_show(document)}")
    _no_unknown_keys(source, "", document, _TOP_KEYS)
    meta = document.get("meta")
    if meta is not None and not isinstance(meta, Mapping):
        raise _error(source, "meta", f"must be an object, got {_show(meta)}")
    configs = _parse_configs(source, document.get("configs", {}))
    if "topology" not in document:
        raise _error(source, "topology", "is missing")
    topology = _parse_topology(source, document["topology"])
    if "members" not in document:
        raise _error(source, "members", "is missing")
    raw_members = document["members"]
    if not isinstance(raw_members, list):
        raise _error(source, "members", f"must be a list, got {_show(raw_members)}")
    members = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_members):
        member = _parse_member(source, f"members[{i}]", raw)
        if member.member_id in seen:
            raise _error(
                source,
                f"members[{i}].member_id",
                f"duplicate member id {member.member_id!r} "
                f"(also members[{seen[member.member_id]}])",
            )
        seen[member.member_id] = i
        members.append(member)
    return StreamsGroupState(configs=configs, topology=topology, members=tuple(members), meta=meta)


def dump_streams_group(state: StreamsGroupState) -> dict[str, Any]:
    """The JSON document of a state (the inverse of :func:`parse_streams_group`)."""
    document: dict[str, Any] = {}
    if state.meta is not None:
        document["meta"] = dict(state.meta)
    document["configs"] = {
        "num.standby.replicas": state.configs.num_standby_replicas,
        "rack.aware.assignment.tags": list(state.configs.rack_aware_assignment_tags),
    }
    document["topology"] = {
        s: {"partitions": t.partitions, "stateful": t.stateful} for s, t in state.topology.items()
    }
    document["members"] = [
        {
            "member_id": m.member_id,
            "process_id": m.process_id,
            "instance_id": m.instance_id,
            "rack_id": m.rack_id,
            "client_tags": dict(m.client_tags),
            "active_tasks": {s: list(p) for s, p in m.active_tasks.items()},
            "standby_tasks": {s: list(p) for s, p in m.standby_tasks.items()},
            "warmup_tasks": {s: list(p) for s, p in m.warmup_tasks.items()},
            "task_offsets": {
                s: {str(p): o for p, o in offsets.items()} for s, offsets in m.task_offsets.items()
            },
            "task_end_offsets": {
                s: {str(p): o for p, o in offsets.items()}
                for s, offsets in m.task_end_offsets.items()
            },
        }
        for m in state.members
    ]
    return document


# --- validation helpers ---------------------------------------------------------------------


def _error(source: str | None, path: str, message: str) -> InvalidStreamsGroupError:
    error = InvalidStreamsGroupError(path, message)
    if source:
        error.args = (f"{source}: {error.args[0]}",)
    return error


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float | int | str | bool) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _no_unknown_keys(
    source: str | None, path: str, obj: Mapping[str, Any], allowed: frozenset[str]
) -> None:
    for key in obj:
        if key not in allowed:
            raise _error(
                source,
                _join(path, str(key)),
                f"unknown field (allowed: {', '.join(sorted(allowed))})",
            )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_configs(source: str | None, raw: Any) -> StreamsGroupConfigs:
    if not isinstance(raw, Mapping):
        raise _error(source, "configs", f"must be an object, got {_show(raw)}")
    _no_unknown_keys(source, "configs", raw, _CONFIG_KEYS)
    standbys = raw.get("num.standby.replicas", 0)
    if not _is_int(standbys) or not 0 <= standbys <= _JAVA_INT_MAX:
        raise _error(
            source,
            "configs.num.standby.replicas",
            f"must be an integer >= 0, got {_show(standbys)}",
        )
    tags = raw.get("rack.aware.assignment.tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _error(
            source,
            "configs.rack.aware.assignment.tags",
            f"must be a list of strings, got {_show(tags)}",
        )
    return StreamsGroupConfigs(
        num_standby_replicas=standbys, rack_aware_assignment_tags=tuple(tags)
    )


def _parse_topology(source: str | None, raw: Any) -> dict[str, Subtopology]:
    if not isinstance(raw, Mapping):
        raise _error(source, "topology", f"must be an object, got {_show(raw)}")
    topology = {}
    for sub, spec in raw.items():
        path = f"topology.{sub}"
        if not sub:
            raise _error(source, path, "subtopology id must be a non-empty string")
        if not isinstance(spec, Mapping):
            raise _error(source, path, f"must be an object, got {_show(spec)}")
        _no_unknown_keys(source, path, spec, _SUBTOPOLOGY_KEYS)
        partitions: Any = spec.get("partitions")
        if not _is_int(partitions) or not 1 <= partitions <= _JAVA_INT_MAX:
            raise _error(
                source, f"{path}.partitions", f"must be an integer >= 1, got {_show(partitions)}"
            )
        stateful = spec.get("stateful")
        if not isinstance(stateful, bool):
            raise _error(
                source, f"{path}.stateful", f"must be true or false, got {_show(stateful)}"
            )
        topology[sub] = Subtopology(partitions=partitions, stateful=stateful)
    return topology


def _parse_member(source: str | None, path: str, raw: Any) -> StreamsGroupMember:
    if not isinstance(raw, Mapping):
        raise _error(source, path, f"must be an object, got {_show(raw)}")
    _no_unknown_keys(source, path, raw, _MEMBER_KEYS)
    for key in ("member_id", "process_id"):
        value = raw.get(key)
        if not isinstance(value, str) or not value:
            raise _error(source, f"{path}.{key}", f"must be a non-empty string, got {_show(value)}")
    for key in ("instance_id", "rack_id"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise _error(source, f"{path}.{key}", f"must be a string or null, got {_show(value)}")
    tags = raw.get("client_tags", {})
    if tags is None:
        tags = {}
    if not isinstance(tags, Mapping) or not all(isinstance(v, str) for v in tags.values()):
        raise _error(
            source, f"{path}.client_tags", f"must be an object of strings, got {_show(tags)}"
        )
    return StreamsGroupMember(
        member_id=raw["member_id"],
        process_id=raw["process_id"],
        instance_id=raw.get("instance_id"),
        rack_id=raw.get("rack_id"),
        client_tags=dict(tags),
        active_tasks=_parse_task_set(source, f"{path}.active_tasks", raw.get("active_tasks")),
        standby_tasks=_parse_task_set(source, f"{path}.standby_tasks", raw.get("standby_tasks")),
        warmup_tasks=_parse_task_set(source, f"{path}.warmup_tasks", raw.get("warmup_tasks")),
        task_offsets=_parse_offsets(source, f"{path}.task_offsets", raw.get("task_offsets")),
        task_end_offsets=_parse_offsets(
            source, f"{path}.task_end_offsets", raw.get("task_end_offsets")
        ),
    )


def _parse_task_set(source: str | None, path: str, raw: Any) -> dict[str, tuple[int, ...]]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _error(source, path, f"must be an object of partition lists, got {_show(raw)}")
    tasks = {}
    for sub, partitions in raw.items():
        sub_path = f"{path}.{sub}"
        if not isinstance(partitions, list):
            raise _error(source, sub_path, f"must be a list of partitions, got {_show(partitions)}")
        seen = set()
        for j, partition in enumerate(partitions):
            if not _is_int(partition) or not 0 <= partition <= _JAVA_INT_MAX:
                raise _error(
                    source,
                    f"{sub_path}[{j}]",
                    f"must be a partition number >= 0, got {_show(partition)}",
                )
            if partition in seen:
                raise _error(source, f"{sub_path}[{j}]", f"duplicate partition {partition}")
            seen.add(partition)
        tasks[sub] = tuple(partitions)
    return tasks


def _parse_offsets(source: str | None, path: str, raw: Any) -> dict[str, dict[int, int]]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _error(source, path, f"must be an object, got {_show(raw)}")
    offsets: dict[str, dict[int, int]] = {}
    for sub, per_partition in raw.items():
        sub_path = f"{path}.{sub}"
        if not isinstance(per_partition, Mapping):
            raise _error(
                source,
                sub_path,
                f"must be an object partition -> offset sum, got {_show(per_partition)}",
            )
        values: dict[int, int] = {}
        for key, offset in per_partition.items():
            try:
                partition = int(key)
            except ValueError:
                partition = -1
            if partition < 0 or str(partition) != key or partition > _JAVA_INT_MAX:
                raise _error(
                    source, f"{sub_path}.{key}", f"key must be a partition number >= 0, got {key!r}"
                )
            if not _is_int(offset) or not 0 <= offset <= _JAVA_LONG_MAX:
                raise _error(
                    source, f"{sub_path}.{key}", f"must be an offset sum >= 0, got {_show(offset)}"
                )
            values[partition] = offset
        offsets[sub] = values
    return offsets


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
        A classic cluster state (see :mod:`streams_assign.scenario`).

    Returns
    -------
    StreamsGroupState

    Raises
    ------
    InvalidStreamsGroupError
        For named topologies (``name__1_3``), which streams groups do not have.
    """
    from streams_assign.javacompat import JavaHashMap, java_string_hash_code

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
        s: Subtopology(partitions=partitions[s], stateful=stateful[s])
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
