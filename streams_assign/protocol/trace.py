"""The group-trace format of ``scenarios/kafka-group``: load a trace, replay it, print the result.

A trace is a timeline of JoinGroup, SyncGroup, Heartbeat, LeaveGroup and DeleteGroups requests
and clock advances against one classic group (see the folder's ``FORMAT.md``). :func:`run_trace`
replays it on :class:`~streams_assign.protocol.coordinator.GroupCoordinator` and returns the
output document: per event the timers fired, every response completed during the event (in
completion order) and the group's state, with Kafka's member ids renamed after the labels whose
JoinGroup generated them (``A``, ``A#2``, ...).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streams_assign.errors import InvalidTraceError
from streams_assign.protocol.classic_group import ResponseFuture
from streams_assign.protocol.coordinator import (
    CoordinatorConfig,
    GroupCoordinator,
    parse_timer_key,
)
from streams_assign.protocol.timer import ScheduledTimeout

__all__ = [
    "API_VERSIONS",
    "ByteCodec",
    "HARNESS",
    "KAFKA_COMMIT",
    "load_trace",
    "member_uuid",
    "run_trace",
    "serialize_subscription",
]

KAFKA_COMMIT = "1eb7644349cb07139d6a3c1ad1986979647cac99"
"""The Kafka trunk commit whose ``GroupMetadataManager`` the coordinator follows."""

HARNESS = "streams_assign.protocol"
API_VERSIONS = {"JoinGroup": 9, "SyncGroup": 5, "Heartbeat": 4, "LeaveGroup": 5}
_CLIENT_DEFAULTS = {"session_timeout_ms": 45000, "rebalance_timeout_ms": 300000}
_CONFIG_KEYS = {
    "session_timeout_ms",
    "rebalance_timeout_ms",
    "initial_rebalance_delay_ms",
    "min_session_timeout_ms",
    "max_session_timeout_ms",
    "max_size",
    "protocol_type",
}
_EVENT_TYPES = {"join", "sync", "heartbeat", "leave", "delete_group", "advance"}
_JOIN_FIELDS = (
    "group_instance_id",
    "protocol_type",
    "protocols",
    "session_timeout_ms",
    "rebalance_timeout_ms",
    "client_id",
    "reason",
    "version",
    "group_id",
)


# -- bytes ------------------------------------------------------------------------------
def serialize_subscription(topics: list[str]) -> bytes:
    """``ConsumerProtocol.serializeSubscription(new Subscription(topics))`` (version 3).

    Layout: version int16, topics (int32 count, int16-prefixed UTF-8), null user data, no owned
    partitions, generation -1, null rack.
    """
    out = bytearray((3).to_bytes(2, "big"))
    out += len(topics).to_bytes(4, "big")
    for topic in topics:
        raw = topic.encode()
        out += len(raw).to_bytes(2, "big") + raw
    out += (-1).to_bytes(4, "big", signed=True)  # user data: null
    out += (0).to_bytes(4, "big")  # owned partitions: none
    out += (-1).to_bytes(4, "big", signed=True)  # generation id
    out += (-1).to_bytes(2, "big", signed=True)  # rack id: null
    return bytes(out)


class ByteCodec:
    """Turns the trace's byte strings into bytes and renders bytes back to the string seen."""

    def __init__(self) -> None:
        self._seen: dict[bytes, str] = {}

    def encode(self, text: str) -> bytes:
        """``sub:t1,t2`` (consumer subscription), ``hex:0a0b`` (raw) or UTF-8."""
        if text.startswith("sub:"):
            data = serialize_subscription([t for t in text[4:].split(",") if t])
        elif text.startswith("hex:"):
            data = bytes.fromhex(text[4:])
        else:
            data = text.encode()
        self._seen.setdefault(data, text)
        return data

    def render(self, data: bytes) -> str:
        """The string ``data`` came from, else UTF-8 when printable, else ``hex:``."""
        if data in self._seen:
            return self._seen[data]
        try:
            text = data.decode()
        except UnicodeDecodeError:
            return "hex:" + data.hex()
        return text if text.isprintable() else "hex:" + data.hex()


