"""Tasks to threads and cooperative revocation (``StreamsPartitionAssignor``).

Scenario cases are data files in ``tests/data/threads/`` (format in its README): the ported
``StreamsPartitionAssignorTest`` thread-level cases and the revocation cases (immediate
follow-up, temporary standby, probing deadline). Properties check balance within a client and
the cooperative safety rule on random inputs.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streams_assign.assignors import assign
from streams_assign.assignors.threads import assign_tasks_to_threads, java_string_key
from streams_assign.errors import InvalidScenarioError
from streams_assign.model import TaskId

DATA = Path(__file__).resolve().parents[1] / "data" / "threads"
CASES = sorted(p.stem for p in DATA.glob("*.json") if p.stem != "jdk_collection_orders")


def pid(name: str) -> str:
    """``"P3"`` -> ``00000000-0000-0000-0000-000000000003``; a full process id is kept."""
    if name.startswith("P") and name[1:].isdigit():
        return str(uuid.UUID(int=int(name[1:])))
    return name


def load(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"{name}.json").read_text())


def run(document: dict[str, Any]) -> dict[str, Any]:
    return assign(document).to_json()


def consumers_of(output: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    return {
        m: roles for c in output["clients"].values() for m, roles in c.get("consumers", {}).items()
    }


@pytest.mark.parametrize("name", CASES)
def test_thread_case(name: str) -> None:
    case = load(name)
    expect = case["expect"]
    output = run(case["scenario"])
    consumers = consumers_of(output)
    for member, roles in expect.get("consumers", {}).items():
        for role, tasks in roles.items():
            assert consumers[member][role] == tasks, (member, role)
    for member, tasks in expect.get("active_superset", {}).items():
        assert set(tasks) <= set(consumers[member]["active"]), member
    for member, tasks in expect.get("active_subset", {}).items():
        assert set(consumers[member]["active"]) <= set(tasks), member
    for member, count in expect.get("active_count", {}).items():
        assert len(consumers[member]["active"]) == count, member
    if "next_rebalance_ms" in expect:
        assert output["next_rebalance_ms"] == expect["next_rebalance_ms"]
    for name_, roles in expect.get("clients", {}).items():
        for role, tasks in roles.items():
            assert output["clients"][pid(name_)][role] == tasks, (name_, role)
    if "probing_rebalance_needed" in expect:
        assert output["probing_rebalance_needed"] is expect["probing_rebalance_needed"]


def test_without_owned_partitions_there_are_no_revocation_fields() -> None:
    output = run(load("should_interleave_tasks_by_group_id_during_new_assignment")["scenario"])
    assert "next_rebalance_ms" not in output
    assert all("revoking" not in roles for roles in consumers_of(output).values())


def test_remainder_is_dealt_in_priority_queue_array_order() -> None:
    """Java iterates the heap array, not sorted order. After heapifying
    [0_0, 0_2, 0_3, 0_6, 0_5, 0_4, 0_1] and four polls, JDK 17's array is [0_4, 0_6, 0_5]
    (checked with java.util.PriorityQueue), so c2 gets 0_6 and c3 gets 0_5."""
    tasks = [TaskId(0, p) for p in (0, 2, 3, 6, 5, 4, 1)]
    result = assign_tasks_to_threads(tasks, False, ["c1", "c2", "c3", "c4"], lambda c: [], {})
    assert {c: [str(t) for t in ts] for c, ts in result.items()} == {
        "c1": ["0_0", "0_4"],
        "c2": ["0_1", "0_6"],
        "c3": ["0_2", "0_5"],
        "c4": ["0_3"],
    }


def test_thread_load_is_shared_across_calls() -> None:
    """Standbys go first to the thread that got fewer actives (Kafka's threadLoad)."""
    load_: dict[str, int] = {}
    actives = assign_tasks_to_threads(
        [TaskId(0, p) for p in range(3)], True, ["a", "b"], lambda c: [], load_
    )
    standbys = assign_tasks_to_threads([TaskId(1, 0)], True, ["a", "b"], lambda c: [], load_)
    assert [len(actives["a"]), len(actives["b"])] == [2, 1]
    assert standbys == {"a": [], "b": [TaskId(1, 0)]}
    assert load_ == {"a": 2, "b": 2}


def test_consumers_are_ordered_as_java_strings() -> None:
    assert sorted(["t-10", "t-2", "T-3"], key=java_string_key) == ["T-3", "t-10", "t-2"]
    # Java compares UTF-16 code units: a supplementary character (surrogate 0xD83D...) sorts
    # before U+FFFD, unlike Python's code-point order.
    assert sorted(["\ufffd", "\U0001f600"], key=java_string_key) == ["\U0001f600", "\ufffd"]


# -- validation of the revocation extensions ------------------------------------------------------


def _revocation_case() -> dict[str, Any]:
    return load("temporary_standby_for_revoked_stateful_task")["scenario"]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d.pop("task_partitions"), "task_partitions"),
        (lambda d: d.update(task_partitions={"0_0": "input-0"}), "task_partitions.0_0"),
        (lambda d: d.update(task_partitions={"0_0": [["input", -1]]}), "task_partitions.0_0[0]"),
        (
            lambda d: d.update(task_partitions={"0_0": [["input", 0]], "0_1": [["input", 0]]}),
            "task_partitions.0_1[0]",
        ),
        (lambda d: d.update(task_partitions={"0_0": [["input", 0]]}), "task_partitions.0_1"),
        (lambda d: d.update(leader="not-a-member"), "leader"),
        (lambda d: d.update(now_ms=-1), "now_ms"),
    ],
)
def test_invalid_revocation_extensions_name_the_path(change: Any, path: str) -> None:
    document = _revocation_case()
    change(document)
    with pytest.raises(InvalidScenarioError) as info:
        run(document)
    assert info.value.path == path


