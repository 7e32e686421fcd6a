"""Kafka's rebalance chain: immediate follow-ups after withheld tasks, probing rebalances."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.assignors import assign
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.simulation.chain import FOLLOW_UP, MEMBERSHIP_CHANGE, PROBING, plan_chain
from streams_assign.simulation.probing import RestoreRates
from streams_assign.simulation.whatif import Changes, apply_changes

DATA = Path(__file__).parent.parent / "data" / "chain"
INPUTS = CORPORA / "kafka-diff" / "input"


def _load(folder: Path, name: str):  # type: ignore[no-untyped-def]
    path = folder / name
    if not path.exists():
        pytest.fail(f"test input {path} is missing")
    return load_cluster_state(path)


def test_task_moved_between_clients_is_withheld_then_assigned_in_a_follow_up() -> None:
    cluster = _load(DATA, "move-between-clients.json")
    a, b = (c.id for c in cluster.clients)
    chain = plan_chain(cluster, "high_availability", RestoreRates(10.0), follow_up_ms=500)
    first, second = chain.rebalances[:2]
    assert first.kind == MEMBERSHIP_CHANGE and first.time_ms == 0
    assert [(str(m.task), m.source, m.target) for m in first.moves] == [("0_3", a, b)]
    assert first.withheld == ((first.moves[0].task, b),)
    assert second.kind == FOLLOW_UP and second.time_ms == 500
    # The withheld task is decided on B again: not a second move.
    assert first.moves[0].task in second.decided[b].active
    assert second.moves == ()


def test_warmup_of_a_member_that_rejoins_at_once_waits_for_the_probing_rebalance() -> None:
    # B's only thread is given the withheld task: it rejoins before its warmup restores.
    cluster = _load(DATA, "move-between-clients.json")
    chain = plan_chain(cluster, "high_availability", RestoreRates(10_000.0), follow_up_ms=1000)
    kinds = [r.kind for r in chain.rebalances]
    assert kinds == [MEMBERSHIP_CHANGE, FOLLOW_UP, PROBING, FOLLOW_UP]
    assert chain.rebalances[1].moves == () and chain.rebalances[1].probing_rebalance_needed
    assert len(chain.rebalances[2].moves) == 1


def test_warmup_on_another_thread_restores_until_the_follow_up() -> None:
    # B's second thread holds the warmup and rejoins only with the follow-up: 1000 records
    # restore in the second at 10,000 records/s, not at 10.
    cluster = _load(DATA, "move-between-clients-two-threads.json")
    fast = plan_chain(cluster, "high_availability", RestoreRates(10_000.0), follow_up_ms=1000)
    slow = plan_chain(cluster, "high_availability", RestoreRates(10.0), follow_up_ms=1000)
    assert len(fast.rebalances[1].moves) == 1 and fast.rebalances[1].kind == FOLLOW_UP
    assert [r.kind for r in fast.rebalances] == [MEMBERSHIP_CHANGE, FOLLOW_UP, FOLLOW_UP]
    assert slow.rebalances[1].moves == () and slow.rebalances[1].probing_rebalance_needed
    assert slow.rebalances[2].kind == PROBING


def test_task_moved_between_threads_of_one_client_triggers_a_follow_up() -> None:
    cluster = _load(DATA, "move-between-threads.json")
    chain = plan_chain(cluster, "high_availability", RestoreRates(1000.0))
    pid = cluster.clients[0].id
    first = chain.rebalances[0]
    assert first.moves == ()
    assert [(str(t), p) for t, p in first.withheld] == [("0_1", pid)]
    assert [r.kind for r in chain.rebalances] == [MEMBERSHIP_CHANGE, FOLLOW_UP]
    assert chain.rebalances[1].withheld == ()
    assert chain.converged and chain.threads_known


def test_crashed_clients_actives_are_not_withheld() -> None:
    cluster = _load(INPUTS, "s0002-crash.json")
    victim = cluster.clients[1]
    after = apply_changes(cluster, Changes(kill=(victim.id,)))
    chain = plan_chain(after, "high_availability", RestoreRates(5000.0), first_ms=45_000)
    first = chain.rebalances[0]
    assert first.time_ms == 45_000
    orphaned = set(victim.prev_active)
    assert orphaned
    assert not {task for task, _ in first.withheld} & orphaned


@pytest.mark.parametrize("name", ["s0001-scale_out.json", "s0002-crash.json"])
def test_first_decision_is_the_assignors_decision(name: str) -> None:
    cluster = _load(INPUTS, name)
    after = apply_changes(cluster, Changes(add=1))
    chain = plan_chain(after, "high_availability", RestoreRates(5000.0))
    direct = assign(after, "high_availability")
    for pid, decided in chain.rebalances[0].decided.items():
        got = direct.clients[pid]
        assert (decided.active, decided.standby, decided.warmup) == (
            got.active,
            got.standby,
            got.warmup,
        )


@pytest.mark.parametrize("name", ["s0001-scale_out.json", "s0002-crash.json"])
def test_rebalances_follow_at_their_kinds_delay(name: str) -> None:
    cluster = _load(INPUTS, name)
    after = apply_changes(cluster, Changes(add=2))
    chain = plan_chain(after, "high_availability", RestoreRates(500.0), follow_up_ms=700)
    interval = after.configs.probing_rebalance_interval_ms
    for before, now in zip(chain.rebalances, chain.rebalances[1:], strict=False):
        assert now.kind == (FOLLOW_UP if before.withheld else PROBING)
        assert now.time_ms - before.time_ms == (700 if before.withheld else interval)
        if now.kind == PROBING:
            assert before.probing_rebalance_needed
    last = chain.rebalances[-1]
    assert chain.converged == (not last.withheld and not last.probing_rebalance_needed)
    assert chain.stable_ms >= last.time_ms


def test_chain_is_deterministic() -> None:
    cluster = apply_changes(_load(INPUTS, "s0002-crash.json"), Changes(add=1))
    rates = RestoreRates(2000.0)
    assert plan_chain(cluster, "high_availability", rates) == plan_chain(
        cluster, "high_availability", rates
    )


def test_bad_arguments_are_refused() -> None:
    cluster = _load(DATA, "move-between-threads.json")
    with pytest.raises(ValueError, match="follow_up_ms"):
        plan_chain(cluster, "high_availability", RestoreRates(1.0), follow_up_ms=-1)
