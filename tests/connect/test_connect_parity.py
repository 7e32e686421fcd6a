"""Every shared Connect sequence gives, round by round, exactly what Kafka's assignor decided.

``tests/corpora/kafka-connect/expected/`` holds what Connect's ``EagerAssignor`` and
``IncrementalCooperativeAssignor`` decided in each round. Every field is compared except
``debug`` (a diagnostic, per FORMAT.md), which has its own test. A missing folder fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devtools.paths import CORPORA
from streams_assign.connect import replay_connect, rounds_to_json
from streams_assign.formats.connect_sequence import load_connect_sequence

FOLDER = CORPORA / "kafka-connect"
INPUTS = sorted((FOLDER / "input").glob("*.json"))


def _contract(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "debug"} for r in document["rounds"]]


def test_connect_sequences_are_present() -> None:
    assert (FOLDER / "input").is_dir(), f"missing shared scenario folder {FOLDER / 'input'}"
    assert len(INPUTS) == 40, f"expected 40 Connect sequences in {FOLDER}, found {len(INPUTS)}"


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_connect_rounds_match_kafka(path: Path) -> None:
    expected = json.loads((FOLDER / "expected" / path.name).read_text())
    got = rounds_to_json(replay_connect(load_connect_sequence(path)))
    assert len(got["rounds"]) == len(expected["rounds"])
    for index, (mine, kafka) in enumerate(zip(_contract(got), _contract(expected), strict=True)):
        assert mine == kafka, f"{path.name}: round {index} differs"


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_connect_reported_order_and_assignor_state_match_kafka(path: Path) -> None:
    """The diagnostics too: the Java-order replay of the reported ownership and the
    assignor's memory after every round."""
    expected = json.loads((FOLDER / "expected" / path.name).read_text())
    got = rounds_to_json(replay_connect(load_connect_sequence(path)))
    assert [r["debug"] for r in got["rounds"]] == [r["debug"] for r in expected["rounds"]]
