"""The rebalance phases of Kafka's classic groups: join completion, sync and session timeouts.

The part of ``GroupMetadataManager`` (Kafka 4.0 group-coordinator module) that moves a classic
group between PreparingRebalance, CompletingRebalance, Stable and Empty: ``prepareRebalance``,
``completeClassicGroupJoin``, the initial-rebalance delay, ``expirePendingSync``,
``expireClassicGroupMemberHeartbeat`` and the propagation of assignments. The requests that
drive it live in :mod:`streams_assign.protocol.coordinator`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from streams_assign.java.hash_order import JavaHashSet, java_string_hash_code
from streams_assign.protocol.classic_group import (
    ClassicGroup,
    ClassicGroupMember,
    GroupState,
    Protocols,
    clear_keeping_capacity,
)
from streams_assign.protocol.responses import EMPTY_ASSIGNMENT, join_response, sync_response
from streams_assign.protocol.timer import (
    CoordinatorTimer,
    FastCoordinatorTimer,
    ScheduledTimeout,
)

__all__ = [
    "NEW_MEMBER_JOIN_TIMEOUT_MS",
    "UNKNOWN_MEMBER_ID",
    "CoordinatorConfig",
    "JoinRequest",
    "RebalancePhases",
    "heartbeat_key",
    "join_key",
    "parse_timer_key",
    "sync_key",
]

NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000
"""``CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS``: a new member's join deadline, milliseconds."""

UNKNOWN_MEMBER_ID = ""


@dataclass(frozen=True)
class CoordinatorConfig:
    """The broker settings of the classic group coordinator (Kafka's broker defaults).

    Attributes
    ----------
    initial_rebalance_delay_ms:
        ``group.initial.rebalance.delay.ms``, milliseconds.
    min_session_timeout_ms, max_session_timeout_ms:
        ``group.min.session.timeout.ms`` / ``group.max.session.timeout.ms``, milliseconds.
    max_size:
        ``group.max.size``, members.
    new_member_join_timeout_ms:
        The fixed join deadline of a new member, milliseconds.
    """

    initial_rebalance_delay_ms: int = 3000
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    max_size: int = 2**31 - 1
    new_member_join_timeout_ms: int = NEW_MEMBER_JOIN_TIMEOUT_MS


def join_key(group_id: str) -> str:
    """Timer key of a group's join phase."""
    return f"join\0{group_id}"


def sync_key(group_id: str) -> str:
    """Timer key of a group's pending-sync phase."""
    return f"sync\0{group_id}"


def heartbeat_key(group_id: str, member_id: str) -> str:
    """Timer key of a member's session."""
    return f"heartbeat\0{group_id}\0{member_id}"


def parse_timer_key(key: str) -> tuple[str, str, str | None]:
    """``(kind, group id, member id or None)`` of a timer key."""
    parts = key.split("\0")
    return parts[0], parts[1], parts[2] if len(parts) > 2 else None


