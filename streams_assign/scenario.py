"""The cluster-state JSON format: load, validate, dump (the only I/O of the core).

The format is the contract of ``../shared/scenario-format.md``; ``docs/formats.md`` lists the
optional fields this project adds. Every rule breaks with an :class:`InvalidScenarioError` that
names the JSON path and the value, e.g. ``clients[3].capacity: must be >= 1, got 0``.
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
import re
import uuid as _uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from streams_assign._dump import cluster_state_to_json
from streams_assign._yaml import YAML_HINT as _YAML_HINT
from streams_assign._yaml import load_yaml as _load_yaml
from streams_assign.errors import InvalidScenarioError, InvalidTaskIdError
from streams_assign.extensions import EXTENSION_KEYS, Extensions, parse_extensions
from streams_assign.model import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    AssignmentConfigs,
    ClientState,
    ClusterState,
    ConsumerState,
    TaskId,
    compute_task_lag,
    process_id_sort_key,
)

log = logging.getLogger(__name__)

# The 8-4-4-4-12 hexadecimal form of a Kafka Streams process id (as UUID.toString writes it).
_HEX = "[0-9a-fA-F]"
_UUID_RE = re.compile(f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")

CONFIG_KEYS = (
    "acceptable_recovery_lag",
    "max_warmup_replicas",
    "num_standby_replicas",
    "probing_rebalance_interval_ms",
    "rack_aware_assignment_tags",
    "rack_aware_assignment_strategy",
    "rack_aware_assignment_traffic_cost",
    "rack_aware_assignment_non_overlap_cost",
)
#: Kafka's own config names (``StreamsConfig``), accepted as aliases of ours.
KAFKA_CONFIG_NAMES = {
    "acceptable.recovery.lag": "acceptable_recovery_lag",
    "max.warmup.replicas": "max_warmup_replicas",
    "num.standby.replicas": "num_standby_replicas",
    "probing.rebalance.interval.ms": "probing_rebalance_interval_ms",
    "rack.aware.assignment.tags": "rack_aware_assignment_tags",
    "rack.aware.assignment.strategy": "rack_aware_assignment_strategy",
    "rack.aware.assignment.traffic_cost": "rack_aware_assignment_traffic_cost",
    "rack.aware.assignment.non_overlap_cost": "rack_aware_assignment_non_overlap_cost",
}
_TOP_KEYS = (
    frozenset(
        {
            "name",
            "description",
            "configs",
            "stateful_tasks",
            "stateless_tasks",
            "clients",
            "changelog_end_offset_sums",
        }
    )
    | EXTENSION_KEYS
)
_CLIENT_KEYS = frozenset(
    {
        "id",
        "capacity",
        "prev_active",
        "prev_standby",
        "task_lags",
        "task_offset_sums",
        "tags",
        "consumers",
        "rack",
    }
)
_CONSUMER_KEYS = frozenset({"member_id", "prev_active", "prev_standby", "owned_partitions", "rack"})


def load_cluster_state(path: str | Path) -> ClusterState:
    """Read and validate a cluster-state file.

    Parameters
    ----------
    path:
        A JSON file in the format of ``scenario-format.md``.

    Returns
    -------
    ClusterState

    Raises
    ------
    InvalidScenarioError
        For malformed or empty JSON, or any broken rule (the message names the JSON path).
    OSError
        When the file cannot be read.
    """
    text = Path(path).read_text(encoding="utf-8")
    if Path(path).suffix.lower() in YAML_SUFFIXES:
        if not text.strip():
            raise InvalidScenarioError("", "empty document: expected a YAML mapping")
        return parse_cluster_state(_load_yaml(text, required=True))
    return loads_cluster_state(text)


#: File name endings read as YAML (with PyYAML, the ``yaml`` extra).
YAML_SUFFIXES = (".yaml", ".yml")


def loads_cluster_state(text: str) -> ClusterState:
    """Parse and validate cluster-state text (see :func:`load_cluster_state`).

    JSON first; text that is not JSON is read as YAML when PyYAML (the ``yaml`` extra) is
    installed and parses it into a mapping.

    Raises
    ------
    InvalidScenarioError
        For empty or malformed text (line and column of the JSON error; the YAML extra named
        when it is missing), or any broken rule of the format.
    """
    if not text.strip():
        raise InvalidScenarioError("", "empty document: expected a JSON object")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        if text.lstrip()[:1] in ("{", "["):
            raise InvalidScenarioError("", message) from None
        try:
            document = _load_yaml(text, required=False)
        except InvalidScenarioError as yaml_error:
            raise InvalidScenarioError("", f"{message}; not YAML either: {yaml_error}") from None
        if document is None:
            raise InvalidScenarioError("", f"{message} ({_YAML_HINT})") from None
        if not isinstance(document, dict):
            raise InvalidScenarioError("", message) from None
    return parse_cluster_state(document)


def parse_cluster_state(document: Any) -> ClusterState:
    """Validate a parsed cluster-state document and build the :class:`ClusterState`.

    Lags come from ``clients[].task_lags``, or, Kafka-native, from ``clients[].task_offset_sums``
    with the top-level ``changelog_end_offset_sums`` turned into lags by
    ``ClientState.computeTaskLags``'s rules. Lags of tasks in neither task list are ignored with
    a warning, as Kafka ignores offset sums of tasks it does not know.

    Raises
    ------
    InvalidScenarioError
        Naming the JSON path and the value of the first broken rule.
    """
    if not isinstance(document, dict):
        raise InvalidScenarioError("", f"expected a JSON object, got {_kind(document)}")
    for key in document:
        if key not in _TOP_KEYS:
            raise InvalidScenarioError(key, _unknown("field", key, _TOP_KEYS))
    warnings: list[str] = []
    configs = _parse_configs(document.get("configs", {}))
    stateful = _parse_task_list(document, "stateful_tasks")
    stateless = _parse_task_list(document, "stateless_tasks")
    stateful_set, stateless_set = frozenset(stateful), frozenset(stateless)
    for i, task in enumerate(stateless):
        if task in stateful_set:
            raise InvalidScenarioError(
                f"stateless_tasks[{i}]", f"task {task} is also listed in stateful_tasks"
            )
    everything = stateful + stateless
    named = {t.topology_name is not None for t in everything}
    if len(named) > 1:
        raise InvalidScenarioError("stateful_tasks", "named and unnamed task ids cannot be mixed")

    end_offsets = None
    if "changelog_end_offset_sums" in document:
        end_offsets = _parse_end_offsets(
            document["changelog_end_offset_sums"], stateful_set, warnings
        )

    raw_clients = document.get("clients")
    if not isinstance(raw_clients, list):
        raise InvalidScenarioError(
            "clients", f"must be a list of clients, got {_kind(raw_clients)}"
        )
    if not raw_clients:
        raise InvalidScenarioError("clients", "must list at least one client")
    clients: list[ClientState] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_clients):
        client = _parse_client(
            raw, f"clients[{i}]", stateful_set, stateless_set, end_offsets, warnings
        )
        if client.id in seen:
            raise InvalidScenarioError(
                f"clients[{i}].id",
                f"duplicate client id {client.id} (also clients[{seen[client.id]}])",
            )
        seen[client.id] = i
        clients.append(client)
    clients.sort(key=lambda c: process_id_sort_key(c.id))

    for key in ("name", "description"):
        if key in document and not isinstance(document[key], str):
            raise InvalidScenarioError(key, f"must be a string, got {_kind(document[key])}")
    extensions = parse_extensions(document, stateful_set | stateless_set, clients, warnings)
    for message in warnings:
        log.warning(message)
    return ClusterState(
        configs=configs,
        stateful_tasks=tuple(sorted(stateful)),
        stateless_tasks=tuple(sorted(stateless)),
        clients=tuple(clients),
        changelog_end_offset_sums=end_offsets,
        name=document.get("name"),
        description=document.get("description"),
        extensions={k: document[k] for k in EXTENSION_KEYS if k in document},
        warnings=tuple(warnings),
        **{name: getattr(extensions, name) for name in Extensions.__slots__},
    )


def _parse_configs(raw: Any) -> AssignmentConfigs:
    if not isinstance(raw, dict):
        raise InvalidScenarioError("configs", f"must be an object, got {_kind(raw)}")
    values: dict[str, Any] = {}
    given: dict[str, str] = {}
    for written, value in raw.items():
        key = KAFKA_CONFIG_NAMES.get(written, written)
        if key not in CONFIG_KEYS:
            raise InvalidScenarioError(
                f"configs.{written}",
                _unknown("config key", written, (*CONFIG_KEYS, *KAFKA_CONFIG_NAMES)),
            )
        if key in given:
            raise InvalidScenarioError(
                f"configs.{written}", f"the same config as configs.{given[key]}, given twice"
            )
        given[key] = written
        if key == "rack_aware_assignment_tags":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InvalidScenarioError(
                    f"configs.{key}", f"must be a list of strings, got {value!r}"
                )
            value = tuple(value)
        elif key == "rack_aware_assignment_strategy" and not isinstance(value, str):
            raise InvalidScenarioError(f"configs.{key}", f"must be a string, got {value!r}")
        values[key] = value
    return AssignmentConfigs(**values)


@functools.lru_cache(maxsize=1 << 16)
def _task_of(text: str) -> TaskId:
    # A document names each task once per client and list: parse each distinct text once.
    return TaskId.parse(text)


def _parse_task(text: Any, path: str) -> TaskId:
    try:
        return _task_of(text) if isinstance(text, str) else TaskId.parse(text)
    except InvalidTaskIdError as exc:
        raise InvalidTaskIdError(path, exc.reason) from None


def _parse_task_list(document: Mapping[str, Any], key: str) -> list[TaskId]:
    raw = document.get(key, [])
    if not isinstance(raw, list):
        raise InvalidScenarioError(key, f"must be a list of task ids, got {_kind(raw)}")
    tasks: list[TaskId] = []
    seen: dict[TaskId, int] = {}
    for i, text in enumerate(raw):
        task = _parse_task(text, f"{key}[{i}]")
        if task in seen:
            raise InvalidScenarioError(
                f"{key}[{i}]", f"task {task} is listed twice (also {key}[{seen[task]}])"
            )
        seen[task] = i
        tasks.append(task)
    return tasks


def _parse_long(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidScenarioError(path, f"must be an integer, got {value!r}")
    if not -(2**63) <= value <= LONG_MAX_VALUE:
        raise InvalidScenarioError(path, f"must fit in a Java long, got {value}")
    return value


def _parse_end_offsets(
    raw: Any, stateful: frozenset[TaskId], warnings: list[str]
) -> dict[TaskId, int]:
    path = "changelog_end_offset_sums"
    if not isinstance(raw, dict):
        raise InvalidScenarioError(
            path, f"must be an object of task id to offset sum, got {_kind(raw)}"
        )
    sums: dict[TaskId, int] = {}
    for text, value in raw.items():
        task = _parse_task(text, f"{path}.{text}")
        offset = _parse_long(value, f"{path}.{text}")
        if offset < 0:
            raise InvalidScenarioError(
                f"{path}.{text}", f"end offset sum must be >= 0, got {offset}"
            )
        if task not in stateful:
            warnings.append(f"{path}.{text}: task {task} is not a stateful task; ignored")
            continue
        sums[task] = offset
    return sums


def _parse_task_refs(raw: Any, path: str) -> tuple[TaskId, ...]:
    if not isinstance(raw, list):
        raise InvalidScenarioError(path, f"must be a list of task ids, got {_kind(raw)}")
    tasks: list[TaskId] = []
    seen: set[TaskId] = set()
    for i, text in enumerate(raw):
        task = _parse_task(text, f"{path}[{i}]")
        if task in seen:
            raise InvalidScenarioError(f"{path}[{i}]", f"task {task} is listed twice")
        seen.add(task)
        tasks.append(task)
    return tuple(tasks)


def _known_tasks(
    tasks: tuple[TaskId, ...], path: str, known: frozenset[TaskId], warnings: list[str]
) -> tuple[TaskId, ...]:
    kept = []
    for task in tasks:
        if task in known:
            kept.append(task)
        else:
            warnings.append(f"{path}: task {task} is in neither task list; ignored")
    return tuple(sorted(kept))


def _parse_lag_map(
    raw: Any,
    path: str,
    stateful: frozenset[TaskId],
    stateless: frozenset[TaskId],
    warnings: list[str],
) -> dict[TaskId, int]:
    if not isinstance(raw, dict):
        raise InvalidScenarioError(
            path, f"must be an object of task id to records, got {_kind(raw)}"
        )
    result: dict[TaskId, int] = {}
    for text, value in raw.items():
        entry = f"{path}.{text}"
        task = _parse_task(text, entry)
        number = _parse_long(value, entry)
        if number < 0 and number not in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
            raise InvalidScenarioError(
                entry, f"must be >= 0, -2 (running active) or -3 (unknown), got {number}"
            )
        if task in stateless:
            raise InvalidScenarioError(entry, f"task {task} is stateless and has no changelog")
        if task not in stateful:
            warnings.append(f"{entry}: task {task} is in neither task list; ignored")
            continue
        result[task] = number
    return result


def _parse_client(
    raw: Any,
    path: str,
    stateful: frozenset[TaskId],
    stateless: frozenset[TaskId],
    end_offsets: Mapping[TaskId, int] | None,
    warnings: list[str],
) -> ClientState:
    if not isinstance(raw, dict):
        raise InvalidScenarioError(path, f"must be an object, got {_kind(raw)}")
    for key in raw:
        if key not in _CLIENT_KEYS:
            raise InvalidScenarioError(f"{path}.{key}", _unknown("field", key, _CLIENT_KEYS))
    process_id = raw.get("id")
    if not isinstance(process_id, str):
        raise InvalidScenarioError(f"{path}.id", f"must be a UUID string, got {process_id!r}")
    if not _UUID_RE.fullmatch(process_id):
        raise InvalidScenarioError(f"{path}.id", f"not a UUID: {process_id!r}")
    process_id = str(_uuid.UUID(process_id))

    known = stateful | stateless
    consumers = None
    if "consumers" in raw:
        consumers = _parse_consumers(raw["consumers"], f"{path}.consumers", known, warnings)

    if "capacity" in raw:
        capacity = raw["capacity"]
        if isinstance(capacity, bool) or not isinstance(capacity, int):
            raise InvalidScenarioError(f"{path}.capacity", f"must be an integer, got {capacity!r}")
        if capacity < 1:
            raise InvalidScenarioError(f"{path}.capacity", f"must be >= 1, got {capacity}")
        if consumers is not None and capacity != len(consumers):
            raise InvalidScenarioError(
                f"{path}.capacity",
                f"must equal the number of consumers ({len(consumers)}), got {capacity}",
            )
    elif consumers is not None:
        capacity = len(consumers)
        if capacity < 1:
            raise InvalidScenarioError(f"{path}.consumers", "must list at least one consumer")
    else:
        raise InvalidScenarioError(f"{path}.capacity", "missing (number of stream threads, >= 1)")

    if "prev_active" in raw:
        prev_active = _parse_task_refs(raw["prev_active"], f"{path}.prev_active")
    else:
        prev_active = tuple({t for c in consumers or () for t in c.prev_active})
    if "prev_standby" in raw:
        prev_standby = _parse_task_refs(raw["prev_standby"], f"{path}.prev_standby")
    else:
        prev_standby = tuple({t for c in consumers or () for t in c.prev_standby})
    prev_active = _known_tasks(prev_active, f"{path}.prev_active", known, warnings)
    prev_standby = _known_tasks(prev_standby, f"{path}.prev_standby", known, warnings)

    if "task_lags" in raw and "task_offset_sums" in raw:
        raise InvalidScenarioError(path, "give either task_lags or task_offset_sums, not both")
    offset_sums = None
    if "task_offset_sums" in raw:
        if end_offsets is None:
            raise InvalidScenarioError(
                f"{path}.task_offset_sums", "needs the top-level changelog_end_offset_sums"
            )
        offset_sums = _parse_lag_map(
            raw["task_offset_sums"], f"{path}.task_offset_sums", stateful, stateless, warnings
        )
        lags = {}
        for task, offset_sum in offset_sums.items():
            if task not in end_offsets:
                raise InvalidScenarioError(
                    "changelog_end_offset_sums", f"missing the end offset sum of task {task}"
                )
            lags[task] = compute_task_lag(offset_sum, end_offsets[task])
    else:
        lags = _parse_lag_map(
            raw.get("task_lags", {}), f"{path}.task_lags", stateful, stateless, warnings
        )

    tags = raw.get("tags", {})
    if not isinstance(tags, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in tags.items()
    ):
        raise InvalidScenarioError(
            f"{path}.tags", f"must be an object of string to string, got {tags!r}"
        )
    if "rack" in raw and not isinstance(raw["rack"], str):
        raise InvalidScenarioError(f"{path}.rack", f"must be a string, got {raw['rack']!r}")
    if "rack" in raw and consumers is not None:
        consumers = tuple(
            c
            if c.rack is not None
            else ConsumerState(
                c.member_id, c.prev_active, c.prev_standby, c.owned_partitions, raw["rack"]
            )
            for c in consumers
        )
    return ClientState(
        id=process_id,
        capacity=capacity,
        prev_active=prev_active,
        prev_standby=prev_standby,
        task_lags=lags,
        task_offset_sums=offset_sums,
        tags=dict(tags),
        consumers=consumers,
        rack=raw.get("rack"),
    )


def _parse_consumers(
    raw: Any, path: str, known: frozenset[TaskId], warnings: list[str]
) -> tuple[ConsumerState, ...]:
    if not isinstance(raw, list):
        raise InvalidScenarioError(path, f"must be a list of consumers, got {_kind(raw)}")
    consumers = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        where = f"{path}[{i}]"
        if not isinstance(entry, dict):
            raise InvalidScenarioError(where, f"must be an object, got {_kind(entry)}")
        for key in entry:
            if key not in _CONSUMER_KEYS:
                raise InvalidScenarioError(f"{where}.{key}", _unknown("field", key, _CONSUMER_KEYS))
        member = entry.get("member_id")
        if not isinstance(member, str) or not member:
            raise InvalidScenarioError(
                f"{where}.member_id", f"must be a non-empty string, got {member!r}"
            )
        if member in seen:
            raise InvalidScenarioError(f"{where}.member_id", f"duplicate member id {member!r}")
        seen.add(member)
        prev_active = _known_tasks(
            _parse_task_refs(entry.get("prev_active", []), f"{where}.prev_active"),
            f"{where}.prev_active",
            known,
            warnings,
        )
        prev_standby = _known_tasks(
            _parse_task_refs(entry.get("prev_standby", []), f"{where}.prev_standby"),
            f"{where}.prev_standby",
            known,
            warnings,
        )
        owned = entry.get("owned_partitions", [])
        if not isinstance(owned, list) or not all(
            isinstance(p, list)
            and len(p) == 2
            and isinstance(p[0], str)
            and isinstance(p[1], int)
            and not isinstance(p[1], bool)
            for p in owned
        ):
            raise InvalidScenarioError(
                f"{where}.owned_partitions",
                f"must be a list of [topic, partition] pairs, got {owned!r}",
            )
        rack = entry.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise InvalidScenarioError(f"{where}.rack", f"must be a string, got {rack!r}")
        consumers.append(
            ConsumerState(member, prev_active, prev_standby, tuple((t, p) for t, p in owned), rack)
        )
    return tuple(consumers)


def _unknown(what: str, key: Any, known: Iterable[str]) -> str:
    """``unknown field`` plus the closest known name, when one is close (difflib)."""
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    return f"unknown {what}" + (f" (did you mean {close[0]!r}?)" if close else "")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


__all__ = [
    "CONFIG_KEYS",
    "EXTENSION_KEYS",
    "KAFKA_CONFIG_NAMES",
    "YAML_SUFFIXES",
    "LONG_MAX_VALUE",
    "cluster_state_to_json",
    "load_cluster_state",
    "loads_cluster_state",
    "parse_cluster_state",
]
