"""How the twin reads and writes task maps: the decision does not depend on the form of the
members' maps, targets are always in the output's form, and an unchanged member's target is
its own map (no JVM needed)."""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from devtools.generators.streams_groups import KINDS, random_streams_group, scale_streams_group
from streams_assign.assignors import streams_group_sticky as twin
from streams_assign.assignors.streams_group_sticky import assign_streams_group
from streams_assign.formats.streams_group import parse_streams_group
from streams_assign.streams_group import (
    StreamsGroupAssignment,
    StreamsGroupConfigs,
    StreamsGroupState,
    TaskSet,
    java_string_order,
)

STATES = st.builds(
    lambda seed, kind: parse_streams_group(random_streams_group(random.Random(seed), kind)),
    st.integers(min_value=0, max_value=2**32 - 1),
    st.sampled_from(KINDS),
)


def _form(decision: StreamsGroupAssignment) -> list[Any]:
    """The decision with every order and type spelled out (``==`` on dicts ignores order)."""

    def task_map(tasks: TaskSet) -> tuple[str, list[Any]]:
        return type(tasks).__name__, [(s, type(ps).__name__, ps) for s, ps in tasks.items()]

    return [
        (m, task_map(a.active), task_map(a.standby), task_map(a.warmup))
        for m, a in decision.members.items()
    ]


def _canonical(tasks: TaskSet) -> dict[str, tuple[int, ...]]:
    return {
        s: tuple(sorted(set(tasks[s]))) for s in sorted(tasks, key=java_string_order) if tasks[s]
    }


def _reform(rng: random.Random, tasks: TaskSet) -> Any:
    """The same tasks in another form: keys reversed, partitions reversed or repeated, lists,
    other mapping types, an empty list."""
    change = rng.randrange(7)
    if change == 0:
        return dict(reversed(list(tasks.items())))
    if change == 1:
        return {s: tuple(reversed(ps)) for s, ps in tasks.items()}
    if change == 2:
        return {s: list(ps) for s, ps in tasks.items()}
    if change == 3:
        return MappingProxyType(dict(tasks))
    if change == 4:
        return OrderedDict(tasks)
    if change == 5 and tasks:
        first = next(iter(tasks))
        return {**tasks, first: (*tasks[first], *tasks[first][:1])}
    if not tasks.get("0"):
        return {**tasks, "0": ()}  # an empty list names no task
    return dict(tasks)


def _reformed(state: StreamsGroupState, seed: int) -> StreamsGroupState:
    rng = random.Random(seed)
    members = tuple(
        replace(
            m,
            active_tasks=_reform(rng, m.active_tasks),
            standby_tasks=_reform(rng, m.standby_tasks),
        )
        for m in state.members
    )
    return replace(state, members=members)


def _canonicalized(state: StreamsGroupState) -> StreamsGroupState:
    members = tuple(
        replace(
            m,
            active_tasks=_canonical(m.active_tasks),
            standby_tasks=_canonical(m.standby_tasks),
        )
        for m in state.members
    )
    return replace(state, members=members)


@settings(max_examples=150, deadline=None)
@given(STATES, st.integers(min_value=0, max_value=2**32 - 1), st.sampled_from((None, 2, 3)))
def test_decision_and_its_form_do_not_depend_on_the_form_of_owned_tasks(
    state: StreamsGroupState, seed: int, replicas: int | None
) -> None:
    # Reordered keys and partitions, repeated partitions, lists, other mapping types and empty
    # lists name the same owned tasks: the decision is the same, written in the same form.
    if replicas is not None:
        state = replace(state, configs=StreamsGroupConfigs(num_standby_replicas=replicas))
    expected = _form(assign_streams_group(_canonicalized(state)))
    assert _form(assign_streams_group(_reformed(state, seed))) == expected
    assert _form(assign_streams_group(state)) == expected


@settings(max_examples=50, deadline=None)
@given(STATES)
def test_targets_are_in_output_form(state: StreamsGroupState) -> None:
    # Subtopologies in Java String order, partitions rising in tuples, no empty entry, dicts.
    for target in assign_streams_group(state).members.values():
        for tasks in (target.active, target.standby, target.warmup):
            assert type(tasks) is dict
            assert list(tasks) == sorted(tasks, key=java_string_order)
            assert all(
                type(ps) is tuple and ps and list(ps) == sorted(set(ps)) for ps in tasks.values()
            )


def test_a_member_given_what_it_owns_gets_its_own_maps_back() -> None:
    # In a settled group most members keep their tasks: each such target is the member's own
    # map object; a changed target is a new map.
    state = parse_streams_group(scale_streams_group(random.Random(3), processes=25, threads=4))
    decision = assign_streams_group(state)
    kept = 0
    for member in state.members:
        target = decision.members[member.member_id]
        for owned, targeted in (
            (member.active_tasks, target.active),
            (member.standby_tasks, target.standby),
        ):
            assert (targeted is owned) == (targeted == owned)
            kept += targeted is owned
    assert kept >= 0.9 * 2 * len(state.members)


def test_a_member_whose_tasks_change_gets_a_new_map() -> None:
    # One member more: some members lose tasks to it, and none of the changed targets is
    # an input map.
    document = scale_streams_group(random.Random(3), processes=25, threads=4)
    document["members"].append({"member_id": "new-member", "process_id": "new-process"})
    state = parse_streams_group(document)
    decision = assign_streams_group(state)
    changed = 0
    for member in state.members:
        target = decision.members[member.member_id]
        if target.active != member.active_tasks:
            changed += 1
            assert target.active is not member.active_tasks
    assert changed > 0


@settings(max_examples=200, deadline=None)
@given(STATES)
def test_first_active_loop_at_once_equals_the_loop(state: StreamsGroupState) -> None:
    # Where no quota can refuse a previous owner, placing every task at once leaves the same
    # counts, quotas and remaining tasks as Kafka's task-by-task loop.
    numbering = twin._TaskNumbering(state)
    at_once = twin._initialize(state, numbering)
    remaining = twin._keep_previous_owners(at_once, numbering.by_partition)
    if remaining is None:
        return
    loop = twin._initialize(state, numbering)
    assert remaining == twin._assign_to_previous_active_owners(loop, numbering.by_partition)
    for field in (
        "counts",
        "active_tasks_per_member",
        "total_tasks_per_member",
        "total_active_tasks",
        "total_tasks",
        "total_members_with_active_task_capacity",
        "total_members_with_task_capacity",
    ):
        assert getattr(at_once, field) == getattr(loop, field), field
