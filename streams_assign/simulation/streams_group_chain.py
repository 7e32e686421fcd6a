"""Every target computation a change causes in a streams group (KIP-1071), not just the next one.

The group coordinator of a streams group computes a new target assignment whenever the group
epoch moved and ``group.streams.assignment.interval.ms`` (1 s by default) has passed since the
last computation. So one operator action is a *chain* of computations, each from the state of
that moment (``GroupMetadataManager``, ``TargetAssignmentBuilder``, KIP-1071):

- **kill** (``kill -9``): the process's members stay until their session expires
  (``streams.session.timeout.ms``); then one computation without them. The survivors hold their
  current tasks. The sessions of a process's threads expire apart when their last heartbeats
  were apart; a computation between two expiries splits the kill in two
  (``ChainChange.leaving_first``; :func:`split_expiries` lists every such split).
- **leave** (a clean close, a scale-in): the same computation at once.
- **join** of a process with N stream threads: its members join one at a time, a few ms apart.
  The first member triggers a computation (the others have not joined yet); the rest join within
  the assignment interval and are in the next computation, an interval later. By then the
  group is mid-reconciliation: members gave up what the first target took from them, but a task
  moved as an active from one member to another is only *released* when its old owner has
  revoked it, which takes a heartbeat or two. ``reconciliation`` names the assumption:
  ``"full"`` (every member holds its whole target) or ``"released-only"`` (a member holds what
  it kept, its new standbys, and new actives nobody held before).
- **bounce** (a restart): a leave, then a join of the same process id with new member ids.

New member ids (and a fresh instance's process id) are drawn at random by Kafka
(``Uuid.randomUuid``), and member ids order the broker's ``HashMap`` of members, so the result of
a join can depend on them. :func:`id_dependence` re-runs a chain with other random ids and says
whether each computation's result per process (the union of its threads' tasks) and per thread
depends on them.
"""

from __future__ import annotations

import base64
import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from streams_assign.assignors.streams_group_sticky import assign_streams_group
from streams_assign.java.hash_order import JavaHashMap, java_string_hash_code
from streams_assign.streams_group import (
    StreamsGroupAssignment,
    StreamsGroupMember,
    StreamsGroupState,
    TaskSet,
)

__all__ = [
    "ChainChange",
    "Computation",
    "StreamsGroupChain",
    "id_dependence",
    "kafka_member_id",
    "predict_chain",
    "split_expiries",
]

Reconciliation = Literal["full", "released-only"]


@dataclass(frozen=True, slots=True)
class ChainChange:
    """One operator action on a streams group.

    Attributes
    ----------
    kind:
        ``"kill"``, ``"leave"``, ``"join"`` or ``"bounce"``.
    process_id:
        The process killed, leaving, joining or restarted (a new one for a fresh instance).
    threads:
        Stream threads of a joining (or restarted) process.
    member_ids:
        Member ids of the joining threads in join order; random ones (:func:`kafka_member_id`)
        when not given.
    task_offsets:
        Offset sums the joining process reports (subtopology -> partition -> records), the same
        for each of its threads.
    first_alone:
        Threads in the first computation of a join (1: the first thread alone, Kafka's usual
        case; ``threads``: all in one computation).
    leaving_first:
        Members of a killed or leaving process already gone at the first computation (default:
        all of them, as when their sessions expire together); the others are gone at the next
        one, an assignment interval later (a clean close leaves thread by thread).
    """

    kind: Literal["kill", "leave", "join", "bounce"]
    process_id: str
    threads: int = 1
    member_ids: tuple[str, ...] | None = None
    task_offsets: Mapping[str, Mapping[int, int]] | None = None
    first_alone: int = 1
    leaving_first: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Computation:
    """One target computation: the state the assignor saw and what it decided."""

    trigger: str
    state: StreamsGroupState
    target: StreamsGroupAssignment


@dataclass(frozen=True, slots=True)
class StreamsGroupChain:
    """The computations of a change, in order, and the member ids the prediction used."""

    computations: tuple[Computation, ...]
    new_member_ids: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"new_member_ids", "computations": [{"trigger", "members", "target"}]}``."""
        return {
            "new_member_ids": list(self.new_member_ids),
            "computations": [
                {
                    "trigger": c.trigger,
                    "members": [m.member_id for m in c.state.members],
                    "target": c.target.to_json()["members"],
                }
                for c in self.computations
            ],
        }


def kafka_member_id(rng: random.Random) -> str:
    """A member id as Kafka draws one: a random ``Uuid`` in URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")


def _ordered(members: Sequence[StreamsGroupMember]) -> tuple[StreamsGroupMember, ...]:
    table: JavaHashMap[str, StreamsGroupMember] = JavaHashMap(java_string_hash_code)
    for member in members:
        table.put(member.member_id, member)
    return tuple(table[m] for m in table)


def _with_members(state: StreamsGroupState, members: Sequence[StreamsGroupMember]) -> Any:
    return replace(state, members=_ordered(members))


def _compute(trigger: str, state: StreamsGroupState) -> Computation:
    return Computation(trigger, state, assign_streams_group(state))


