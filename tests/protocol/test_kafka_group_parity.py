"""The coordinator answers every shared group trace and named flow exactly as Kafka did.

``tests/corpora/kafka-group/expected/`` holds what Kafka's classic-group coordinator
(``GroupMetadataManager``, trunk 1eb7644349cb) answered for each of the 60 traces in ``input/``;
``flows/`` holds 14 named flows with their ``expect`` lists. A missing folder fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devtools.paths import CORPORA
from streams_assign.protocol import check_expectations, run_trace

FOLDER = CORPORA / "kafka-group"
TRACES = sorted((FOLDER / "input").glob("*.json"))
FLOWS = sorted((FOLDER / "flows").glob("*.json"))
CONTRACT_GROUP_FIELDS = ("exists", "state", "generation", "leader", "members")


def test_the_shared_group_folder_is_complete() -> None:
    assert FOLDER.is_dir(), f"{FOLDER} is missing: the group-protocol parity cannot run"
    assert len(TRACES) == 60, f"expected 60 traces in {FOLDER / 'input'}, found {len(TRACES)}"
    assert len(FLOWS) == 14, f"expected 14 flows in {FOLDER / 'flows'}, found {len(FLOWS)}"


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", TRACES, ids=[p.stem for p in TRACES])
def test_trace_matches_kafka_event_by_event(path: Path) -> None:
    expected = _load(FOLDER / "expected" / path.name)
    got = run_trace(_load(path), path.name)
    assert len(got["events"]) == len(expected["events"])
    for mine, kafka in zip(got["events"], expected["events"], strict=True):
        where = f"{path.name} event {kafka['i']} ({kafka['type']})"
        assert mine["timers_fired"] == kafka["timers_fired"], where
        assert mine["responses"] == kafka["responses"], where
        for key in CONTRACT_GROUP_FIELDS:
            assert mine["group"].get(key) == kafka["group"].get(key), f"{where}: group.{key}"
    assert got["member_ids"] == expected["member_ids"]
    assert got["summary"] == expected["summary"]


@pytest.mark.parametrize("path", TRACES, ids=[p.stem for p in TRACES])
def test_trace_diagnostic_detail_matches_kafka(path: Path) -> None:
    """Timer deadlines, HashMap member order and the member sets match after every event."""
    expected = _load(FOLDER / "expected" / path.name)
    got = run_trace(_load(path), path.name)
    for mine, kafka in zip(got["events"], expected["events"], strict=True):
        if "detail" in kafka["group"]:
            assert mine["group"]["detail"] == kafka["group"]["detail"], f"event {kafka['i']}"


@pytest.mark.parametrize("path", FLOWS, ids=[p.stem for p in FLOWS])
def test_named_flow_meets_its_expectations(path: Path) -> None:
    flow = _load(path)
    assert flow.get("expect"), f"{path.name} has no expect list"
    failures = check_expectations(run_trace(flow, path.name), flow["expect"])
    assert failures == []
