"""The harness reproduces the 160 shared kafka-diff decisions: it feeds Kafka's code right.

``tests/corpora/kafka-diff/expected/`` was made by Kafka's ``HighAvailabilityTaskAssignor``
at trunk 1eb7644349cb (4.0.0-SNAPSHOT); the harness runs the one of Kafka 4.2.1 (``.kafka/lib``).
Identical answers on all 160 states show both that the harness builds Kafka's ``ClientState``s
as Kafka's leader does and that the assignor did not change between those versions on them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from devtools.kafka.reference import KafkaReference
from devtools.paths import CORPORA

DIFF = CORPORA / "kafka-diff"


def _kafka_view(document: dict[str, Any]) -> dict[str, Any]:
    return {
        "probing_rebalance_needed": document["probing_rebalance_needed"],
        "clients": {
            pid: {"active": c["active"], "standby": c["standby"]}
            for pid, c in document["clients"].items()
        },
    }


def test_harness_reproduces_all_160_kafka_diff_files(kafka_reference: KafkaReference) -> None:
    inputs = sorted((DIFF / "input").glob("*.json"))
    assert len(inputs) == 160, f"expected 160 states in {DIFF / 'input'}, found {len(inputs)}"
    mismatched = []
    for path in inputs:
        expected = json.loads((DIFF / "expected" / path.name).read_text())
        decided = kafka_reference.assign(json.loads(path.read_text()), "high_availability")
        if _kafka_view(decided) != _kafka_view(expected):
            mismatched.append(path.name)
    assert mismatched == []


@pytest.mark.kafka  # starts its own JVM on .kafka/lib-next
def test_kafka_streams_4_3_decides_the_same_on_the_160_files() -> None:
    """Kafka Streams 4.3.x (``.kafka/lib-next``) gives the same 160 decisions: no change since."""
    inputs = sorted((DIFF / "input").glob("*.json"))
    assert len(inputs) == 160
    mismatched = []
    with KafkaReference(jvm_args=("-Xmx256m", "-XX:+UseSerialGC"), kafka_jars="lib-next") as kafka:
        for path in inputs:
            expected = json.loads((DIFF / "expected" / path.name).read_text())
            decided = kafka.assign(json.loads(path.read_text()), "high_availability")
            if _kafka_view(decided) != _kafka_view(expected):
                mismatched.append(path.name)
    assert mismatched == []
