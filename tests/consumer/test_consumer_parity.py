"""Every shared consumer-group state gives exactly the assignment Kafka's assignor computed.

``tests/corpora/kafka-consumer/expected/`` holds what Kafka's ``RangeAssignor``,
``RoundRobinAssignor``, ``StickyAssignor`` and ``CooperativeStickyAssignor`` decided for each
input. A missing folder fails (no skip).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.consumer import assign_consumer_group
from streams_assign.formats.consumer_group import assignment_to_json, load_consumer_state

FOLDER = CORPORA / "kafka-consumer"
INPUTS = sorted((FOLDER / "input").glob("*.json"))


def test_consumer_scenarios_are_present() -> None:
    assert (FOLDER / "input").is_dir(), f"missing shared scenario folder {FOLDER / 'input'}"
    assert len(INPUTS) == 80, (
        f"expected 80 consumer states in {FOLDER / 'input'}, found {len(INPUTS)}"
    )


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_consumer_assignment_matches_kafka(path: Path) -> None:
    expected = json.loads((FOLDER / "expected" / path.name).read_text())
    got = assignment_to_json(assign_consumer_group(load_consumer_state(path)))
    assert got == expected
