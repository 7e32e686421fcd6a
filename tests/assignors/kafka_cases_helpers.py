"""Helpers of the Kafka-ported test cases: case files, Kafka's validators, the random input.

The case files live in ``tests/data/kafka_tests/`` (format in its README.md): each holds the
cluster-state input under ``"scenario"`` and what Kafka's test asserts under ``"expect"``.
The validators mirror Kafka's ``AssignmentTestUtils`` on an :class:`Assignment`.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from streams_assign.assignors import assign
from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.model import LONG_MAX_VALUE, Assignment, ClusterState, TaskId

DATA = Path(__file__).resolve().parents[1] / "data" / "kafka_tests"
HA_CASES = DATA / "high_availability"
MOVEMENT_CASES = DATA / "task_movement"

#: Top-level keys of a case file.
CASE_KEYS = frozenset({"kafka_test", "reference", "notes", "scenario", "setup", "expect", "trace"})
#: Keys of an HA case's ``expect`` (and ``trace``) section.
EXPECT_KEYS = frozenset(
    {
        "probing_rebalance_needed",
        "clients",
        "valid",
        "balanced_active",
        "balanced_stateful",
        "subtopology_skew_at_most",
        "subtopology_skewed",
        "every_client_has_active",
        "actives_equal_prev_active",
    }
)
#: Keys of one client's entry in ``expect.clients``.
CLIENT_EXPECT_KEYS = frozenset(
    {
        "active",
        "standby",
        "warmup",
        "active_count",
        "standby_count",
        "assigned_count",
        "min_standby_count",
    }
)


def pid(n: int) -> str:
    """Kafka tests' ``processIdForInt(n)``: ``new UUID(0, n)`` as a string (``P1`` = pid(1))."""
    return str(uuid.UUID(int=n))


def load_case(path: Path) -> dict[str, Any]:
    """Read a case file and check its top-level keys (a typo must not skip a check)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    unknown = set(document) - CASE_KEYS
    assert not unknown, f"{path.name}: unknown case keys {sorted(unknown)}"
    return document


def ha_case_path(name: str) -> Path:
    """The HA case file of a Kafka test name in snake_case."""
    return HA_CASES / f"{name}.json"


def run_ha_case(
    name: str, literal: bool = False
) -> tuple[ClusterState, Assignment, dict[str, Any]]:
    """Load an HA case, run the HA assignor on its scenario, return (cluster, result, case).

    ``literal=False`` goes through the public ``streams_assign.assign``; ``literal=True`` runs
    the assignor's verification mode (Kafka's data structures used literally).
    """
    case = load_case(ha_case_path(name))
    cluster = parse_cluster_state(case["scenario"])
    if literal:
        return cluster, HighAvailabilityTaskAssignor(literal=True).assign(cluster), case
    return cluster, assign(cluster), case


# -- AssignmentTestUtils ------------------------------------------------------------------------


def _holders(assignment: Assignment) -> dict[TaskId, set[str]]:
    holders: dict[TaskId, set[str]] = {}
    for process_id, client in assignment.clients.items():
        for task in (*client.active, *client.standby):
            holders.setdefault(task, set()).add(process_id)
    return holders


def assert_valid_assignment(
    num_standby: int, max_warmups: int, cluster: ClusterState, assignment: Assignment
) -> None:
    """Kafka's ``assertValidAssignment(numStandby, maxWarmups, stateful, stateless, states)``.

    Every task is held by ``min(#clients, 1 + standbys)`` clients (0 standbys for a stateless
    task); up to ``max_warmups`` tasks (in TaskId order) may have exactly one more holder.
    """
    stateful, stateless = set(cluster.stateful_tasks), set(cluster.stateless_tasks)
    for process_id, client in assignment.clients.items():
        for task in client.active:
            assert task in stateful | stateless, f"extra active task {task} on {process_id}"
        for task in client.standby:
            assert task not in stateless, f"standby of stateless task {task} on {process_id}"
            assert task in stateful, f"extra standby task {task} on {process_id}"
    holders = _holders(assignment)
    remaining_warmups = max_warmups
    misassigned = {}
    for task in sorted(stateful | stateless):
        standbys = 0 if task in stateless else num_standby
        expected = min(len(assignment.clients), 1 + standbys)
        actual = len(holders.get(task, ()))
        if actual == expected:
            continue
        if actual == expected + 1 and remaining_warmups > 0:
            remaining_warmups -= 1
            continue
        misassigned[str(task)] = sorted(holders.get(task, ()))
    assert not misassigned, (
        f"over- or under-assigned tasks with {num_standby} standbys and max warmups "
        f"{max_warmups}: {misassigned}"
    )


def assert_balanced_active_assignment(cluster: ClusterState, assignment: Assignment) -> None:
    """Kafka's ``assertBalancedActiveAssignment``: active loads (actives / capacity) within 1."""
    loads = [len(assignment.clients[c.id].active) / c.capacity for c in cluster.clients]
    assert max(loads) - min(loads) <= 1.0, f"active load imbalance: {loads}"


