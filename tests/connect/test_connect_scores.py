"""Scores of Connect rounds on the shared sequences, and the closed-loop simulation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.connect import replay_connect
from streams_assign.connect.scores import score_sequence
from streams_assign.connect.simulate import simulate_connect
from streams_assign.formats.connect_sequence import load_connect_sequence

FOLDER = CORPORA / "kafka-connect"
INPUTS = sorted((FOLDER / "input").glob("*.json"))
EAGER = [p for p in INPUTS if p.stem.endswith("_eager")]
INCREMENTAL = [p for p in INPUTS if p.stem.endswith("_incremental")]


def test_sequences_of_both_assignors_are_present() -> None:
    assert EAGER and INCREMENTAL, f"missing eager or incremental sequences in {FOLDER}"


@pytest.mark.parametrize("path", EAGER, ids=[p.stem for p in EAGER])
def test_eager_round_revokes_everything_the_members_run(path: Path) -> None:
    sequence = load_connect_sequence(path)
    scores = score_sequence(sequence, replay_connect(sequence))
    for round_, score in zip(sequence.rounds, scores.rounds, strict=True):
        running = sum(len(m.owned_connectors) + len(m.owned_tasks) for m in round_.members)
        assert score.revoked == running
        assert score.balanced


@pytest.mark.parametrize("path", INCREMENTAL, ids=[p.stem for p in INCREMENTAL])
def test_incremental_revoked_count_is_the_revoked_lists(path: Path) -> None:
    sequence = load_connect_sequence(path)
    results = replay_connect(sequence)
    scores = score_sequence(sequence, results)
    for result, score in zip(results, scores.rounds, strict=True):
        listed = sum(
            len(a.revoked_connectors) + len(a.revoked_tasks) for a in result.workers.values()
        )
        assert score.revoked == listed


def test_revoking_round_delays_balance_by_one_round() -> None:
    path = FOLDER / "input" / "k0001_incremental.json"
    sequence = load_connect_sequence(path)
    scores = score_sequence(sequence, replay_connect(sequence))
    assert scores.rounds[1].revoked > 0 and not scores.rounds[1].balanced
    assert scores.rounds[2].balanced
    assert scores.rounds_to_balance == 2


def test_eager_downtime_is_one_rebalance_per_restarted_item_without_departures() -> None:
    for path in EAGER:
        sequence = load_connect_sequence(path)
        scores = score_sequence(sequence, replay_connect(sequence), rebalance_ms=500)
        for score in scores.rounds:
            if score.lost_ms == 0:
                assert score.stopped_ms % 500 == 0
                assert score.stopped_ms <= 500 * score.revoked


@pytest.mark.parametrize("path", INPUTS[:12], ids=[p.stem for p in INPUTS[:12]])
def test_same_events_incremental_revokes_no_more_than_eager(path: Path) -> None:
    sequence = replace(load_connect_sequence(path), scheduled_rebalance_max_delay_ms=0)
    eager = score_sequence(*simulate_connect(sequence, "eager"))
    incremental = score_sequence(*simulate_connect(sequence, "incremental"))
    assert incremental.revoked <= eager.revoked
    assert incremental.stopped_ms - incremental.lost_ms <= eager.stopped_ms - eager.lost_ms
