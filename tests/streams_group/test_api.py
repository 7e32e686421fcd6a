"""The API with streams-group states and with classic ones decided as their streams group."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from devtools.kafka.java import JavaBatch
from devtools.paths import CORPORA
from streams_assign.assignors import ASSIGNORS, assign, assign_group, get_assignor
from streams_assign.assignors.streams_group_sticky import assign_streams_group
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.formats.document import load_document
from streams_assign.formats.streams_group import dump_streams_group
from streams_assign.streams_group import StreamsGroupState, from_cluster_state

GROUP = CORPORA / "kafka-streams-group"
CLASSIC = CORPORA / "kafka-diff" / "input"


def _group_file(name: str = "sg000_rolling_bounce.json") -> tuple[Path, dict]:
    source = GROUP / "input" / name
    assert source.is_file(), f"missing shared state {source}"
    return source, json.loads((GROUP / "expected" / name).read_text())


def _classic_files(count: int) -> list[Path]:
    files = sorted(CLASSIC.glob("*.json"))[:count]
    assert files, f"no classic cluster states in {CLASSIC}"
    return files


def test_formats_are_told_apart_by_their_fields() -> None:
    source, _ = _group_file()
    assert isinstance(load_document(source), StreamsGroupState)
    assert not isinstance(load_document(_classic_files(1)[0]), StreamsGroupState)


def test_api_lists_and_runs_the_streams_group_assignor() -> None:
    assert "streams_group_sticky" in ASSIGNORS
    source, expected = _group_file()
    assert assign_group(source).to_json() == expected
    assert get_assignor("streams_group_sticky").assign_group(load_document(source)).to_json() == (
        expected
    )


@pytest.mark.parametrize("path", _classic_files(12), ids=lambda p: p.stem)
def test_classic_state_decided_as_its_streams_group(path: Path) -> None:
    cluster = load_cluster_state(path)
    result = assign(cluster, assignor="streams_group_sticky")
    assert result.assignor == "streams_group_sticky" and not result.probing_rebalance_needed
    actives = Counter(t for c in result.clients.values() for t in c.active)
    assert set(actives) == set(cluster.all_tasks) and set(actives.values()) == {1}
    for client in result.clients.values():
        assert not set(client.active) & set(client.standby)
    group = assign_streams_group(from_cluster_state(cluster)).to_json()["members"]
    assert sum(len(p) for m in group.values() for p in m["active"].values()) == len(actives)


def test_classic_states_agree_with_kafka_after_conversion(kafka_sticky: JavaBatch) -> None:
    for path in _classic_files(40):
        state = from_cluster_state(load_cluster_state(path))
        document = dump_streams_group(state)
        assert assign_streams_group(state).to_json() == kafka_sticky.request(document), path.name
