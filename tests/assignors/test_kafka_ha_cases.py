"""Kafka's ``HighAvailabilityTaskAssignorTest``, strategy ``none``, from data files.

Each test loads ``tests/data/kafka_tests/high_availability/<name>.json`` (the Kafka test's name in
snake_case), runs the HA assignor on its ``scenario`` and applies what Kafka's test asserts
(``expect``). Where the case was traced by hand (``docs/kafka-reference.md §4.9`` and the files'
``notes``), the ``trace`` section gives the exact assignment, checked by
:func:`test_assignment_matches_hand_trace`.
"""

from __future__ import annotations

import pytest

import tests.assignors.kafka_cases_helpers as kc
from streams_assign.assignors import assign
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.model import Assignment, ClientAssignment, TaskId


def check_case(name: str) -> None:
    """Run the case file ``name`` and apply its Kafka assertions, in both assignor modes."""
    for literal in (False, True):
        cluster, result, case = kc.run_ha_case(name, literal)
        try:
            kc.check_expectations(case["expect"], cluster, result)
        except AssertionError as error:
            raise AssertionError(f"{'literal' if literal else 'fast'} mode: {error}") from error


# -- the 33 ported cases (HighAvailabilityTaskAssignorTest without its rack test) ---------------


def test_should_be_sticky_for_active_and_standby_tasks_while_warming_up():
    check_case("should_be_sticky_for_active_and_standby_tasks_while_warming_up")


def test_should_skip_warmups_when_acceptable_lag_is_max():
    check_case("should_skip_warmups_when_acceptable_lag_is_max")


def test_should_assign_active_stateful_tasks_evenly_over_clients_where_number_of_clients_integral_divisor_of_number_of_tasks():  # noqa: E501
    check_case(
        "should_assign_active_stateful_tasks_evenly_over_clients_where_number_of_clients_integral_divisor_of_number_of_tasks"  # noqa: E501
    )


def test_should_assign_active_stateful_tasks_evenly_over_clients_where_number_of_threads_integral_divisor_of_number_of_tasks():  # noqa: E501
    check_case(
        "should_assign_active_stateful_tasks_evenly_over_clients_where_number_of_threads_integral_divisor_of_number_of_tasks"  # noqa: E501
    )


def test_should_assign_active_stateful_tasks_evenly_over_clients_where_number_of_clients_not_integral_divisor_of_number_of_tasks():  # noqa: E501
    check_case(
        "should_assign_active_stateful_tasks_evenly_over_clients_where_number_of_clients_not_integral_divisor_of_number_of_tasks"  # noqa: E501
    )


def test_should_assign_active_stateful_tasks_evenly_over_unevenly_distributed_stream_threads():
    check_case(
        "should_assign_active_stateful_tasks_evenly_over_unevenly_distributed_stream_threads"
    )


def test_should_assign_active_stateful_tasks_evenly_over_clients_with_more_clients_than_tasks():
    check_case(
        "should_assign_active_stateful_tasks_evenly_over_clients_with_more_clients_than_tasks"
    )


def test_should_assign_active_stateful_tasks_evenly_over_clients_and_stream_threads_with_equal_stream_threads_per_client_as_tasks():  # noqa: E501
    check_case(
        "should_assign_active_stateful_tasks_evenly_over_clients_and_stream_threads_with_equal_stream_threads_per_client_as_tasks"  # noqa: E501
    )


def test_should_assign_warm_up_tasks_if_stateful_active_tasks_balanced_over_stream_threads_but_not_over_clients():  # noqa: E501
    check_case(
        "should_assign_warm_up_tasks_if_stateful_active_tasks_balanced_over_stream_threads_but_not_over_clients"  # noqa: E501
    )


def test_should_evenly_assign_active_stateful_tasks_if_clients_are_warmed_up_to_balance_task_over_clients():  # noqa: E501
    check_case(
        "should_evenly_assign_active_stateful_tasks_if_clients_are_warmed_up_to_balance_task_over_clients"  # noqa: E501
    )


def test_should_assign_active_stateful_tasks_evenly_over_stream_threads_but_best_effort_over_clients():  # noqa: E501
    check_case(
        "should_assign_active_stateful_tasks_evenly_over_stream_threads_but_best_effort_over_clients"
    )


def test_should_compute_new_assignment_if_there_are_unassigned_active_tasks():
    check_case("should_compute_new_assignment_if_there_are_unassigned_active_tasks")


def test_should_compute_new_assignment_if_there_are_unassigned_standby_tasks():
    check_case("should_compute_new_assignment_if_there_are_unassigned_standby_tasks")


