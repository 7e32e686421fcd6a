"""The streams-group state format (``kafka-streams-group/FORMAT.md``): load, validate, dump.

The values read and written are those of :mod:`streams_assign.streams_group`. The two formats of
this project are told apart by their fields: a streams-group state has ``members`` and
``topology``; a classic cluster state (:mod:`streams_assign.formats.cluster_state`) has
``clients``. See :func:`is_streams_group_document`.

Every broken rule raises :class:`~streams_assign.errors.InvalidStreamsGroupError` naming the
file, the JSON path and the value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from streams_assign.model import LONG_MAX_VALUE
from streams_assign.streams_group import (
    _JAVA_INT_MAX,
    StreamsGroupConfigs,
    StreamsGroupMember,
    StreamsGroupState,
    StreamsGroupSubtopology,
    _error,
)

__all__ = [
    "dump_streams_group",
    "is_streams_group_document",
    "load_streams_group",
    "loads_streams_group",
    "parse_streams_group",
]

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


def _parse_topology(source: str | None, raw: Any) -> dict[str, StreamsGroupSubtopology]:
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
        topology[sub] = StreamsGroupSubtopology(partitions=partitions, stateful=stateful)
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
            if not _is_int(offset) or not 0 <= offset <= LONG_MAX_VALUE:
                raise _error(
                    source, f"{sub_path}.{key}", f"must be an offset sum >= 0, got {_show(offset)}"
                )
            values[partition] = offset
        offsets[sub] = values
    return offsets
