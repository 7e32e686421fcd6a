"""The lag-aware sticky assignor's stable output is a fixed point of itself.

Once the assignor places no warmup and asks for no probing rebalance, and every copy it placed
has caught up, the next rebalance must give the same actives and standbys and no warmup:
otherwise a stable group keeps moving tasks between caught-up clients (issue #15, the replay
of 12 shared states that still probed after 50 rounds). Checked as a hypothesis property on
small random clusters, on a sample of the shared states (every copy caught up after each
round, ``restored = 10**15`` records), and on the replay of the 12 states that were still
probing at round 50 (``docs/improved-assignor.md``).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from streams_assign.assignors import assign
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state
from streams_assign.model import Assignment, ClusterState
from streams_assign.simulation.replay import (
    next_cluster_state,
    rebalances,
    with_changelog_sizes,
)
from tests.assignors.test_lag_aware_sticky import cluster_documents
from tests.tiers import examples

logging.getLogger("streams_assign").setLevel(logging.ERROR)

#: Records every copy restores per round when "every copy is caught up" is wanted.
ALL = 10**15
#: The shared states whose replay (10,000 records/s per restoring copy) still probed at round
#: 50 when this test was written (docs/improved-assignor.md, "Scale states and over time").
STILL_PROBING_AT_50 = (
    "kafka-diff/s0007-large",
    "kafka-diff/s0079-large",
    "kafka-diff/s0095-large",
    "kafka-diff/s0127-large",
    "kafka-ext/p0040-threads-scale_out",
    "kafka-ext/p0068-both-zone_outage",
    "kafka-ext/p0073-threads-scale_out",
    "kafka-ext/p0075-zones-scale_out",
    "kafka-ext/p0083-both-scale_out",
    "kafka-ext/p0086-both-thread_change",
    "kafka-ext/p0090-zones-bounce",
    "kafka-ext/p0093-zones-scale_out",
)
#: Shared states of the sample whose stable output (every copy caught up after each round) is
#: not yet a fixed point, with the reason traced: with no previous assignment the subtopology
#: spread takes its receiver among the clients with the fewest tasks of the subtopology by
#: index only; when that client is full and no swap fits, the spread stops at a skew of 2
#: while another client as low could take the task, and the next rebalance, starting from
#: other counts, swaps two caught-up actives. Trying every client as low was measured and
#: rejected (docs/improved-assignor.md: more moves over the replay).
NOT_YET_FIXED = {
    "s0056-fresh": "fresh: spread receiver by index",
    "p0036-zones-fresh": "fresh: spread receiver by index",
}


def _placement(result: Assignment) -> dict[str, tuple[list[str], list[str]]]:
    return {
        pid: (sorted(map(str, c.active)), sorted(map(str, c.standby)))
        for pid, c in result.clients.items()
    }


def _stable(
    state: ClusterState, restored: int, rounds: int
) -> tuple[ClusterState, Assignment, int]:
    """Rebalance every probing interval until ours stops probing (at most ``rounds`` times)."""
    *_, last = rebalances(state, restored, "lag_aware_sticky", rounds)
    number, state, result = last
    return state, result, number


def _is_fixed_point(state: ClusterState, result: Assignment) -> tuple[bool, Any]:
    """Whether ``result``, fed back with every copy it placed caught up, comes out unchanged."""
    again = assign(next_cluster_state(state, result, ALL), assignor="lag_aware_sticky")
    before, after = _placement(result), _placement(again)
    changed = {pid: (before[pid], after[pid]) for pid in before if before[pid] != after[pid]}
    return not changed and not again.probing_rebalance_needed, changed


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_documents(max_clients=12))
def test_stable_output_is_a_fixed_point_on_random_clusters_without_standbys(
    document: dict[str, Any],
) -> None:
    """The actives' part of the property (``num.standby.replicas`` 0); with standbys see below."""
    document = {**document, "configs": {**document["configs"], "num_standby_replicas": 0}}
    state = with_changelog_sizes(parse_cluster_state(document))
    state, result, rounds = _stable(state, ALL, 100)
    assert not result.probing_rebalance_needed, f"still probing after {rounds} rounds"
    fixed, changed = _is_fixed_point(state, result)
    assert fixed, changed


#: A cluster hypothesis found with standbys whose stable output, fed back, placed a warmup
#: again while the subtopology spread charged a move by the receiver's restore cost alone (it
#: took a task off the caught-up client a warmup had just restored it on). With the spread
#: charging what a move adds (receiver's cost minus the donor's), its first stable output is a
#: fixed point.
STANDBY_COUNTEREXAMPLE: dict[str, Any] = {
    "configs": {"acceptable_recovery_lag": 0, "max_warmup_replicas": 1, "num_standby_replicas": 1},
    "stateful_tasks": [f"{s}_{p}" for s in range(4) for p in range(6)],
    "stateless_tasks": [],
    "clients": [
        {
            "id": "00000000-0000-0000-0000-000000000001",
            "capacity": 1,
            "prev_active": ["0_0", "0_1", "0_2", "0_3", "1_0", "1_2", "2_0"],
            "task_lags": {t: -2 for t in ["0_0", "0_1", "0_2", "0_3", "1_0", "1_2", "2_0"]},
        },
        {
            "id": "00000000-0000-0000-0000-000000000002",
            "capacity": 1,
            "prev_active": ["0_1", "0_2", "0_4", "0_5", "1_5", "2_0", "2_1", "2_4"],
            "task_lags": {t: -2 for t in ["0_1", "0_2", "0_4", "0_5", "1_5", "2_0", "2_1", "2_4"]},
        },
        {
            "id": "00000000-0000-0000-0000-000000000003",
            "capacity": 2,
            "prev_active": ["0_0", "1_1", "2_0"],
            "task_lags": {"0_0": -2, "1_1": -2, "2_0": -2},
        },
    ],
}