def test_should_compute_new_assignment_if_active_tasks_was_not_on_caught_up_client():
    check_case("should_compute_new_assignment_if_active_tasks_was_not_on_caught_up_client")


def test_should_assign_to_most_caught_up_if_active_tasks_was_not_on_caught_up_client():
    check_case("should_assign_to_most_caught_up_if_active_tasks_was_not_on_caught_up_client")


def test_should_assign_standbys_for_stateful_tasks():
    check_case("should_assign_standbys_for_stateful_tasks")


def test_should_not_assign_standbys_for_stateless_tasks():
    check_case("should_not_assign_standbys_for_stateless_tasks")


def test_should_assign_warmup_replicas_even_if_no_standby_replicas_configured():
    check_case("should_assign_warmup_replicas_even_if_no_standby_replicas_configured")


def test_should_not_assign_more_than_max_warmup_replicas():
    check_case("should_not_assign_more_than_max_warmup_replicas")


def test_should_not_assign_warmup_and_standby_to_the_same_client():
    check_case("should_not_assign_warmup_and_standby_to_the_same_client")


def test_should_not_assign_any_standbys_with_insufficient_capacity():
    check_case("should_not_assign_any_standbys_with_insufficient_capacity")


def test_should_assign_active_tasks_to_not_caught_up_client_if_none_exist():
    check_case("should_assign_active_tasks_to_not_caught_up_client_if_none_exist")


def test_should_not_assign_more_than_max_warmup_replicas_with_standbys():
    check_case("should_not_assign_more_than_max_warmup_replicas_with_standbys")


def test_should_distribute_stateless_tasks_to_balance_total_task_load():
    check_case("should_distribute_stateless_tasks_to_balance_total_task_load")


def test_should_distribute_stateful_active_tasks_to_all_clients():
    check_case("should_distribute_stateful_active_tasks_to_all_clients")


def test_should_return_false_if_previous_assignment_is_reused():
    check_case("should_return_false_if_previous_assignment_is_reused")


def test_should_return_false_if_no_warmup_tasks_are_assigned():
    check_case("should_return_false_if_no_warmup_tasks_are_assigned")


def test_should_return_true_if_warmup_tasks_are_assigned():
    check_case("should_return_true_if_warmup_tasks_are_assigned")


def test_should_distribute_stateless_tasks_evenly_over_clients_with_equal_stream_threads_per_client_as_tasks_and_no_stateful_tasks():  # noqa: E501
    check_case(
        "should_distribute_stateless_tasks_evenly_over_clients_with_equal_stream_threads_per_client_as_tasks_and_no_stateful_tasks"  # noqa: E501
    )


def test_should_distribute_stateless_tasks_evenly_over_clients_with_less_stream_threads_per_client_as_tasks_and_no_stateful_tasks():  # noqa: E501
    check_case(
        "should_distribute_stateless_tasks_evenly_over_clients_with_less_stream_threads_per_client_as_tasks_and_no_stateful_tasks"  # noqa: E501
    )


def test_should_distribute_stateless_tasks_evenly_over_clients_with_unevenly_distributed_stream_threads_and_no_stateful_tasks():  # noqa: E501
    check_case(
        "should_distribute_stateless_tasks_evenly_over_clients_with_unevenly_distributed_stream_threads_and_no_stateful_tasks"  # noqa: E501
    )


def test_should_distribute_stateless_tasks_evenly_with_previous_assignment_and_no_stateful_tasks():  # noqa: E501
    check_case(
        "should_distribute_stateless_tasks_evenly_with_previous_assignment_and_no_stateful_tasks"
    )


def test_should_assign_random_input():
    """#33 with strategy none on the stored seeded input: valid with 3 standbys, active balance."""
    check_case("should_assign_random_input")


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_should_assign_random_input_for_more_seeds(seed: int):
    """#33's generator on more seeds (Kafka seeds by the clock, so each run sees a new input)."""
    cluster = parse_cluster_state(kc.random_input_scenario(seed))
    result = assign(cluster)
    kc.assert_valid_assignment(3, 0, cluster, result)
    kc.assert_balanced_active_assignment(cluster, result)


def test_random_input_file_is_reproducible_from_its_seed():
    case = kc.load_case(kc.ha_case_path("should_assign_random_input"))
    assert case["scenario"] == kc.random_input_scenario(33)


# Kafka's #34 (shouldRemainOriginalAssignmentWithoutTrafficCostForMinCostStrategy) is a
# rack-awareness test; it is ported in tests/assignors/test_rack_aware.py.


# -- exact hand traces --------------------------------------------------------------------------

TRACED = sorted(p.stem for p in kc.HA_CASES.glob("*.json") if "trace" in kc.load_case(p))