def assert_balanced_stateful_assignment(
    cluster: ClusterState, assignment: Assignment, stateful_tasks: Iterable[TaskId] | None = None
) -> None:
    """Kafka's ``assertBalancedStatefulAssignment``: stateful (active + standby) loads within 1.

    ``stateful_tasks`` is the set Kafka's test passes (some pass all tasks); default the
    cluster's stateful tasks.
    """
    stateful = set(cluster.stateful_tasks if stateful_tasks is None else stateful_tasks)
    loads = []
    for client in cluster.clients:
        result = assignment.clients[client.id]
        held = stateful.intersection((*result.active, *result.standby))
        loads.append(len(held) / client.capacity)
    assert max(loads) - min(loads) <= 1.0, f"stateful load imbalance: {loads}"


def subtopology_skew(assignment: Assignment, threshold: int) -> tuple[int, list[int]]:
    """Kafka's ``analyzeTaskAssignmentBalance``: (max skew, skewed subtopologies).

    Per subtopology that has an active task somewhere, ``max - min`` over *all* clients of the
    number of that subtopology's active tasks; skewed when above ``threshold``.
    """
    counts: dict[int, dict[str, int]] = {}
    for process_id, client in assignment.clients.items():
        for task in client.active:
            per_client = counts.setdefault(task.subtopology, {p: 0 for p in assignment.clients})
            per_client[process_id] += 1
    max_skew, skewed = 0, []
    for subtopology in sorted(counts):
        skew = max(counts[subtopology].values()) - min(counts[subtopology].values())
        max_skew = max(max_skew, skew)
        if skew > threshold:
            skewed.append(subtopology)
    return max_skew, skewed


def task_names(tasks: Iterable[TaskId]) -> list[str]:
    """Task ids as sorted strings (the JSON form)."""
    return [str(t) for t in sorted(tasks)]


def check_expectations(
    expect: Mapping[str, Any], cluster: ClusterState, assignment: Assignment
) -> None:
    """Apply every assertion of a case's ``expect`` (or ``trace``) section."""
    unknown = set(expect) - EXPECT_KEYS
    assert not unknown, f"unknown expect keys {sorted(unknown)}"
    if "probing_rebalance_needed" in expect:
        assert assignment.probing_rebalance_needed is expect["probing_rebalance_needed"]
    for process_id, wanted in expect.get("clients", {}).items():
        _check_client(process_id, wanted, assignment)
    if "valid" in expect:
        valid = expect["valid"]
        assert_valid_assignment(valid["num_standby"], valid["max_warmups"], cluster, assignment)
    if expect.get("balanced_active"):
        assert_balanced_active_assignment(cluster, assignment)
    balanced_stateful = expect.get("balanced_stateful", False)
    if balanced_stateful is True:
        assert_balanced_stateful_assignment(cluster, assignment)
    elif balanced_stateful:
        tasks = [TaskId.parse(t) for t in balanced_stateful]
        assert_balanced_stateful_assignment(cluster, assignment, tasks)
    if "subtopology_skew_at_most" in expect:
        threshold = expect["subtopology_skew_at_most"]
        max_skew, skewed = subtopology_skew(assignment, threshold)
        assert not skewed, f"subtopologies {skewed} skewed above {threshold} (max {max_skew})"
    if "subtopology_skewed" in expect:
        threshold = expect["subtopology_skewed"]["threshold"]
        _, skewed = subtopology_skew(assignment, threshold)
        assert skewed, f"expected a subtopology skewed above {threshold}"
    if expect.get("every_client_has_active"):
        empty = [p for p, c in assignment.clients.items() if not c.active]
        assert not empty, f"clients without an active task: {empty}"
    if expect.get("actives_equal_prev_active"):
        for client in cluster.clients:
            assert assignment.clients[client.id].active == client.prev_active, client.id


