"""The ``clients`` of a cluster-state document: process ids, threads, lags, consumers.

:func:`parse_clients` checks each client with the format's rules (``docs/scenario-format.md``,
``docs/formats.md``) and returns them in process-id order; :mod:`.cluster_state` calls it while
parsing a whole document. The value parsers both modules share (task ids, Java longs, the words
of an error message) live here too, so the two modules import in one direction.
"""

from __future__ import annotations

import difflib
import functools
import re
import uuid as _uuid
from collections.abc import Iterable, Mapping
from typing import Any

from streams_assign.errors import InvalidScenarioError, InvalidTaskIdError
from streams_assign.model import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    ClientState,
    ConsumerState,
    TaskId,
    compute_task_lag,
    process_id_sort_key,
)

__all__ = [
    "PROCESS_ID_RE",
    "kind_of",
    "parse_clients",
    "parse_java_long",
    "parse_task_id",
    "unknown_name",
]

#: The 8-4-4-4-12 hexadecimal form of a Kafka Streams process id (as UUID.toString writes it).
_HEX = "[0-9a-fA-F]"
PROCESS_ID_RE = re.compile(f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")

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


def parse_clients(
    raw_clients: Any,
    stateful: frozenset[TaskId],
    stateless: frozenset[TaskId],
    end_offsets: Mapping[TaskId, int] | None,
    warnings: list[str],
) -> list[ClientState]:
    """Validate the document's ``clients`` list and build its clients in process-id order.

    Parameters
    ----------
    raw_clients:
        The parsed ``clients`` value.
    stateful, stateless:
        The document's task lists.
    end_offsets:
        The parsed ``changelog_end_offset_sums``, or ``None`` when absent.
    warnings:
        Collects the messages of ignored entries (lags of unknown tasks).

    Raises
    ------
    InvalidScenarioError
        Naming the JSON path and the value of the first broken rule.
    """
    if not isinstance(raw_clients, list):
        raise InvalidScenarioError(
            "clients", f"must be a list of clients, got {kind_of(raw_clients)}"
        )
    if not raw_clients:
        raise InvalidScenarioError("clients", "must list at least one client")
    clients: list[ClientState] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_clients):
        client = _parse_client(raw, f"clients[{i}]", stateful, stateless, end_offsets, warnings)
        if client.id in seen:
            raise InvalidScenarioError(
                f"clients[{i}].id",
                f"duplicate client id {client.id} (also clients[{seen[client.id]}])",
            )
        seen[client.id] = i
        clients.append(client)
    clients.sort(key=lambda c: process_id_sort_key(c.id))
    return clients


@functools.lru_cache(maxsize=1 << 16)
def _task_of(text: str) -> TaskId:
    # A document names each task once per client and list: parse each distinct text once.
    return TaskId.parse(text)


def parse_task_id(text: Any, path: str) -> TaskId:
    """The task id at ``path``, or :class:`InvalidTaskIdError` naming that path."""
    try:
        return _task_of(text) if isinstance(text, str) else TaskId.parse(text)
    except InvalidTaskIdError as exc:
        raise InvalidTaskIdError(path, exc.reason) from None


def parse_java_long(value: Any, path: str) -> int:
    """The integer at ``path``, which must fit in a Java ``long``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidScenarioError(path, f"must be an integer, got {value!r}")
    if not -(2**63) <= value <= LONG_MAX_VALUE:
        raise InvalidScenarioError(path, f"must fit in a Java long, got {value}")
    return value


def _parse_task_refs(raw: Any, path: str) -> tuple[TaskId, ...]:
    if not isinstance(raw, list):
        raise InvalidScenarioError(path, f"must be a list of task ids, got {kind_of(raw)}")
    tasks: list[TaskId] = []
    seen: set[TaskId] = set()
    for i, text in enumerate(raw):
        task = parse_task_id(text, f"{path}[{i}]")
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
            path, f"must be an object of task id to records, got {kind_of(raw)}"
        )
    result: dict[TaskId, int] = {}
    for text, value in raw.items():
        entry = f"{path}.{text}"
        task = parse_task_id(text, entry)
        number = parse_java_long(value, entry)
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
        raise InvalidScenarioError(path, f"must be an object, got {kind_of(raw)}")
    for key in raw:
        if key not in _CLIENT_KEYS:
            raise InvalidScenarioError(f"{path}.{key}", unknown_name("field", key, _CLIENT_KEYS))
    process_id = raw.get("id")
    if not isinstance(process_id, str):
        raise InvalidScenarioError(f"{path}.id", f"must be a UUID string, got {process_id!r}")
    if not PROCESS_ID_RE.fullmatch(process_id):
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
        raise InvalidScenarioError(path, f"must be a list of consumers, got {kind_of(raw)}")
    consumers = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        where = f"{path}[{i}]"
        if not isinstance(entry, dict):
            raise InvalidScenarioError(where, f"must be an object, got {kind_of(entry)}")
        for key in entry:
            if key not in _CONSUMER_KEYS:
                raise InvalidScenarioError(
                    f"{where}.{key}", unknown_name("field", key, _CONSUMER_KEYS)
                )
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


def unknown_name(what: str, key: Any, known: Iterable[str]) -> str:
    """``unknown field`` plus the closest known name, when one is close (difflib)."""
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    return f"unknown {what}" + (f" (did you mean {close[0]!r}?)" if close else "")


def kind_of(value: Any) -> str:
    """A JSON value's kind in the words of an error message (``an object``, ``null``)."""
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