def member_uuid(seed: str, k: int) -> str:
    """The k-th UUID of a trace: a version-4 UUID from SHA-256 of ``seed:k`` (FORMAT.md)."""
    raw = bytearray(hashlib.sha256(f"{seed}:{k}".encode()).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


# -- driver -----------------------------------------------------------------------------
@dataclass
class _Label:
    ids: list[str] = field(default_factory=list)
    last_returned: str = ""
    join: dict[str, Any] = field(default_factory=dict)
    generation: int = -1
    protocol: str | None = None


class _Recorder:
    """Collects the responses of the current event and names member ids."""

    def __init__(self, codec: ByteCodec) -> None:
        self.codec = codec
        self.names: dict[str, str] = {}
        self.raw_ids: dict[str, str] = {}
        self.labels: dict[str, _Label] = {}
        self.responses: list[dict[str, Any]] = []
        self.cause = "request"
        self.now = 0
        self.total = 0

    def name(self, member_id: str | None) -> str | None:
        if member_id is None:
            return None
        if member_id == "":
            return ""
        return self.names.get(member_id, "?" + member_id)

    def future(self, label: str, api: str, req: int) -> ResponseFuture:
        return ResponseFuture(lambda response: self.record(label, api, req, response))

    def record(
        self, label: str, api: str, req: int, response: dict[str, Any], at: int | None = None
    ) -> None:
        """Record a response; ``at`` inserts it at that position (synchronous answers)."""
        out: dict[str, Any] = {
            "member": label,
            "api": api,
            "req": req,
            "t": self.now,
            "cause": self.cause,
            "error": response["error"],
        }
        if api == "join":
            state = self.labels[label]
            if response["error"] in ("NONE", "MEMBER_ID_REQUIRED"):
                state.last_returned = response["member_id"]
            if response["error"] == "NONE":
                state.generation = response["generation"]
                state.protocol = response["protocol"]
            out.update(
                member_id=self.name(response["member_id"]),
                generation=response["generation"],
                protocol_type=response["protocol_type"],
                protocol=response["protocol"] or None,
                leader=self.name(response["leader"]) or None,
                skip_assignment=response["skip_assignment"],
                members=[
                    {
                        "member": self.name(m),
                        "group_instance_id": i,
                        "metadata": self.codec.render(md),
                    }
                    for m, i, md in response["members"]
                ],
            )
        elif api == "sync":
            out.update(
                protocol_type=response["protocol_type"],
                protocol=response["protocol"],
                assignment=self.codec.render(response["assignment"]),
            )
        elif api == "leave":
            out["members"] = [
                {"member": self.name(m), "group_instance_id": i, "error": e}
                for m, i, e in response["members"]
            ]
        if at is None:
            self.responses.append(out)
        else:
            self.responses.insert(at, out)
        self.total += 1


def _fail(source: str, path: str, message: str) -> InvalidTraceError:
    return InvalidTraceError(f"{source}: {path}: {message}")


def run_trace(document: Mapping[str, Any], source: str = "<trace>") -> dict[str, Any]:
    """Replay one group trace and return its output document (``expected/`` format).

    Parameters
    ----------
    document:
        The parsed trace (``group_id``, optional ``uuid_seed`` and ``config``, ``events``).
    source:
        Named in error messages (the file name).

    Returns
    -------
    dict
        ``group_id``, ``kafka_commit``, ``harness``, ``uuid_seed``, ``config_effective``,
        ``events`` (per event: ``timers_fired``, ``responses``, ``group``), ``member_ids``,
        ``summary``.

    Raises
    ------
    InvalidTraceError
        For an unknown config key, a bad event type or a missing field.
    """
    replay = _TraceReplay(document, source)
    events = document.get("events")
    if not isinstance(events, list):
        raise _fail(source, "events", "must be a list")
    out_events = [replay.event(i, event) for i, event in enumerate(events)]
    return replay.output(out_events)


class _TraceReplay:
    """One trace's replay on a :class:`GroupCoordinator`: its settings, clock and counters."""

    def __init__(self, document: Mapping[str, Any], source: str) -> None:
        if not isinstance(document, Mapping):
            raise _fail(source, "$", "a trace must be a JSON object")
        group_id = document.get("group_id")
        if not isinstance(group_id, str):
            raise _fail(source, "group_id", f"must be a string, got {group_id!r}")
        self.source = source
        self.group_id = group_id
        self.seed = document.get("uuid_seed", group_id)
        config = dict(document.get("config") or {})
        for key in config:
            if key not in _CONFIG_KEYS:
                raise _fail(source, f"config.{key}", f"unknown setting (value {config[key]!r})")
        self.broker = CoordinatorConfig(
            initial_rebalance_delay_ms=int(config.get("initial_rebalance_delay_ms", 3000)),
            min_session_timeout_ms=int(config.get("min_session_timeout_ms", 6000)),
            max_session_timeout_ms=int(config.get("max_session_timeout_ms", 1_800_000)),
            max_size=int(config.get("max_size", 2**31 - 1)),
        )
        self.join_defaults: dict[str, Any] = {
            "session_timeout_ms": int(config.get("session_timeout_ms", 45000)),
            "rebalance_timeout_ms": int(config.get("rebalance_timeout_ms", 300000)),
            "protocol_type": config.get("protocol_type", "consumer"),
            "group_instance_id": None,
            "reason": None,
            "version": API_VERSIONS["JoinGroup"],
            "group_id": group_id,
        }
        self.codec = ByteCodec()
        self.rec = _Recorder(self.codec)
        self.generated = 0  # member ids generated
        self.current_label = ""  # the label whose request runs (names generated ids)
        self.coordinator = GroupCoordinator(self.broker, self._generate)
        self.fired: list[dict[str, Any]] = []  # the timers fired in the current event
        self.polls: list[int] = []  # their deadlines
        self.total_fired = 0
        self.same_deadline = 0  # timers that share a deadline with another fired timer
        self.last_t = 0

    def _generate(self, prefix: str) -> str:
        """The coordinator's member-id maker: seeded UUIDs, named after the current label."""
        rec = self.rec
        member_id = f"{prefix}-{member_uuid(self.seed, self.generated)}"
        self.generated += 1
        label = self.current_label
        state = rec.labels[label]
        state.ids.append(member_id)
        name = label if len(state.ids) == 1 else f"{label}#{len(state.ids)}"
        rec.names[member_id] = name
        rec.raw_ids[name] = member_id
        return member_id

    def _on_fire(self, timeout: ScheduledTimeout) -> None:
        """Record a timer fired while the clock advances."""
        self.rec.now = timeout.deadline_ms
        kind, _, member_id = parse_timer_key(timeout.key)
        entry: dict[str, Any] = {"t": timeout.deadline_ms, "timer": kind}
        if kind == "heartbeat":
            entry["member"] = self.rec.name(member_id)
        self.fired.append(entry)
        self.polls.append(timeout.deadline_ms)

    def _resolve(self, ref: Any, path: str) -> str:
        """A member id of the trace: literal, or ``$label`` / ``$label#n`` for a generated one."""
        if not isinstance(ref, str):
            raise _fail(self.source, path, f"must be a string, got {ref!r}")
        if not ref.startswith("$"):
            return ref
        body = ref[1:]
        name, _, nth = body.partition("#")
        state = self.rec.labels.setdefault(name, _Label())
        if not nth:
            return state.last_returned
        if not nth.isdigit() or not 1 <= int(nth) <= len(state.ids):
            raise _fail(self.source, path, f"{ref!r}: label {name} has {len(state.ids)} id(s)")
        return state.ids[int(nth) - 1]

    def event(self, i: int, event: Any) -> dict[str, Any]:
        """Advance the clock to the event, run its request and return its output."""
        source, rec = self.source, self.rec
        path = f"events[{i}]"
        if not isinstance(event, Mapping):
            raise _fail(source, path, f"must be an object, got {event!r}")
        kind = event.get("type")
        if kind not in _EVENT_TYPES:
            raise _fail(source, f"{path}.type", f"unknown event type {kind!r}")
        t = event.get("t")
        if not isinstance(t, int) or t < self.last_t:
            raise _fail(source, f"{path}.t", f"must be an integer >= {self.last_t}, got {t!r}")
        self.last_t = t
        self._advance_to(t)
        request_start = len(rec.responses)
        label = event.get("member")
        out_event: dict[str, Any] = {"i": i, "t": t, "type": kind}
        if label is not None:
            out_event["member"] = label
        if kind in ("join", "sync", "heartbeat", "leave"):
            if not isinstance(label, str):
                raise _fail(source, f"{path}.member", f"must be a label, got {label!r}")
            state = rec.labels.setdefault(label, _Label())
            self.current_label = label
            if kind == "join":
                self._join(event, i, path, label, state)
            else:
                self._request(kind, event, i, path, label, state, request_start)
        elif kind == "delete_group":
            response = self.coordinator.delete_group(event.get("group_id", self.group_id))
            rec.responses.insert(
                request_start,
                {
                    "member": label,
                    "api": "delete_group",
                    "req": i,
                    "t": t,
                    "cause": "request",
                    "error": response["error"],
                },
            )
            rec.total += 1
        out_event["timers_fired"] = list(self.fired)
        out_event["responses"] = rec.responses
        out_event["group"] = _snapshot(self.coordinator, self.group_id, rec)
        return out_event

    def _advance_to(self, t: int) -> None:
        """Fire the timers due by ``t``, then set the clock to ``t`` for the request."""
        rec = self.rec
        self.fired.clear()
        self.polls.clear()
        rec.responses = []
        rec.cause = "timer"
        self.coordinator.advance_to(t, self._on_fire)
        polls = self.polls
        for deadline in set(polls):
            if polls.count(deadline) > 1:
                self.same_deadline += 1
        self.total_fired += len(self.fired)
        rec.now = t
        rec.cause = "request"

    def _join(self, event: Mapping[str, Any], i: int, path: str, label: str, state: _Label) -> None:
        """A JoinGroup: the event's fields over the label's last join over the defaults."""
        rec, group_id = self.rec, self.group_id
        fields = {**self.join_defaults, **state.join}
        for key in _JOIN_FIELDS:
            if key in event:
                fields[key] = event[key]
        if "client_id" not in fields:
            # The Java consumer's default client.id: consumer-<group>-<n>, n counting clients.
            fields["client_id"] = f"consumer-{group_id}-{list(rec.labels).index(label) + 1}"
        if "protocols" not in fields:
            raise _fail(self.source, f"{path}.protocols", "missing on the label's first join")
        state.join = {k: fields[k] for k in _JOIN_FIELDS if k in fields}
        protocols = tuple((str(n), self.codec.encode(str(md))) for n, md in fields["protocols"])
        self.coordinator.join_group(
            rec.future(label, "join", i),
            group_id=fields["group_id"],
            member_id=self._resolve(event.get("member_id", "$" + label), f"{path}.member_id"),
            group_instance_id=fields["group_instance_id"],
            protocol_type=fields["protocol_type"],
            protocols=protocols,
            session_timeout_ms=int(fields["session_timeout_ms"]),
            rebalance_timeout_ms=int(fields["rebalance_timeout_ms"]),
            client_id=fields["client_id"],
            version=int(fields["version"]),
        )

    def _request(
        self,
        kind: str,
        event: Mapping[str, Any],
        i: int,
        path: str,
        label: str,
        state: _Label,
        request_start: int,
    ) -> None:
        """A SyncGroup, Heartbeat or LeaveGroup of a member.

        Heartbeat and LeaveGroup answer with the operation's result: Kafka's recording lists
        that answer before the parked responses the operation completed on the way.
        """
        rec, coordinator = self.rec, self.coordinator
        member_id = self._resolve(event.get("member_id", "$" + label), f"{path}.member_id")
        instance_id = event.get("group_instance_id", state.join.get("group_instance_id"))
        target_group = event.get("group_id", self.group_id)
        if kind == "sync":
            assignments: dict[str, bytes] = {}
            for key, value in (event.get("assignments") or {}).items():
                if key.startswith("$"):
                    raw = self._resolve(key, f"{path}.assignments.{key}")
                else:
                    raw = rec.raw_ids.get(key, key)
                assignments[raw] = self.codec.encode(str(value))
            coordinator.sync_group(
                rec.future(label, "sync", i),
                group_id=target_group,
                member_id=member_id,
                generation_id=int(event.get("generation", state.generation)),
                group_instance_id=instance_id,
                protocol_type=event.get("protocol_type", state.join.get("protocol_type")),
                protocol_name=event.get("protocol_name", state.protocol),
                assignments=assignments,
                version=int(event.get("version", API_VERSIONS["SyncGroup"])),
            )
        elif kind == "heartbeat":
            response = coordinator.heartbeat(
                target_group, member_id, int(event.get("generation", state.generation)), instance_id
            )
            rec.record(label, "heartbeat", i, response, at=request_start)
        else:
            if "members" in event:
                identities = [
                    (
                        self._resolve(m.get("member_id", ""), f"{path}.members[{k}].member_id"),
                        m.get("group_instance_id"),
                    )
                    for k, m in enumerate(event["members"])
                ]
            else:
                identities = [(member_id, event.get("group_instance_id"))]
            response = coordinator.leave_group(target_group, identities)
            rec.record(label, "leave", i, response, at=request_start)

    def output(self, out_events: list[dict[str, Any]]) -> dict[str, Any]:
        """The output document: the events' outputs, the effective settings and the summary."""
        broker, join_defaults = self.broker, self.join_defaults
        return {
            "group_id": self.group_id,
            "kafka_commit": KAFKA_COMMIT,
            "harness": HARNESS,
            "uuid_seed": self.seed,
            "config_effective": {
                "initial_rebalance_delay_ms": broker.initial_rebalance_delay_ms,
                "min_session_timeout_ms": broker.min_session_timeout_ms,
                "max_session_timeout_ms": broker.max_session_timeout_ms,
                "max_size": broker.max_size,
                "new_member_join_timeout_ms": broker.new_member_join_timeout_ms,
                "session_timeout_ms": join_defaults["session_timeout_ms"],
                "rebalance_timeout_ms": join_defaults["rebalance_timeout_ms"],
                "protocol_type": join_defaults["protocol_type"],
                "api_versions": dict(API_VERSIONS),
            },
            "events": out_events,
            "member_ids": dict(self.rec.raw_ids),
            "summary": {
                "events": len(out_events),
                "responses": self.rec.total,
                "timers_fired": self.total_fired,
                "same_deadline_firings": self.same_deadline,
                "member_ids_generated": self.generated,
                "unpredicted_member_ids": 0,
                "exceptions": 0,
            },
        }


def _snapshot(coordinator: GroupCoordinator, group_id: str, rec: _Recorder) -> dict[str, Any]:
    group = coordinator.groups.get(group_id)
    if group is None:
        return {"exists": False, "state": "Dead", "members": []}
    timers: dict[str, Any] = {}
    heartbeats: dict[str, int] = {}
    for key in coordinator.timer.pending_keys():
        kind, gid, member_id = parse_timer_key(key)
        if gid != group_id:
            continue
        deadline = coordinator.timer.deadline(key)
        if kind == "heartbeat":
            heartbeats[str(rec.name(member_id))] = int(deadline or 0)
        else:
            timers[kind] = deadline
    timers["heartbeat"] = heartbeats
    members = group.all_members()

    def names(ids: Any) -> list[str]:
        return sorted(str(rec.name(m)) for m in ids)

    return {
        "exists": True,
        "state": group.state.value,
        "generation": group.generation_id,
        "leader": rec.name(group.leader_id) if group.leader_id else None,
        "members": names(group.members),
        "detail": {
            "timers": timers,
            "protocol_type": group.protocol_type,
            "protocol": group.protocol_name,
            "member_order": [rec.name(m.member_id) for m in members],
            "pending": names(group.pending_join_members),
            "awaiting_join": names(m.member_id for m in members if m.is_awaiting_join),
            "awaiting_sync": names(m.member_id for m in members if m.is_awaiting_sync),
            "pending_sync": names(group.pending_sync_members),
            "new": names(m.member_id for m in members if m.is_new),
            "static": {k: rec.name(v) for k, v in group.static_members.items()},
            "assignment": {rec.name(m.member_id): rec.codec.render(m.assignment) for m in members},
        },
    }


def load_trace(path: str | Path) -> dict[str, Any]:
    """Read and parse a trace file.

    Raises
    ------
    InvalidTraceError
        If the file cannot be read or is not JSON.
    """
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise InvalidTraceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidTraceError(f"{path}: not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise InvalidTraceError(f"{path}: $: a trace must be a JSON object")
    return document