def _check_client(process_id: str, wanted: Mapping[str, Any], assignment: Assignment) -> None:
    unknown = set(wanted) - CLIENT_EXPECT_KEYS
    assert not unknown, f"unknown client expect keys {sorted(unknown)}"
    got = assignment.clients[process_id]
    for role in ("active", "standby", "warmup"):
        if role in wanted:
            assert task_names(getattr(got, role)) == wanted[role], f"{process_id} {role}"
    if "active_count" in wanted:
        assert len(got.active) == wanted["active_count"], f"{process_id} active count"
    if "standby_count" in wanted:
        assert len(got.standby) == wanted["standby_count"], f"{process_id} standby count"
    if "assigned_count" in wanted:
        assigned = len(got.active) + len(got.standby)
        assert assigned == wanted["assigned_count"], f"{process_id} assigned count"
    if "min_standby_count" in wanted:
        assert len(got.standby) >= wanted["min_standby_count"], f"{process_id} standby count"


# -- shouldAssignRandomInput (HA test #33) ------------------------------------------------------


def _random_subsets(rng: random.Random, items: list[str], count: int) -> list[list[str]]:
    """Kafka's ``getRandomSubset``: shuffle, then ``count`` consecutive runs of random length.

    Runs 1..count-1 take ``1..remaining`` items each (none once the list is used up); the last
    takes the rest.
    """
    shuffled = list(items)
    rng.shuffle(shuffled)
    start, subsets = 0, []
    for i in range(count):
        remaining = len(shuffled) - start
        size = 0
        if remaining:
            size = remaining if i == count - 1 else rng.randint(1, remaining)
        subsets.append(sorted(shuffled[start : start + size], key=TaskId.parse))
        start += size
    return subsets


def random_input_scenario(
    seed: int,
    subtopologies: int = 60,
    partitions: int = 3,
    clients: int = 50,
    max_capacity: int = 3,
    num_standby: int = 3,
) -> dict[str, Any]:
    """The cluster state of Kafka's ``shouldAssignRandomInput`` with rack awareness off.

    ``getTaskTopicPartitionMap(60, 3)`` tasks; a random stateful/stateless split
    (``getRandomSubset(tasks, 2)``); ``getRandomClientState``: P1..Pn with capacity
    ``1..max_capacity``, lag 0 on every stateful task, random previous actives and standbys;
    ``cfg(100, 2, num_standby)``. Deterministic for a seed (Kafka seeds by the clock).
    """
    rng = random.Random(seed)
    tasks = [f"{s}_{p}" for s in range(subtopologies) for p in range(partitions)]
    stateful, stateless = _random_subsets(rng, tasks, 2)
    prev_active = _random_subsets(rng, tasks, clients)
    prev_standby = _random_subsets(rng, stateful, clients)
    lags = {task: 0 for task in stateful}
    return {
        "name": f"shouldAssignRandomInput seed {seed}",
        "configs": {
            "acceptable_recovery_lag": 100,
            "max_warmup_replicas": 2,
            "num_standby_replicas": num_standby,
            "probing_rebalance_interval_ms": 60_000,
        },
        "stateful_tasks": sorted(stateful, key=TaskId.parse),
        "stateless_tasks": sorted(stateless, key=TaskId.parse),
        "clients": [
            {
                "id": pid(i + 1),
                "capacity": rng.randint(1, max_capacity),
                "prev_active": prev_active[i],
                "prev_standby": prev_standby[i],
                "task_lags": dict(lags),
            }
            for i in range(clients)
        ],
    }


__all__ = [
    "DATA",
    "HA_CASES",
    "LONG_MAX_VALUE",
    "MOVEMENT_CASES",
    "assert_balanced_active_assignment",
    "assert_balanced_stateful_assignment",
    "assert_valid_assignment",
    "check_expectations",
    "ha_case_path",
    "load_case",
    "pid",
    "random_input_scenario",
    "run_ha_case",
    "subtopology_skew",
    "task_names",
]