@pytest.mark.parametrize("name", TRACED)
def test_assignment_matches_hand_trace(name: str):
    """The exact actives, standbys and warmups traced by hand (files' notes).

    How the traces were made: ``docs/kafka-reference.md §4.9``.
    """
    for literal in (False, True):
        cluster, result, case = kc.run_ha_case(name, literal)
        trace = case["trace"]
        try:
            kc.check_expectations(trace, cluster, result)
        except AssertionError as error:
            raise AssertionError(f"{'literal' if literal else 'fast'} mode: {error}") from error
        assert set(trace["clients"]) == set(result.clients), "a trace lists every client"


def test_every_case_file_has_its_test():
    files = {p.stem for p in kc.HA_CASES.glob("*.json")}
    tests = {name.removeprefix("test_") for name in globals() if name.startswith("test_should_")}
    assert len(files) == 33
    assert files <= tests, sorted(files - tests)


def test_every_case_but_the_random_one_has_a_hand_trace():
    assert len(TRACED) == 32
    assert "should_assign_random_input" not in TRACED


# -- the validators can fail --------------------------------------------------------------------


def _two_client_result(p1_active: list[str], p1_standby: list[str], p2_active: list[str]) -> tuple:
    cluster = parse_cluster_state(
        {
            "stateful_tasks": ["0_0", "0_1"],
            "stateless_tasks": ["1_0"],
            "clients": [{"id": kc.pid(1), "capacity": 1}, {"id": kc.pid(2), "capacity": 1}],
        }
    )

    def tasks(names: list[str]) -> tuple[TaskId, ...]:
        return tuple(TaskId.parse(n) for n in names)

    result = Assignment(
        clients={
            kc.pid(1): ClientAssignment(active=tasks(p1_active), standby=tasks(p1_standby)),
            kc.pid(2): ClientAssignment(active=tasks(p2_active)),
        },
        probing_rebalance_needed=False,
    )
    return cluster, result


def test_valid_assignment_validator_rejects_a_missing_active():
    cluster, result = _two_client_result(["0_0"], [], ["1_0"])
    with pytest.raises(AssertionError, match="0_1"):
        kc.assert_valid_assignment(0, 0, cluster, result)


def test_valid_assignment_validator_counts_an_extra_copy_against_the_warmup_budget():
    cluster, result = _two_client_result(["0_0", "1_0"], ["0_1"], ["0_1"])
    kc.assert_valid_assignment(0, 1, cluster, result)
    with pytest.raises(AssertionError, match="0_1"):
        kc.assert_valid_assignment(0, 0, cluster, result)


def test_valid_assignment_validator_rejects_a_standby_of_a_stateless_task():
    cluster, result = _two_client_result(["0_0", "0_1"], ["1_0"], ["1_0"])
    with pytest.raises(AssertionError, match="stateless task 1_0"):
        kc.assert_valid_assignment(1, 2, cluster, result)


def test_balanced_active_validator_rejects_a_load_difference_above_one():
    cluster, result = _two_client_result(["0_0", "0_1", "1_0"], [], [])
    with pytest.raises(AssertionError, match="active load imbalance"):
        kc.assert_balanced_active_assignment(cluster, result)


def test_balanced_stateful_validator_counts_standbys():
    cluster, result = _two_client_result(["0_0"], ["0_1"], ["1_0"])
    with pytest.raises(AssertionError, match="stateful load imbalance"):
        kc.assert_balanced_stateful_assignment(cluster, result)


def test_balanced_stateful_validator_ignores_stateless_tasks():
    cluster, result = _two_client_result(["0_0"], [], ["0_1", "1_0"])
    kc.assert_balanced_stateful_assignment(cluster, result)


def test_subtopology_skew_counts_clients_without_the_subtopology():
    _, result = _two_client_result(["0_0", "0_1"], [], ["1_0"])
    assert kc.subtopology_skew(result, 1) == (2, [0])
    assert kc.subtopology_skew(result, 2) == (2, [])


def test_expectations_reject_a_wrong_active_set():
    cluster, result = _two_client_result(["0_0", "0_1"], [], ["1_0"])
    expect = {"clients": {kc.pid(1): {"active": ["0_0"]}}}
    with pytest.raises(AssertionError, match="active"):
        kc.check_expectations(expect, cluster, result)


def test_expectations_reject_an_unknown_key():
    cluster, result = _two_client_result(["0_0", "0_1"], [], ["1_0"])
    with pytest.raises(AssertionError, match="unknown expect keys"):
        kc.check_expectations({"balanced_actives": True}, cluster, result)
