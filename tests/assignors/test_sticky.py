"""Kafka's LegacyStickyTaskAssignorTest over rack strategies none, min_traffic, balance_subtopology.

Cases: ``tests/data/sticky/kafka_cases.json`` (Kafka's assertions as data); racks from the fixed
rack fixture of ``tests/data/rack_aware/kafka_fixture.json``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from streams_assign.assignors.rack_aware import RackAwareTaskAssignor, ortools_min_cost_flow
from streams_assign.assignors.state import AssignmentState
from streams_assign.assignors.sticky import (
    LegacyStickyTaskAssignor,
    _ClientOrder,
    assign_legacy_sticky,
    hash_set_capacity,
    java_hash_order,
    previous_tasks,
)
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state
from streams_assign.javacompat import JavaHashSet
from streams_assign.model import ClusterState, TaskId, java_uuid_hash_code

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURE = json.loads((DATA / "rack_aware" / "kafka_fixture.json").read_text())
CASES = json.loads((DATA / "sticky" / "kafka_cases.json").read_text())["cases"]
RANDOM_FILES = sorted((DATA / "rack_aware").glob("random_ha_seed*.json"))
STRATEGIES = ["none", "min_traffic", "balance_subtopology"]


@pytest.fixture
def fast_rack_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    """OR-Tools on rack-compressed graphs as the rack solver, for the 50-client inputs.

    Their checks (validity, stickiness at zero traffic cost) hold for any optimal placement;
    Kafka's own cycle cancelling, the default, takes minutes there (as in Kafka).
    """
    monkeypatch.setattr(RackAwareTaskAssignor, "default_solver", ortools_min_cost_flow)


def pid(n: int | str) -> str:
    return f"00000000-0000-0000-0000-{int(n):012x}"


def synthetic_racks(tasks: list[str], clients: list[int], seed: int = 11) -> dict[str, Any]:
    """Seeded random racks (5 brokers, 2 replicas) for tasks outside Kafka's fixture."""
    rng = random.Random(seed)
    racks = [f"rack{i}" for i in range(5)]
    extensions: dict[str, Any] = {
        "task_partitions": {},
        "task_changelog_partitions": {},
        "partition_racks": {},
        "client_racks": {pid(n): rng.choice(racks) for n in clients},
    }
    for task in tasks:
        sub, part = task.split("_")
        for kind, topic in (
            ("task_partitions", f"topic{sub}"),
            ("task_changelog_partitions", f"changelog{sub}"),
        ):
            extensions[kind][task] = [[topic, int(part)]]
            extensions["partition_racks"][f"{topic}:{part}"] = rng.sample(racks, 2)
    return extensions


def case_cluster(case: dict[str, Any], strategy: str) -> ClusterState:
    tasks = case["tasks"]
    stateful = case.get("stateful", tasks)
    configs: dict[str, Any] = {
        "acceptable_recovery_lag": 0,
        "max_warmup_replicas": 1,
        "num_standby_replicas": case.get("standbys", 0),
        "rack_aware_assignment_strategy": strategy,
    }
    for key in ("traffic_cost", "non_overlap_cost"):
        if key in case:
            configs[f"rack_aware_assignment_{key}"] = case[key]
    clients = []
    for spec in case["clients"]:
        client = {"id": pid(spec["n"]), "capacity": spec["capacity"]}
        for key in ("prev_active", "prev_standby"):
            if key in spec:
                client[key] = spec[key]
        clients.append(client)
    if case.get("racks") == "synthetic":
        extensions = synthetic_racks(tasks, [spec["n"] for spec in case["clients"]])
    else:
        extensions = {k: v for k, v in FIXTURE.items() if k != "description"}
    return parse_cluster_state(
        {
            "configs": configs,
            "stateful_tasks": stateful,
            "stateless_tasks": [t for t in tasks if t not in stateful],
            "clients": clients,
            **extensions,
        }
    )


def run_sticky(cluster: ClusterState, must_preserve: bool = False) -> AssignmentState:
    state = AssignmentState(cluster)
    rack = None
    if cluster.configs.rack_aware_assignment_strategy != "none":
        rack = RackAwareTaskAssignor(cluster)
        assert rack.can_enable_rack_aware_assignor()
    assign_legacy_sticky(state, must_preserve, rack)
    return state


