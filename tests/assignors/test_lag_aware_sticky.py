"""The lag-aware sticky assignor: Kafka's hard rules, determinism, convergence, and its gains.

Hard rules as hypothesis properties on generated cluster documents (up to 200 clients): every
task active exactly once; ``min(num.standby.replicas, clients - 1)`` standbys per stateful task
besides warmups; never an active and a standby of one task on one client; at most
``max.warmup.replicas`` warmups; a probing rebalance while a warmup exists. Then determinism,
convergence on Kafka's ``TaskAssignorConvergenceTest`` perturbations (never more rebalances than
HA on any seed), and, on the 280 shared states, fewer moved actives and fewer restore records
than Kafka's HA in total, and worse than HA on one metric only on the pinned states, each for
its pinned reason (``WORSE_THAN_HA``).
"""

from __future__ import annotations

import logging
import random
import uuid
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools.generators.convergence_harness import run_randomized_scenario
from streams_assign.assignors import assign
from streams_assign.assignors.lag_aware_sticky import (
    LagAwareStickyTaskAssignor,
    balanced_count_bounds,
)
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state
from streams_assign.model import Assignment, ClusterState
from tests.tiers import examples

logging.getLogger("streams_assign").setLevel(logging.ERROR)

SETTINGS = settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def cluster_documents(draw: st.DrawFn, max_clients: int = 200) -> dict[str, Any]:
    """A cluster-state document: clients with capacities, previous tasks and lags."""
    n_clients = draw(st.integers(1, max_clients))
    subtopologies = draw(st.integers(1, 4))
    partitions = draw(st.integers(1, 12))
    stateful = [f"{s}_{p}" for s in range(subtopologies) for p in range(partitions)]
    n_stateless = draw(st.integers(0, 8))
    stateless = [f"{subtopologies}_{p}" for p in range(n_stateless)]
    ids = sorted({str(uuid.UUID(int=draw(st.integers(1, 2**128 - 1)))) for _ in range(n_clients)})
    tags = draw(st.booleans())
    clients = []
    for i, process_id in enumerate(ids):
        lags = {
            task: draw(st.sampled_from([-2, -3, 0, 50, 5_000, 20_000, 400_000]))
            for task in stateful
            if draw(st.integers(0, 3)) == 0
        }
        previous = [task for task, lag in lags.items() if lag == -2]
        client: dict[str, Any] = {
            "id": process_id,
            "capacity": draw(st.integers(1, 4)),
            "prev_active": previous + [t for t in stateless if draw(st.integers(0, 4)) == 0],
            "task_lags": lags,
        }
        if tags:
            client["tags"] = {"zone": f"z{i % 3}"}
        clients.append(client)
    configs: dict[str, Any] = {
        "acceptable_recovery_lag": draw(st.sampled_from([0, 100, 10_000])),
        "max_warmup_replicas": draw(st.integers(1, 4)),
        "num_standby_replicas": draw(st.integers(0, 3)),
    }
    if tags:
        configs["rack_aware_assignment_tags"] = ["zone"]
    return {
        "configs": configs,
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
        "clients": clients,
    }


def decide(document: dict[str, Any]) -> tuple[ClusterState, Assignment]:
    cluster = parse_cluster_state(document)
    return cluster, LagAwareStickyTaskAssignor().assign(cluster)


@SETTINGS
@given(cluster_documents())
def test_every_task_is_active_exactly_once(document: dict[str, Any]) -> None:
    cluster, result = decide(document)
    for task in cluster.all_tasks:
        assert sum(task in c.active for c in result.clients.values()) == 1, task


@SETTINGS
@given(cluster_documents())
def test_standby_never_on_the_client_running_the_task_as_active(document: dict[str, Any]) -> None:
    _, result = decide(document)
    for client in result.clients.values():
        assert not set(client.active) & set(client.standby)
        assert set(client.warmup) <= set(client.standby)
        assert len(set(client.standby)) == len(client.standby)


