"""Seeded random streams-group states (KIP-1071) for differential tests and benchmarks.

:func:`random_streams_group` draws one state in the format of ``kafka-streams-group/FORMAT.md``
from a ``random.Random``: a group of processes (1-4 stream threads each) with Java-style member
ids (22 URL-safe base64 characters) and process UUIDs, a topology of stateful and stateless
subtopologies, ``num.standby.replicas`` 0-2, and a previous assignment (computed by the twin and
then disturbed) according to one of :data:`KINDS`: fresh start, cold start, restart of all,
rolling bounce, static restart, steady, scale out / in, crashed members or process, topology
growth, standby change, uneven or in-flight prior ownership, warm-ups present, stateless heavy,
more members than tasks, tiny. Reported offset sums cover the whole process's state, a part of
it, or nothing, with ties and dormant state from other processes.

:func:`scale_streams_group` builds the benchmark shape: ``n`` processes of ``threads`` members,
stateful and stateless subtopologies, one standby, a steady previous assignment with offsets.
"""

from __future__ import annotations

import base64
import logging
import random
from typing import Any

from devtools.generators.cluster_states import process_ids
from streams_assign.assignors import streams_group_sticky as sticky_module
from streams_assign.assignors.streams_group_sticky import assign_streams_group
from streams_assign.formats.streams_group import parse_streams_group

__all__ = ["KINDS", "random_streams_group", "scale_streams_group"]

#: The situations :func:`random_streams_group` draws from (the kinds of the shared corpus).
KINDS = (
    "fresh",
    "cold_start",
    "restart_all",
    "rolling_bounce",
    "static_restart",
    "steady",
    "scale_out",
    "scale_in",
    "crash_members",
    "crash_process",
    "topology_grow",
    "standby_change",
    "uneven_prev",
    "in_flight",
    "warmups_present",
    "stateless_heavy",
    "more_members_than_tasks",
    "tiny",
)

Doc = dict[str, Any]


def _member_id(rng: random.Random) -> str:
    """``Uuid.randomUuid().toString()``: URL-safe base64 of 16 bytes, no padding, no ``-``."""
    while True:
        text = base64.urlsafe_b64encode(rng.randbytes(16)).decode().rstrip("=")
        if "-" not in text:
            return text


def _topology(rng: random.Random, kind: str) -> dict[str, dict[str, Any]]:
    if kind == "tiny":
        count, max_parts = rng.randint(1, 4), 3
    elif kind == "more_members_than_tasks":
        count, max_parts = rng.randint(1, 3), 3
    else:
        count, max_parts = rng.randint(1, 12), rng.choice((4, 8, 16, 32))
    stateless_share = 0.8 if kind == "stateless_heavy" else rng.choice((0.0, 0.3, 0.5))
    # Subtopology ids are strings compared as Java Strings; now and then not plain numbers.
    prefix = rng.choice(("", "", "", "s", "Z-", "\u00e9"))
    return {
        f"{prefix}{i}": {
            "partitions": rng.randint(1, max_parts),
            "stateful": rng.random() >= stateless_share,
        }
        for i in range(count)
    }


def _processes(rng: random.Random, kind: str) -> list[list[str]]:
    if kind == "tiny":
        n = rng.randint(1, 3)
    elif kind == "more_members_than_tasks":
        n = rng.randint(4, 12)
    else:
        n = rng.randint(1, 16)
    uneven = rng.random() < 0.5
    processes = [
        process_ids(1, rng) + [_member_id(rng) for _ in range(rng.randint(1, 4) if uneven else 1)]
        for _ in range(n)
    ]
    if rng.random() < 0.1:
        # A process with 9 or more threads: its member map's order takes the full HashMap path.
        processes[0] += [_member_id(rng) for _ in range(rng.randint(8, 16))]
    return processes


def _members(processes: list[list[str]]) -> list[Doc]:
    members = []
    for process in processes:
        for member_id in process[1:]:
            members.append({"member_id": member_id, "process_id": process[0]})
    return members


def _state(topology: Doc, standbys: int, members: list[Doc]) -> Doc:
    return {
        "configs": {"num.standby.replicas": standbys},
        "topology": topology,
        "members": members,
    }


