"""Kafka's own consumer and Connect assignors (live, in a JVM) against ours.

First the harness must reproduce the shared expected files (so it runs Kafka the way the
corpora were made); then a seeded random differential: a few hundred consumer states per
consumer assignor and a hundred Connect sequences per Connect assignor, 0 disagreements
expected. The seed is printed (``-s`` shows it; set ``STREAMS_ASSIGN_SEED`` to replay) and
every failing input is written to ``build/differential-failures/``.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from devtools.kafka.groups_reference import (
    KafkaGroupsException,
    KafkaGroupsReference,
    random_connect_sequence,
    random_consumer_state,
)
from devtools.paths import CORPORA
from streams_assign.connect import replay_connect, rounds_to_json
from streams_assign.consumer import assign_consumer_group
from streams_assign.errors import StreamsAssignError
from streams_assign.formats.connect_sequence import parse_connect_sequence
from streams_assign.formats.consumer_group import assignment_to_json, parse_consumer_state

REPO = Path(__file__).resolve().parents[2]
FAILURES = REPO / "build" / "differential-failures"
SEED = int(os.environ.get("STREAMS_ASSIGN_SEED", random.SystemRandom().randrange(2**32)))
CONSUMER_STATES = 200
CONNECT_SEQUENCES = 100


def _save(name: str, document: dict[str, Any], kafka: Any, ours: Any) -> Path:
    FAILURES.mkdir(parents=True, exist_ok=True)
    path = FAILURES / f"{name}-seed{SEED}.json"
    path.write_text(json.dumps({"input": document, "kafka": kafka, "ours": ours}, indent=1))
    return path


def _ours_consumer(doc: dict[str, Any]) -> Any:
    try:
        return assignment_to_json(assign_consumer_group(parse_consumer_state(doc)))
    except StreamsAssignError as exc:
        return {"error": type(exc).__name__}


def _kafka_consumer(kafka: KafkaGroupsReference, doc: dict[str, Any]) -> Any:
    try:
        return kafka.consumer(doc)
    except KafkaGroupsException:
        return {"error": "TaskAssignmentError"}


def _contract(document: dict[str, Any]) -> dict[str, Any]:
    return {"rounds": [{k: v for k, v in r.items() if k != "debug"} for r in document["rounds"]]}


def test_harness_reproduces_the_shared_consumer_files(kafka_groups: KafkaGroupsReference) -> None:
    inputs = sorted((CORPORA / "kafka-consumer" / "input").glob("*.json"))
    assert len(inputs) == 80, f"missing shared consumer states in {CORPORA}"
    for path in inputs:
        expected = json.loads((CORPORA / "kafka-consumer" / "expected" / path.name).read_text())
        assert kafka_groups.consumer(json.loads(path.read_text())) == expected, path.name


def test_harness_reproduces_the_shared_connect_files(kafka_groups: KafkaGroupsReference) -> None:
    inputs = sorted((CORPORA / "kafka-connect" / "input").glob("*.json"))
    assert len(inputs) == 40, f"missing shared Connect sequences in {CORPORA}"
    for path in inputs:
        expected = json.loads((CORPORA / "kafka-connect" / "expected" / path.name).read_text())
        sequence = parse_connect_sequence(json.loads(path.read_text()))
        assert kafka_groups.connect(sequence) == _contract(expected), path.name


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_random_consumer_states_agree_with_kafka(
    kafka_groups: KafkaGroupsReference, assignor: str
) -> None:
    print(f"seed {SEED} (STREAMS_ASSIGN_SEED={SEED} replays it)")
    rng = random.Random(f"{SEED}-{assignor}")
    failures = []
    for index in range(CONSUMER_STATES):
        doc = random_consumer_state(rng, assignor)
        kafka = _kafka_consumer(kafka_groups, doc)
        ours = _ours_consumer(doc)
        if kafka != ours:
            failures.append(_save(f"consumer-{assignor}-{index}", doc, kafka, ours))
    assert not failures, f"seed {SEED}: {len(failures)} disagreements, inputs in {failures[:5]}"


@pytest.mark.parametrize("assignor", ["eager", "incremental"])
def test_random_connect_sequences_agree_with_kafka(
    kafka_groups: KafkaGroupsReference, assignor: str
) -> None:
    print(f"seed {SEED} (STREAMS_ASSIGN_SEED={SEED} replays it)")
    rng = random.Random(f"{SEED}-{assignor}")
    failures = []
    for index in range(CONNECT_SEQUENCES):
        doc = random_connect_sequence(rng, assignor)
        sequence = parse_connect_sequence(doc)
        kafka = kafka_groups.connect(sequence)
        ours = _contract(rounds_to_json(replay_connect(sequence)))
        if kafka != ours:
            failures.append(_save(f"connect-{assignor}-{index}", doc, kafka, ours))
    assert not failures, f"seed {SEED}: {len(failures)} disagreements, inputs in {failures[:5]}"
