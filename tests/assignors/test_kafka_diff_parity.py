"""Every shared Kafka scenario gives exactly the assignment Apache Kafka computed.

``tests/corpora/kafka-diff/expected/`` holds the output of Kafka's own
``HighAvailabilityTaskAssignor`` (commit 1eb7644349cb) on each input: same actives, same
standbys (warmups included), same probing flag, for every client.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor
from streams_assign.formats.cluster_state import load_cluster_state

INPUTS = sorted((CORPORA / "kafka-diff" / "input").glob("*.json"))


def _expected(path: Path) -> dict:
    return json.loads((path.parent.parent / "expected" / path.name).read_text())


def _kafka_view(document: dict) -> dict:
    return {
        "probing_rebalance_needed": document["probing_rebalance_needed"],
        "clients": {
            pid: {"active": c["active"], "standby": c["standby"]}
            for pid, c in document["clients"].items()
        },
    }


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_assignment_equals_kafkas(path: Path) -> None:
    result = HighAvailabilityTaskAssignor().assign(load_cluster_state(path)).to_json()
    assert _kafka_view(result) == _kafka_view(_expected(path))


@pytest.mark.parametrize("path", INPUTS[::8], ids=[p.stem for p in INPUTS[::8]])
def test_kafka_literal_mode_equals_kafkas(path: Path) -> None:
    result = HighAvailabilityTaskAssignor(literal=True).assign(load_cluster_state(path)).to_json()
    assert _kafka_view(result) == _kafka_view(_expected(path))


def test_all_kafka_diff_scenarios_are_present() -> None:
    assert len(INPUTS) == 160
