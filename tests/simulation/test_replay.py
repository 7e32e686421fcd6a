"""The probing-rebalance replay: round 1 is the assignor's decision; later rounds converge."""

from __future__ import annotations

import pytest

from devtools.paths import CORPORA
from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.model import LONG_MAX_VALUE
from streams_assign.simulation.replay import replay, with_changelog_sizes

SCENARIOS = CORPORA / "kafka-diff"
SCALE_OUT = SCENARIOS / "input" / "s0001-scale_out.json"


def test_changelog_stand_in_keeps_the_first_decision() -> None:
    for path in sorted((SCENARIOS / "input").glob("*.json"))[::10]:
        cluster = load_cluster_state(path)
        sized = with_changelog_sizes(cluster)
        assert HighAvailabilityTaskAssignor().assign(
            sized
        ) == HighAvailabilityTaskAssignor().assign(cluster)
        assert sized.changelog_end_offset_sums is not None or cluster.configs.unbounded_recovery_lag
        if sized.changelog_end_offset_sums:
            assert max(sized.changelog_end_offset_sums.values()) < LONG_MAX_VALUE


def test_replay_converges_and_ends_without_probing() -> None:
    reports = replay(load_cluster_state(SCALE_OUT), restore_rate=50)
    assert reports[-1].probing_rebalance_needed is False
    assert all(r.probing_rebalance_needed for r in reports[:-1])
    assert [r.round for r in reports] == list(range(1, len(reports) + 1))
    assert reports[-1].restore_records == 0


def test_faster_restoration_never_needs_more_rounds() -> None:
    cluster = load_cluster_state(SCALE_OUT)
    slow = replay(cluster, restore_rate=50)
    fast = replay(cluster, restore_rate=1_000_000)
    assert len(fast) <= len(slow)


def test_replay_rejects_a_non_positive_restore_rate() -> None:
    with pytest.raises(ValueError, match="restore_rate"):
        replay(load_cluster_state(SCALE_OUT), restore_rate=0)
