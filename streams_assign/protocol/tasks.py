"""Tasks over time in the timeline simulator: ownership, restoring and the unavailability ledger.

:class:`TaskRuntime` is the half of :class:`~streams_assign.protocol.simulator.GroupSimulator`
that does not speak the protocol: the event queue and clock, where each task runs and why it
is stopped, the restore model (a member replays changelogs at ``restore_records_per_sec``,
shared by its restoring tasks, Kafka Streams' restore consumer in outline), and the figures
integrated over time.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from streams_assign.protocol.classic_group import GroupState
from streams_assign.protocol.coordinator import GroupCoordinator
from streams_assign.protocol.results import (
    REASONS,
    EventReport,
    ProtocolSettings,
    SimulationResult,
)

__all__ = ["GROUP_ID", "MemberState", "TaskRuntime"]

GROUP_ID = "sim"


@dataclass
class MemberState:
    """One simulated client: its protocol state, tasks and local state stores."""

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
    is_leader: bool = False


class TaskRuntime:
    """The event queue, the tasks' owners and statuses, and the restore model.

    Parameters
    ----------
    protocol:
        ``eager`` or ``cooperative`` (reported in the result).
    settings:
        Protocol and restore settings.
    """

    coordinator: GroupCoordinator

    def __init__(self, protocol: str, settings: ProtocolSettings) -> None:
        self.protocol = protocol
        self.settings = settings
        self.now = 0
        self._queue: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = 0
        self.members: dict[str, MemberState] = {}
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
        self.group_states: list[tuple[int, str, int]] = []
        self.violations: list[str] = []
        self.stable_since: int | None = None
        self.stop_the_world_ms = 0
        self._ever_assigned = False
        self.rebalances = 0
        self._last_generation = 0
        self.records_restored = 0.0

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
    def _claim(self, member: MemberState, task: str, open_ms: int = 0) -> None:
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

    def _start_or_restore(self, member: MemberState, task: str) -> None:
        lag = self.end_offset(task) - member.local_offset.get(task, 0.0)
        if lag > 0 and self.settings.state_records_per_task > 0:
            self._restore_progress(member)
            member.restoring[task] = lag
            self._set_status(task, "paused" if member.paused else "restoring")
            self._restore_schedule(member)
        else:
            self._set_status(task, "paused" if member.paused else "running")

    def _release(self, member: MemberState, task: str, reason: str) -> None:
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

    def _release_all(self, member: MemberState, reason: str) -> None:
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

    def _restore_progress(self, member: MemberState) -> None:
        if member.restoring and not member.paused and member.alive:
            elapsed = (self.now - member.restore_clock) / 1000.0
            share = self.settings.restore_records_per_sec * elapsed / len(member.restoring)
            for task, left in member.restoring.items():
                self.records_restored += min(share, max(left, 0.0))
                member.restoring[task] = left - share
        member.restore_clock = self.now

    def _restore_schedule(self, member: MemberState) -> None:
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

    def _apply_standbys(
        self, member: MemberState, standby: frozenset[str], warmup: frozenset[str]
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

    def _reclaim(self, member: MemberState) -> None:
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
    def check_generation(self, member: MemberState, generation: int) -> None:
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
            records_restored=int(self.records_restored),
            final_status=dict(self.status),
            violations=list(self.violations),
            duration_ms=self.now,
            final_members=self.alive_members(),
        )