class RebalancePhases:
    """Classic groups' state and timers: the rebalance phases of ``GroupMetadataManager``.

    :class:`~streams_assign.protocol.coordinator.GroupCoordinator` adds the requests on top.

    Parameters
    ----------
    config:
        Broker settings.
    id_generator:
        ``(prefix) -> member id``; Kafka appends ``-`` and a random UUID to the client id (or the
        group.instance.id of a static member). Pass a seeded generator for reproducible ids.
    start_ms:
        The clock at start, milliseconds.
    fast_timer:
        Use :class:`FastCoordinatorTimer` (FIFO ties, O(1) cancel) instead of Kafka's test
        timer's ``PriorityQueue`` order; for long simulations, not for parity with Kafka.
    """

    def __init__(
        self,
        config: CoordinatorConfig,
        id_generator: Callable[[str], str],
        start_ms: int = 0,
        fast_timer: bool = False,
    ) -> None:
        self.config = config
        self.now_ms = start_ms
        self._id_generator = id_generator
        self.groups: dict[str, ClassicGroup] = {}
        self.timer: CoordinatorTimer | FastCoordinatorTimer = (
            FastCoordinatorTimer(lambda: self.now_ms)
            if fast_timer
            else CoordinatorTimer(lambda: self.now_ms)
        )

    # -- time ----------------------------------------------------------------------------
    def advance_to(
        self, t_ms: int, on_fire: Callable[[ScheduledTimeout], None] | None = None
    ) -> None:
        """Step the clock through every deadline <= ``t_ms`` (firing the timers), then to t.

        A deadline equal to ``t_ms`` fires now, before any request at ``t_ms``; deadlines that tie
        fire in ``PriorityQueue`` heap order.
        """
        while True:
            deadline = self.timer.next_deadline()
            if deadline is None or deadline > t_ms:
                break
            self.now_ms = max(self.now_ms, deadline)
            self.timer.poll(on_fire)
        self.now_ms = max(self.now_ms, t_ms)

    def _lookup(self, group_id: str) -> ClassicGroup | None:
        return self.groups.get(group_id)

    # -- rebalance phases ----------------------------------------------------------------
    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group)
        else:
            self._maybe_complete_join_phase(group)

    def _maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        if (
            group.is_in_state(GroupState.PREPARING_REBALANCE)
            and group.previous_state is not GroupState.EMPTY
            and group.has_all_members_joined()
        ):
            self._complete_join(group)

    def _prepare_rebalance(self, group: ClassicGroup) -> None:
        if group.is_in_state(GroupState.COMPLETING_REBALANCE):
            for member in group.all_members():
                member.assignment = EMPTY_ASSIGNMENT
            self._propagate_assignment(group, "REBALANCE_IN_PROGRESS")
        self._remove_sync_expiration(group)
        initial = group.is_in_state(GroupState.EMPTY)
        if initial:
            delay = self.config.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self.timer.schedule(
                join_key(group.group_id),
                delay,
                self._initial_rebalance_step(group.group_id, delay, remaining),
            )
        group.transition_to(GroupState.PREPARING_REBALANCE)
        if not initial:
            self._maybe_complete_join_else_schedule(group)

    def _maybe_complete_join_else_schedule(self, group: ClassicGroup) -> None:
        if group.has_all_members_joined():
            self._complete_join(group)
        else:
            self.timer.schedule(
                join_key(group.group_id),
                group.rebalance_timeout_ms(),
                self._join_expiry(group.group_id),
            )

    def _initial_rebalance_step(
        self, group_id: str, delay_ms: int, remaining_ms: int
    ) -> Callable[[], None]:
        def run() -> None:
            group = self._lookup(group_id)
            if group is None:
                return
            if group.new_member_added and remaining_ms != 0:
                group.new_member_added = False
                new_delay = min(self.config.initial_rebalance_delay_ms, remaining_ms)
                new_remaining = max(remaining_ms - delay_ms, 0)
                self.timer.schedule(
                    join_key(group_id),
                    new_delay,
                    self._initial_rebalance_step(group_id, new_delay, new_remaining),
                )
            else:
                self._complete_join(group)

        return run

    def _join_expiry(self, group_id: str) -> Callable[[], None]:
        def run() -> None:
            group = self._lookup(group_id)
            if group is not None:
                self._complete_join(group)

        return run

    def _complete_join(self, group: ClassicGroup) -> None:
        """``completeClassicGroupJoin``: drop dynamic members not rejoined; next generation."""
        self.timer.cancel(join_key(group.group_id))
        not_rejoined = group.not_yet_rejoined_members()
        dynamic = [m for _, m in not_rejoined.items() if not m.is_static]
        # Collectors.toMap builds a fresh HashMap: its iteration order decides removals.
        failed = JavaHashSet(java_string_hash_code, [m.member_id for m in dynamic])
        for member_id in failed:
            group.remove(member_id)
            self.timer.cancel(heartbeat_key(group.group_id, member_id))
        if group.is_in_state(GroupState.DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and len(group.members) > 0:
            self.timer.schedule(
                join_key(group.group_id),
                group.rebalance_timeout_ms(),
                self._join_expiry(group.group_id),
            )
            return
        group.init_next_generation()
        if group.is_in_state(GroupState.EMPTY):
            return
        for member in group.all_members():
            is_leader = group.is_leader(member.member_id)
            response = join_response(
                "NONE",
                member_id=member.member_id,
                generation=group.generation_id,
                protocol_type=group.protocol_type,
                protocol=group.protocol_name,
                leader=group.leader_id or "",
                members=group.current_members_metadata() if is_leader else [],
            )
            group.complete_join_future(member, response)
            self._reschedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        self.timer.schedule(
            sync_key(group.group_id),
            group.rebalance_timeout_ms(),
            self._sync_expiry(group.group_id, group.generation_id),
        )

    def _sync_expiry(self, group_id: str, generation_id: int) -> Callable[[], None]:
        def run() -> None:
            group = self._lookup(group_id)
            if group is None or generation_id != group.generation_id:
                return
            if group.state not in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE):
                return
            if len(group.pending_sync_members) == 0:
                return
            pending = group.pending_sync_members
            # new HashSet<>(pending): capacity from the size, filled in the source's order.
            capacity = max(int(len(pending) / 0.75) + 1, 16)
            copy = JavaHashSet(java_string_hash_code, pending, initial_capacity=capacity)
            for member_id in list(copy):
                group.remove(member_id)
                self.timer.cancel(heartbeat_key(group_id, member_id))
            self._prepare_rebalance(group)

        return run

    def _remove_sync_expiration(self, group: ClassicGroup) -> None:
        clear_keeping_capacity(group.pending_sync_members)
        self.timer.cancel(sync_key(group.group_id))

    def _propagate_assignment(self, group: ClassicGroup, error: str) -> None:
        protocol_type = group.protocol_type if error == "NONE" else None
        protocol = group.protocol_name if error == "NONE" else None
        for member in group.all_members():
            if group.complete_sync_future(
                member, sync_response(error, protocol_type, protocol, member.assignment)
            ):
                self._reschedule_heartbeat(group, member)

    # -- sessions ------------------------------------------------------------------------
    def _reschedule_heartbeat(
        self, group: ClassicGroup, member: ClassicGroupMember, timeout_ms: int | None = None
    ) -> None:
        self.timer.schedule(
            heartbeat_key(group.group_id, member.member_id),
            member.session_timeout_ms if timeout_ms is None else timeout_ms,
            self._heartbeat_expiry(group.group_id, member.member_id),
        )

    def _heartbeat_expiry(self, group_id: str, member_id: str) -> Callable[[], None]:
        def run() -> None:
            group = self._lookup(group_id)
            if group is None or group.is_in_state(GroupState.DEAD):
                return
            if group.is_pending_member(member_id):
                group.remove(member_id)
                if (
                    group.is_in_state(GroupState.PREPARING_REBALANCE)
                    and group.has_all_members_joined()
                ):
                    self._complete_join(group)
                return
            if not group.has_member(member_id):
                return
            member = group.member(member_id)
            if not member.has_satisfied_heartbeat():
                self._remove_member_and_update(group, member)

        return run

    def _remove_member_and_update(self, group: ClassicGroup, member: ClassicGroupMember) -> None:
        group.complete_join_future(member, join_response("UNKNOWN_MEMBER_ID"))
        group.remove(member.member_id)
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join(group)
        elif group.is_in_state(GroupState.PREPARING_REBALANCE) and group.has_all_members_joined():
            self._complete_join(group)


@dataclass(frozen=True)
class JoinRequest:
    """The fields of a JoinGroup request the coordinator reads."""

    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: Protocols
    session_timeout_ms: int
    rebalance_timeout_ms: int
    client_id: str
    version: int
