"""Scores of one consumer rebalance on the shared states."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.consumer import assign_consumer_group
from streams_assign.consumer.scores import score_consumer_assignment
from streams_assign.formats.consumer_group import load_consumer_state

FOLDER = CORPORA / "kafka-consumer"
INPUTS = sorted((FOLDER / "input").glob("*.json"))


@pytest.mark.parametrize("path", INPUTS[:30], ids=[p.stem for p in INPUTS[:30]])
def test_cooperative_revokes_no_more_than_eager_sticky_and_moves_the_same(path: Path) -> None:
    assert INPUTS, f"missing {FOLDER / 'input'}"
    state = load_consumer_state(path)
    eager = score_consumer_assignment(state, assign_consumer_group(state, "sticky"), "sticky")
    coop = score_consumer_assignment(
        state, assign_consumer_group(state, "cooperative-sticky"), "cooperative-sticky"
    )
    owned = sum(len(m.owned_partitions) for m in state.members)
    assert eager.revoked == owned
    assert coop.revoked <= eager.revoked
    assert coop.kept + coop.moved <= sum(state.topics.values())