def _apply_decision(state: Doc) -> Doc:
    """Members owning what the twin decides for ``state`` (a settled group).

    The twin's warnings about standbys it cannot place are muted here: this is input
    generation, not a decision anyone asked for.
    """
    logger = logging.getLogger(sticky_module.__name__)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        decision = assign_streams_group(parse_streams_group(state)).to_json()["members"]
    finally:
        logger.setLevel(level)
    members = []
    for member in state["members"]:
        got = decision[member["member_id"]]
        members.append(
            dict(member, active_tasks=got["active"], standby_tasks=got["standby"], warmup_tasks={})
        )
    return dict(state, members=members)


def _report_offsets(rng: random.Random, state: Doc, mode: str) -> None:
    """Fill ``task_offsets``: what each process has on disk (minus the member's own actives)."""
    if mode == "none":
        return
    on_disk: dict[str, dict[tuple[str, int], int]] = {}
    for member in state["members"]:
        disk = on_disk.setdefault(member["process_id"], {})
        for key in ("active_tasks", "standby_tasks"):
            for sub, parts in member.get(key, {}).items():
                if state["topology"].get(sub, {}).get("stateful", True):
                    for p in parts:
                        disk[(sub, p)] = rng.choice((0, 100, 1000, rng.randint(0, 10**6)))
    stateful = [
        (s, p)
        for s, t in state["topology"].items()
        if t["stateful"]
        for p in range(t["partitions"])
    ]
    dormant_share = rng.choice((0.0, 0.05, 0.2))
    for disk in on_disk.values():
        for task in stateful:
            if rng.random() < dormant_share:
                disk.setdefault(task, rng.randint(0, 10**5))
    for member in state["members"]:
        own = {(s, p) for s, parts in member.get("active_tasks", {}).items() for p in parts}
        offsets: dict[str, dict[str, int]] = {}
        for (sub, p), value in sorted(on_disk.get(member["process_id"], {}).items()):
            if (sub, p) in own or (mode == "partial" and rng.random() < 0.3):
                continue
            offsets.setdefault(sub, {})[str(p)] = value
        member["task_offsets"] = offsets


