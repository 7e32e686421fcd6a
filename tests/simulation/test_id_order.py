"""New process ids placed across ``java.util.UUID`` order, and the plan's spread over them."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devtools.paths import CORPORA
from streams_assign.errors import PlanInputError
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.model import process_id_sort_key
from streams_assign.simulation.id_order import (
    ids_across_order,
    java_uuid_ordinal,
    uuid_at_ordinal,
)
from streams_assign.simulation.plan import build_plan
from streams_assign.simulation.probing import RestoreRates
from streams_assign.simulation.whatif import Changes, apply_changes

CRASH = CORPORA / "kafka-diff" / "input" / "s0002-crash.json"
uuids = st.uuids().map(str)


@given(uuids)
def test_ordinal_round_trips(pid: str) -> None:
    assert uuid_at_ordinal(java_uuid_ordinal(pid)) == pid


@given(uuids, uuids)
def test_ordinal_order_is_java_uuid_order(a: str, b: str) -> None:
    assert (java_uuid_ordinal(a) < java_uuid_ordinal(b)) == (
        process_id_sort_key(a) < process_id_sort_key(b)
    )


@given(st.lists(uuids, min_size=1, max_size=8, unique=True), st.integers(1, 3))
def test_one_sample_per_gap_each_inside_its_gap(existing: list[str], count: int) -> None:
    samples = ids_across_order(existing, count, samples=len(existing) + 1)
    assert len(samples) == len(existing) + 1
    ordered = sorted(existing, key=java_uuid_ordinal)
    for gap, ids in enumerate(samples):
        assert len(ids) == count and not set(ids) & set(existing)
        for pid in ids:
            rank = sorted([*ordered, pid], key=java_uuid_ordinal).index(pid)
            assert rank == gap


def test_fewer_samples_spread_from_first_to_last_gap() -> None:
    existing = [str(uuid.UUID(int=i << 100)) for i in range(1, 9)]
    samples = ids_across_order(existing, 1, samples=3)
    ranks = [sorted([*existing, ids[0]], key=java_uuid_ordinal).index(ids[0]) for ids in samples]
    assert ranks == [0, 4, 8]


def test_add_id_is_the_new_clients_process_id() -> None:
    cluster = load_cluster_state(CRASH)
    pid = "8f6e0c0a-1111-4222-8333-944455556666"
    after = apply_changes(cluster, Changes(add=2, add_ids=(pid.upper(),)))
    new = [c.id for c in after.clients if c.id not in {x.id for x in cluster.clients}]
    assert pid in new and len(new) == 2


@pytest.mark.parametrize(
    ("ids", "message"),
    [(("not-a-uuid",), "not a UUID"), (("a", "b"), "given 2 times")],
)
def test_bad_add_ids_are_refused(ids: tuple[str, ...], message: str) -> None:
    with pytest.raises(PlanInputError, match=message):
        apply_changes(load_cluster_state(CRASH), Changes(add=1, add_ids=ids))


def test_spread_runs_one_chain_per_sample_and_none_with_every_id_given() -> None:
    cluster = load_cluster_state(CRASH)
    rates = RestoreRates(5000.0)
    plan = build_plan(cluster, Changes(add=1), ["high_availability"], rates, id_samples=3)
    spread = plan.id_spread
    assert spread is not None and len(spread.samples) == 3
    assert spread.differing_actives[0] == 0
    given_id = spread.samples[1][0][0]
    fixed = build_plan(
        cluster, Changes(add=1, add_ids=(given_id,)), ["high_availability"], rates, id_samples=3
    )
    assert fixed.id_spread is None
    assert fixed.chains[0] == spread.samples[1][1]
