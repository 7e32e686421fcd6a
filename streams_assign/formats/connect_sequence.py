"""The Connect sequence format (``kafka-connect/input/*.json``): load and validate.

The format is described in ``tests/corpora/kafka-connect/FORMAT.md``. Defaults: protocol
``sessioned``, ``scheduled_rebalance_max_delay_ms`` 300000, ``config_offset`` 1 (+1 on each
round that carries ``connectors``), leader = first member, generation = previous + 1 (1 in the
first round), last completed generation = generation - 1.
"""

from __future__ import annotations

import json
import os
from typing import Any

from streams_assign.connect.model import (
    CONNECT_ASSIGNORS,
    DEFAULT_MAX_DELAY_MS,
    PROTOCOL_VERSIONS,
    ConnectorTaskId,
    ConnectRound,
    ConnectSequence,
    WorkerMember,
)
from streams_assign.errors import InvalidConnectSequenceError
from streams_assign.formats.json_file import read_json_file

__all__ = ["load_connect_sequence", "parse_connect_sequence"]


def _fail(path: str, message: str) -> InvalidConnectSequenceError:
    return InvalidConnectSequenceError(path, message)


def _int(value: Any, path: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"must be an integer, got {json.dumps(value)}")
    if minimum is not None and value < minimum:
        raise _fail(path, f"must be >= {minimum}, got {value}")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(path, f"must be a non-empty string, got {json.dumps(value)}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(path, f"must be a list, got {json.dumps(value)}")
    return value


def _connectors(value: Any, path: str) -> dict[str, int]:
    if not isinstance(value, dict):
        raise _fail(path, f"must be an object of task counts, got {json.dumps(value)}")
    return {_str(name, path): _int(n, f"{path}.{name}", 0) for name, n in value.items()}


def _member(doc: Any, path: str) -> WorkerMember:
    if not isinstance(doc, dict):
        raise _fail(path, f"must be an object, got {json.dumps(doc)}")
    worker = _str(doc.get("worker_id"), f"{path}.worker_id")
    url = doc.get("url", f"http://{worker}:8083/")
    if not isinstance(url, str):
        raise _fail(f"{path}.url", f"must be a string, got {json.dumps(url)}")
    connectors = tuple(
        _str(c, f"{path}.owned_connectors[{i}]")
        for i, c in enumerate(_list(doc.get("owned_connectors", []), f"{path}.owned_connectors"))
    )
    tasks = []
    for i, item in enumerate(_list(doc.get("owned_tasks", []), f"{path}.owned_tasks")):
        item_path = f"{path}.owned_tasks[{i}]"
        if not isinstance(item, list) or len(item) != 2:
            raise _fail(item_path, f"must be [connector, task], got {json.dumps(item)}")
        tasks.append(
            ConnectorTaskId(_str(item[0], f"{item_path}[0]"), _int(item[1], f"{item_path}[1]", 0))
        )
    return WorkerMember(worker, url, connectors, tuple(tasks))


def parse_connect_sequence(doc: Any) -> ConnectSequence:
    """Validate a parsed Connect sequence document.

    Returns
    -------
    ConnectSequence

    Raises
    ------
    InvalidConnectSequenceError
        A missing or ill-typed field, an unknown assignor or protocol, a round without members,
        a duplicate worker id, a leader that is not a member, time going backwards; the message
        names the JSON path and the value.
    """
    if not isinstance(doc, dict):
        raise _fail("", f"the document must be a JSON object, got {type(doc).__name__}")
    assignor = doc.get("assignor")
    if assignor not in CONNECT_ASSIGNORS:
        raise _fail("assignor", f"must be eager or incremental, got {json.dumps(assignor)}")
    protocol = doc.get("protocol", "sessioned")
    if protocol not in PROTOCOL_VERSIONS:
        raise _fail("protocol", f"must be sessioned or compatible, got {json.dumps(protocol)}")
    max_delay = _int(
        doc.get("scheduled_rebalance_max_delay_ms", DEFAULT_MAX_DELAY_MS),
        "scheduled_rebalance_max_delay_ms",
        0,
    )
    connectors = _connectors(doc.get("connectors", {}), "connectors")
    offset = _int(doc.get("config_offset", 1), "config_offset", 0)
    rounds_doc = _list(doc.get("rounds"), "rounds")
    if not rounds_doc:
        raise _fail("rounds", "must list at least one round, got []")
    rounds = []
    generation = 0
    last_time: int | None = None
    for r, round_doc in enumerate(rounds_doc):
        path = f"rounds[{r}]"
        if not isinstance(round_doc, dict):
            raise _fail(path, f"must be an object, got {json.dumps(round_doc)}")
        time_ms = _int(round_doc.get("time_ms"), f"{path}.time_ms")
        if last_time is not None and time_ms < last_time:
            raise _fail(
                f"{path}.time_ms", f"must be >= the previous round's {last_time}, got {time_ms}"
            )
        last_time = time_ms
        if "connectors" in round_doc:
            connectors = _connectors(round_doc["connectors"], f"{path}.connectors")
            offset += 1
        members_doc = _list(round_doc.get("members"), f"{path}.members")
        if not members_doc:
            raise _fail(f"{path}.members", "must list at least one member, got []")
        members = tuple(_member(m, f"{path}.members[{i}]") for i, m in enumerate(members_doc))
        ids = [m.worker_id for m in members]
        for i, worker in enumerate(ids):
            if worker in ids[:i]:
                raise _fail(
                    f"{path}.members[{i}].worker_id", f"duplicate worker id {json.dumps(worker)}"
                )
        leader = round_doc.get("leader", ids[0])
        if leader not in ids:
            raise _fail(f"{path}.leader", f"must be one of the members, got {json.dumps(leader)}")
        generation = _int(round_doc.get("generation", generation + 1), f"{path}.generation")
        last_completed = _int(
            round_doc.get("last_completed_generation", generation - 1),
            f"{path}.last_completed_generation",
        )
        note = round_doc.get("note", "")
        rounds.append(
            ConnectRound(
                time_ms,
                leader,
                dict(connectors),
                offset,
                generation,
                last_completed,
                members,
                note if isinstance(note, str) else json.dumps(note),
            )
        )
    return ConnectSequence(str(assignor), str(protocol), max_delay, tuple(rounds))


def load_connect_sequence(path: str | os.PathLike[str]) -> ConnectSequence:
    """Read and validate a Connect sequence file.

    Raises
    ------
    InvalidConnectSequenceError
        Not JSON, or a bad field (see :func:`parse_connect_sequence`).
    OSError
        The file cannot be read.
    """
    return parse_connect_sequence(read_json_file(path, InvalidConnectSequenceError))
