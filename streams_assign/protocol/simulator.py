"""A timeline simulator of a group over the classic rebalance protocol, eager or cooperative.

Members are simulated Kafka clients (``AbstractCoordinator`` / ``ConsumerCoordinator`` in
outline): they join with MEMBER_ID_REQUIRED, the leader runs a :class:`GroupAssignor` and
sends the assignment in SyncGroup, everyone heartbeats every ``heartbeat.interval.ms`` and
rejoins on REBALANCE_IN_PROGRESS. They talk to the real state machine,
:class:`~streams_assign.protocol.coordinator.GroupCoordinator`, so session, rebalance and
initial-delay timeouts, generations and static membership behave as in Kafka.

- **eager**: a member revokes every task before it rejoins (stop the world);
- **cooperative** (KIP-429): members keep their tasks and report them; the leader withholds
  tasks still owned elsewhere, their owners revoke only those and rejoin, and a second
  rebalance hands them over.

A task is, at every instant, *running* or stopped for a reason: ``starting`` (its new owner
initialises it, ``task_open_ms`` per task in turn), ``restoring`` (its new owner
replays the changelog at ``restore_records_per_sec`` shared by the member's restoring tasks),
``revoked`` (given up in a rebalance, not yet running elsewhere), ``unowned`` (never assigned,
or its owner crashed or lost it) or ``paused`` (its owner cannot reach the cluster). The
simulator integrates task-seconds unavailable per reason and reports per timeline event the
rebalances, generations and the time until the group is stable with every task running.
"""

from __future__ import annotations

import heapq
import random
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from streams_assign.errors import StreamsAssignError
from streams_assign.protocol.assignors import (
    GroupAssignment,
    GroupAssignor,
    MemberSubscription,
    cooperative_adjust,
)
from streams_assign.protocol.classic_group import GroupState, ResponseFuture
from streams_assign.protocol.coordinator import CoordinatorConfig, GroupCoordinator

REASONS = ("starting", "restoring", "revoked", "unowned", "paused")
PROTOCOLS = ("eager", "cooperative")
GROUP_ID = "sim"


class InvalidTimelineError(StreamsAssignError, ValueError):
    """A timeline document breaks the format: names the file, the JSON path and the value."""


@dataclass(frozen=True)
class ProtocolSettings:
    """Client and broker settings of the simulated group (Kafka's defaults).

    Attributes
    ----------
    session_timeout_ms, rebalance_timeout_ms, heartbeat_interval_ms:
        ``session.timeout.ms``, ``max.poll.interval.ms`` (the rebalance timeout) and
        ``heartbeat.interval.ms``, milliseconds.
    initial_rebalance_delay_ms:
        ``group.initial.rebalance.delay.ms``, milliseconds.
    request_latency_ms:
        One-way client-broker latency, milliseconds.
    static_membership:
        Members set ``group.instance.id`` (KIP-345): no LeaveGroup on close, a restart within
        the session timeout keeps the generation.
    probing_rebalance_interval_ms:
        ``probing.rebalance.interval.ms``: when the Streams assignor asks for a probing
        rebalance, the leader rejoins after this delay, milliseconds.
    restore_records_per_sec:
        Changelog records a member restores per second, shared by its restoring tasks.
    state_records_per_task:
        Changelog size of a stateful task at start, records (0: tasks are stateless).
    changelog_growth_records_per_sec:
        Records appended to each stateful task's changelog per second.
    task_close_ms, task_open_ms:
        Time a member takes to close (commit, flush) one revoked task before it rejoins or
        leaves, and to initialise one new task before it runs, milliseconds; tasks are closed
        and opened one after the other.
    heartbeat_jitter:
        Members heartbeat at their own phase in the interval (seeded by ``seed``) instead of
        all at once.
    seed:
        Seed of the heartbeat phases.
    """

    session_timeout_ms: int = 45_000
    rebalance_timeout_ms: int = 300_000
    heartbeat_interval_ms: int = 3_000
    initial_rebalance_delay_ms: int = 3_000
    request_latency_ms: int = 5
    static_membership: bool = False
    probing_rebalance_interval_ms: int = 600_000
    restore_records_per_sec: float = 10_000.0
    state_records_per_task: int = 0
    changelog_growth_records_per_sec: float = 0.0
    task_close_ms: int = 0
    task_open_ms: int = 0
    heartbeat_jitter: bool = True
    seed: int = 0


