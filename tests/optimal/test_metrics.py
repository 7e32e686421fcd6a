"""The scorer on hand-made assignments whose metrics were computed by hand.

``data/hand-cluster.json``: acceptable.recovery.lag 100, one standby, end offsets 0_0 = 20000,
0_1 = 30000. Caught up: 0_0 on A (running); 0_1 on A (lag 50) and B (running). Costs of the
others: 0_0 on B 5000, on C (lag -3, unknown) the whole changelog 20000; 0_1 on C (no state)
30000. Before: A ran 0_0 and 1_0 and had a standby of 0_1; B ran 0_1.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.optimal import InvalidAssignmentError, PlacementCosts, parse_assignment, score

A = "00000000-0000-0000-0000-000000000001"
B = "00000000-0000-0000-0000-000000000002"
C = "00000000-0000-0000-0000-000000000003"


@pytest.fixture(scope="module")
def cluster(data):
    return data.cluster("hand-cluster")


def test_valid_assignment_scores_as_computed_by_hand(cluster, data):
    metrics = score(cluster, data.assignment(cluster, "hand-valid"))
    assert metrics.valid and metrics.violations == ()
    assert metrics.active_load_spread == Fraction(1)  # A 1/1, B 2/2, C 0/1
    assert metrics.stateful_load_spread == Fraction(3, 2)  # A 2/1, B 1/2, C 1/1
    assert metrics.subtopology_skew == 1
    assert metrics.subtopology_skews == {"0": 1, "1": 1}
    assert metrics.unavailable_actives == 0
    assert metrics.restore_records == 20_000  # C's standby of 0_0 (lag -3: whole changelog)
    assert (metrics.active_moves, metrics.standby_moves, metrics.moves) == (1, 1, 2)
    assert (metrics.warmups, metrics.standbys_missing) == (0, 0)


def test_warmups_count_beyond_configured_standbys_and_cost_their_lag(cluster, data):
    metrics = score(cluster, data.assignment(cluster, "hand-warmups"))
    assert metrics.valid  # two extra copies, within max.warmup.replicas = 2
    assert metrics.warmups == 2
    assert metrics.standbys_missing == 0
    assert metrics.restore_records == 5_000 + 20_000 + 30_000
    assert (metrics.active_moves, metrics.standby_moves) == (1, 3)
    assert metrics.stateful_load_spread == Fraction(1)  # A 2/1, B 2/2, C 2/1


def test_active_on_lagging_client_is_unavailable_and_restores_its_lag(cluster, data):
    metrics = score(cluster, data.assignment(cluster, "hand-unavailable"))
    assert metrics.valid
    assert metrics.unavailable_actives == 1
    assert metrics.restore_records == 5_000 + 20_000
    assert (metrics.active_moves, metrics.standby_moves) == (1, 1)
    assert metrics.subtopology_skew == 2  # B runs both tasks of subtopology 0
    assert metrics.stateful_load_spread == 0


def test_missing_standby_is_counted_and_invalid(cluster, data):
    metrics = score(cluster, data.assignment(cluster, "hand-missing-standby"))
    assert metrics.standbys_missing == 1
    assert not metrics.valid
    assert any("task 0_0 is held by 1 clients, expected 2" in v for v in metrics.violations)


def test_invalid_assignment_names_each_broken_rule(cluster, data):
    metrics = score(cluster, data.assignment(cluster, "hand-invalid"))
    assert not metrics.valid
    text = "\n".join(metrics.violations)
    assert f"client {A} holds task 0_0 2 times" in text
    assert "task 0_1 is active on 2 clients" in text
    assert f"client {C} has a standby of stateless task 1_0" in text
    assert "task 1_0 is not active on any client" in text


def test_caught_up_placements_cost_nothing(cluster):
    costs = PlacementCosts.of(cluster)
    t00, t01 = (
        costs.tasks.index(cluster.stateful_tasks[0]),
        costs.tasks.index(cluster.stateful_tasks[1]),
    )
    assert [costs.restore[c][t00] for c in range(3)] == [0, 5_000, 20_000]
    assert [costs.restore[c][t01] for c in range(3)] == [0, 0, 30_000]


def test_stand_in_without_end_offsets(data):
    costs = PlacementCosts.of(data.cluster("standin-cluster"))
    # 0_0: largest known lag 70000 (Long.MAX_VALUE lags do not count); 0_1: its largest known
    # lag 400 is below acceptable.recovery.lag + 1 = 1001; 0_2: nobody reports it, so the
    # cluster's largest lag.
    assert costs.no_state_records == (70_000, 1_001, 70_000)
    assert [row[0] for row in costs.restore] == [0, 70_000, 70_000]
    assert [row[1] for row in costs.restore] == [0, 1_001, 1_001]  # lag 400 caught up; -3 unknown
    assert [row[2] for row in costs.restore] == [70_000, 70_000, 70_000]


def test_moves_ignore_tasks_nobody_held_before():
    cluster = parse_cluster_state(
        {
            "configs": {"num_standby_replicas": 1},
            "stateful_tasks": ["0_0"],
            "clients": [
                {"id": "00000000-0000-0000-0000-000000000001", "capacity": 1},
                {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1},
            ],
        }
    )
    document = {"clients": {A: {"active": ["0_0"]}, B: {"standby": ["0_0"]}}}
    assert score(cluster, parse_assignment(cluster, document)).moves == 0


def test_unknown_client_error_names_the_json_path(cluster, data):
    with pytest.raises(
        InvalidAssignmentError,
        match=r"clients\.00000000-0000-0000-0000-0000000000ff: unknown client",
    ):
        data.assignment(cluster, "hand-unknown-client")


def test_unknown_task_error_names_the_json_path(cluster, data):
    with pytest.raises(
        InvalidAssignmentError, match=rf"clients\.{B}\.standby\[1\]: unknown task 7_7"
    ):
        data.assignment(cluster, "hand-unknown-task")


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ([], r"\$"),
        ({"clients": []}, "clients"),
        ({"clients": {A: {"active": "0_0"}}}, rf"clients\.{A}\.active"),
        ({"clients": {A: {"active": ["zero"]}}}, rf"clients\.{A}\.active\[0\]"),
        ({"clients": {A: {"active": ["0_0", "0_0"]}}}, rf"clients\.{A}\.active\[1\]"),
        ({"clients": {A: {"standby": [], "warmup": ["0_1"]}}}, rf"clients\.{A}\.warmup\[0\]"),
        ({"clients": {}, "probing_rebalance_needed": "yes"}, "probing_rebalance_needed"),
    ],
)
def test_malformed_assignment_errors_name_the_json_path(cluster, document, path):
    with pytest.raises(InvalidAssignmentError, match=rf"^{path}: "):
        parse_assignment(cluster, document)


def test_metrics_json_has_every_metric(cluster, data):
    document = score(cluster, data.assignment(cluster, "hand-valid")).to_json()
    assert document["restore_records"] == 20_000
    assert document["moves"] == 2
    assert document["active_load_spread"] == 1.0
    assert document["stateful_load_spread"] == 1.5
    assert set(document) >= {
        "valid",
        "violations",
        "subtopology_skew",
        "unavailable_actives",
        "warmups",
    }
