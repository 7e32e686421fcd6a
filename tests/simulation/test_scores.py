"""Whole convergences beside the optimum's one step: they agree with the ``simulate`` replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.simulation.probing import RestoreRates
from streams_assign.simulation.replay import replay
from streams_assign.simulation.scores import convergence_scores


@pytest.fixture(scope="module")
def scale_out(kafka_corpora: Path) -> Path:
    return kafka_corpora / "kafka-diff" / "input" / "s0001-scale_out.json"


def test_probing_rebalances_to_go_match_the_replay(scale_out: Path) -> None:
    cluster = load_cluster_state(scale_out)
    scores = convergence_scores(cluster, ["high_availability"], RestoreRates(10_000.0))
    rounds = replay(cluster, 10_000.0)
    assert scores["high_availability"].probing_rebalances == len(rounds) - 1 > 0