def _extra_rounds_to_fixed_point(state: ClusterState, limit: int) -> int:
    """Rounds of "stable, every copy caught up, rebalance again" until the output is a fixed
    point: 0 when the first stable output already is one; ``limit + 1`` when none is reached."""
    state, result, rounds = _stable(state, ALL, 100)
    assert not result.probing_rebalance_needed, f"still probing after {rounds} rounds"
    for extra in range(limit + 1):
        fixed, _ = _is_fixed_point(state, result)
        if fixed:
            return extra
        state, result, rounds = _stable(next_cluster_state(state, result, ALL), ALL, 100)
        assert not result.probing_rebalance_needed, f"still probing after {rounds} rounds"
    return limit + 1


def test_with_standbys_the_counterexample_is_a_fixed_point_at_once() -> None:
    """On :data:`STANDBY_COUNTEREXAMPLE` the first stable output is already a fixed point."""
    state = with_changelog_sizes(parse_cluster_state(STANDBY_COUNTEREXAMPLE))
    assert _extra_rounds_to_fixed_point(state, 5) == 0


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_documents(max_clients=12))
def test_stable_output_with_standbys_is_a_fixed_point_within_one_more_round(
    document: dict[str, Any],
) -> None:
    """With standbys: a fixed point at most one stable round later (3,000 random clusters
    measured at merge: all at once)."""
    state = with_changelog_sizes(parse_cluster_state(document))
    assert _extra_rounds_to_fixed_point(state, 5) <= 1


def _all_holders_caught_up(cluster: ClusterState) -> ClusterState:
    """The state where every client with local state of a task is caught up on it."""
    clients = tuple(
        replace(
            client,
            task_lags={
                task: (-2 if lag == -2 or task in client.prev_active else 0)
                for task, lag in client.task_lags.items()
            },
        )
        for client in cluster.clients
    )
    return replace(cluster, clients=clients)


def test_stable_output_is_a_fixed_point_on_the_shared_states(kafka_corpora: Path) -> None:
    """Every fourth shared state, every holder caught up, until stable (at most 30 rounds)."""
    files = sorted((kafka_corpora / "kafka-diff" / "input").glob("*.json"))
    files += sorted((kafka_corpora / "kafka-ext" / "input").glob("*.json"))
    assert len(files) == 280
    excluded = {name.split("/")[1] for name in STILL_PROBING_AT_50}
    sample = [p for p in files[::4] if p.stem not in excluded]
    sample += [p for p in files if p.stem in NOT_YET_FIXED and p not in sample]
    not_fixed: dict[str, Any] = {}
    checked = 0
    for path in sample:
        start = _all_holders_caught_up(with_changelog_sizes(load_cluster_state(path)))
        state, result, _ = _stable(start, ALL, 30)
        if result.probing_rebalance_needed:
            continue  # a long warmup backlog: the slow replay test below covers such states
        checked += 1
        fixed, changed = _is_fixed_point(state, result)
        if not fixed:
            not_fixed[path.stem] = changed
    assert checked >= 60, checked
    assert set(not_fixed) == set(NOT_YET_FIXED), not_fixed


@pytest.fixture(scope="module")
def long_replays(kafka_corpora: Path) -> dict[str, tuple[int, bool, Any]]:
    """The replay (10,000 records/s per copy) of the 12 states, up to 200 rounds each."""
    out = {}
    for name in STILL_PROBING_AT_50:
        group, stem = name.split("/")
        state = with_changelog_sizes(
            load_cluster_state(kafka_corpora / group / "input" / f"{stem}.json")
        )
        restored = int(10_000 * state.configs.probing_rebalance_interval_ms / 1000)
        state, result, rounds = _stable(state, restored, 200)
        fixed, changed = (
            (False, "still probing")
            if result.probing_rebalance_needed
            else _is_fixed_point(state, result)
        )
        out[stem] = (rounds, fixed, changed)
    return out


@pytest.mark.slow
def test_replay_of_the_long_states_ends_in_a_fixed_point(
    long_replays: dict[str, tuple[int, bool, Any]],
) -> None:
    assert {name: v for name, v in long_replays.items() if not v[1]} == {}


#: The states of :data:`STILL_PROBING_AT_50` whose replay still needs more than 50 rounds after
#: the cycling fix: not a cycle but a backlog of pending standby moves, each leaving a caught-up
#: holder only through a warmup (``max.warmup.replicas`` 1-3 per round, as Kafka's
#: ``assignStandbyTaskMovements``); 52-162 rounds at merge (docs/improved-assignor.md, open).
BACKLOG_ABOVE_50_ROUNDS = frozenset(
    name.split("/")[1] for name in STILL_PROBING_AT_50 if name != "kafka-ext/p0068-both-zone_outage"
)


@pytest.mark.slow
def test_replay_of_the_long_states_above_50_rounds_only_on_the_pinned_backlog(
    long_replays: dict[str, tuple[int, bool, Any]],
) -> None:
    above = {name: v[0] for name, v in long_replays.items() if v[0] > 50}
    assert set(above) <= BACKLOG_ABOVE_50_ROUNDS, above
