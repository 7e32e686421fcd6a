"""Reading a cluster state is linear in its size (issue #10, point 2), counted, not timed."""

from __future__ import annotations

import json

import pytest

from devtools.generators.cluster_states import scale_scenario
from streams_assign.assignors import balance_pairs
from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor
from streams_assign.formats.cluster_state import loads_cluster_state, parse_cluster_state
from streams_assign.model import TaskId


def count_hashes(monkeypatch: pytest.MonkeyPatch, document: dict) -> int:
    calls = 0
    original = TaskId.__hash__

    def counting(self: TaskId) -> int:
        nonlocal calls
        calls += 1
        return original(self)

    monkeypatch.setattr(TaskId, "__hash__", counting)
    parse_cluster_state(document)
    monkeypatch.setattr(TaskId, "__hash__", original)
    return calls


def size(document: dict) -> int:
    tasks = len(document["stateful_tasks"]) + len(document["stateless_tasks"])
    entries = sum(
        len(c.get("task_lags", {})) + len(c.get("prev_active", [])) + len(c.get("prev_standby", []))
        for c in document["clients"]
    )
    return tasks + entries


@pytest.mark.parametrize("tasks", [200, 800])
def test_task_id_hashes_grow_linearly_with_the_document(monkeypatch, tasks: int) -> None:
    document = scale_scenario(10, stateful_tasks=tasks, stateless_tasks=tasks // 2, seed=1)
    for client in document["clients"]:
        for task in document["stateful_tasks"]:
            client["task_lags"].setdefault(task, 5)
    hashes = count_hashes(monkeypatch, document)
    # A handful of set and dict operations per task and per entry; the quadratic
    # stateless-versus-stateful check made this tasks^2 / 2 (80,000 at 400 tasks).
    assert hashes <= 8 * size(document), (hashes, size(document))


def test_parsing_twice_gives_equal_states() -> None:
    text = json.dumps(scale_scenario(20, stateful_tasks=300, stateless_tasks=100, seed=3))
    assert loads_cluster_state(text) == loads_cluster_state(text)


def test_task_id_hash_is_the_tuple_hash() -> None:
    # Set and dict iteration orders (and so every tie broken by them) stay as before.
    for task in (TaskId(0, 0), TaskId(3, 17), TaskId(1, 2, "orders")):
        assert hash(task) == hash((task.subtopology, task.partition, task.topology_name))


@pytest.mark.parametrize("clients", [5, 30, 90])
def test_list_and_numpy_balancing_agree(monkeypatch, clients: int) -> None:
    cluster = parse_cluster_state(
        scale_scenario(clients, stateful_tasks=300, stateless_tasks=100, seed=clients)
    )
    monkeypatch.setattr(balance_pairs, "NUMPY_FROM", 2)
    with_numpy = HighAvailabilityTaskAssignor().assign(cluster)
    monkeypatch.setattr(balance_pairs, "NUMPY_FROM", 10**9)
    with_lists = HighAvailabilityTaskAssignor().assign(cluster)
    assert with_numpy == with_lists
