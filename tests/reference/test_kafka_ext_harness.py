"""The harness reproduces the 120 shared kafka-ext decisions (zones, threads, both).

Kafka's tag-aware standby assignor and ``assignTasksToThreads``, fed by the harness, give what
``tests/corpora/kafka-ext/expected/`` records (Kafka trunk 1eb7644349cb): every client's
actives and standbys and every consumer's tasks.
"""

from __future__ import annotations

import json

from devtools.kafka.reference import KafkaReference
from devtools.paths import CORPORA
from tests.assignors.test_kafka_ext_parity import differences

EXT = CORPORA / "kafka-ext"


def test_harness_reproduces_all_120_kafka_ext_files(kafka_reference: KafkaReference) -> None:
    inputs = sorted((EXT / "input").glob("*.json"))
    assert len(inputs) == 120, f"expected 120 states in {EXT / 'input'}, found {len(inputs)}"
    mismatched = {}
    for path in inputs:
        expected = json.loads((EXT / "expected" / path.name).read_text())
        problems = differences(expected, kafka_reference.assign(json.loads(path.read_text())))
        if problems:
            mismatched[path.name] = problems[:3]
    assert mismatched == {}
