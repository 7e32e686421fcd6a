"""The target by flows and restore-optimal faces against the whole CP-SAT model.

The flows path (:mod:`streams_assign.optimal.restore_face` and
:mod:`streams_assign.optimal.face_moves`) rewrites how the target is solved; both paths must
reach the same lexicographic optimum (restore records, then moves) wherever both prove it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from devtools.generators.cluster_states import synthetic_cluster
from streams_assign.optimal import PlacementCosts, flow_lower_bound, score, solve_optimal
from streams_assign.optimal.face_moves import FaceModel, face_model_fits
from streams_assign.optimal.model import special_clients
from streams_assign.optimal.restore_face import restore_optimum
from streams_assign.optimal.solve import make_solver

#: (tasks, clients, seed, num.standby.replicas) of the seeded comparisons.
CASES = [
    (24, 4, 0, 1),
    (30, 6, 1, 1),
    (40, 8, 2, 1),
    (36, 6, 3, 2),
    (50, 10, 4, 1),
    (20, 5, 5, 0),
    (60, 12, 6, 1),
    (45, 7, 7, 2),
]


@pytest.mark.parametrize(("tasks", "clients", "seed", "standbys"), CASES)
def test_flows_and_whole_model_reach_the_same_target_optimum(tasks, clients, seed, standbys):
    cluster = synthetic_cluster(tasks, clients, seed=seed, num_standby_replicas=standbys)
    by_flows = solve_optimal(cluster, "target", time_limit=30)
    whole = solve_optimal(cluster, "target", time_limit=30, flows=False)
    assert by_flows.status == whole.status == "OPTIMAL"
    assert by_flows.objective == whole.objective
    assert by_flows.metrics is not None and by_flows.metrics.valid
    assert by_flows.metrics.active_load_spread <= 1
    assert by_flows.metrics.stateful_load_spread <= 1
    assert [s.status for s in by_flows.stages] == ["OPTIMAL", "OPTIMAL"]


@pytest.mark.parametrize(("tasks", "clients", "seed", "standbys"), CASES[:4])
def test_restore_optimum_is_a_lower_bound_reached_by_its_assignment(tasks, clients, seed, standbys):
    cluster = synthetic_cluster(tasks, clients, seed=seed, num_standby_replicas=standbys)
    costs = PlacementCosts.of(cluster)
    special = {t: special_clients(costs, t, True) for t in costs.stateful_indices}
    optimum = restore_optimum(costs, special)
    assert optimum is not None
    # The pool relaxes the full flow (no client named per generic copy), which relaxes the
    # target (no active balance): a chain of lower bounds on the whole model's optimum.
    full = flow_lower_bound(cluster, "target", costs).restore_records
    whole = solve_optimal(cluster, "target", time_limit=30, costs=costs, flows=False)
    assert whole.status == "OPTIMAL"
    assert full is not None and optimum.records <= full <= whole.objective["restore_records"]
    if optimum.assignment is not None:  # reached, so optimal
        assert score(cluster, optimum.assignment, costs).restore_records == optimum.records
        assert whole.objective["restore_records"] == optimum.records


@pytest.mark.parametrize("most_moves", [False, True])
def test_every_assignment_of_a_face_restores_the_optimum(most_moves):
    cluster = synthetic_cluster(30, 6, seed=11)
    costs = PlacementCosts.of(cluster)
    special = {t: special_clients(costs, t, True) for t in costs.stateful_indices}
    optimum = restore_optimum(costs, special)
    assert optimum is not None and optimum.faces
    for face in optimum.faces:
        built = FaceModel(costs, face, special)
        if most_moves:  # the face's other end: its points with the most moves
            built.model.maximize(built.moves)
        solver = make_solver(1, 0, 20)
        assert solver.status_name(solver.solve(built.model)) == "OPTIMAL"
        metrics = score(cluster, built.extract(solver), costs)
        assert metrics.valid
        assert metrics.active_load_spread <= 1 and metrics.stateful_load_spread <= 1
        assert metrics.restore_records == optimum.records


def test_huge_costs_fall_back_to_the_whole_model(data):
    cluster = data.cluster("huge-lags-cluster")
    costs = PlacementCosts.of(cluster)
    special = {t: special_clients(costs, t, True) for t in costs.stateful_indices}
    assert restore_optimum(costs, special) is None


def test_the_flows_assignment_is_a_complete_hint_of_a_face():
    cluster = synthetic_cluster(60, 12, seed=6)
    costs = PlacementCosts.of(cluster)
    special = {t: special_clients(costs, t, True) for t in costs.stateful_indices}
    optimum = restore_optimum(costs, special)
    assert optimum is not None and optimum.assignment is not None
    moves = score(cluster, optimum.assignment, costs).moves
    statuses = []
    for face in optimum.faces:
        built = FaceModel(costs, face, special)
        built.add_hint(optimum.assignment)
        hinted = set(built.model.proto.solution_hint.vars)
        assert len(hinted) == len(built.model.proto.variables)  # every variable hinted
        solver = make_solver(1, 0, 20)
        solver.parameters.fix_variables_to_their_hinted_value = True
        status = solver.status_name(solver.solve(built.model))
        statuses.append(status)
        if status == "OPTIMAL":
            assert round(solver.objective_value) == moves
    assert "OPTIMAL" in statuses  # the assignment lies on one of the faces, as it is


def test_a_face_of_strangers_only_is_left_to_the_whole_model():
    # A fresh application: nobody has state or history, every client is a stranger to every
    # task; the face model would name interchangeable clients, the whole model counts them.
    cluster = synthetic_cluster(40, 8, seed=0)
    fresh = replace(
        cluster,
        clients=tuple(
            replace(client, prev_active=(), prev_standby=(), task_lags={}, task_offset_sums=None)
            for client in cluster.clients
        ),
    )
    costs = PlacementCosts.of(fresh)
    special = {t: special_clients(costs, t, True) for t in costs.stateful_indices}
    optimum = restore_optimum(costs, special)
    assert optimum is not None and optimum.faces
    assert not any(face_model_fits(costs, face, special) for face in optimum.faces)
    result = solve_optimal(fresh, "target", time_limit=30)
    assert result.status == "OPTIMAL"
    # Every client restores every task whole (the same stand-in), and nothing ran before.
    assert result.objective == {"restore_records": optimum.records, "moves": 0}