def _tasks(task_set: TaskSet) -> set[tuple[str, int]]:
    return {(s, p) for s, ps in task_set.items() for p in ps}


def _grouped(tasks: set[tuple[str, int]]) -> dict[str, tuple[int, ...]]:
    out: dict[str, list[int]] = {}
    for s, p in sorted(tasks):
        out.setdefault(s, []).append(p)
    return {s: tuple(ps) for s, ps in out.items()}


def _reconcile(
    computation: Computation, reconciliation: Reconciliation
) -> list[StreamsGroupMember]:
    """The members after a target, as the next computation sees them."""
    before = {m.member_id: m for m in computation.state.members}
    held_active = {t: m.member_id for m in before.values() for t in _tasks(m.active_tasks)}
    out = []
    for member_id, target in computation.target.members.items():
        member = before[member_id]
        active = _tasks(target.active)
        if reconciliation == "released-only":
            own = _tasks(member.active_tasks)
            active = {t for t in active if t in own or held_active.get(t) in (None, member_id)}
        out.append(
            replace(member, active_tasks=_grouped(active), standby_tasks=dict(target.standby))
        )
    return out


def predict_chain(
    state: StreamsGroupState,
    change: ChainChange,
    *,
    reconciliation: Reconciliation = "released-only",
    seed: int = 0,
) -> StreamsGroupChain:
    """The target computations ``change`` causes, from a (stable) group ``state``.

    Parameters
    ----------
    state:
        The group now (``streams-lag streams-group`` writes it): members with their current
        tasks and last offsets reports.
    change:
        The action.
    reconciliation:
        What members hold at the second computation of a join (see the module docstring).
    seed:
        Seed of the random member ids drawn when ``change.member_ids`` is not given.

    Returns
    -------
    StreamsGroupChain

    Raises
    ------
    ValueError
        A kill, leave or bounce of a process that has no member, a join of a process that has
        members, fewer member ids than threads, or ``first_alone`` outside ``1..threads``.
    TaskAssignorException
        From the assignor, for a group left without members.
    """
    rng = random.Random(seed)
    members = list(state.members)
    present = {m.process_id for m in members}
    computations: list[Computation] = []
    if change.kind in ("kill", "leave", "bounce"):
        if change.process_id not in present:
            raise ValueError(f"process {change.process_id} has no member in the group")
        leaving = {m.member_id for m in members if m.process_id == change.process_id}
        first_gone = set(change.leaving_first) if change.leaving_first is not None else leaving
        if not first_gone or not first_gone <= leaving:
            raise ValueError(f"leaving_first {sorted(first_gone)} not members of the process")
        trigger = "session expiry" if change.kind == "kill" else "leave"
        members = [m for m in members if m.member_id not in first_gone]
        computations.append(
            _compute(f"{trigger} of {len(first_gone)} member(s)", _with_members(state, members))
        )
        if first_gone != leaving:
            rest = [
                m
                for m in _reconcile(computations[-1], reconciliation)
                if m.member_id not in leaving
            ]
            computations.append(
                _compute(f"{trigger} of the other member(s)", _with_members(state, rest))
            )
        if change.kind != "bounce":
            return StreamsGroupChain(tuple(computations), ())
        members = _reconcile(computations[-1], "full")
        members = [m for m in members if m.member_id not in leaving]
    elif change.process_id in present:
        raise ValueError(f"process {change.process_id} already has members: bounce it instead")
    ids = change.member_ids or tuple(kafka_member_id(rng) for _ in range(change.threads))
    if len(ids) < change.threads:
        raise ValueError(f"{len(ids)} member ids for {change.threads} threads")
    if not 1 <= change.first_alone <= change.threads:
        raise ValueError(f"first_alone {change.first_alone} outside 1..{change.threads}")
    offsets = {s: dict(p) for s, p in (change.task_offsets or {}).items()}
    new = [
        StreamsGroupMember(member_id=i, process_id=change.process_id, task_offsets=offsets)
        for i in ids
    ]
    first = _compute(
        f"join of {change.process_id}: {change.first_alone} of {change.threads} thread(s)",
        _with_members(state, members + new[: change.first_alone]),
    )
    computations.append(first)
    if change.first_alone < change.threads:
        reconciled = _reconcile(first, reconciliation)
        computations.append(
            _compute(
                f"join of {change.process_id}: all {change.threads} threads, "
                f"{reconciliation} reconciliation",
                _with_members(state, reconciled + new[change.first_alone :]),
            )
        )
    return StreamsGroupChain(tuple(computations), tuple(ids))


