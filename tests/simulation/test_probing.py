"""Whole convergences: totals are the rounds' sums, rounds agree with the replay, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.simulation.plan import build_plan
from streams_assign.simulation.probing import RestoreRates, plan_convergence
from streams_assign.simulation.replay import replay
from streams_assign.simulation.whatif import Changes, apply_changes

INPUTS = CORPORA / "kafka-diff" / "input"


def _path(name: str) -> Path:
    path = INPUTS / name
    if not path.exists():
        pytest.fail(f"shared scenario {path} is missing")
    return path


CRASH = "s0002-crash.json"
SCALE_OUT = "s0001-scale_out.json"


@pytest.mark.parametrize("name", [CRASH, SCALE_OUT])
def test_totals_are_the_sum_of_the_rounds(name: str) -> None:
    cluster = load_cluster_state(_path(name))
    victim = cluster.clients[0]
    after = apply_changes(cluster, Changes(kill=(victim.id,), add=1))
    conv = plan_convergence(
        after,
        "high_availability",
        RestoreRates(default=2_000.0),
        detection_ms=45_000,
        orphaned_actives=len(victim.prev_active),
    )
    assert conv.rebalances > 1
    assert conv.records_restored == sum(r.records_restored for r in conv.rounds)
    assert conv.moves == sum(len(r.moves) for r in conv.rounds)
    assert conv.warmups == sum(len(r.warmups) for r in conv.rounds)
    assert conv.unavailable_task_ms == 45_000 * len(victim.prev_active) + sum(
        r.unavailable_task_ms for r in conv.rounds
    )
    # Every record a round restores was behind at its rebalance.
    assert all(r.records_restored <= r.records_to_restore for r in conv.rounds)
    assert conv.rounds[-1].records_restored == conv.rounds[-1].records_to_restore
    interval = after.configs.probing_rebalance_interval_ms
    assert [r.time_ms for r in conv.rounds] == [
        45_000 + i * interval for i in range(conv.rebalances)
    ]
    assert conv.stable_ms >= conv.rounds[-1].time_ms


@pytest.mark.parametrize("name", [CRASH, SCALE_OUT])
def test_rounds_agree_with_the_simulate_replay(name: str) -> None:
    cluster = load_cluster_state(_path(name))
    conv = plan_convergence(cluster, "high_availability", RestoreRates(default=500.0))
    reports = replay(cluster, 500.0)
    assert conv.converged and not reports[-1].probing_rebalance_needed
    assert [len(r.moves) for r in conv.rounds] == [r.moved_actives for r in reports]
    assert [len(r.warmups) for r in conv.rounds] == [r.warmups for r in reports]
    assert [r.probing_rebalance_needed for r in conv.rounds] == [
        r.probing_rebalance_needed for r in reports
    ]


def test_measured_rates_override_the_default_per_replica() -> None:
    cluster = load_cluster_state(_path(SCALE_OUT))
    slow = plan_convergence(cluster, "high_availability", RestoreRates(default=50.0))
    first = slow.rounds[0]
    warmup_task, warmup_client = first.warmups[0]
    fast = RestoreRates(default=50.0, measured={(warmup_client, warmup_task): 1e9})
    quick = plan_convergence(cluster, "high_availability", fast)
    # The measured replica restores everything in round 1; the default ones as before.
    assert quick.rounds[0].records_restored > first.records_restored
    assert fast.rate(warmup_client, warmup_task) == 1e9
    assert fast.rate("00000000-0000-0000-0000-000000000000", warmup_task) == 50.0


def test_a_probing_rebalance_that_changes_nothing_stops_the_rounds() -> None:
    cluster = load_cluster_state(_path(CRASH))
    conv = plan_convergence(cluster, "fallback_prior", RestoreRates(default=1e6), max_rounds=20)
    assert conv.repeating and not conv.converged
    assert conv.rebalances < 20
    assert conv.rounds[-1].moves == () and conv.rounds[-1].records_to_restore == 0


def test_plans_are_deterministic() -> None:
    cluster = load_cluster_state(_path(CRASH))
    changes = Changes(kill=(cluster.clients[3].id,), add=2)
    runs = [
        build_plan(
            cluster, changes, ("high_availability", "sticky"), RestoreRates(5_000.0)
        ).to_json()
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert [a["assignor"] for a in runs[0]["assignors"]] == ["high_availability", "sticky"]
