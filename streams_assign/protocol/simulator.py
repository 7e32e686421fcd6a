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

import random
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from streams_assign.errors import InvalidTimelineError
from streams_assign.protocol.assignors import (
    GroupAssignment,
    GroupAssignor,
    MemberSubscription,
    cooperative_adjust,
)
from streams_assign.protocol.classic_group import ResponseFuture
from streams_assign.protocol.coordinator import CoordinatorConfig, GroupCoordinator
from streams_assign.protocol.results import (
    PROTOCOLS,
    REASONS,
    EventReport,
    ProtocolSettings,
    SimulationResult,
)
from streams_assign.protocol.tasks import GROUP_ID, MemberState, TaskRuntime

__all__ = [
    "GROUP_ID",
    "PROTOCOLS",
    "REASONS",
    "EventReport",
    "GroupSimulator",
    "ProtocolSettings",
    "SimulationResult",
    "task_names",
]


class GroupSimulator(TaskRuntime):
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
        super().__init__(protocol, settings)
        self.cooperative = protocol == "cooperative"
        self.assignor = assignor
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
        self.prefix_names: dict[str, str] = {}
        self.id_names: dict[str, str] = {}
        self.subscriptions: dict[str, MemberSubscription] = {}
        self.decisions: dict[bytes, tuple[int, str, GroupAssignment]] = {}
        self._rng = random.Random(settings.seed)
        self.tasks_at_last_assignment = 0
        self.add_tasks(tasks)

    # -- member actions ------------------------------------------------------------------
    def start_member(self, name: str, keep_state: bool = True) -> None:
        """Start (or restart) the member called ``name``; it joins the group."""
        member = self.members.get(name)
        if member is None:
            instance = f"{name}-instance" if self.settings.static_membership else None
            member = MemberState(name=name, instance_id=instance)
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
            self._send(
                member,
                lambda: self.coordinator.leave_group(GROUP_ID, [(member_id, None)]),
                even_if_dead=True,
                delay_ms=closing_ms,
            )

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

    def _resume(self, member: MemberState) -> None:
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
        member: MemberState,
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
        member: MemberState,
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

    def _metadata(self, member: MemberState) -> bytes:
        owned = ",".join(sorted(member.owned)) if self.cooperative else ""
        return f"{self.protocol}:{zlib.crc32(owned.encode())}".encode()

    def _join(self, member: MemberState, closing_ms: int = 0) -> None:
        if not self.cooperative:
            closing_ms += len(member.owned) * self.settings.task_close_ms
            self._release_all_actives(member, "revoked")
        # The heartbeat thread keeps the session alive while the member closes its tasks.
        member.phase = "revoking" if closing_ms > 0 else "joining"
        lags = {}
        if self.settings.state_records_per_task > 0:
            self._restore_progress(member)
            for task, offset in member.local_offset.items():
                if task in self.owner:
                    lags[task] = max(0, int(self.end_offset(task) - offset))
            for task in member.standby | member.owned:
                lags[task] = int(max(0.0, member.restoring.get(task, 0.0)))
        subscription = MemberSubscription(
            member_id="",
            owned=frozenset(member.owned),
            previous=member.previous,
            task_lags=lags,
            generation=member.generation if (member.owned or member.previous) else -1,
        )
        protocols = ((self.assignor.name, self._metadata(member)),)
        settings = self.settings

        def request() -> None:
            member.phase = "joining"
            self.subscriptions[member.name] = subscription
            self.coordinator.join_group(
                self._reply(member, lambda r: self._on_join(member, r)),
                GROUP_ID,
                member.member_id,
                member.instance_id,
                "consumer",
                protocols,
                settings.session_timeout_ms,
                settings.rebalance_timeout_ms,
                member.name,
            )

        self._send(member, request, delay_ms=closing_ms)

    def _release_all_actives(self, member: MemberState, reason: str) -> None:
        for task in sorted(member.owned):
            self._release(member, task, reason)

    def _lose_all(self, member: MemberState) -> None:
        """``onPartitionsLost``: the member learns it is out of the group."""
        self._release_all(member, "unowned")
        member.previous = frozenset()

    def _on_join(self, member: MemberState, response: dict[str, Any]) -> None:
        error = response["error"]
        if error == "MEMBER_ID_REQUIRED":
            member.member_id = response["member_id"]
            self._join(member)
        elif error == "NONE":
            member.member_id = response["member_id"]
            member.generation = response["generation"]
            member.is_leader = response["leader"] == member.member_id
            member.phase = "syncing"
            self._schedule_heartbeat(member)
            assignments: dict[str, bytes] = {}
            if response["members"] and not response["skip_assignment"]:
                assignments = self._lead(member, response)
            generation = member.generation
            member_id = member.member_id
            self._send(
                member,
                lambda: self.coordinator.sync_group(
                    self._reply(member, lambda r: self._on_sync(member, r, generation), generation),
                    GROUP_ID,
                    member_id,
                    generation,
                    member.instance_id,
                    "consumer",
                    self.assignor.name,
                    assignments,
                ),
            )
        elif error == "FENCED_INSTANCE_ID":
            self._lose_all(member)
            member.alive = False
            member.phase = "down"
        else:
            if error in ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION"):
                self._lose_all(member)
                member.member_id = "" if error == "UNKNOWN_MEMBER_ID" else member.member_id
            self.at(self.now + 100, lambda: self._rejoin_if_alive(member))

    def _rejoin_if_alive(self, member: MemberState) -> None:
        if member.alive and not member.paused and member.phase == "joining":
            self._join(member)

    def _lead(self, leader: MemberState, response: dict[str, Any]) -> dict[str, bytes]:
        self.tasks_at_last_assignment = len(self.tasks)
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
                if (
                    leader.epoch == leader_epoch
                    and leader.alive
                    and leader.phase == "stable"
                    and leader.generation == generation
                ):
                    self._join(leader)

            self.at(self.now + self.settings.probing_rebalance_interval_ms, probe)
        return out

    def _on_sync(self, member: MemberState, response: dict[str, Any], generation: int) -> None:
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
            # A leader that skipped the assignment (a static leader's restart) or assigned
            # before tasks were added still watches the metadata: it rejoins.
            stale_metadata = member.is_leader and len(self.tasks) != self.tasks_at_last_assignment
            if stale_metadata or (self.cooperative and revoked):
                closing = len(revoked) * self.settings.task_close_ms if self.cooperative else 0
                self._join(member, closing_ms=closing)
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

    def _schedule_heartbeat(self, member: MemberState) -> None:
        if member.heartbeat_epoch == member.epoch:
            return
        epoch = member.epoch
        member.heartbeat_epoch = epoch

        def beat() -> None:
            if member.epoch != epoch or not member.alive or member.paused:
                return
            member.heartbeat_epoch = -1
            if member.phase not in ("syncing", "stable", "revoking"):
                return
            self._heartbeat(member)

        interval = self.settings.heartbeat_interval_ms
        wait = interval - (self.now - member.heartbeat_phase) % interval
        self.at(self.now + wait, beat)

    def _heartbeat(self, member: MemberState, resume: bool = False) -> None:
        member_id, generation = member.member_id, member.generation

        epoch = member.epoch
        latency = self.settings.request_latency_ms
        # The request is handled at once and its answer arrives after the round trip (a
        # heartbeat's timing matters to the session, not to the 5 ms of latency); an answer
        # that asks nothing of the member is not delivered, which keeps long runs fast.
        response = self.coordinator.heartbeat(GROUP_ID, member_id, generation, member.instance_id)
        if response["error"] != "NONE" or resume:
            self.at(
                self.now + 2 * latency, lambda: self._on_heartbeat(member, response, epoch, resume)
            )
        self._schedule_heartbeat(member)

    def _on_heartbeat(
        self, member: MemberState, response: dict[str, Any], epoch: int, resume: bool
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


def _with_id(subscription: MemberSubscription, member_id: str) -> MemberSubscription:
    return MemberSubscription(
        member_id=member_id,
        owned=subscription.owned,
        previous=subscription.previous,
        task_lags=subscription.task_lags,
        capacity=subscription.capacity,
        generation=subscription.generation,
    )


def task_names(count: int, start: int = 0) -> list[str]:
    """Streams task ids ``0_<n>`` for ``n`` in ``[start, start + count)``."""
    return [f"0_{n}" for n in range(start, start + count)]