def test_probing_deadline_needs_a_clock() -> None:
    document = load("probing_deadline_on_first_consumer_of_leader_client")["scenario"]
    del document["now_ms"]
    with pytest.raises(InvalidScenarioError) as info:
        run(document)
    assert info.value.path == "now_ms"


def test_leader_may_be_given_as_a_member_id() -> None:
    document = load("probing_deadline_on_first_consumer_of_leader_client")["scenario"]
    document["leader"] = "a1"
    assert run(document)["next_rebalance_ms"] == {"a1": 1600000}


def test_without_leader_no_probing_deadline_is_encoded() -> None:
    document = load("probing_deadline_on_first_consumer_of_leader_client")["scenario"]
    del document["leader"]
    output = run(document)
    assert output["probing_rebalance_needed"] is True
    assert output["next_rebalance_ms"] == {}


# -- properties -----------------------------------------------------------------------------------


@st.composite
def threaded_clusters(draw: st.DrawFn, owned: bool) -> dict[str, Any]:
    """Random clients with threads, previous tasks per thread and (optionally) the partitions
    each thread still owns: every previously active task's partition, owned by its thread."""
    n_subs = draw(st.integers(1, 3))
    n_parts = draw(st.integers(1, 8))
    tasks = [f"{s}_{p}" for s in range(n_subs) for p in range(n_parts)]
    stateful = [t for t in tasks if draw(st.booleans())]
    stateless = [t for t in tasks if t not in stateful]
    n_clients = draw(st.integers(1, 4))
    members: list[tuple[int, str]] = []
    clients: list[dict[str, Any]] = []
    for c in range(n_clients):
        threads = draw(st.integers(1, 4))
        names = [f"app-{c}-StreamThread-{draw(st.integers(1, 12))}-{i}" for i in range(threads)]
        members += [(c, name) for name in names]
        clients.append(
            {"id": str(uuid.UUID(int=c + 1)), "consumers": [{"member_id": n} for n in names]}
        )
    previous_owner = {t: draw(st.sampled_from(members)) for t in tasks if draw(st.booleans())}
    by_member: dict[str, dict[str, Any]] = {
        m["member_id"]: m for client in clients for m in client["consumers"]
    }
    for task, (c, member) in previous_owner.items():
        by_member[member].setdefault("prev_active", []).append(task)
        clients[c].setdefault("task_lags", {})
        if task in stateful:
            clients[c]["task_lags"][task] = -2
        if owned:
            by_member[member].setdefault("owned_partitions", []).append(
                [f"t{task[0]}", int(task.split("_")[1])]
            )
    for task in stateful:  # some standby state elsewhere
        if draw(st.booleans()) and n_clients > 1:
            c = draw(st.integers(0, n_clients - 1))
            member = draw(st.sampled_from([m for cc, m in members if cc == c]))
            if task not in by_member[member].get("prev_active", []) and task not in clients[c].get(
                "task_lags", {}
            ):
                by_member[member].setdefault("prev_standby", []).append(task)
                clients[c].setdefault("task_lags", {})[task] = draw(st.integers(0, 20000))
    document: dict[str, Any] = {
        "configs": {"num_standby_replicas": draw(st.integers(0, 2))},
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
        "clients": clients,
    }
    if owned:
        document["task_partitions"] = {t: [[f"t{t[0]}", int(t.split("_")[1])]] for t in tasks}
        document["leader"] = clients[0]["id"]
        document["now_ms"] = 0
    return document


@settings(max_examples=60, deadline=None)
@given(threaded_clusters(owned=False))
def test_threads_of_a_client_are_within_one_task_of_each_other(document: dict[str, Any]) -> None:
    output = run(document)
    for client in output["clients"].values():
        roles = client["consumers"].values()
        loads = [len(r["active"]) + len(r["standby"]) for r in roles]
        assert max(loads) - min(loads) <= 1
        assert sorted(t for r in roles for t in r["active"]) == sorted(client["active"])
        assert sorted(t for r in roles for t in r["standby"]) == sorted(client["standby"])


@settings(max_examples=60, deadline=None)
@given(threaded_clusters(owned=True))
def test_revoked_tasks_are_never_active_on_two_consumers(document: dict[str, Any]) -> None:
    output = run(document)
    owner = {
        (topic, part): m["member_id"]
        for c in document["clients"]
        for m in c["consumers"]
        for topic, part in m.get("owned_partitions", [])
    }
    prev_standby = {
        c["id"]: {t for m in c["consumers"] for t in m.get("prev_standby", [])}
        for c in document["clients"]
    }
    active_on: dict[str, list[str]] = {}
    revoked: set[str] = set()
    for client_id, client in output["clients"].items():
        for member, roles in client["consumers"].items():
            for task in roles["active"]:
                active_on.setdefault(task, []).append(member)
                for topic, part in document["task_partitions"][task]:
                    # the cooperative rule: never assign a partition someone else still owns
                    assert owner.get((topic, part), member) == member
            revoking = roles.get("revoking", [])  # absent when no partition is owned at all
            revoked.update(revoking)
            temporary = set(roles["standby"]) & set(revoking)
            assert temporary <= prev_standby[client_id] & set(document["stateful_tasks"])
            assert (output.get("next_rebalance_ms", {}).get(member) == 0) == bool(revoking)
    assert all(len(members) == 1 for members in active_on.values())
    assert not revoked & set(active_on)