@dataclass
class _Member:
    name: str
    instance_id: str | None
    alive: bool = False
    paused: bool = False
    epoch: int = 0
    member_id: str = ""
    generation: int = -1
    phase: str = "down"  # down, joining, syncing, stable
    owned: set[str] = field(default_factory=set)
    previous: frozenset[str] = frozenset()
    standby: set[str] = field(default_factory=set)
    restoring: dict[str, float] = field(default_factory=dict)  # task -> records left
    warming: set[str] = field(default_factory=set)
    restore_clock: int = 0
    restore_version: int = 0
    local_offset: dict[str, float] = field(default_factory=dict)
    heartbeat_epoch: int = -1  # epoch of the pending heartbeat tick, -1 when none
    heartbeat_phase: int = 0


@dataclass
class EventReport:
    """What one timeline event caused, until the next event (or the end).

    Attributes
    ----------
    index, t_ms, kind:
        The event's position, time (ms) and type.
    rebalances:
        Generations the group went through in the window.
    generation:
        The group's generation at the window's end.
    task_seconds_unavailable:
        Per reason, task-seconds stopped in the window.
    time_to_stable_ms:
        From the event until the group was Stable with every task running (and stayed so
        to the window's end); ``None`` if that never happened in the window.
    """

    index: int
    t_ms: int
    kind: str
    rebalances: int = 0
    generation: int = 0
    task_seconds_unavailable: dict[str, float] = field(default_factory=dict)
    time_to_stable_ms: int | None = None


