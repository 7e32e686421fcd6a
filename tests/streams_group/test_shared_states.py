"""The 40 shared streams-group states: the twin and the live Kafka class reproduce Kafka 4.4."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.kafka.java import JavaBatch
from devtools.paths import CORPORA
from streams_assign.assignors.streams_group_sticky import assign_streams_group
from streams_assign.formats.streams_group import load_streams_group

STATES = CORPORA / "kafka-streams-group"


def shared_state_names() -> list[str]:
    """File names of ``kafka-streams-group/input``; a sentinel when the folder is missing."""
    names = sorted(p.name for p in (STATES / "input").glob("*.json"))
    return names or ["<missing tests/corpora/kafka-streams-group/input>"]


def state_paths(name: str) -> tuple[Path, Path]:
    """The input and expected file of one shared state; fails when the folder is missing."""
    source, expected = STATES / "input" / name, STATES / "expected" / name
    if not source.is_file() or not expected.is_file():
        pytest.fail(f"shared streams-group state missing: {source} / {expected}")
    return source, expected


NAMES = shared_state_names()


def test_shared_folder_holds_forty_states() -> None:
    assert len([n for n in NAMES if n.endswith(".json")]) == 40, NAMES[:3]


@pytest.mark.parametrize("name", NAMES)
def test_twin_reproduces_kafka_44_decision(name: str) -> None:
    source, expected = state_paths(name)
    got = assign_streams_group(load_streams_group(source)).to_json()
    assert got == json.loads(expected.read_text())


@pytest.mark.parametrize("name", NAMES)
def test_live_kafka_class_reproduces_recorded_decision(name: str, kafka_sticky: JavaBatch) -> None:
    source, expected = state_paths(name)
    assert kafka_sticky.request(json.loads(source.read_text())) == json.loads(expected.read_text())
