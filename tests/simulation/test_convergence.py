"""Convergence of the HA assignor under cluster changes (Kafka's TaskAssignorConvergenceTest).

The iteration limits are Kafka's: ``11/2 + 1`` after adding a client, ``13/2 + 2`` after dropping
one, ``2 * (stateful + stateful * standbys)`` after random events. CI runs a fixed set of seeds;
``STREAMS_ASSIGN_LONG=1`` runs many more.
"""

from __future__ import annotations

import os
import random

import pytest

from streams_assign.model import AssignmentConfigs
from streams_assign.simulation.convergence import ConvergenceHarness

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


def run_randomized_scenario(seed: int) -> None:
    """Kafka's ``runRandomizedScenario`` with the same draws in the same order (Python RNG)."""
    rng = random.Random(seed)
    initial_clients = rng.randrange(10) + 1
    num_stateless = rng.randrange(10) + 1
    num_stateful = rng.randrange(10) + 1
    max_warmups = rng.randrange(num_stateful) + 1
    standbys = rng.randrange(initial_clients + 1)
    events = rng.randrange(10) + 1
    harness = ConvergenceHarness(
        cfg(100, max_warmups, standbys),
        num_stateless=num_stateless,
        num_stateful=num_stateful,
        num_clients=initial_clients,
        partitions=lambda: rng.randrange(10) + 1,
    )
    history = [
        f"seed={seed} clients={initial_clients} stateless={num_stateless} "
        f"stateful={num_stateful} warmups={max_warmups} standbys={standbys}"
    ]
    harness.converge(iteration_limit=1)
    assert harness.validity_problems() == [], history
    assert harness.balance_problems() == [], history
    for _ in range(events):
        if rng.randrange(2) == 0:
            history.append(
                f"drop {harness.drop_random_clients(rng.randrange(initial_clients), rng)}"
            )
        else:
            harness.add_or_resurrect_clients_randomly(rng, initial_clients)
            history.append(f"add/resurrect -> {len(harness.clients)} clients")
        if harness.clients:
            harness.converge(iteration_limit=2 * (num_stateful + num_stateful * standbys))
            assert harness.validity_problems() == [], history
            assert harness.balance_problems() == [], history


@pytest.mark.parametrize("seed", range(400 if LONG else 40))
def test_random_cluster_perturbations_should_converge(seed: int) -> None:
    run_randomized_scenario(seed)
