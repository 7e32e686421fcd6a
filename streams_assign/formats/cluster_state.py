"""The cluster-state document: load, validate, dump (with its YAML form, the only I/O of the core).

The format is the contract of ``docs/scenario-format.md``; ``docs/formats.md`` lists the
optional fields this project adds. Every rule breaks with an :class:`InvalidScenarioError` that
names the JSON path and the value, e.g. ``clients[3].capacity: must be >= 1, got 0``.

The document is read in three parts, one module each: the top level (configs, task lists, end
offsets) here, the ``clients`` in :mod:`.cluster_state_clients`, the optional extension fields
in :mod:`.cluster_state_extensions`. :func:`cluster_state_to_json` writes a
:class:`~streams_assign.model.ClusterState` back as a document.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from streams_assign.errors import InvalidScenarioError
from streams_assign.formats.cluster_state_clients import (
    kind_of,
    parse_clients,
    parse_java_long,
    parse_task_id,
    unknown_name,
)
from streams_assign.formats.cluster_state_extensions import (
    EXTENSION_KEYS,
    Extensions,
    parse_extensions,
)
from streams_assign.formats.yaml import YAML_HINT as _YAML_HINT
from streams_assign.formats.yaml import load_yaml as _load_yaml
from streams_assign.model import AssignmentConfigs, ClusterState, TaskId

log = logging.getLogger(__name__)


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


def load_cluster_state(path: str | Path) -> ClusterState:
    """Read and validate a cluster-state file.

    Parameters
    ----------
    path:
        A JSON file in the format of ``docs/scenario-format.md``.

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
        raise InvalidScenarioError("", f"expected a JSON object, got {kind_of(document)}")
    for key in document:
        if key not in _TOP_KEYS:
            raise InvalidScenarioError(key, unknown_name("field", key, _TOP_KEYS))
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

    clients = parse_clients(
        document.get("clients"), stateful_set, stateless_set, end_offsets, warnings
    )

    for key in ("name", "description"):
        if key in document and not isinstance(document[key], str):
            raise InvalidScenarioError(key, f"must be a string, got {kind_of(document[key])}")
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
        raise InvalidScenarioError("configs", f"must be an object, got {kind_of(raw)}")
    values: dict[str, Any] = {}
    given: dict[str, str] = {}
    for written, value in raw.items():
        key = KAFKA_CONFIG_NAMES.get(written, written)
        if key not in CONFIG_KEYS:
            raise InvalidScenarioError(
                f"configs.{written}",
                unknown_name("config key", written, (*CONFIG_KEYS, *KAFKA_CONFIG_NAMES)),
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


def _parse_task_list(document: Mapping[str, Any], key: str) -> list[TaskId]:
    raw = document.get(key, [])
    if not isinstance(raw, list):
        raise InvalidScenarioError(key, f"must be a list of task ids, got {kind_of(raw)}")
    tasks: list[TaskId] = []
    seen: dict[TaskId, int] = {}
    for i, text in enumerate(raw):
        task = parse_task_id(text, f"{key}[{i}]")
        if task in seen:
            raise InvalidScenarioError(
                f"{key}[{i}]", f"task {task} is listed twice (also {key}[{seen[task]}])"
            )
        seen[task] = i
        tasks.append(task)
    return tasks


def _parse_end_offsets(
    raw: Any, stateful: frozenset[TaskId], warnings: list[str]
) -> dict[TaskId, int]:
    path = "changelog_end_offset_sums"
    if not isinstance(raw, dict):
        raise InvalidScenarioError(
            path, f"must be an object of task id to offset sum, got {kind_of(raw)}"
        )
    sums: dict[TaskId, int] = {}
    for text, value in raw.items():
        task = parse_task_id(text, f"{path}.{text}")
        offset = parse_java_long(value, f"{path}.{text}")
        if offset < 0:
            raise InvalidScenarioError(
                f"{path}.{text}", f"end offset sum must be >= 0, got {offset}"
            )
        if task not in stateful:
            warnings.append(f"{path}.{text}: task {task} is not a stateful task; ignored")
            continue
        sums[task] = offset
    return sums


def cluster_state_to_json(state: ClusterState) -> dict[str, Any]:
    """The cluster-state document of a :class:`ClusterState` (inverse of parsing)."""
    document: dict[str, Any] = {}
    if state.name is not None:
        document["name"] = state.name
    if state.description is not None:
        document["description"] = state.description
    cfg = state.configs
    configs: dict[str, Any] = {
        "acceptable_recovery_lag": cfg.acceptable_recovery_lag,
        "max_warmup_replicas": cfg.max_warmup_replicas,
        "num_standby_replicas": cfg.num_standby_replicas,
        "probing_rebalance_interval_ms": cfg.probing_rebalance_interval_ms,
    }
    if cfg.rack_aware_assignment_tags:
        configs["rack_aware_assignment_tags"] = list(cfg.rack_aware_assignment_tags)
    if cfg.rack_aware_assignment_strategy != "none":
        configs["rack_aware_assignment_strategy"] = cfg.rack_aware_assignment_strategy
    for key in ("rack_aware_assignment_traffic_cost", "rack_aware_assignment_non_overlap_cost"):
        if getattr(cfg, key) is not None:
            configs[key] = getattr(cfg, key)
    document["configs"] = configs
    document["stateful_tasks"] = [str(t) for t in state.stateful_tasks]
    document["stateless_tasks"] = [str(t) for t in state.stateless_tasks]
    if state.changelog_end_offset_sums is not None:
        document["changelog_end_offset_sums"] = {
            str(t): v for t, v in state.changelog_end_offset_sums.items()
        }
    clients = []
    for client in state.clients:
        entry: dict[str, Any] = {
            "id": client.id,
            "capacity": client.capacity,
            "prev_active": [str(t) for t in client.prev_active],
            "prev_standby": [str(t) for t in client.prev_standby],
        }
        if client.task_offset_sums is not None:
            entry["task_offset_sums"] = {str(t): v for t, v in client.task_offset_sums.items()}
        else:
            entry["task_lags"] = {str(t): v for t, v in client.task_lags.items()}
        if client.tags:
            entry["tags"] = dict(client.tags)
        if client.rack is not None:
            entry["rack"] = client.rack
        if client.consumers is not None:
            entry["consumers"] = [
                {
                    "member_id": c.member_id,
                    "prev_active": [str(t) for t in c.prev_active],
                    "prev_standby": [str(t) for t in c.prev_standby],
                    **(
                        {"owned_partitions": [list(p) for p in c.owned_partitions]}
                        if c.owned_partitions
                        else {}
                    ),
                    **({"rack": c.rack} if c.rack is not None else {}),
                }
                for c in client.consumers
            ]
        clients.append(entry)
    document["clients"] = clients
    document.update(state.extensions)
    return document


__all__ = [
    "CONFIG_KEYS",
    "KAFKA_CONFIG_NAMES",
    "YAML_SUFFIXES",
    "cluster_state_to_json",
    "load_cluster_state",
    "loads_cluster_state",
    "parse_cluster_state",
]