def random_streams_group(rng: random.Random, kind: str | None = None) -> Doc:
    """One random streams-group state document.

    Parameters
    ----------
    rng:
        The source of randomness (seed it to replay a state).
    kind:
        One of :data:`KINDS`; drawn from ``rng`` when ``None``.

    Returns
    -------
    dict
        A document in the input format of ``FORMAT.md``, members in the order Kafka would see.
    """
    kind = kind or rng.choice(KINDS)
    topology = _topology(rng, kind)
    standbys = rng.choice((0, 1, 1, 2))
    processes = _processes(rng, kind)
    base = _state(topology, standbys, _members(processes))
    rng.shuffle(base["members"])
    offsets_mode = rng.choice(("all", "partial", "none"))

    if (
        kind in ("fresh", "tiny", "stateless_heavy", "more_members_than_tasks")
        and rng.random() < 0.5
    ):
        state = base
    else:
        state = _apply_decision(base)

    members: list[Doc] = state["members"]
    if kind in ("cold_start", "restart_all", "static_restart"):
        _report_offsets(rng, state, "all" if kind != "restart_all" else offsets_mode)
        for member in members:
            member["member_id"] = _member_id(rng)
            if kind == "static_restart":
                member["instance_id"] = f"instance-{rng.randint(0, 10**6)}"
            else:
                member["active_tasks"], member["standby_tasks"] = {}, {}
        offsets_mode = "keep"
    elif kind == "rolling_bounce":
        for member in members:
            if rng.random() < 0.3:
                member["member_id"] = _member_id(rng)
                member["active_tasks"], member["standby_tasks"] = {}, {}
    elif kind == "scale_out":
        extra = _members(
            [
                process_ids(1, rng) + [_member_id(rng) for _ in range(rng.randint(1, 4))]
                for _ in range(rng.randint(1, 4))
            ]
        )
        members.extend(extra)
    elif kind == "scale_in" or kind == "crash_process":
        gone = {m["process_id"] for m in members if rng.random() < 0.3}
        if len(gone) == len({m["process_id"] for m in members}):
            # Every process drew "gone": the first member's stays (not set.pop(), whose pick
            # follows the string hash seed of the interpreter).
            gone.discard(members[0]["process_id"])
        state["members"] = members = [m for m in members if m["process_id"] not in gone]
    elif kind == "crash_members":
        keep = [m for m in members if rng.random() >= 0.25]
        state["members"] = members = keep or members[:1]
    elif kind == "topology_grow":
        for spec in topology.values():
            if rng.random() < 0.5:
                spec["partitions"] += rng.randint(1, 4)
        topology[str(len(topology))] = {"partitions": rng.randint(1, 8), "stateful": True}
    elif kind == "standby_change":
        state["configs"]["num.standby.replicas"] = rng.choice(
            [s for s in (0, 1, 2) if s != standbys]
        )
    elif kind == "uneven_prev":
        for member in members:
            if rng.random() < 0.3:
                member["active_tasks"] = {}
        if members:
            hog = rng.choice(members)
            for sub, spec in topology.items():
                hog["active_tasks"][sub] = sorted(
                    rng.sample(range(spec["partitions"]), k=spec["partitions"] // 2)
                )
    elif kind == "in_flight":
        for member in members:
            for key in ("active_tasks", "standby_tasks"):
                member[key] = {
                    s: [p for p in ps if rng.random() >= 0.3]
                    for s, ps in member.get(key, {}).items()
                }
    elif kind == "warmups_present":
        for member in members:
            if rng.random() < 0.3 and topology:
                sub = rng.choice(list(topology))
                member["warmup_tasks"] = {sub: [rng.randrange(topology[sub]["partitions"])]}

    if offsets_mode != "keep":
        _report_offsets(rng, state, offsets_mode)
    if rng.random() < 0.1 and members:
        # A member naming a subtopology or partition the topology no longer has.
        members[0].setdefault("active_tasks", {})["99"] = [0]
    if rng.random() < 0.5:
        rng.shuffle(members)
    for member in members:
        for key in ("active_tasks", "standby_tasks", "warmup_tasks"):
            member[key] = {s: sorted(set(ps)) for s, ps in member.get(key, {}).items() if ps}
        member.setdefault("task_offsets", {})
    state["meta"] = {"kind": kind, "members": len(members)}
    return state


def scale_streams_group(
    rng: random.Random,
    processes: int,
    threads: int = 4,
    stateful_tasks: int = 2000,
    stateless_tasks: int = 1000,
    standbys: int = 1,
) -> Doc:
    """A steady group of ``processes`` x ``threads`` members for timings.

    Parameters
    ----------
    rng:
        Source of the ids and offsets.
    processes, threads:
        Number of processes and stream threads (members) per process.
    stateful_tasks, stateless_tasks:
        Approximate task counts (split evenly over 20 and 10 subtopologies).
    standbys:
        ``num.standby.replicas``.

    Returns
    -------
    dict
        A streams-group state document (members shuffled).

    The topology has 20 stateful and 10 stateless subtopologies sharing ``stateful_tasks`` and
    ``stateless_tasks``; the previous assignment is the twin's own decision, and every member
    reports the offset sums of the state its process holds (half of the standbys caught up,
    the others lagging).
    """
    topology: dict[str, dict[str, Any]] = {}
    for i in range(20):
        topology[str(i)] = {"partitions": max(1, stateful_tasks // 20), "stateful": True}
    for i in range(20, 30):
        topology[str(i)] = {"partitions": max(1, stateless_tasks // 10), "stateful": False}
    procs = [
        process_ids(1, rng) + [_member_id(rng) for _ in range(threads)] for _ in range(processes)
    ]
    state = _apply_decision(_state(topology, standbys, _members(procs)))
    for member in state["members"]:
        offsets: dict[str, dict[str, int]] = {}
        for sub, parts in member["standby_tasks"].items():
            for p in parts:
                offsets.setdefault(sub, {})[str(p)] = (
                    10_000 if rng.random() < 0.5 else rng.randint(0, 9_000)
                )
        member["task_offsets"] = offsets
    rng.shuffle(state["members"])
    return state
