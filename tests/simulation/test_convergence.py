"""Convergence of the HA assignor under cluster changes (Kafka's TaskAssignorConvergenceTest).

The iteration limits are Kafka's: ``11/2 + 1`` after adding a client, ``13/2 + 2`` after dropping
one, ``2 * (stateful + stateful * standbys)`` after random events. CI runs a fixed set of seeds;
``STREAMS_ASSIGN_LONG=1`` runs many more.
"""

from __future__ import annotations

import os

import pytest

from devtools.generators.convergence_harness import ConvergenceHarness, run_randomized_scenario
from streams_assign.model import AssignmentConfigs

LONG = os.environ.get("STREAMS_ASSIGN_LONG") == "1"


def cfg(acceptable: int, warmups: int, standbys: int) -> AssignmentConfigs:
    return AssignmentConfigs(acceptable, warmups, standbys, 60_000)


def assert_converged_state_is_valid_and_balanced(
    harness: ConvergenceHarness, standbys: int
) -> None:
    assert harness.validity_problems(max_warmups=0) == []
    assert harness.balance_problems(skew_threshold=1) == []


def test_static_assignment_should_converge_with_the_first_assignment() -> None:
    harness = ConvergenceHarness(cfg(100, 2, 0), num_stateless=1, num_stateful=1, num_clients=1)
    assert harness.converge(iteration_limit=1) == 1
    assert_converged_state_is_valid_and_balanced(harness, 0)


def test_assignment_should_converge_after_adding_node() -> None:
    sizes = iter([5, 2, 5, 5, 1])
    harness = ConvergenceHarness(
        cfg(100, 2, 0),
        num_stateless=7,
        num_stateful=11,
        num_clients=1,
        partitions=lambda: next(sizes),
    )
    harness.converge(iteration_limit=1)
    harness.add_client()
    harness.converge(iteration_limit=11 // 2 + 1)
    assert_converged_state_is_valid_and_balanced(harness, 0)


def test_dropping_nodes_should_converge() -> None:
    harness = ConvergenceHarness(
        cfg(100, 2, 0), num_stateless=11, num_stateful=13, num_clients=7, partitions=5
    )
    harness.converge(iteration_limit=1)
    harness.drop_client()
    harness.converge(iteration_limit=13 // 2 + 2)
    assert_converged_state_is_valid_and_balanced(harness, 0)


@pytest.mark.parametrize("seed", range(400 if LONG else 40))
def test_random_cluster_perturbations_should_converge(seed: int) -> None:
    run_randomized_scenario(seed)
