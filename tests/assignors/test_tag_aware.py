"""Client-tag-aware standbys (KIP-708): Kafka's ``ClientTagAwareStandbyTaskAssignorTest`` and more.

The 17 cases of Kafka's ``ClientTagAwareStandbyTaskAssignorTest`` are data files in
``tests/data/tag_aware/`` (format in its README). Kafka iterates the tasks of those tests in
``HashSet`` order and accepts any of several placements; here tasks go in TaskId order, and the same
alternatives are accepted.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streams_assign.assignors import assign
from streams_assign.assignors.standby import DefaultStandbyTaskAssignor
from streams_assign.assignors.standby_factory import create_standby_task_assignor
from streams_assign.assignors.state import AssignmentState
from streams_assign.assignors.tag_aware import (
    ClientTagAwareStandbyTaskAssignor,
    assign_standby_tasks_to_clients_with_different_tags,
    compute_tasks_to_remaining_standbys,
    fill_clients_tag_statistics,
    tags_match,
)
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.java.hash_order import task_hash_set
from streams_assign.model import TaskId

DATA = Path(__file__).resolve().parents[1] / "data" / "tag_aware"
CASES = sorted(p.stem for p in DATA.glob("*.json"))


def pid(name: str) -> str:
    """``"P3"`` -> Kafka's ``PID_3`` (``new UUID(0, 3)``) as a process id string."""
    return str(uuid.UUID(int=int(name[1:])))


def load(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"{name}.json").read_text())


def prepared_state(scenario: dict[str, Any], case: dict[str, Any]) -> AssignmentState:
    """The case's cluster with its ``actives`` and ``standbys`` assigned."""
    state = AssignmentState(parse_cluster_state(scenario))
    index = {client_id: i for i, client_id in enumerate(state.client_ids)}
    for role, assign_one in (("actives", state.assign_active), ("standbys", state.assign_standby)):
        for name, tasks in case.get(role, {}).items():
            for task in tasks:
                assign_one(index[pid(name)], state.task_index[TaskId.parse(task)])
    return state


def kafka_test_task_order(state: AssignmentState) -> list[int]:
    """The stateful tasks in the order Kafka's test passes them: ``findAllActiveTasks`` collects
    the clients' actives (clients in map order, each client's sorted) into a ``HashSet``."""
    inserted = [state.tasks[t] for c in range(state.num_clients) for t in sorted(state.active[c])]
    return [
        state.task_index[t] for t in task_hash_set(inserted) if state.stateful[state.task_index[t]]
    ]


def holds_not(state: AssignmentState) -> Callable[[int, int], bool]:
    """Kafka's standby constraint: the client does not hold the task yet."""
    return lambda client, task: not state.has_assigned(client, task)


def standby_clients(state: AssignmentState, task: str) -> set[str]:
    t = state.task_index[TaskId.parse(task)]
    return {
        f"P{uuid.UUID(state.client_ids[c]).int}"
        for c in range(state.num_clients)
        if t in state.standby[c]
    }


def check_assign_expectations(state: AssignmentState, expect: dict[str, Any]) -> None:
    index = {client_id: i for i, client_id in enumerate(state.client_ids)}
    for task in expect.get("no_standby", []):
        assert standby_clients(state, task) == set(), task
    for name, allowed in expect.get("standby_count", {}).items():
        assert len(state.standby[index[pid(name)]]) in allowed, name
    if "total_standby" in expect:
        assert sum(len(s) for s in state.standby) == expect["total_standby"]
    if expect.get("all_reached_capacity"):
        assert all(state.assigned_count(c) >= state.capacity[c] for c in range(state.num_clients))
    for task, alternatives in expect.get("standby_alternatives", {}).items():
        actual = standby_clients(state, task)
        assert sum(actual == set(alt) for alt in alternatives) == 1, (task, actual)
    for task, allowed_clients in expect.get("standby_within", {}).items():
        assert standby_clients(state, task) <= set(allowed_clients), task


