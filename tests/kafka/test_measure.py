"""The real-cluster measurement helpers without a broker: the instances' ``restores.jsonl``
(``RestoreLog``, :mod:`devtools.kafka.restores`), stateful sub-topologies from a topology's
description, tasks-per-thread spreads and the classic leader's decision lines
(:mod:`devtools.kafka.measure`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.kafka.measure import (
    StepFigures,
    decisions_in_log,
    spreads,
    stateful_subtopologies,
)
from devtools.kafka.restores import read_restores, read_standby_loads
from devtools.kafka.streams_app import ProcessAssignment

CORPORA = Path(__file__).resolve().parents[1] / "corpora" / "tool-samples"


def _restore(time_ms: int, task: str | None, records: int, ended: str = "end") -> dict:
    return {
        "kind": "restore",
        "time_ms": time_ms,
        "task": task,
        "store": "order-totals",
        "changelog": "app-order-totals-changelog",
        "partition": 3,
        "records": records,
        "start_offset": None if ended == "suspended" else 10,
        "end_offset": None if ended == "suspended" else 10 + records,
        "ms": None if ended == "suspended" else 42,
        "ended": ended,
    }


def test_restores_are_read_by_kind_and_time_and_a_torn_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "restores.jsonl"
    standby = {
        "kind": "standby",
        "time_ms": 1500,
        "task": "2_1",
        "store": "payment-counts",
        "changelog": "app-payment-counts-changelog",
        "partition": 1,
        "records": 250,
        "batch_end_offset": 249,
        "end_offset": 300,
    }
    lines = [_restore(1000, "1_3", 700), standby, _restore(2000, None, 5, "suspended")]
    path.write_text("\n".join(json.dumps(line) for line in lines) + '\n{"kind":"resto')
    restores = read_restores(path)
    assert [(r.task, r.records, r.suspended) for r in restores] == [
        ("1_3", 700, False),
        (None, 5, True),
    ]
    assert (restores[0].start_offset, restores[0].end_offset, restores[0].ms) == (10, 710, 42)
    assert restores[1].start_offset is None and restores[1].ms is None
    assert [r.records for r in read_restores(path, since_ms=1001)] == [5]
    loads = read_standby_loads(path)
    assert [(s.task, s.records, s.batch_end_offset, s.end_offset) for s in loads] == [
        ("2_1", 250, 249, 300)
    ]
    assert read_standby_loads(path, since_ms=1501) == []
    assert read_restores(tmp_path / "missing.jsonl") == []


def test_a_complete_restore_line_without_a_field_raises(tmp_path: Path) -> None:
    path = tmp_path / "restores.jsonl"
    line = _restore(1000, "1_3", 700)
    del line["records"]
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(KeyError):
        read_restores(path)


def test_stateful_subtopologies_from_a_topology_description() -> None:
    text = (CORPORA / "topology-wordcount-tutorial.txt").read_text()
    assert stateful_subtopologies(text) == {1}


def _process(*threads: tuple[set[str], set[str]]) -> ProcessAssignment:
    by_name = {f"t{i}": (frozenset(a), frozenset(s)) for i, (a, s) in enumerate(threads)}
    active = frozenset().union(*(a for a, _ in by_name.values()))
    standby = frozenset().union(*(s for _, s in by_name.values()))
    return ProcessAssignment(active, standby, by_name)


def test_spreads_count_per_thread_and_only_stateful_tasks_in_the_stateful_load() -> None:
    assignments = {
        "p1": _process(({"0_0", "0_1", "1_0"}, {"1_1"})),
        "p2": _process(({"1_1"}, {"1_0"}), (set(), set())),
    }
    # actives per thread 3, 1, 0; stateful (sub-topology 1) per thread 2, 2, 0.
    assert spreads(assignments, {1}) == (3, 2)
    assert spreads({}, {1}) == (0, 0)


def test_balanced_within_kafkas_bound_needs_both_spreads_at_most_one() -> None:
    step = StepFigures("kill", 1.0, 0, 0, 1, 0, 0, 1, 1, None)
    assert step.balanced
    assert not StepFigures("kill", 1.0, 0, 0, 1, 0, 0, 1, 2, None).balanced
    assert not StepFigures("kill", 1.0, 0, 0, 1, 0, 0, 2, 0, None).balanced


def test_decisions_and_probing_requests_in_the_leaders_log() -> None:
    lines = [
        "[t1] INFO [x] Decided on assignment: {...} with no followup probing rebalance. (HA)",
        "[t2] INFO [x] Decided on assignment: {...} with followup probing rebalance. (HA)",
        "[t3] INFO [x] lag_aware_sticky assigned 18 tasks to 5 processes; probing rebalance: "
        "true (io.streamsassign)",
        "[t4] INFO [x] lag_aware_sticky assigned 18 tasks to 5 processes; probing rebalance: "
        "false (io.streamsassign)",
    ]
    assert decisions_in_log(lines, plugin=False) == (2, 1)
    assert decisions_in_log(lines, plugin=True) == (2, 1)