def tasks_of(state: AssignmentState, n: int, role: str = "active") -> set[str]:
    client = state.client_ids.index(pid(n))
    held = state.active[client] if role == "active" else state.standby[client]
    return {str(state.tasks[t]) for t in held}


def check(state: AssignmentState, spec: dict[str, Any]) -> None:
    """One of Kafka's LegacyStickyTaskAssignorTest assertions."""
    kind = spec["check"]
    numbers = [int(p[-12:], 16) for p in state.client_ids]
    if kind == "active_count_each":
        assert all(len(a) == spec["value"] for a in state.active)
    elif kind == "assigned_count_each":
        assert all(state.assigned_count(c) == spec["value"] for c in range(state.num_clients))
    elif kind == "active_subtopologies_each":
        for active in state.active:
            assert sorted(state.tasks[t].subtopology for t in active) == spec["value"]
    elif kind == "active_has":
        assert set(spec["tasks"]) <= tasks_of(state, spec["client"])
    elif kind == "active_lacks":
        assert not set(spec["tasks"]) & tasks_of(state, spec["client"])
    elif kind == "active_equals":
        assert tasks_of(state, spec["client"]) == set(spec["tasks"])
    elif kind == "standby_equals":
        assert tasks_of(state, spec["client"], "standby") == set(spec["tasks"])
    elif kind == "standby_lacks":
        assert not set(spec["tasks"]) & tasks_of(state, spec["client"], "standby")
    elif kind == "standby_count":
        assert len(tasks_of(state, spec["client"], "standby")) == spec["value"]
    elif kind == "standby_count_at_most":
        assert len(tasks_of(state, spec["client"], "standby")) <= spec["value"]
    elif kind == "active_count":
        assert len(tasks_of(state, spec["client"])) == spec["value"]
    elif kind == "active_count_at_least":
        assert len(tasks_of(state, spec["client"])) >= spec["value"]
    elif kind == "assigned_count":
        c = state.client_ids.index(pid(spec["client"]))
        assert state.assigned_count(c) == spec["value"]
    elif kind == "all_active_sorted":
        assert sorted(str(state.tasks[t]) for a in state.active for t in a) == sorted(
            spec["tasks"], key=lambda t: TaskId.parse(t)
        )
        assert sorted(
            (state.tasks[t] for a in state.active for t in a), key=lambda t: t.sort_key
        ) == sorted(TaskId.parse(t) for t in spec["tasks"])
    elif kind == "all_standby_sorted":
        assert sorted(state.tasks[t] for s in state.standby for t in s) == sorted(
            TaskId.parse(t) for t in spec["tasks"]
        )
    elif kind == "clients_with_standbys_at_least":
        assert sum(1 for s in state.standby if s) >= spec["value"]
    elif kind == "distinct_assignments":
        assigned = [
            frozenset(tasks_of(state, n) | tasks_of(state, n, "standby")) for n in spec["clients"]
        ]
        assert len(set(assigned)) == len(assigned)
    elif kind == "active_sizes_one_of":
        sizes = [len(tasks_of(state, n)) for n in spec["clients"]]
        assert sizes in spec["sizes"]
    elif kind == "other_client_keeps_previous":
        moved = tasks_of(state, spec["new"])
        previous = {int(n): set(t) for n, t in spec["previous"].items()}
        donor = next(n for n, t in previous.items() if moved & t)
        for n, t in previous.items():
            if n != donor:
                assert tasks_of(state, n) == t
    else:  # pragma: no cover - a typo in the data file
        raise AssertionError(f"unknown check {kind!r}")
    assert numbers  # every check ran against a non-empty client list


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_legacy_sticky_matches_kafka(case: dict[str, Any], strategy: str) -> None:
    cluster = case_cluster(case, strategy)
    state = run_sticky(cluster, case.get("must_preserve", False))
    kafka = case.get(f"kafka_{strategy}")
    if kafka is not None:
        assert_same_optimum_as_kafka(case, strategy, state, kafka)
    else:
        for spec in case.get(f"checks_{strategy}", case["checks"]):
            check(state, spec)
    assert_valid(state, cluster.configs.num_standby_replicas)


def assert_valid(state: AssignmentState, standbys: int) -> None:
    """Every task active once; standbys on other clients; min(C, 1 + standbys) copies."""
    holders: Counter[int] = Counter()
    for c in range(state.num_clients):
        assert not state.active[c] & state.standby[c]
        holders.update(state.active[c] | state.standby[c])
    for t in range(len(state.tasks)):
        assert sum(t in a for a in state.active) == 1
        copies = min(state.num_clients, 1 + (standbys if state.stateful[t] else 0))
        assert holders[t] == copies


