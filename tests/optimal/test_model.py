"""The CP-SAT model and its solve: statuses, bounds, infeasibility, large numbers, repeatability."""

from __future__ import annotations

import logging
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from devtools.generators.cluster_states import synthetic_cluster
from streams_assign.assignors import assign
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.model import LONG_MAX_VALUE
from streams_assign.optimal import (
    PlacementCosts,
    Problem,
    balance_windows,
    flow_lower_bound,
    min_active_spread,
    model_violations,
    score,
    solve_optimal,
)
from streams_assign.optimal.model import hall_violations, realize_generic


def test_too_many_standbys_for_balance_is_infeasible_with_an_explanation(data):
    result = solve_optimal(data.cluster("infeasible-cluster"), "target", time_limit=5)
    assert result.status == "INFEASIBLE"
    assert result.assignment is None
    assert "stateful load" in result.explanation
    assert "3 copies (active + 2 standby)" in result.explanation
    assert result.to_json()["status"] == "INFEASIBLE"


def test_immediate_problem_is_feasible_where_target_is_not(data):
    result = solve_optimal(data.cluster("infeasible-cluster"), "immediate", time_limit=5)
    assert result.status == "OPTIMAL"
    assert result.metrics is not None and result.metrics.valid


def test_huge_restore_records_are_scaled_without_overflow(data):
    cluster = data.cluster("huge-lags-cluster")
    result = solve_optimal(cluster, "target", time_limit=10)
    assert result.restore_scale > 1
    assert result.status in ("OPTIMAL", "FEASIBLE")
    # Exact big-integer value of the assignment, and a valid lower bound below it.
    assert result.objective["restore_records"] == score(cluster, result.assignment).restore_records
    assert result.objective["restore_records"] > LONG_MAX_VALUE
    assert result.bound["restore_records"] <= result.objective["restore_records"]
    assert result.gap("restore_records") < 1e-12


@pytest.mark.slow
def test_objective_values_repeat_across_runs():
    cluster = synthetic_cluster(80, 8, seed=3)
    first = solve_optimal(cluster, "target", time_limit=20)
    second = solve_optimal(cluster, "target", time_limit=20)
    assert first.status == second.status == "OPTIMAL"
    assert dict(first.objective) == dict(second.objective)


def test_time_limit_returns_best_found_with_bound_and_gap():
    cluster = synthetic_cluster(300, 20, seed=5)
    result = solve_optimal(cluster, "target", time_limit=0.05)
    assert result.status in ("FEASIBLE", "OPTIMAL", "UNKNOWN")
    if result.assignment is not None:
        for name in result.objective:
            bound = result.bound.get(name)
            assert bound is None or bound <= result.objective[name]
            gap = result.gap(name)
            assert gap is None or 0 <= gap <= 1
    else:
        assert "time limit" in result.explanation
    assert result.bound["restore_records"] is not None  # the flow bound, at least


@pytest.mark.parametrize("problem", list(Problem), ids=lambda p: p.value)
def test_flow_bound_never_exceeds_the_optimum(problem):
    cluster = synthetic_cluster(60, 8, seed=11)
    result = solve_optimal(cluster, problem, time_limit=20)
    flow = flow_lower_bound(cluster, problem)
    assert result.status == "OPTIMAL"
    assert flow.restore_records <= result.objective["restore_records"]
    assert flow.moves <= result.objective["moves"]  # the flow bounds the stateful moves alone


def test_flow_bound_proves_target_infeasible(data):
    flow = flow_lower_bound(data.cluster("infeasible-cluster"), "target")
    assert not flow.feasible and flow.restore_records is None


def test_min_active_spread_matches_the_solver_stage():
    cluster = synthetic_cluster(120, 9, seed=2)
    ha = assign(cluster)
    result = solve_optimal(cluster, "immediate", time_limit=20, hint=ha)
    spread = min_active_spread(PlacementCosts.of(cluster)).spread
    assert result.objective["active_load_spread"] == spread
    if not model_violations(cluster, ha, "immediate"):
        assert spread <= score(cluster, ha).active_load_spread


@settings(max_examples=60, deadline=None)
@given(
    capacities=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    total=st.integers(0, 9),
    spread=st.sampled_from(
        [Fraction(0), Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(3, 2)]
    ),
)
def test_balance_windows_describe_exactly_the_balanced_count_vectors(capacities, total, spread):
    windows = balance_windows(capacities, total, spread)
    for counts in product(range(total + 1), repeat=len(capacities)):
        if sum(counts) != total:
            continue
        loads = [Fraction(n, q) for n, q in zip(counts, capacities, strict=True)]
        balanced = max(loads) - min(loads) <= spread
        inside = any(
            all(w[q][0] <= n <= w[q][1] for n, q in zip(counts, capacities, strict=True))
            for w in windows
        )
        assert balanced == inside, (counts, windows)


def test_realize_generic_names_distinct_non_special_clients():
    special = {0: (0,), 1: (1,), 2: (0, 1)}
    named = realize_generic(
        n_clients=4,
        special=special,
        task_active={0: 1, 1: 1, 2: 0},
        task_standby={0: 1, 1: 0, 2: 2},
        client_active=[0, 0, 1, 1],
        client_standby=[0, 1, 1, 1],
    )
    assert named is not None
    used_active = [a for a, _ in named.values() if a is not None]
    used_standby = [c for _, s in named.values() for c in s]
    assert sorted(used_active) == [2, 3]
    assert sorted(used_standby) == [1, 2, 3]
    for t, (a, standbys) in named.items():
        clients = ([a] if a is not None else []) + standbys
        assert len(set(clients)) == len(clients)
        assert not set(clients) & set(special[t])


def test_realize_generic_reports_impossible_naming():
    # Client 1 must take two copies of the only task, which may use it once.
    assert realize_generic(2, {0: ()}, {0: 1}, {0: 1}, [0, 1], [0, 1]) is None


def test_synthetic_cluster_is_reproducible():
    assert synthetic_cluster(40, 5, seed=9) == synthetic_cluster(40, 5, seed=9)


def test_hall_violations_find_the_client_set_the_tasks_cannot_supply():
    # Task 0 may not use clients 0 or 1; tasks 1 and 2 give one standby each, but clients 0 and
    # 1 want three: each client alone looks fine, the pair does not.
    cuts = hall_violations(
        3, {0: (0, 1), 1: (), 2: ()}, {}, {0: 1, 1: 1, 2: 1}, [0, 0, 0], [2, 1, 0]
    )
    assert {(cut.kind, cut.clients) for cut in cuts} == {
        ("standby", frozenset({0, 1})),
        ("copies", frozenset({0, 1})),
    }


@pytest.mark.slow
def test_hall_cuts_keep_the_aggregated_model_exact(kafka_corpora, caplog):
    # s0023-large: the first aggregated optimum puts generic standbys where they cannot be named.
    cluster = load_cluster_state(kafka_corpora / "kafka-diff" / "input" / "s0023-large.json")
    with caplog.at_level(logging.INFO, logger="streams_assign.optimal.solve"):
        aggregated = solve_optimal(cluster, "immediate", time_limit=30)
    full = solve_optimal(cluster, "immediate", time_limit=30, aggregate=False)
    assert "Hall cut" in caplog.text
    assert aggregated.status == full.status == "OPTIMAL"
    assert dict(aggregated.objective) == dict(full.objective)
