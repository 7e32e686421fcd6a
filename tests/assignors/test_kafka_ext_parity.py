"""Parity with Kafka on ``tests/corpora/kafka-ext`` (zones, threads, both): 120 files.

Each expected file is Apache Kafka's own output (trunk 1eb7644349cb) for the input of the same
name: per client ``active`` and ``standby``, and per consumer ``active`` and ``standby`` where
the input lists consumers, plus ``probing_rebalance_needed``. Everything an expected file
contains must match exactly; nothing else is compared.

The last tests show that the Java-order emulations are load-bearing: replacing any of them by
sorted order breaks some files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devtools.paths import CORPORA
from streams_assign.assignors import assign

EXT = CORPORA / "kafka-ext"
INPUTS = sorted((EXT / "input").glob("*.json")) if EXT.is_dir() else []


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """What of ``expected`` the ``actual`` output does not reproduce, one line each."""
    problems = []
    if expected.get("probing_rebalance_needed") != actual["probing_rebalance_needed"]:
        problems.append("probing_rebalance_needed")
    for client_id, client in expected["clients"].items():
        mine = actual["clients"].get(client_id)
        if mine is None:
            problems.append(f"{client_id}: missing")
            continue
        for role in ("active", "standby"):
            if role in client and client[role] != mine[role]:
                problems.append(f"{client_id}.{role}: {mine[role]} != {client[role]}")
        if "consumers" in client:
            consumers = mine.get("consumers", {})
            if set(consumers) != set(client["consumers"]):
                problems.append(
                    f"{client_id}.consumers: {sorted(consumers)} != {sorted(client['consumers'])}"
                )
                continue
            for member, roles in client["consumers"].items():
                for role, tasks in roles.items():
                    if consumers[member].get(role) != tasks:
                        problems.append(
                            f"{member}.{role}: {consumers[member].get(role)} != {tasks}"
                        )
    return problems


def run(path: Path) -> list[str]:
    expected = json.loads((EXT / "expected" / path.name).read_text())
    return differences(expected, assign(path).to_json())


def test_all_120_files_are_present() -> None:
    assert EXT.is_dir(), f"{EXT} is missing: Kafka's recorded decisions belong in tests/corpora"
    assert len(INPUTS) == 120
    assert {p.name for p in (EXT / "expected").glob("*.json")} == {p.name for p in INPUTS}


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_kafka_ext_file_matches(path: Path) -> None:
    assert run(path) == []


def _some_file_mismatches(monkeypatch: pytest.MonkeyPatch, target: str, replacement: Any) -> bool:
    monkeypatch.setattr(target, replacement)
    return any(run(path) for path in INPUTS)


def test_hash_map_order_of_pending_standbys_matters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Filling pending standbys in TaskId instead of HashMap order breaks zone files."""
    from streams_assign.java.hash_order import JavaHashMap

    original = JavaHashMap.items
    assert _some_file_mismatches(
        monkeypatch,
        "streams_assign.java.hash_order.JavaHashMap.items",
        lambda self: sorted(original(self), key=lambda kv: kv[0].sort_key),
    )


def test_hash_set_order_of_the_thread_heap_matters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Heapifying the actives in TaskId instead of HashSet order breaks thread files."""
    assert _some_file_mismatches(
        monkeypatch,
        "streams_assign.assignors.threads.task_hash_set",
        lambda items: sorted(items, key=lambda t: t.sort_key),
    )


def test_priority_queue_array_order_of_the_remainder_matters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Dealing the remainder in sorted instead of heap-array order breaks thread files."""
    from streams_assign.assignors.threads import _TaskQueue

    original = _TaskQueue.array_order
    assert _some_file_mismatches(
        monkeypatch,
        "streams_assign.assignors.threads._TaskQueue.array_order",
        lambda self: sorted(original(self), key=lambda t: t.sort_key),
    )
