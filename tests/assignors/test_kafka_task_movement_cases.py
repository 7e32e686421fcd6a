"""Kafka's ``TaskMovementTest``: the active-movement step called directly.

Each case file in ``tests/data/kafka_tests/task_movement/`` holds a scenario whose lags and
``acceptable_recovery_lag`` reproduce the test's hand-built caught-up sets and by-lag orders
(``expect.caught_up_clients``, ``expect.clients_by_lag``), the assignment Kafka's test builds by
hand before the call (``setup.clients``), the warmup budget (``setup.warmup_budget``), and the
movement count and resulting sets Kafka asserts.
"""

from __future__ import annotations

from typing import Any

import pytest

import tests.assignors.kafka_cases_helpers as kc
from streams_assign.assignors.movements import (
    WarmupBudget,
    assign_active_task_movements,
)
from streams_assign.assignors.state import AssignmentState
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.model import TaskId

CASES = sorted(p.stem for p in kc.MOVEMENT_CASES.glob("*.json"))


def prepare(name: str, literal: bool = False) -> tuple[dict[str, Any], AssignmentState]:
    """The case and its state with the hand-made assignment of Kafka's test, before moving.

    ``literal`` selects the state's verification mode (Kafka's priority structures literally).
    """
    case = kc.load_case(kc.MOVEMENT_CASES / f"{name}.json")
    state = AssignmentState(parse_cluster_state(case["scenario"]), literal=literal)
    client = {process_id: i for i, process_id in enumerate(state.client_ids)}
    for process_id, roles in case["setup"]["clients"].items():
        for task in roles["active"]:
            state.assign_active(client[process_id], state.task_index[TaskId.parse(task)])
        for task in roles["standby"]:
            state.assign_standby(client[process_id], state.task_index[TaskId.parse(task)])
    return case, state


def check_movement_case(name: str) -> None:
    """Run ``assign_active_task_movements`` in both modes; compare count, sets and warmups."""
    for literal in (False, True):
        try:
            _check_movement_case(name, literal)
        except AssertionError as error:
            raise AssertionError(f"{'literal' if literal else 'fast'} mode: {error}") from error


def _check_movement_case(name: str, literal: bool) -> None:
    case, state = prepare(name, literal)
    warmups: dict[int, set[int]] = {}
    budget = WarmupBudget(case["setup"]["warmup_budget"])
    count = assign_active_task_movements(state, warmups, budget)
    expect = case["expect"]
    assert count == expect["movements"]
    for process_id, roles in expect["clients"].items():
        c = state.client_ids.index(process_id)
        assert kc.task_names(state.tasks[t] for t in state.active[c]) == roles["active"], process_id
        assert kc.task_names(state.tasks[t] for t in state.standby[c]) == roles["standby"], (
            process_id
        )
    made = {
        state.client_ids[c]: kc.task_names(state.tasks[t] for t in tasks)
        for c, tasks in warmups.items()
        if tasks
    }
    assert made == expect["warmups"]


def test_should_assign_tasks_to_clients_and_return_false_when_all_clients_caught_up():
    check_movement_case(
        "should_assign_tasks_to_clients_and_return_false_when_all_clients_caught_up"
    )


def test_should_assign_all_tasks_to_clients_and_return_false_if_no_clients_are_caught_up():
    check_movement_case(
        "should_assign_all_tasks_to_clients_and_return_false_if_no_clients_are_caught_up"
    )


def test_should_move_tasks_to_caught_up_clients_and_assign_warmup_replicas_in_their_place():
    check_movement_case(
        "should_move_tasks_to_caught_up_clients_and_assign_warmup_replicas_in_their_place"
    )


def test_should_move_tasks_to_most_caught_up_clients_and_assign_warmup_replicas_in_their_place():
    check_movement_case(
        "should_move_tasks_to_most_caught_up_clients_and_assign_warmup_replicas_in_their_place"
    )