def id_dependence(
    state: StreamsGroupState,
    change: ChainChange,
    *,
    reconciliation: Reconciliation = "released-only",
    draws: int = 20,
    seed: int = 0,
    fresh_process: bool = False,
) -> list[dict[str, bool]]:
    """Whether each computation of a chain depends on the random new member (and process) ids.

    Re-runs :func:`predict_chain` with ``draws`` sets of random member ids (and, when
    ``fresh_process``, a random process id for the joining process) and compares every
    computation with the first draw: per process, the union of each process's tasks (the new
    process matched by position); per thread, the tasks of every old member plus the multiset of
    the new members' tasks.

    Returns
    -------
    list of dict
        One ``{"per_process": bool, "per_thread": bool}`` per computation: True when some draw
        changed that view of the result.
    """
    rng = random.Random(seed)
    views: list[list[tuple[Any, Any]]] = []
    for _ in range(draws):
        process = str(uuid.UUID(int=rng.getrandbits(128), version=4)) if fresh_process else None
        ids = tuple(kafka_member_id(rng) for _ in range(change.threads))
        drawn = replace(change, member_ids=ids, process_id=process or change.process_id)
        chain = predict_chain(state, drawn, reconciliation=reconciliation)
        views.append([_views(c, drawn.process_id, set(ids)) for c in chain.computations])
    first = views[0]
    return [
        {
            "per_process": any(v[i][0] != first[i][0] for v in views[1:]),
            "per_thread": any(v[i][1] != first[i][1] for v in views[1:]),
        }
        for i in range(len(first))
    ]


#: Threads of a killed process up to which :func:`split_expiries` tries every first set; above
#: it, one thread first at a time.
SPLIT_SUBSETS_MAX_THREADS = 4


def split_expiries(
    state: StreamsGroupState,
    change: ChainChange,
    *,
    reconciliation: Reconciliation = "released-only",
) -> list[dict[str, Any]]:
    """The kill's other chains: its process's sessions expiring apart, two computations.

    Kafka's coordinator fences each member when its own session expires (from its own last
    heartbeat) and computes a target when the group epoch moved and the assignment interval has
    passed, so when a computation falls between two expiries the kill is two computations: the
    first without the members already fenced, the next (an interval later) without the rest
    (``docs/streams-group.md``: two threads fenced 257 ms apart gave two computations). For a
    kill of a process with two or more members this re-runs :func:`predict_chain` with every
    non-empty proper subset of its members fenced first (one member at a time above
    :data:`SPLIT_SUBSETS_MAX_THREADS` threads) and compares the last computation's target
    with the one-computation chain's.

    Returns
    -------
    list of dict
        Per split, in member-id order of the first set: ``first`` (member ids fenced first),
        ``computations`` (2), ``final_equal_per_process`` (each surviving process gets the
        same active and standby tasks), ``final_equal_per_thread`` (each surviving member
        gets the same tasks) and ``actives_on_other_members`` (tasks whose active member
        differs from the one-computation chain's final target). Empty for any other change
        or a process of one member.

    Raises
    ------
    ValueError
        As :func:`predict_chain` does.
    """
    if change.kind != "kill" or change.leaving_first is not None:
        return []
    members = sorted(m.member_id for m in state.members if m.process_id == change.process_id)
    if len(members) < 2:
        return []
    if len(members) <= SPLIT_SUBSETS_MAX_THREADS:
        firsts = [
            tuple(m for i, m in enumerate(members) if mask >> i & 1)
            for mask in range(1, (1 << len(members)) - 1)
        ]
        firsts.sort(key=lambda f: (len(f), f))
    else:
        firsts = [(m,) for m in members]
    whole = predict_chain(state, change, reconciliation=reconciliation).computations[-1]
    base_process, base_thread = _views(whole, "", set())
    base_active = _active_members(whole)
    out = []
    for first in firsts:
        split = predict_chain(
            state, replace(change, leaving_first=first), reconciliation=reconciliation
        )
        last = split.computations[-1]
        per_process, per_thread = _views(last, "", set())
        active = _active_members(last)
        out.append(
            {
                "first": list(first),
                "computations": len(split.computations),
                "final_equal_per_process": per_process == base_process,
                "final_equal_per_thread": per_thread == base_thread,
                "actives_on_other_members": sum(
                    1 for t, m in active.items() if base_active.get(t) != m
                ),
            }
        )
    return out


def _active_members(c: Computation) -> dict[tuple[str, int], str]:
    """Task (subtopology, partition) -> the member its target runs it on."""
    return {
        (s, p): member_id
        for member_id, target in c.target.members.items()
        for s, ps in target.active.items()
        for p in ps
    }


def _views(c: Computation, new_process: str, new_ids: set[str]) -> tuple[Any, Any]:
    process_of = {m.member_id: m.process_id for m in c.state.members}
    per_process: dict[str, set[Any]] = {}
    old_threads = {}
    new_threads = []
    for member_id, target in c.target.members.items():
        tasks = (frozenset(_tasks(target.active)), frozenset(_tasks(target.standby)))
        process = process_of[member_id]
        key = "<new>" if process == new_process else process
        per_process.setdefault(key, set()).update(("a", t) for t in tasks[0])
        per_process[key].update(("s", t) for t in tasks[1])
        if member_id in new_ids:
            new_threads.append(tasks)
        else:
            old_threads[member_id] = tasks
    return (
        {k: frozenset(v) for k, v in per_process.items()},
        (old_threads, sorted(new_threads, key=repr)),
    )
