"""The timeline format of ``streams-assign protocol-simulate`` and its runner.

A timeline is a JSON object::

    {"tasks": 100, "assignor": "balanced_sticky",
     "protocols": ["eager", "cooperative"],          // default: both
     "duration_ms": 600000,                          // default: last event + 300000
     "settings": {"session_timeout_ms": 45000, "state_records_per_task": 50000, ...},
     "events": [
       {"t": 0, "type": "start", "members": 4},
       {"t": 60000, "type": "scale_out", "members": 1},
       {"t": 120000, "type": "scale_in", "members": 1},
       {"t": 180000, "type": "crash", "member": "m2", "restart_after_ms": 30000},
       {"t": 240000, "type": "rolling_bounce", "down_ms": 10000, "interval_ms": 30000},
       {"t": 400000, "type": "network_pause", "member": "m3", "duration_ms": 60000},
       {"t": 500000, "type": "add_tasks", "tasks": 10}]}

``settings`` takes the fields of :class:`~streams_assign.protocol.simulator.ProtocolSettings`;
Streams assignors (``high_availability``, ``legacy_sticky``) also read ``acceptable_recovery_lag``,
``max_warmup_replicas`` and ``num_standby_replicas`` from ``settings``. Members are named
``m1``, ``m2``, ... in start order.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from streams_assign.errors import InvalidTimelineError
from streams_assign.protocol.assignors import GroupAssignor, make_assignor
from streams_assign.protocol.simulator import (
    PROTOCOLS,
    REASONS,
    EventReport,
    GroupSimulator,
    ProtocolSettings,
    SimulationResult,
    task_names,
)

__all__ = [
    "DEFAULT_SETTLE_MS",
    "EVENT_TYPES",
    "load_timeline",
    "parse_settings",
    "simulate",
    "validate_timeline",
]

EVENT_TYPES = {
    "start": ("members",),
    "scale_out": ("members",),
    "scale_in": ("members",),
    "crash": ("member",),
    "rolling_bounce": (),
    "network_pause": ("member", "duration_ms"),
    "add_tasks": ("tasks",),
}
_STREAMS_KEYS = ("acceptable_recovery_lag", "max_warmup_replicas", "num_standby_replicas")
_TOP_KEYS = {
    "tasks",
    "assignor",
    "protocols",
    "duration_ms",
    "settings",
    "events",
    "name",
    "description",
}
DEFAULT_SETTLE_MS = 300_000


def _fail(source: str, path: str, message: str) -> InvalidTimelineError:
    return InvalidTimelineError(f"{source}: {path}: {message}")


def _int(value: Any, source: str, path: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise _fail(source, path, f"must be an integer >= {low}, got {value!r}")
    return value


def parse_settings(raw: Any, source: str) -> tuple[ProtocolSettings, dict[str, int]]:
    """``settings`` into :class:`ProtocolSettings` and the Streams assignor configs.

    Raises
    ------
    InvalidTimelineError
        For an unknown key or a value of the wrong type.
    """
    if raw is None:
        return ProtocolSettings(), {}
    if not isinstance(raw, Mapping):
        raise _fail(source, "settings", f"must be an object, got {raw!r}")
    fields = {f.name: f for f in dataclasses.fields(ProtocolSettings)}
    values: dict[str, Any] = {}
    streams: dict[str, int] = {}
    for key, value in raw.items():
        if key in _STREAMS_KEYS:
            streams[key] = _int(value, source, f"settings.{key}")
        elif key not in fields:
            raise _fail(source, f"settings.{key}", f"unknown setting (value {value!r})")
        elif fields[key].type in ("bool", bool):
            if not isinstance(value, bool):
                raise _fail(source, f"settings.{key}", f"must be true or false, got {value!r}")
            values[key] = value
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise _fail(source, f"settings.{key}", f"must be a number >= 0, got {value!r}")
        else:
            values[key] = value
    return ProtocolSettings(**values), streams


def validate_timeline(document: Any, source: str = "<timeline>") -> dict[str, Any]:
    """Check a timeline document; returns it with defaults filled in.

    Raises
    ------
    InvalidTimelineError
        Naming ``source``, the JSON path and the bad value.
    """
    if not isinstance(document, Mapping):
        raise _fail(source, "$", "a timeline must be a JSON object")
    for key in document:
        if key not in _TOP_KEYS:
            raise _fail(source, key, "unknown field")
    doc = dict(document)
    doc["tasks"] = _int(doc.get("tasks"), source, "tasks")
    protocols = doc.get("protocols", list(PROTOCOLS))
    if (
        not isinstance(protocols, list)
        or not protocols
        or any(p not in PROTOCOLS for p in protocols)
    ):
        raise _fail(source, "protocols", f"must list eager and/or cooperative, got {protocols!r}")
    doc["protocols"] = protocols
    events = doc.get("events")
    if not isinstance(events, list) or not events:
        raise _fail(source, "events", f"must be a non-empty list, got {events!r}")
    last = 0
    for i, event in enumerate(events):
        path = f"events[{i}]"
        if not isinstance(event, Mapping):
            raise _fail(source, path, f"must be an object, got {event!r}")
        kind = event.get("type")
        if kind not in EVENT_TYPES:
            raise _fail(
                source, f"{path}.type", f"must be one of {', '.join(EVENT_TYPES)}, got {kind!r}"
            )
        t = _int(event.get("t"), source, f"{path}.t", last)
        last = t
        for key in EVENT_TYPES[kind]:
            if key not in event:
                raise _fail(source, f"{path}.{key}", f"missing for a {kind} event")
        for key in (
            "members",
            "tasks",
            "duration_ms",
            "restart_after_ms",
            "down_ms",
            "interval_ms",
        ):
            if key in event:
                _int(event[key], source, f"{path}.{key}", 1 if key != "restart_after_ms" else 0)
        if "member" in event and not isinstance(event["member"], str):
            raise _fail(source, f"{path}.member", f"must be a member name, got {event['member']!r}")
    doc["duration_ms"] = _int(
        doc.get("duration_ms", last + DEFAULT_SETTLE_MS), source, "duration_ms", last
    )
    parse_settings(doc.get("settings"), source)
    return doc


def load_timeline(path: str | Path) -> dict[str, Any]:
    """Read, parse and validate a timeline file.

    Raises
    ------
    InvalidTimelineError
        If the file is unreadable, not JSON, or breaks the format.
    """
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise InvalidTimelineError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidTimelineError(f"{path}: not JSON: {exc}") from None
    return validate_timeline(document, str(path))


def simulate(
    timeline: Mapping[str, Any],
    protocol: str,
    assignor: GroupAssignor | None = None,
    source: str = "<timeline>",
) -> SimulationResult:
    """Run one validated timeline under ``protocol`` (``eager`` or ``cooperative``).

    Parameters
    ----------
    timeline:
        A document accepted by :func:`validate_timeline`.
    protocol:
        The members' rebalance protocol.
    assignor:
        Overrides the timeline's ``assignor`` (e.g. one of issue #13's, via
        :class:`~streams_assign.protocol.assignors.CallableAssignor`).
    source:
        Named in error messages.

    Returns
    -------
    SimulationResult
        Per event and overall figures; times in milliseconds, unavailability in task-seconds.

    Raises
    ------
    InvalidTimelineError
        For a bad document or an event naming a member that does not exist.
    """
    doc = validate_timeline(timeline, source)
    settings, streams_configs = parse_settings(doc.get("settings"), source)
    if assignor is None:
        assignor = make_assignor(doc.get("assignor", "balanced_sticky"), **streams_configs)
    sim = GroupSimulator(protocol, assignor, settings, task_names(doc["tasks"]))
    started = [0]
    reports: list[EventReport] = []
    marks: list[tuple[Any, int, float]] = []

    def close_window(end: int) -> None:
        if not reports:
            return
        report = reports[-1]
        before, generation_before, restored_before = marks[-1]
        report.rebalances = sim.rebalances - generation_before
        report.records_restored = int(sim.records_restored - restored_before)
        report.generation = sim._last_generation
        report.task_seconds_unavailable = {
            r: round((sim.unavailable_ms[r] - before_r) / 1000.0, 3)
            for r, before_r in zip(REASONS, _split(before), strict=True)
        }
        if sim.stable_since is not None:
            report.time_to_stable_ms = max(0, sim.stable_since - report.t_ms)

    def member_named(name: str, path: str) -> str:
        if name not in sim.members:
            raise _fail(source, path, f"no member {name!r} (members: {', '.join(sim.members)})")
        return name

    for i, event in enumerate(doc["events"]):
        t = event["t"]
        sim.run_until(t)
        close_window(t)
        reports.append(EventReport(index=i, t_ms=t, kind=event["type"]))
        marks.append((_join(sim.unavailable_ms), sim.rebalances, sim.records_restored))
        _apply(sim, event, started, member_named, f"events[{i}]")
        sim._observe()
    sim.run_until(doc["duration_ms"])
    close_window(doc["duration_ms"])
    return sim.result(reports)


def _join(unavailable: Mapping[str, float]) -> Any:
    return tuple(unavailable[r] for r in REASONS)


def _split(values: Any) -> tuple[float, ...]:
    return tuple(values)


def _apply(
    sim: GroupSimulator, event: Mapping[str, Any], started: list[int], member_named: Any, path: str
) -> None:
    kind = event["type"]
    now = sim.now
    if kind in ("start", "scale_out"):
        for _ in range(event["members"]):
            started[0] += 1
            sim.start_member(f"m{started[0]}", keep_state=False)
    elif kind == "scale_in":
        names = sorted((m.name for m in sim.members.values() if m.alive), key=lambda n: int(n[1:]))
        for name in names[-event["members"] :]:
            sim.stop_member(name, graceful=True)
    elif kind == "crash":
        name = member_named(event["member"], f"{path}.member")
        if not sim.members[name].alive:
            return  # crashing a stopped member changes nothing
        sim.stop_member(name, graceful=False)
        if "restart_after_ms" in event:
            sim.at(now + event["restart_after_ms"], lambda: sim.start_member(name))
    elif kind == "rolling_bounce":
        down = event.get("down_ms", 10_000)
        interval = event.get("interval_ms", 30_000)
        bounced = sorted(
            (m.name for m in sim.members.values() if m.alive), key=lambda n: int(n[1:])
        )
        for k, name in enumerate(bounced):
            start = now + k * interval
            sim.at(start, lambda n=name: sim.stop_member(n, graceful=True))  # type: ignore[misc]
            sim.at(start + down, lambda n=name: sim.start_member(n))  # type: ignore[misc]
    elif kind == "network_pause":
        sim.pause_member(member_named(event["member"], f"{path}.member"), event["duration_ms"])
    elif kind == "add_tasks":
        sim.add_tasks(task_names(event["tasks"], start=len(sim.tasks)))
        leaders = [m for m in sim.members.values() if m.alive and m.phase == "stable"]
        group = sim.coordinator.groups.get("sim")
        leader = None
        if group is not None and group.leader_id is not None:
            leader = sim.members.get(sim.id_names.get(group.leader_id, ""))
        if leader is None and leaders:
            leader = leaders[0]
        if leader is not None and leader.alive and leader.phase == "stable":
            # The leader's metadata refresh sees the new partitions and rejoins.
            sim._join(leader)