def test_should_only_get_up_to_max_warmup_replicas_and_return_true():
    check_movement_case("should_only_get_up_to_max_warmup_replicas_and_return_true")


def test_should_not_count_previous_standby_tasks_towards_max_warmup_replicas():
    check_movement_case("should_not_count_previous_standby_tasks_towards_max_warmup_replicas")


def test_every_case_file_has_its_test():
    tests = {name.removeprefix("test_") for name in globals() if name.startswith("test_should_")}
    assert len(CASES) == 6
    assert set(CASES) <= tests, sorted(set(CASES) - tests)


@pytest.mark.parametrize("name", CASES)
def test_lags_reproduce_kafkas_caught_up_sets(name: str):
    """The scenario's lags give the test's ``tasksToCaughtUpClients`` exactly."""
    case, state = prepare(name)
    for task, clients in case["expect"]["caught_up_clients"].items():
        index = state.task_index[TaskId.parse(task)]
        assert [state.client_ids[c] for c in state.caught_up_clients(index)] == clients, task


@pytest.mark.parametrize("name", CASES)
def test_lags_reproduce_kafkas_by_lag_order(name: str):
    """The scenario's lags give the test's ``mkOrderedSet`` by-lag order (ties by process id)."""
    case, state = prepare(name)
    for task, clients in case["expect"]["clients_by_lag"].items():
        index = state.task_index[TaskId.parse(task)]
        assert [state.client_ids[c] for c in state.clients_by_lag(index)] == clients, task


def test_swap_with_a_caught_up_standby_spends_no_warmup_budget():
    _, state = prepare("should_not_count_previous_standby_tasks_towards_max_warmup_replicas")
    budget = WarmupBudget(0)
    assign_active_task_movements(state, {}, budget)
    assert budget.remaining == 0


def test_a_move_without_budget_left_still_takes_a_budget_unit():
    case, state = prepare("should_only_get_up_to_max_warmup_replicas_and_return_true")
    budget = WarmupBudget(case["setup"]["warmup_budget"])
    assign_active_task_movements(state, {}, budget)
    assert budget.remaining == -1


def test_movements_with_fewer_caught_up_clients_go_first():
    """Kafka orders movements by (number of caught-up clients, TaskId), not by TaskId alone.

    P1 holds 0_0 (caught up on P2 and P3), P2 holds 0_1 (caught up on P3 only); one warmup.
    0_1 moves first, to P3, and takes the warmup on P2; then 0_0 moves to P2 (tied with P3 on
    load, smaller id) without a warmup, so P1 ends empty.
    """
    p1, p2, p3 = kc.pid(1), kc.pid(2), kc.pid(3)
    cluster = parse_cluster_state(
        {
            "configs": {"acceptable_recovery_lag": 0, "max_warmup_replicas": 1},
            "stateful_tasks": ["0_0", "0_1"],
            "clients": [
                {"id": p1, "capacity": 1, "task_lags": {"0_0": 10000, "0_1": 10000}},
                {"id": p2, "capacity": 1, "task_lags": {"0_0": 0, "0_1": 10000}},
                {"id": p3, "capacity": 1, "task_lags": {"0_0": 0, "0_1": 0}},
            ],
        }
    )
    for literal in (False, True):
        state = AssignmentState(cluster, literal=literal)
        state.assign_active(0, state.task_index[TaskId.parse("0_0")])
        state.assign_active(1, state.task_index[TaskId.parse("0_1")])
        warmups: dict[int, set[int]] = {}
        assert assign_active_task_movements(state, warmups, WarmupBudget(1)) == 2
        roles = [
            (
                kc.task_names(state.tasks[t] for t in state.active[c]),
                kc.task_names(state.tasks[t] for t in state.standby[c]),
            )
            for c in range(3)
        ]
        assert roles == [([], []), (["0_0"], ["0_1"]), (["0_1"], [])], literal
        assert {c: tasks for c, tasks in warmups.items() if tasks} == {1: {1}}