def assert_same_optimum_as_kafka(
    case: dict[str, Any], strategy: str, state: AssignmentState, kafka: dict[str, Any]
) -> None:
    """Where Kafka's answer is one of several optimal placements: same counts, same costs.

    The rack-aware step starts from the sticky placement (strategy ``none``); ours and Kafka's
    must cost the same against it, and place as many tasks on each client.
    """
    cluster = case_cluster(case, strategy)
    before = run_sticky(case_cluster(case, "none"))
    rack = RackAwareTaskAssignor(cluster)
    assert rack.can_enable_rack_aware_assignor()
    traffic, non_overlap = case.get("traffic_cost", 1), case.get("non_overlap_cost", 10)

    def placed(mapping: dict[str, list[str]], role: str) -> AssignmentState:
        other = AssignmentState(cluster)
        for n, tasks in mapping.items():
            c = other.client_ids.index(pid(n))
            for task in tasks:
                t = other.task_index[TaskId.parse(task)]
                (other.assign_active if role == "active" else other.assign_standby)(c, t)
        return other

    kafka_active = placed(kafka["active"], "active")
    assert [len(a) for a in kafka_active.active] == [len(a) for a in state.active]
    for group in (state.stateful_tasks, state.stateless_tasks):
        cost = non_overlap if group is state.stateful_tasks else 0
        unit = traffic if group is state.stateful_tasks else 1
        ours = rack.active_tasks_cost(group, state, unit, cost) + cost * _moves(
            before, state, group
        )
        theirs = rack.active_tasks_cost(group, kafka_active, unit, cost) + cost * _moves(
            before, kafka_active, group
        )
        assert ours == theirs
    stateful = set(state.stateful_tasks)
    if "standby" not in kafka or [a & stateful for a in state.active] != [
        a & stateful for a in kafka_active.active
    ]:
        return  # the standbys start from other stateful actives: nothing to compare
    kafka_standby = placed(kafka["standby"], "standby")
    assert [len(s) for s in kafka_standby.standby] == [len(s) for s in state.standby]
    standby_tasks = sorted({t for s in state.standby for t in s})
    ours = rack.standby_tasks_cost(standby_tasks, state, traffic, non_overlap)
    theirs = rack.standby_tasks_cost(standby_tasks, kafka_standby, traffic, non_overlap)
    assert ours <= theirs


def _moves(before: AssignmentState, after: AssignmentState, tasks: list[int]) -> int:
    return sum(
        1
        for c in range(before.num_clients)
        for t in tasks
        if t in after.active[c] and t not in before.active[c]
    )


# -- random inputs (shouldAssignRandomInput, shouldRemainOriginalAssignmentWithout...) ---------
def random_cluster(path: Path, strategy: str, **configs: Any) -> ClusterState:
    cluster = load_cluster_state(path)
    return dataclasses.replace(
        cluster,
        configs=dataclasses.replace(
            cluster.configs,
            acceptable_recovery_lag=0,
            max_warmup_replicas=1,
            num_standby_replicas=1,
            rack_aware_assignment_strategy=strategy,
            **configs,
        ),
    )


def subtopology_skew(state: AssignmentState) -> int:
    worst = 0
    for sub in {task.subtopology for task in state.tasks}:
        counts = [sum(1 for t in a if state.tasks[t].subtopology == sub) for a in state.active]
        worst = max(worst, max(counts) - min(counts))
    return worst


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("path", RANDOM_FILES, ids=lambda p: p.stem)
@pytest.mark.usefixtures("fast_rack_solver")
def test_random_input_is_valid(path: Path, strategy: str) -> None:
    cluster = random_cluster(
        path,
        strategy,
        rack_aware_assignment_traffic_cost=10,
        rack_aware_assignment_non_overlap_cost=1,
    )
    state = run_sticky(cluster)
    assert_valid(state, 1)
    if strategy == "balance_subtopology":
        assert subtopology_skew(state) <= 4
    assert LegacyStickyTaskAssignor().assign(cluster).probing_rebalance_needed is False


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
@pytest.mark.parametrize("path", RANDOM_FILES, ids=lambda p: p.stem)
@pytest.mark.usefixtures("fast_rack_solver")
def test_zero_traffic_cost_keeps_the_sticky_placement(path: Path, strategy: str) -> None:
    costs = {"rack_aware_assignment_traffic_cost": 0, "rack_aware_assignment_non_overlap_cost": 10}
    racked = run_sticky(random_cluster(path, strategy, **costs))
    assert_valid(racked, 1)
    if strategy == "balance_subtopology":
        assert subtopology_skew(racked) <= 4
        return
    plain = run_sticky(random_cluster(path, "none", **costs))
    stateful = set(racked.stateful_tasks)
    for c in range(racked.num_clients):
        assert racked.active[c] & stateful == plain.active[c] & stateful
        assert racked.standby[c] == plain.standby[c]