@pytest.mark.parametrize("name", CASES)
def test_kafka_client_tag_aware_case(name: str) -> None:
    case = load(name)
    expect = case["expect"]
    kind = case["kind"]
    for scenario in [case["scenario"], *case.get("variants", [])]:
        state = prepared_state(scenario, case)
        if kind == "assign":
            ClientTagAwareStandbyTaskAssignor().assign(state, kafka_test_task_order(state))
            check_assign_expectations(state, expect)
        elif kind == "assign_direct":
            configs = state.cluster.configs
            tag_values, tag_clients = fill_clients_tag_statistics(
                [c.tags for c in state.cluster.clients]
            )
            active_tasks = sorted(t for a in state.active for t in a)
            remaining = compute_tasks_to_remaining_standbys(
                configs.num_standby_replicas, [state.tasks[t] for t in active_tasks]
            )
            pending: dict[int, int] = {}
            candidates = state.priority_set(state.task_load, holds_not(state))
            for task in active_tasks:
                owner = next(c for c in range(state.num_clients) if task in state.active[c])
                assign_standby_tasks_to_clients_with_different_tags(
                    state,
                    candidates,
                    task,
                    owner,
                    frozenset(configs.rack_aware_assignment_tags),
                    tag_values,
                    tag_clients,
                    remaining,
                    pending,
                )
            assert {str(t): n for t, n in remaining.items()} == expect["remaining"]
            assert {
                str(state.tasks[t]): f"P{uuid.UUID(state.client_ids[c]).int}"
                for t, c in pending.items()
            } == expect["pending"]
        elif kind in ("movement", "movement_with_state"):
            index = {client_id: i for i, client_id in enumerate(state.client_ids)}
            source, destination = index[pid(case["source"])], index[pid(case["destination"])]
            task = state.task_index[TaskId.parse(case["task"])]
            assignor = ClientTagAwareStandbyTaskAssignor()
            if kind == "movement":
                assignor.assign(state)  # binds the state the 2-argument predicate reads
                allowed = assignor.is_allowed_task_movement(source, destination, task)
            else:
                allowed = assignor.is_allowed_task_movement_with_state(
                    state, source, destination, task
                )
            assert allowed is expect["allowed"]
        else:  # pragma: no cover - a malformed data file
            raise AssertionError(f"unknown kind {kind!r}")


def test_all_seventeen_kafka_cases_are_present() -> None:
    assert len(CASES) == 17


# -- the factory and the predicates ----------------------------------------------------------


def _cluster(
    tags: list[str] | None, client_tags: list[dict[str, str]], standbys: int = 1
) -> AssignmentState:
    configs: dict[str, Any] = {"num_standby_replicas": standbys}
    if tags is not None:
        configs["rack_aware_assignment_tags"] = tags
    return AssignmentState(
        parse_cluster_state(
            {
                "configs": configs,
                "stateful_tasks": ["0_0", "0_1"],
                "clients": [
                    {"id": pid(f"P{i + 1}"), "capacity": 1, "tags": t}
                    for i, t in enumerate(client_tags)
                ],
            }
        )
    )


def test_factory_picks_tag_aware_only_with_configured_tags() -> None:
    zones = [{"zone": "a"}, {"zone": "b"}]
    assert isinstance(
        create_standby_task_assignor(_cluster(["zone"], zones)), ClientTagAwareStandbyTaskAssignor
    )
    assert isinstance(
        create_standby_task_assignor(_cluster(None, zones)), DefaultStandbyTaskAssignor
    )


def test_default_assignor_allows_every_move_in_both_forms() -> None:
    state = _cluster(None, [{}, {}])
    default = DefaultStandbyTaskAssignor()
    assert default.is_allowed_task_movement(0, 1, 0)
    assert default.is_allowed_task_movement_with_state(state, 0, 1, 0)


def test_two_argument_predicate_compares_every_source_tag() -> None:
    assert tags_match({"zone": "a", "cluster": "x"}, {"zone": "a", "cluster": "x", "extra": "y"})
    assert not tags_match({"zone": "a", "other": "q"}, {"zone": "a"})  # unconfigured keys count too
    assert tags_match({}, {"zone": "a"})


def test_two_argument_predicate_needs_a_bound_state() -> None:
    with pytest.raises(RuntimeError):
        ClientTagAwareStandbyTaskAssignor().is_allowed_task_movement(0, 1, 0)


def test_balancing_only_moves_standbys_between_identically_tagged_clients() -> None:
    """Through the HA assignor: P1 (zone a, cap 4) is the only client in its zone, so the standby
    balancing may not move anything onto or off it although its load differs."""
    document = {
        "configs": {"num_standby_replicas": 1, "rack_aware_assignment_tags": ["zone"]},
        "stateful_tasks": [f"0_{p}" for p in range(6)],
        "clients": [
            {"id": pid("P1"), "capacity": 4, "tags": {"zone": "a"}},
            {"id": pid("P2"), "capacity": 1, "tags": {"zone": "b"}},
            {"id": pid("P3"), "capacity": 1, "tags": {"zone": "b"}},
        ],
    }
    result = assign(document)
    for task in (f"0_{p}" for p in range(6)):
        holders = [
            cid
            for cid, c in result.clients.items()
            if TaskId.parse(task) in (*c.active, *c.standby)
        ]
        zones = {"a" if cid == pid("P1") else "b" for cid in holders}
        assert zones == {"a", "b"}, task


