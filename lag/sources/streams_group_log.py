"""A streams group's target computations as the Kafka 4.4 broker logs them (``server.log``).

With ``org.apache.kafka.coordinator.group`` at DEBUG, ``GroupMetadataManager`` logs, for a
streams group (KIP-1071):

- ``[GroupId G][MemberId M] Member joins the streams group.``
- ``[GroupId G][MemberId M] Member updated its member metadata to StreamsGroupMember[memberId=M,
  ..., processId=P, ...]`` (INFO);
- ``[GroupId G][MemberId M] Member's new assignment state: epoch=E, previousEpoch=E0,
  state=S, assignedTasks=(active=[0-2@5, ...], standby=[1-3, ...], warmup=[]) and
  tasksPendingRevocation=(...)`` (INFO): what the member holds (``assignedTasks``) after each
  reconciliation step;
- ``[GroupId G] Computed a new target assignment for epoch E with 'sticky' assignor in N ms:
  {M=(active=[0-1, ...], standby=[...], warmup=[]), ...}`` (DEBUG): one target computation.

:func:`read_target_computations` replays these lines: for each computation, the members the
assignor saw (the keys of the logged target), in the order they joined, each with its process
id and the tasks it held at that moment, and the target decided.

The task offsets the assignor ranks standby candidates by are not in the coordinator's lines.
With ``kafka.request.logger`` at DEBUG the broker logs every request it completed, with its
body (``Completed request:{...}``): each ``STREAMS_GROUP_HEARTBEAT`` carries ``taskOffsets``
when the member sends them (when joining, when its reconciled assignment changed, and each
``taskOffsetIntervalMs``: Kafka 4.4's ``StreamsGroupHeartbeatRequestManager``).
:class:`HeartbeatLog` reads them and :meth:`HeartbeatLog.offsets_at` gives each member's offsets
as the broker held them when it made a computation (see there for how the order is decided).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from lag.sources.streams_group_describe import MemberTasks, Tasks
from streams_assign.errors import LagInputError
from streams_assign.streams_group import (
    StreamsGroupConfigs,
    StreamsGroupMember,
    StreamsGroupState,
    StreamsGroupSubtopology,
    java_string_order,
)

__all__ = [
    "HeartbeatLog",
    "TargetComputation",
    "computation_state",
    "read_heartbeat_log",
    "read_target_computations",
]

_PREFIX = r"^\[(?P<time>[^\]]+)\] \w+ \[GroupCoordinator[^\]]*\] \[GroupId (?P<group>[^\]]+)\]"
_MEMBER = _PREFIX + r"\[MemberId (?P<member>[^\]]+)\] "
_JOIN = re.compile(_MEMBER + r"Member joins the streams group\.")
_METADATA = re.compile(
    _MEMBER + r"Member updated its member metadata to StreamsGroupMember\[.*?"
    r"processId=(?P<process>[^,\]]+)"
)
_STATE = re.compile(
    _MEMBER + r"Member's new assignment state: epoch=(?P<epoch>-?\d+), .*?"
    r"assignedTasks=\(active=\[(?P<a>[^\]]*)\], standby=\[(?P<s>[^\]]*)\], "
    r"warmup=\[(?P<w>[^\]]*)\]\)"
)
_STATE_OF = re.compile(_MEMBER + r"Member's new assignment state: ")
_REQUEST = re.compile(
    r"^\[[^\]]+\] DEBUG Completed request:(?P<body>\{.*\}) \(kafka\.request\.logger\)$"
)
_READY = re.compile(_MEMBER + r".*topology epoch \d+ is now initialized\.")
_TARGET = re.compile(
    _PREFIX + r" Computed a new target assignment for epoch (?P<epoch>\d+) with "
    r"'(?P<assignor>[^']*)' assignor in \d+ms: \{(?P<body>.*)\}\. \("
)
_TARGET_MEMBER = re.compile(
    r"(?P<member>[A-Za-z0-9_-]+)=\(active=\[(?P<a>[^\]]*)\], standby=\[(?P<s>[^\]]*)\], "
    r"warmup=\[(?P<w>[^\]]*)\]\)"
)


@dataclass(frozen=True, slots=True)
class TargetComputation:
    """One logged target computation of a streams group.

    Attributes
    ----------
    time:
        The log line's time stamp (the broker's clock, as printed).
    epoch:
        The group epoch the target is for.
    assignor:
        The assignor's name (``sticky``).
    members:
        Member ids the assignor saw, in the order the broker printed its target: the iteration
        order of a ``HashMap`` of exactly these member ids.
    process_ids:
        Member id -> process id.
    held:
        Member id -> the tasks it held (``assignedTasks``) when the target was computed.
    target:
        Member id -> its target tasks.
    line:
        The 1-based line of ``server.log``.
    topology_ready:
        Whether the group's topology was initialized (its internal topics exist: ``topology
        epoch E is now initialized``); before that the assignor sees no subtopology.
    """

    time: str
    epoch: int
    assignor: str
    members: tuple[str, ...]
    process_ids: Mapping[str, str]
    held: Mapping[str, MemberTasks]
    target: Mapping[str, MemberTasks]
    line: int
    topology_ready: bool = True


def _task_list(text: str, where: str) -> Tasks:
    out: dict[str, list[int]] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        task = item.split("@", 1)[0]
        sub, _, partition = task.rpartition("-")
        if not sub or not partition.isdigit():
            raise LagInputError(f"{where}: unreadable task {item!r}")
        out.setdefault(sub, []).append(int(partition))
    return {s: tuple(sorted(ps)) for s, ps in out.items()}


def _tasks(match: re.Match[str], where: str) -> MemberTasks:
    return MemberTasks(
        _task_list(match["a"], where), _task_list(match["s"], where), _task_list(match["w"], where)
    )


def read_target_computations(text: str, group_id: str, source: str) -> list[TargetComputation]:
    """Every target computation of ``group_id`` in a broker log, in order.

    Raises
    ------
    LagInputError
        Naming ``source`` and the line: a target naming a member never seen joining, or an
        unreadable task list; or no computation at all for the group (the log is not at DEBUG
        for ``org.apache.kafka.coordinator.group``, or the group id is wrong).
    """
    joined: list[str] = []
    process: dict[str, str] = {}
    held: dict[str, MemberTasks] = {}
    ready = False
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if f"[GroupId {group_id}]" not in line:
            continue
        where = f"{source}: line {n}"
        if m := _JOIN.match(line):
            if m["member"] not in joined:
                joined.append(m["member"])
        elif m := _METADATA.match(line):
            process[m["member"]] = m["process"]
        elif _READY.match(line):
            ready = True
        elif m := _STATE.match(line):
            held[m["member"]] = _tasks(m, where)
        elif m := _TARGET.match(line):
            target = {t["member"]: _tasks(t, where) for t in _TARGET_MEMBER.finditer(m["body"])}
            unknown = [member for member in target if member not in process]
            if unknown:
                raise LagInputError(f"{where}: target for member(s) never seen joining: {unknown}")
            order = tuple(target)
            out.append(
                TargetComputation(
                    time=m["time"],
                    epoch=int(m["epoch"]),
                    assignor=m["assignor"],
                    members=order,
                    process_ids={member: process[member] for member in order},
                    held={member: held.get(member, MemberTasks()) for member in order},
                    target=target,
                    line=n,
                    topology_ready=ready,
                )
            )
    if not out:
        raise LagInputError(
            f"{source}: no target computation of group {group_id!r} (is "
            "org.apache.kafka.coordinator.group logged at DEBUG?)"
        )
    return out


def computation_state(
    computation: TargetComputation,
    topology: Mapping[str, tuple[int, bool]],
    num_standby_replicas: int,
    task_offsets: Mapping[str, Mapping[str, Mapping[int, int]]],
) -> StreamsGroupState:
    """The state the assignor saw at ``computation``, members in the broker's order.

    ``task_offsets`` maps member id -> its reported offsets (from a description); a member
    missing there reported none. Before the topology is initialized the state has no
    subtopology, as the assignor then sees none.
    """
    members = []
    for member in computation.members:
        tasks = computation.held[member]
        members.append(
            StreamsGroupMember(
                member_id=member,
                process_id=computation.process_ids[member],
                active_tasks=dict(tasks.active),
                standby_tasks=dict(tasks.standby),
                warmup_tasks=dict(tasks.warmup),
                task_offsets={s: dict(p) for s, p in task_offsets.get(member, {}).items()},
            ),
        )
    return StreamsGroupState(
        configs=StreamsGroupConfigs(num_standby_replicas=num_standby_replicas),
        topology={
            s: StreamsGroupSubtopology(partitions=topology[s][0], stateful=topology[s][1])
            for s in sorted(topology, key=java_string_order)
            if computation.topology_ready
        },
        members=tuple(members),
        meta={"kind": "broker-log", "epoch": computation.epoch, "line": computation.line},
    )


@dataclass(frozen=True)
class Heartbeat:
    """One streams group heartbeat the broker answered without error (``kafka.request.logger``).

    Attributes
    ----------
    line:
        1-based line of its ``Completed request`` in the log (written after the response).
    response_epoch:
        The member epoch the broker answered.
    task_offsets:
        ``subtopology -> partition -> offset sum`` sent, or None when the heartbeat sent none
        (the broker then keeps the member's previous ones).
    """

    line: int
    response_epoch: int
    task_offsets: Mapping[str, Mapping[int, int]] | None


@dataclass
class HeartbeatLog:
    """A group's heartbeats (per member, in log order) and the lines where the coordinator
    logged a member's new assignment state (``StreamsGroupHeartbeat`` of KIP-1071)."""

    heartbeats: dict[str, list[Heartbeat]] = field(default_factory=dict)
    state_lines: dict[str, list[int]] = field(default_factory=dict)

    def offsets_at(self, computation: TargetComputation) -> dict[str, dict[str, dict[int, int]]]:
        """Each member's task offsets as the broker held them when it made ``computation``.

        Kafka 4.4 computes a target inside one heartbeat's processing (the first after the
        assignment interval, or the one that bumped the group epoch): it stores that member's
        offsets, computes, then reconciles that member (its ``new assignment state`` line is
        the first after the computation's). The broker keeps each member's latest offsets and
        processes a group's events one at a time, so a member's offsets are those of its last
        heartbeat processed before the computation, plus, for the member whose heartbeat made
        it, that heartbeat's. A heartbeat logged (completed) before the computation's line was
        processed before it. One logged after was processed after it when the member's state
        line lies between the two (the first heartbeat after a new target changes the member's
        state) or when the broker answered it the new epoch; otherwise before it (it waited for
        the log's commit).
        """
        trigger = min(
            (
                (lines[i], member)
                for member, lines in self.state_lines.items()
                for i in range(len(lines))
                if lines[i] > computation.line
            ),
            default=(0, ""),
        )[1]
        out: dict[str, dict[str, dict[int, int]]] = {}
        for member in computation.members:
            offsets: Mapping[str, Mapping[int, int]] = {}
            states = self.state_lines.get(member, [])
            for beat in self.heartbeats.get(member, []):
                if beat.line > computation.line:
                    if member == trigger:
                        if beat.task_offsets is not None:
                            offsets = beat.task_offsets
                        break
                    after = any(computation.line < s < beat.line for s in states)
                    if after or beat.response_epoch >= computation.epoch:
                        break
                if beat.task_offsets is not None:
                    offsets = beat.task_offsets
            out[member] = {s: dict(p) for s, p in offsets.items()}
        return out


def read_heartbeat_log(text: str, group_id: str, source: str) -> HeartbeatLog:
    """The streams group heartbeats of ``group_id`` the broker logged (``kafka.request.logger``
    at DEBUG) and its members' state lines, numbered as :func:`read_target_computations` does.

    Raises
    ------
    LagInputError
        Naming ``source``: no heartbeat of the group (the request logger is not at DEBUG), or a
        heartbeat whose body is not JSON.
    """
    log = HeartbeatLog()
    for n, line in enumerate(text.splitlines(), start=1):
        if m := _STATE_OF.match(line):
            if m["group"] == group_id:
                log.state_lines.setdefault(m["member"], []).append(n)
            continue
        if "STREAMS_GROUP_HEARTBEAT" not in line or not (m := _REQUEST.match(line)):
            continue
        try:
            body = json.loads(m["body"])
        except json.JSONDecodeError as exc:
            raise LagInputError(f"{source}: line {n}: heartbeat not JSON: {exc}") from None
        request, response = body["request"], body.get("response") or {}
        if request.get("groupId") != group_id or response.get("errorCode", 0) != 0:
            continue
        offsets: dict[str, dict[int, int]] | None = None
        if request.get("taskOffsets") is not None:
            offsets = {}
            for t in request["taskOffsets"]:
                offsets.setdefault(t["subtopologyId"], {})[t["partition"]] = t["offset"]
        beat = Heartbeat(n, int(response.get("memberEpoch", -1)), offsets)
        log.heartbeats.setdefault(request["memberId"], []).append(beat)
    if not log.heartbeats:
        raise LagInputError(
            f"{source}: no streams group heartbeat of group {group_id!r} (is "
            "kafka.request.logger logged at DEBUG?)"
        )
    return log