@SETTINGS
@given(cluster_documents())
def test_each_stateful_task_has_its_standbys_and_warmups_stay_in_budget(
    document: dict[str, Any],
) -> None:
    cluster, result = decide(document)
    wanted = min(cluster.configs.num_standby_replicas, len(cluster.clients) - 1)
    for task in cluster.stateful_tasks:
        standbys = sum(task in c.standby and task not in c.warmup for c in result.clients.values())
        assert standbys == wanted, (task, standbys, wanted)
    for task in cluster.stateless_tasks:
        assert not any(task in c.standby for c in result.clients.values())
    warmups = sum(len(c.warmup) for c in result.clients.values())
    assert warmups <= cluster.configs.max_warmup_replicas
    if warmups:
        assert result.probing_rebalance_needed


@SETTINGS
@given(cluster_documents())
def test_an_active_runs_on_a_caught_up_client_whenever_one_exists(
    document: dict[str, Any],
) -> None:
    """KIP-441: no task is made unavailable while its new owner restores."""
    cluster, result = decide(document)
    for process_id, assigned in result.clients.items():
        client = cluster.client(process_id)
        for task in assigned.active:
            if task not in cluster.stateful_tasks or cluster.is_caught_up(client, task):
                continue
            assert not any(cluster.is_caught_up(other, task) for other in cluster.clients), task


@SETTINGS
@given(cluster_documents(max_clients=30), st.randoms(use_true_random=False))
def test_same_input_in_any_order_gives_the_same_output(
    document: dict[str, Any], rng: random.Random
) -> None:
    first = decide(document)[1].to_json()
    shuffled = dict(document)
    for key in ("clients", "stateful_tasks", "stateless_tasks"):
        shuffled[key] = rng.sample(document[key], len(document[key]))
    # Each client's lags in another order too (the convergence harness builds them from sets).
    shuffled["clients"] = [
        {
            **client,
            "task_lags": dict(
                rng.sample(sorted(client["task_lags"].items()), len(client["task_lags"]))
            ),
        }
        for client in shuffled["clients"]
    ]
    assert decide(shuffled)[1].to_json() == first


@SETTINGS
@given(st.integers(0, 5000), st.lists(st.integers(1, 8), min_size=1, max_size=40))
def test_count_bounds_leave_every_choice_within_one_task_per_thread(
    total: int, capacities: list[int]
) -> None:
    lower, upper = balanced_count_bounds(total, capacities)
    assert sum(lower) <= total <= sum(upper)
    assert all(0 <= lo <= up for lo, up in zip(lower, upper, strict=True))
    # The extreme loads of any admissible choice differ by at most one task per thread.
    assert (
        max(Fraction(up, c) for up, c in zip(upper, capacities, strict=True))
        - min(Fraction(lo, c) for lo, c in zip(lower, capacities, strict=True))
        <= 1
    )


def test_zone_outage_example_keeps_standbys_out_of_their_actives_zone() -> None:
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "zone-outage.json"
    cluster = load_cluster_state(example)
    result = LagAwareStickyTaskAssignor().assign(cluster)
    zone = {c.id: c.tags["zone"] for c in cluster.clients}
    active_zone = {t: zone[pid] for pid, c in result.clients.items() for t in c.active}
    for process_id, assigned in result.clients.items():
        for task in assigned.standby:
            assert zone[process_id] != active_zone[task], (task, process_id)


def test_convergence_within_kafka_limits_never_in_more_rebalances_than_ha() -> None:
    ours = [run_randomized_scenario(seed, "lag_aware_sticky") for seed in range(40)]
    kafka = [run_randomized_scenario(seed, "high_availability") for seed in range(40)]
    assert sum(ours) < sum(kafka)
    more = {seed: (o, k) for seed, (o, k) in enumerate(zip(ours, kafka, strict=True)) if o > k}
    assert not more, f"seeds needing more rebalances than HA (ours, HA): {more}"


#: Seeds on which the soak run (``scripts/soak.py``, 20,000 seeds) found ours breaking Kafka's
#: convergence rules, and the step at fault: the standby levelling found no chain when every
#: direct partner of a client below its bound held only standbys of that client's actives
#: (stateful load spread 2 after clients are dropped); the subtopology spread, charging a move
#: by the receiver's cost alone, took a task off the client its warmup had just caught up
#: (probing after Kafka's limit of 20 rebalances, two warmups undoing each other).
SOAK_SEEDS = {5567: "standby levelling", 12486: "standby levelling", 14570: "spread cost"}