# -- properties and helpers ---------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_previous_actives_within_quota_stay_put(seed: int) -> None:
    """Stickiness: each client keeps min(|previous actives|, capacity * tasksPerThread) of them."""
    document = json.loads(RANDOM_FILES[0].read_text())
    tasks = document["stateful_tasks"] + document["stateless_tasks"]
    rng = random.Random(seed)
    rng.shuffle(tasks)
    for client in document["clients"]:
        client.pop("task_lags")
        client["prev_active"] = []
    for task in tasks:  # skewed: low-numbered clients owned more
        owner = min(rng.randrange(len(document["clients"])) for _ in range(2))
        document["clients"][owner]["prev_active"].append(task)
    document["configs"]["rack_aware_assignment_strategy"] = "none"
    cluster = parse_cluster_state(document)
    state = run_sticky(cluster)
    per_thread = len(state.tasks) // sum(state.capacity)
    for c, client in enumerate(cluster.clients):
        previous = {state.task_index[t] for t in client.prev_active}
        kept = previous & state.active[c]
        assert len(kept) >= min(len(previous), state.capacity[c] * per_thread)
    assert_valid(state, cluster.configs.num_standby_replicas)


def test_previous_tasks_follow_kafka_initialize_prev_tasks() -> None:
    cluster = parse_cluster_state(
        {
            "stateful_tasks": ["0_0", "0_1", "0_2"],
            "clients": [
                {
                    "id": pid(1),
                    "capacity": 1,
                    "prev_active": ["0_2"],
                    "task_lags": {"0_0": -2, "0_1": 7, "0_2": -2},
                }
            ],
        }
    )
    active, standby = previous_tasks(cluster, 0)
    assert [str(t) for t in active] == ["0_0", "0_2"]
    assert [str(t) for t in standby] == ["0_1"]


@pytest.mark.parametrize(
    ("size", "capacity"), [(0, 16), (11, 16), (12, 32), (24, 64), (48, 128), (96, 256)]
)
def test_hash_set_capacity_follows_java_collection_constructor(size: int, capacity: int) -> None:
    assert hash_set_capacity(size) == capacity


@pytest.mark.parametrize("size", [5, 48, 49, 200, 1000])
@pytest.mark.parametrize("requested", [None, "collection"])
def test_hash_order_shortcut_equals_the_java_hash_set_replay(
    size: int, requested: str | None
) -> None:
    """The sort used for big sets gives JavaHashSet's order (random process ids)."""
    rng = random.Random(size)
    hashes = [java_uuid_hash_code(str(uuid.UUID(int=rng.getrandbits(128)))) for _ in range(size)]
    members = list(range(size))
    rng.shuffle(members)
    capacity = hash_set_capacity(size) if requested else None
    replay = JavaHashSet(hashes.__getitem__, members, initial_capacity=capacity)
    assert not replay.treeified
    assert java_hash_order(members, hashes, capacity) == list(replay)


@pytest.mark.parametrize(("clients", "held"), [(60, 3), (100, 6), (100, 60), (1000, 10)])
def test_clients_without_the_task_come_in_java_hash_set_order(clients: int, held: int) -> None:
    """findClientsWithoutAssignedTask: a default HashSet filled in the clients map order."""
    rng = random.Random(clients + held)
    hashes = [java_uuid_hash_code(str(uuid.UUID(int=rng.getrandbits(128)))) for _ in range(clients)]
    order = _ClientOrder(hashes)
    excluded = set(rng.sample(range(clients), held))
    members = [c for c in order.clients if c not in excluded]
    assert order.all_except(excluded) == list(JavaHashSet(hashes.__getitem__, members))