def test_zero_replicas_places_nothing() -> None:
    state = _cluster(["zone"], [{"zone": "a"}, {"zone": "b"}], standbys=0)
    state.assign_active(0, 0)
    ClientTagAwareStandbyTaskAssignor().assign(state)
    assert state.standby == [set(), set()]


def test_pending_fill_follows_java_hash_map_order() -> None:
    """``tasksToRemainingStandbys`` is a HashMap: the pending fill serves 1_0 (bucket 0) before
    0_1 (bucket 14) and 0_0 (bucket 15), whatever the TaskId order."""
    remaining = compute_tasks_to_remaining_standbys(
        1, [TaskId.parse(t) for t in ("0_0", "0_1", "1_0")]
    )
    assert [str(t) for t in remaining] == ["1_0", "0_1", "0_0"]


def test_literal_priority_set_gives_the_same_placement() -> None:
    """Kafka's ConstrainedPrioritySet structure for structure (when the state offers it) and the
    fast lazy heap agree on a zone-heavy case with pending standbys."""
    document = json.loads((DATA / "should_do_the_partial_rack_awareness.json").read_text())[
        "scenario"
    ]
    document = {**document, "stateful_tasks": [f"{s}_{p}" for s in range(3) for p in range(7)]}
    literal = AssignmentState(parse_cluster_state(document), literal=True)
    fast = AssignmentState(parse_cluster_state(document))
    for state in (literal, fast):
        for i, task in enumerate(state.stateful_tasks):
            state.assign_active(i % state.num_clients, task)
        ClientTagAwareStandbyTaskAssignor().assign(state)
    assert literal.standby == fast.standby


# -- properties ---------------------------------------------------------------------------------


@st.composite
def zoned_clusters(draw: st.DrawFn) -> dict[str, Any]:
    zones = draw(st.integers(2, 4))
    replicas = draw(st.integers(1, zones - 1))  # enough zones for every copy
    n_clients = draw(st.integers(zones, 9))
    zone_of = [i % zones for i in range(zones)] + draw(
        st.lists(st.integers(0, zones - 1), min_size=n_clients - zones, max_size=n_clients - zones)
    )
    capacities = draw(st.lists(st.integers(1, 3), min_size=n_clients, max_size=n_clients))
    n_tasks = draw(st.integers(1, 24))
    extra_tag = draw(st.booleans())
    clients = []
    for i in range(n_clients):
        tags = {"zone": f"z{zone_of[i]}"}
        if extra_tag:
            tags["host"] = f"h{i}"  # present on the clients but not configured: ignored
        clients.append(
            {
                "id": str(uuid.UUID(int=draw(st.integers(1, 2**128 - 1)))),
                "capacity": capacities[i],
                "tags": tags,
            }
        )
    if len({c["id"] for c in clients}) < n_clients:
        for i, c in enumerate(clients):
            c["id"] = str(uuid.UUID(int=i + 1))
    return {
        "configs": {"num_standby_replicas": replicas, "rack_aware_assignment_tags": ["zone"]},
        "stateful_tasks": [f"{t % 3}_{t // 3}" for t in range(n_tasks)],
        "clients": clients,
    }


@settings(max_examples=60, deadline=None)
@given(zoned_clusters())
def test_no_zone_holds_two_copies_while_enough_zones_exist(document: dict[str, Any]) -> None:
    """Fresh cluster (no lags: no movements), one tag key with more values than copies: the
    active and every standby of a task sit in distinct zones, after balancing too."""
    cluster = parse_cluster_state(document)
    zone = {c.id: c.tags["zone"] for c in cluster.clients}
    result = assign(cluster)
    replicas = cluster.configs.num_standby_replicas
    for task in cluster.stateful_tasks:
        holders = [
            cid for cid, c in result.clients.items() if task in c.active or task in c.standby
        ]
        assert len(holders) == replicas + 1
        assert len({zone[cid] for cid in holders}) == len(holders), (task, holders)


@settings(max_examples=40, deadline=None)
@given(zoned_clusters(), st.randoms(use_true_random=False))
def test_tag_aware_step_spreads_copies_for_any_active_layout(
    document: dict[str, Any], rng: Any
) -> None:
    """The standby assigner alone, actives placed anywhere: copies still go to distinct zones."""
    state = AssignmentState(parse_cluster_state(document))
    for task in state.stateful_tasks:
        state.assign_active(rng.randrange(state.num_clients), task)
    ClientTagAwareStandbyTaskAssignor().assign(state)
    zones = [c.tags["zone"] for c in state.cluster.clients]
    for task in state.stateful_tasks:
        holders = [c for c in range(state.num_clients) if state.has_assigned(c, task)]
        assert len(holders) == state.cluster.configs.num_standby_replicas + 1
        assert len({zones[c] for c in holders}) == len(holders)