@pytest.mark.parametrize("seed", sorted(SOAK_SEEDS))
def test_soak_seeds_converge_balanced_within_kafka_limits(seed: int) -> None:
    """Valid and balanced at every convergence, within Kafka's limit (the harness raises
    NotConvergedError otherwise), in no more rebalances than HA."""
    ours = run_randomized_scenario(seed, "lag_aware_sticky")
    assert ours <= run_randomized_scenario(seed, "high_availability")


#: Every shared state where ours restores more records or moves more actives than Kafka's HA,
#: with the reason category of ``why_worse_than_ha`` (docs/improved-assignor.md shows each
#: state's numbers): HA breaks the zone rule, ours balances the stateful load (standbys) or the
#: active load where HA stays outside Kafka's bound, or ours is better on the other metric.
WORSE_THAN_HA = {
    "s0074-crash": {"moved actives": "active balance"},
    "s0109-stateless_heavy": {"moved actives": "trade"},
    "p0008-both-zone_outage": {"restore": "zone rule"},
    "p0038-both-zone_outage": {"restore": "zone rule"},
    "p0050-both-thread_change": {"restore": "zone rule"},
    "p0054-zones-scale_out": {"restore": "zone rule"},
    "p0062-both-scale_out": {"restore": "zone rule"},
    "p0075-zones-scale_out": {"restore": "zone rule"},
    "p0086-both-thread_change": {"restore": "zone rule"},
    "p0090-zones-bounce": {"restore": "zone rule"},
    "p0093-zones-scale_out": {"restore": "zone rule"},
    "p0098-both-scale_out": {"restore": "zone rule"},
    "p0105-zones-zone_outage": {"restore": "zone rule"},
    "p0107-both-zone_outage": {"restore": "zone rule"},
    "p0116-both-scale_out": {"restore": "zone rule"},
    "p0119-both-bounce": {"restore": "zone rule"},
}


@pytest.fixture(scope="module")
def shared_totals(kafka_corpora: Path) -> dict[str, Any]:
    from benchmarks.improved_assignor_benchmark import why_worse_than_ha
    from streams_assign.optimal.costs import PlacementCosts
    from streams_assign.optimal.metrics import score

    files = sorted((kafka_corpora / "kafka-diff" / "input").glob("*.json"))
    files += sorted((kafka_corpora / "kafka-ext" / "input").glob("*.json"))
    assert len(files) == 280
    totals: dict[str, Any] = {"worse": {}}
    for path in files:
        cluster = load_cluster_state(path)
        costs = PlacementCosts.of(cluster)
        results = {}
        for name in ("high_availability", "lag_aware_sticky"):
            result = assign(cluster, assignor=name)
            metrics = score(cluster, result, costs)
            assert metrics.valid, (path.name, name, metrics.violations)
            results[name] = (result, metrics)
            row = totals.setdefault(name, {"restore": 0, "active_moves": 0, "moves": 0})
            row["restore"] += metrics.restore_records
            row["active_moves"] += metrics.active_moves
            row["moves"] += metrics.moves
        (kafka, kafka_metrics), (ours, ours_metrics) = results.values()
        reasons = why_worse_than_ha(cluster, kafka, ours, kafka_metrics, ours_metrics)
        if reasons:
            totals["worse"][path.stem] = reasons
    return totals


def test_fewer_moved_actives_than_ha_on_the_shared_states(
    shared_totals: dict[str, Any],
) -> None:
    ours, kafka = shared_totals["lag_aware_sticky"], shared_totals["high_availability"]
    assert ours["active_moves"] * 2 < kafka["active_moves"]
    assert ours["moves"] < kafka["moves"]


def test_fewer_restore_records_than_ha_on_the_shared_states(
    shared_totals: dict[str, Any],
) -> None:
    assert (
        shared_totals["lag_aware_sticky"]["restore"] < shared_totals["high_availability"]["restore"]
    )


def test_worse_than_ha_only_on_the_pinned_states_for_their_reasons(
    shared_totals: dict[str, Any],
) -> None:
    worse = shared_totals["worse"]
    assert all("unexplained" not in reasons.values() for reasons in worse.values()), worse
    assert worse == WORSE_THAN_HA