@dataclass
class SimulationResult:
    """The outcome of one simulated timeline under one protocol.

    Attributes
    ----------
    protocol:
        ``eager`` or ``cooperative``.
    events:
        One :class:`EventReport` per timeline event.
    series:
        ``(t_ms, running, starting, restoring, revoked, unowned, paused)`` after each change.
    group_states:
        ``(t_ms, state, generation)`` at every change of the coordinator's group state.
    rebalances, generation:
        Completed join phases and the final generation.
    task_seconds_unavailable:
        Per reason, over the whole run.
    stop_the_world_ms:
        Time with tasks assigned before but none running (after the first assignment).
    final_status:
        Per task, ``running`` or the reason it is stopped, at the end.
    final_members:
        The members running at the end.
    violations:
        Broken invariants (a member handed an assignment of an older generation than the
        group's; a task owned by two members at once); empty when the protocol held.
    """

    protocol: str
    events: list[EventReport]
    series: list[tuple[int, ...]]
    group_states: list[tuple[int, str, int]]
    rebalances: int
    generation: int
    task_seconds_unavailable: dict[str, float]
    stop_the_world_ms: int
    final_status: dict[str, str]
    violations: list[str]
    duration_ms: int
    final_members: list[str] = field(default_factory=list)

    @property
    def total_task_seconds_unavailable(self) -> float:
        """Task-seconds stopped over the run, all reasons together."""
        return sum(self.task_seconds_unavailable.values())

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary (the series and states as lists)."""
        stopped: dict[str, int] = {}
        for status in self.final_status.values():
            stopped[status] = stopped.get(status, 0) + 1
        return {
            "protocol": self.protocol,
            "duration_ms": self.duration_ms,
            "rebalances": self.rebalances,
            "generation": self.generation,
            "task_seconds_unavailable": {
                k: round(v, 3) for k, v in self.task_seconds_unavailable.items()
            },
            "total_task_seconds_unavailable": round(self.total_task_seconds_unavailable, 3),
            "stop_the_world_ms": self.stop_the_world_ms,
            "final_tasks": stopped,
            "final_members": list(self.final_members),
            "final_stopped": {t: s for t, s in sorted(self.final_status.items())
                              if s != "running"},
            "violations": list(self.violations),
            "events": [
                {
                    "i": e.index, "t": e.t_ms, "type": e.kind, "rebalances": e.rebalances,
                    "generation": e.generation,
                    "task_seconds_unavailable": {
                        k: round(v, 3) for k, v in e.task_seconds_unavailable.items()
                    },
                    "time_to_stable_ms": e.time_to_stable_ms,
                }
                for e in self.events
            ],
            "group_states": [list(s) for s in self.group_states],
        }


class GroupSimulator:
    """Simulates members, the coordinator and the tasks' availability over time.

    Parameters
    ----------
    protocol:
        ``eager`` or ``cooperative``.
    assignor:
        What the leader runs.
    settings:
        Protocol and restore settings.
    tasks:
        The initial tasks (``0_0``, ...); all stateful when ``state_records_per_task`` > 0.

    Raises
    ------
    InvalidTimelineError
        For an unknown protocol.
    """

    def __init__(
        self,
        protocol: str,
        assignor: GroupAssignor,
        settings: ProtocolSettings,
        tasks: Sequence[str],
    ) -> None:
        if protocol not in PROTOCOLS:
            raise InvalidTimelineError(f"protocol must be eager or cooperative, got {protocol!r}")
        self.protocol = protocol
        self.cooperative = protocol == "cooperative"
        self.assignor = assignor
        self.settings = settings
        self.now = 0
        self._queue: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = 0
        self._ids = 0

        def new_id(prefix: str) -> str:
            self._ids += 1
            member_id = f"{prefix}-{self._ids:08d}"
            self.id_names[member_id] = self.prefix_names[prefix]
            return member_id

        self.coordinator = GroupCoordinator(
            CoordinatorConfig(initial_rebalance_delay_ms=settings.initial_rebalance_delay_ms),
            new_id,
            fast_timer=True,
        )
        self.members: dict[str, _Member] = {}
        self.prefix_names: dict[str, str] = {}
        self.id_names: dict[str, str] = {}
        self.subscriptions: dict[str, MemberSubscription] = {}
        self.decisions: dict[bytes, tuple[int, str, GroupAssignment]] = {}
        self.tasks: list[str] = []
        self.task_created: dict[str, int] = {}
        self.owner: dict[str, str | None] = {}
        self.paused_holder: dict[str, str] = {}
        self.status: dict[str, str] = {}
        self.counts = {"running": 0, **dict.fromkeys(REASONS, 0)}
        self.unavailable_ms = dict.fromkeys(REASONS, 0.0)
        self._clock_mark = 0
        self.series: list[tuple[int, ...]] = []
        self._status_version = 0
        self._observed: tuple[str, int, int] | None = None
        self._rng = random.Random(settings.seed)
        self.group_states: list[tuple[int, str, int]] = []
        self.violations: list[str] = []
        self.stable_since: int | None = None
        self.stop_the_world_ms = 0
        self._ever_assigned = False
        self.rebalances = 0
        self._last_generation = 0
        self.add_tasks(tasks)

    # -- scheduling ----------------------------------------------------------------------
    def at(self, t_ms: int, action: Callable[[], None]) -> None:
        """Run ``action`` at ``t_ms``."""
        self._seq += 1
        heapq.heappush(self._queue, (t_ms, self._seq, action))

    def run_until(self, end_ms: int) -> None:
        """Process member actions and coordinator timers up to ``end_ms``."""
        coordinator = self.coordinator
        while True:
            deadline = coordinator.timer.next_deadline()
            head = self._queue[0][0] if self._queue else None
            if deadline is not None and deadline <= end_ms and (head is None or deadline <= head):
                self._advance_clock(deadline)
                coordinator.advance_to(deadline)
                self._observe()
                continue
            if head is None or head > end_ms:
                break
            t, _, action = heapq.heappop(self._queue)
            self._advance_clock(t)
            coordinator.advance_to(t)
            action()
            self._observe()
        self._advance_clock(end_ms)
        coordinator.advance_to(end_ms)
        self._observe()

    # -- task accounting -----------------------------------------------------------------
    def _advance_clock(self, t: int) -> None:
        if t > self._clock_mark:
            elapsed = t - self._clock_mark
            for reason in REASONS:
                if self.counts[reason]:
                    self.unavailable_ms[reason] += self.counts[reason] * elapsed
            if self._ever_assigned and self.counts["running"] == 0 and self.tasks:
                self.stop_the_world_ms += elapsed
            self._clock_mark = t
        self.now = max(self.now, t)

    def _set_status(self, task: str, status: str) -> None:
        old = self.status.get(task)
        if old == status:
            return
        if old is not None:
            self.counts[old] -= 1
        self.counts[status] += 1
        self.status[task] = status
        self._status_version += 1
        if status == "running":
            self._ever_assigned = True

    def _observe(self) -> None:
        group = self.coordinator.groups.get(GROUP_ID)
        state = group.state.value if group else "Dead"
        generation = group.generation_id if group else 0
        key = (state, generation, self._status_version)
        if key == self._observed:
            return  # nothing changed since the last look (most heartbeats)
        self._observed = key
        if not self.group_states or self.group_states[-1][1:] != (state, generation):
            self.group_states.append((self.now, state, generation))
        if generation > self._last_generation:
            self.rebalances += generation - self._last_generation
            self._last_generation = generation
        point = (self.now, self.counts["running"], *(self.counts[r] for r in REASONS))
        if self.series and self.series[-1][0] == self.now:
            self.series[-1] = point
        elif not self.series or self.series[-1][1:] != point[1:]:
            self.series.append(point)
        stable = (
            group is not None
            and group.state is GroupState.STABLE
            and self.counts["running"] == len(self.tasks)
        )
        if stable and self.stable_since is None:
            self.stable_since = self.now
        elif not stable:
            self.stable_since = None

    def end_offset(self, task: str) -> float:
        """The changelog end offset of ``task`` now, records."""
        s = self.settings
        if s.state_records_per_task <= 0:
            return 0.0
        age_s = (self.now - self.task_created.get(task, 0)) / 1000.0
        return s.state_records_per_task + s.changelog_growth_records_per_sec * age_s

    def add_tasks(self, tasks: Sequence[str]) -> None:
        """New tasks, unowned until a rebalance assigns them."""
        for task in tasks:
            if task in self.owner:
                continue
            self.tasks.append(task)
            self.task_created[task] = self.now
            self.owner[task] = None
            self._set_status(task, "unowned")

    @property
    def stateful(self) -> frozenset[str]:
        """The stateful tasks (every task when tasks carry state)."""
        return frozenset(self.tasks) if self.settings.state_records_per_task > 0 else frozenset()

    # -- task lifecycle on a member ------------------------------------------------------
    def _claim(self, member: _Member, task: str, open_ms: int = 0) -> None:
        current = self.owner.get(task)
        if current is not None and current != member.name:
            self.violations.append(
                f"t={self.now}: task {task} owned by {current} and {member.name} at once"
            )
        self.owner[task] = member.name
        self.paused_holder.pop(task, None)
        member.owned.add(task)
        member.standby.discard(task)
        member.warming.discard(task)
        if open_ms > 0:
            self._set_status(task, "starting")
            epoch = member.epoch

            def opened() -> None:
                if member.epoch == epoch and self.owner.get(task) == member.name:
                    self._start_or_restore(member, task)

            self.at(self.now + open_ms, opened)
            return
        self._start_or_restore(member, task)

    def _start_or_restore(self, member: _Member, task: str) -> None:
        lag = self.end_offset(task) - member.local_offset.get(task, 0.0)
        if lag > 0 and self.settings.state_records_per_task > 0:
            self._restore_progress(member)
            member.restoring[task] = lag
            self._set_status(task, "paused" if member.paused else "restoring")
            self._restore_schedule(member)
        else:
            self._set_status(task, "paused" if member.paused else "running")

    def _release(self, member: _Member, task: str, reason: str) -> None:
        member.owned.discard(task)
        if task in member.restoring:
            self._restore_progress(member)
            left = member.restoring.pop(task)
            member.local_offset[task] = self.end_offset(task) - left
        else:
            member.local_offset[task] = self.end_offset(task)
        if self.owner.get(task) == member.name or self.paused_holder.get(task) == member.name:
            self.owner[task] = None
            self.paused_holder.pop(task, None)
            self._set_status(task, reason)

    def _release_all(self, member: _Member, reason: str) -> None:
        for task in sorted(member.owned):
            self._release(member, task, reason)
        for task in list(member.warming):
            self._restore_progress(member)
            left = member.restoring.pop(task, 0.0)
            member.local_offset[task] = self.end_offset(task) - left
        member.warming.clear()
        for task in member.standby:
            member.local_offset[task] = self.end_offset(task)
        member.standby.clear()

    def _restore_progress(self, member: _Member) -> None:
        if member.restoring and not member.paused and member.alive:
            elapsed = (self.now - member.restore_clock) / 1000.0
            share = self.settings.restore_records_per_sec * elapsed / len(member.restoring)
            for task in member.restoring:
                member.restoring[task] -= share
        member.restore_clock = self.now

    def _restore_schedule(self, member: _Member) -> None:
        member.restore_version += 1
        if not member.restoring or member.paused or not member.alive:
            return
        version = member.restore_version
        rate = self.settings.restore_records_per_sec / len(member.restoring)
        left = max(0.0, min(member.restoring.values()))
        due = self.now + max(1, int(left / rate * 1000.0 + 0.999))

        def finish() -> None:
            if member.restore_version != version:
                return
            self._restore_progress(member)
            for task, remaining in sorted(member.restoring.items()):
                if remaining <= 1e-6:
                    del member.restoring[task]
                    if task in member.warming:
                        member.warming.discard(task)
                        member.standby.add(task)
                    elif self.owner.get(task) == member.name:
                        self._set_status(task, "running")
            self._restore_schedule(member)

        self.at(due, finish)

    # -- member actions ------------------------------------------------------------------
    def start_member(self, name: str, keep_state: bool = True) -> None:
        """Start (or restart) the member called ``name``; it joins the group."""
        member = self.members.get(name)
        if member is None:
            instance = f"{name}-instance" if self.settings.static_membership else None
            member = _Member(name=name, instance_id=instance)
            if self.settings.heartbeat_jitter:
                member.heartbeat_phase = self._rng.randrange(self.settings.heartbeat_interval_ms)
            self.members[name] = member
            self.prefix_names[instance or name] = name
        if member.alive:
            return
        if not keep_state:
            member.local_offset.clear()
        member.alive = True
        member.paused = False
        member.epoch += 1
        member.member_id = ""
        member.generation = -1
        member.previous = frozenset()
        member.restore_clock = self.now
        self._join(member)

    def stop_member(self, name: str, graceful: bool) -> None:
        """Stop a member: gracefully (revoke, LeaveGroup unless static) or by a crash."""
        member = self.members[name]
        if not member.alive:
            return
        closing_ms = len(member.owned) * self.settings.task_close_ms if graceful else 0
        self._release_all(member, "revoked" if graceful else "unowned")
        member.alive = False
        member.phase = "down"
        member.epoch += 1
        if graceful and member.instance_id is None and member.member_id:
            member_id = member.member_id
            self._send(member, lambda: self.coordinator.leave_group(GROUP_ID, [(member_id, None)]),
                       even_if_dead=True, delay_ms=closing_ms)

    def pause_member(self, name: str, duration_ms: int) -> None:
        """Cut a member off the cluster for ``duration_ms`` (its tasks make no progress)."""
        member = self.members[name]
        if not member.alive or member.paused:
            return
        self._restore_progress(member)
        member.paused = True
        member.epoch += 1
        # Cut off from the brokers it processes nothing: it still believes it owns its tasks,
        # but owns none in the sense of running them until the coordinator confirms it.
        for task in member.owned:
            if self.owner.get(task) == member.name:
                self.owner[task] = None
                self.paused_holder[task] = member.name
                self._set_status(task, "paused")
        self._restore_schedule(member)
        self.at(self.now + duration_ms, lambda: self._resume(member))

    def _resume(self, member: _Member) -> None:
        if not member.alive or not member.paused:
            return
        member.paused = False
        member.restore_clock = self.now
        member.epoch += 1
        # Nothing runs again before the coordinator confirms the membership.
        if member.phase == "stable":
            self._heartbeat(member, resume=True)
        else:
            self._join(member)

    # -- protocol ------------------------------------------------------------------------
    def _send(
        self,
        member: _Member,
        request: Callable[[], Any],
        even_if_dead: bool = False,
        delay_ms: int = 0,
    ) -> None:
        epoch = member.epoch

        def deliver() -> None:
            if even_if_dead or (member.epoch == epoch and member.alive and not member.paused):
                request()

        self.at(self.now + delay_ms + self.settings.request_latency_ms, deliver)

    def _reply(
        self,
        member: _Member,
        handler: Callable[[dict[str, Any]], None],
        sync_generation: int | None = None,
    ) -> ResponseFuture:
        epoch = member.epoch

        def on_complete(response: dict[str, Any]) -> None:
            if sync_generation is not None and response["error"] == "NONE":
                self.check_generation(member, sync_generation)

            def deliver() -> None:
                if member.epoch == epoch and member.alive and not member.paused:
                    handler(response)

            self.at(self.coordinator.now_ms + self.settings.request_latency_ms, deliver)

        return ResponseFuture(on_complete)

    def _metadata(self, member: _Member) -> bytes:
        owned = ",".join(sorted(member.owned)) if self.cooperative else ""
        return f"{self.protocol}:{zlib.crc32(owned.encode())}".encode()

    def _join(self, member: _Member, closing_ms: int = 0) -> None:
        if not self.cooperative:
            closing_ms += len(member.owned) * self.settings.task_close_ms
            self._release_all_actives(member, "revoked")
        member.phase = "joining"
        lags = {}
        if self.settings.state_records_per_task > 0:
            for task, offset in member.local_offset.items():
                if task in self.owner:
                    lags[task] = max(0, int(self.end_offset(task) - offset))
            for task in member.standby:
                lags[task] = 0
        subscription = MemberSubscription(
            member_id="",
            owned=frozenset(member.owned),
            previous=member.previous,
            task_lags=lags,
        )
        protocols = ((self.assignor.name, self._metadata(member)),)
        settings = self.settings

        def request() -> None:
            self.subscriptions[member.name] = subscription
            self.coordinator.join_group(
                self._reply(member, lambda r: self._on_join(member, r)),
                GROUP_ID, member.member_id, member.instance_id, "consumer", protocols,
                settings.session_timeout_ms, settings.rebalance_timeout_ms, member.name,
            )

        self._send(member, request, delay_ms=closing_ms)

    def _release_all_actives(self, member: _Member, reason: str) -> None:
        for task in sorted(member.owned):
            self._release(member, task, reason)

    def _lose_all(self, member: _Member) -> None:
        """``onPartitionsLost``: the member learns it is out of the group."""
        self._release_all(member, "unowned")
        member.previous = frozenset()

    def _on_join(self, member: _Member, response: dict[str, Any]) -> None:
        error = response["error"]
        if error == "MEMBER_ID_REQUIRED":
            member.member_id = response["member_id"]
            self._join(member)
        elif error == "NONE":
            member.member_id = response["member_id"]
            member.generation = response["generation"]
            member.phase = "syncing"
            self._schedule_heartbeat(member)
            assignments: dict[str, bytes] = {}
            if response["members"] and not response["skip_assignment"]:
                assignments = self._lead(member, response)
            generation = member.generation
            member_id = member.member_id
            self._send(member, lambda: self.coordinator.sync_group(
                self._reply(
                    member, lambda r: self._on_sync(member, r, generation), generation
                ),
                GROUP_ID, member_id, generation, member.instance_id, "consumer",
                self.assignor.name, assignments,
            ))
        elif error == "FENCED_INSTANCE_ID":
            self._lose_all(member)
            member.alive = False
            member.phase = "down"
        else:
            if error in ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION"):
                self._lose_all(member)
                member.member_id = "" if error == "UNKNOWN_MEMBER_ID" else member.member_id
            self.at(self.now + 100, lambda: self._rejoin_if_alive(member))

    def _rejoin_if_alive(self, member: _Member) -> None:
        if member.alive and not member.paused and member.phase == "joining":
            self._join(member)

    def _lead(self, leader: _Member, response: dict[str, Any]) -> dict[str, bytes]:
        subscriptions = []
        for member_id, _, _ in response["members"]:
            known = self.subscriptions.get(self.id_names.get(member_id, ""))
            subscriptions.append(
                MemberSubscription(member_id) if known is None else _with_id(known, member_id)
            )
        tasks = list(self.tasks)
        end_offsets = {t: int(self.end_offset(t)) for t in tasks}
        decided = self.assignor.assign(subscriptions, tasks, self.stateful, end_offsets)
        if self.cooperative:
            decided, _ = cooperative_adjust(decided, subscriptions)
        generation = response["generation"]
        out = {}
        for sub in subscriptions:
            key = f"{generation}:{sub.member_id}".encode()
            self.decisions[key] = (generation, sub.member_id, decided)
            out[sub.member_id] = key
        if decided.probing_rebalance_needed:
            leader_epoch = leader.epoch

            def probe() -> None:
                if leader.epoch == leader_epoch and leader.alive and leader.phase == "stable" \
                        and leader.generation == generation:
                    self._join(leader)

            self.at(self.now + self.settings.probing_rebalance_interval_ms, probe)
        return out

    def _on_sync(self, member: _Member, response: dict[str, Any], generation: int) -> None:
        error = response["error"]
        if error == "NONE":
            decision = self.decisions.get(response["assignment"])
            if decision is None:
                assigned: frozenset[str] = frozenset()
                standby: frozenset[str] = frozenset()
                warmup: frozenset[str] = frozenset()
            else:
                # A replaced static member inherits its old id's assignment bytes.
                _, owner_id, decided = decision
                assigned = decided.active.get(owner_id, frozenset())
                standby = decided.standby.get(owner_id, frozenset())
                warmup = decided.warmup.get(owner_id, frozenset())
            member.phase = "stable"
            revoked = member.owned - assigned
            for task in sorted(revoked):
                self._release(member, task, "revoked")
            self._reclaim(member)  # tasks kept across a pause run again
            for k, task in enumerate(sorted(assigned - member.owned)):
                if task in self.owner:
                    self._claim(member, task, (k + 1) * self.settings.task_open_ms)
            self._apply_standbys(member, standby, warmup)
            member.previous = frozenset(member.owned)
            if self.cooperative and revoked:
                self._join(member, closing_ms=len(revoked) * self.settings.task_close_ms)
        elif error == "FENCED_INSTANCE_ID":
            self._lose_all(member)
            member.alive = False
            member.phase = "down"
        else:
            if error in ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION"):
                self._lose_all(member)
                if error == "UNKNOWN_MEMBER_ID":
                    member.member_id = ""
            self._join(member)

    def _apply_standbys(
        self, member: _Member, standby: frozenset[str], warmup: frozenset[str]
    ) -> None:
        for task in list(member.standby):
            if task not in standby:
                member.standby.discard(task)
                member.local_offset[task] = self.end_offset(task)
        for task in list(member.warming):
            if task not in standby:
                self._restore_progress(member)
                left = member.restoring.pop(task, 0.0)
                member.warming.discard(task)
                member.local_offset[task] = self.end_offset(task) - left
        for task in sorted(standby - member.owned):
            if task in member.standby or task in member.warming or task not in self.owner:
                continue
            lag = self.end_offset(task) - member.local_offset.get(task, 0.0)
            if lag > 0 and task in warmup:
                self._restore_progress(member)
                member.restoring[task] = lag
                member.warming.add(task)
            else:
                member.standby.add(task)
        self._restore_schedule(member)

    def _schedule_heartbeat(self, member: _Member) -> None:
        if member.heartbeat_epoch == member.epoch:
            return
        epoch = member.epoch
        member.heartbeat_epoch = epoch

        def beat() -> None:
            if member.epoch != epoch or not member.alive or member.paused:
                return
            member.heartbeat_epoch = -1
            if member.phase not in ("syncing", "stable"):
                return
            self._heartbeat(member)

        interval = self.settings.heartbeat_interval_ms
        wait = interval - (self.now - member.heartbeat_phase) % interval
        self.at(self.now + wait, beat)

    def _heartbeat(self, member: _Member, resume: bool = False) -> None:
        member_id, generation = member.member_id, member.generation

        epoch = member.epoch
        latency = self.settings.request_latency_ms
        # The request is handled at once and its answer arrives after the round trip (a
        # heartbeat's timing matters to the session, not to the 5 ms of latency); an answer
        # that asks nothing of the member is not delivered, which keeps long runs fast.
        response = self.coordinator.heartbeat(GROUP_ID, member_id, generation, member.instance_id)
        if response["error"] != "NONE" or resume:
            self.at(self.now + 2 * latency,
                    lambda: self._on_heartbeat(member, response, epoch, resume))
        self._schedule_heartbeat(member)

    def _on_heartbeat(
        self, member: _Member, response: dict[str, Any], epoch: int, resume: bool
    ) -> None:
        if member.epoch != epoch or not member.alive or member.paused:
            return
        error = response["error"]
        if error in ("NONE", "REBALANCE_IN_PROGRESS") and resume:
            self._reclaim(member)
        if error == "NONE":
            return
        if error == "REBALANCE_IN_PROGRESS":
            if member.phase == "stable":
                self._join(member)
            return
        if error == "FENCED_INSTANCE_ID":
            self._lose_all(member)
            member.alive = False
            member.phase = "down"
            return
        self._lose_all(member)
        if error == "UNKNOWN_MEMBER_ID":
            member.member_id = ""
        member.generation = -1
        self._join(member)

    def _reclaim(self, member: _Member) -> None:
        """After a pause the coordinator still knows the member: it runs its tasks again."""
        for task in sorted(member.owned):
            current = self.owner.get(task)
            if current is not None and current != member.name:
                self.violations.append(
                    f"t={self.now}: task {task} owned by {current} and {member.name} at once"
                )
                continue
            self.owner[task] = member.name
            self.paused_holder.pop(task, None)
            self._set_status(task, "restoring" if task in member.restoring else "running")
        self._restore_schedule(member)

    # -- checks --------------------------------------------------------------------------
    def check_generation(self, member: _Member, generation: int) -> None:
        """Record a violation when a member gets an assignment older than the group's."""
        group = self.coordinator.groups.get(GROUP_ID)
        if group is not None and generation < group.generation_id:
            self.violations.append(
                f"t={self.now}: {member.name} got generation {generation} "
                f"while the group is at {group.generation_id}"
            )

    def alive_members(self) -> list[str]:
        """Names of the members running now (paused ones included)."""
        return [m.name for m in self.members.values() if m.alive]

    def result(self, events: list[EventReport]) -> SimulationResult:
        """Freeze the run into a :class:`SimulationResult`."""
        if self.series and self.series[-1][0] < self.now:
            self.series.append((self.now, *self.series[-1][1:]))
        return SimulationResult(
            protocol=self.protocol,
            events=events,
            series=list(self.series),
            group_states=list(self.group_states),
            rebalances=self.rebalances,
            generation=self._last_generation,
            task_seconds_unavailable={k: v / 1000.0 for k, v in self.unavailable_ms.items()},
            stop_the_world_ms=self.stop_the_world_ms,
            final_status=dict(self.status),
            violations=list(self.violations),
            duration_ms=self.now,
            final_members=self.alive_members(),
        )


def _with_id(subscription: MemberSubscription, member_id: str) -> MemberSubscription:
    return MemberSubscription(
        member_id=member_id,
        owned=subscription.owned,
        previous=subscription.previous,
        task_lags=subscription.task_lags,
        capacity=subscription.capacity,
    )


def task_names(count: int, start: int = 0) -> list[str]:
    """Streams task ids ``0_<n>`` for ``n`` in ``[start, start + count)``."""
    return [f"0_{n}" for n in range(start, start + count)]

