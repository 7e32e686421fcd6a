"""Kafka's classic group coordinator as a deterministic state machine.

A port, in our own code, of the classic-group paths of ``GroupMetadataManager`` (Kafka 4.0
group-coordinator module: ``classicGroupJoin``, ``classicGroupSync``, ``classicGroupHeartbeat``,
``classicGroupLeave``, the join / sync / heartbeat timeouts) together with the checks
``GroupCoordinatorService`` applies before it (empty group id, session timeout bounds) and its
exception-to-error mapping. Time only moves when the caller says so: requests are method calls
at the coordinator's current time, and :meth:`GroupCoordinator.advance_to` fires the timers.

Writes are treated as committed at once (what Kafka's own tests do), so the leader's SyncGroup
and a static member's replacement answer within the same call.

References
----------
KIP-62 (rebalance timeout), KIP-134 (initial rebalance delay), KIP-345 (static membership),
KIP-394 (MEMBER_ID_REQUIRED), KIP-814 (skip assignment).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from streams_assign.javacompat import JavaHashSet, java_string_hash_code
from streams_assign.protocol.classic_group import (
    ClassicGroup,
    ClassicGroupMember,
    GroupState,
    Protocols,
    ResponseFuture,
    clear_keeping_capacity,
)
from streams_assign.protocol.responses import EMPTY_ASSIGNMENT, join_response, sync_response
from streams_assign.protocol.timer import (
    CoordinatorTimer,
    FastCoordinatorTimer,
    ScheduledTimeout,
)

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


class GroupCoordinator:
    """The classic-group half of Kafka's ``GroupMetadataManager`` plus the service checks.

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

    Notes
    -----
    Join and sync answers go to the :class:`ResponseFuture` passed with the request (they may
    complete later, from another request or a timer); heartbeat, leave and delete answer with
    the returned dict. Errors are Kafka ``Errors`` names.
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

    # -- JoinGroup -----------------------------------------------------------------------
    def join_group(
        self,
        reply: ResponseFuture,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str,
        protocols: Protocols,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        client_id: str,
        version: int = 9,
    ) -> None:
        """JoinGroup (``GroupCoordinatorService.joinGroup`` then ``classicGroupJoin``)."""
        if group_id == "":
            reply.complete(join_response("INVALID_GROUP_ID", member_id=member_id))
            return
        if not (
            self.config.min_session_timeout_ms
            <= session_timeout_ms
            <= self.config.max_session_timeout_ms
        ):
            reply.complete(join_response("INVALID_SESSION_TIMEOUT", member_id=member_id))
            return
        is_unknown = member_id == UNKNOWN_MEMBER_ID
        group = self._lookup(group_id)
        if group is None:
            if not is_unknown:
                reply.complete(join_response("UNKNOWN_MEMBER_ID", member_id=member_id))
                return
            group = ClassicGroup(group_id, lambda: self.now_ms)
            self.groups[group_id] = group
        request = _JoinRequest(
            member_id, group_instance_id, protocol_type, protocols,
            session_timeout_ms, rebalance_timeout_ms, client_id, version,
        )
        if not self._accept_joining_member(group, member_id):
            group.remove(member_id)
            reply.complete(join_response("GROUP_MAX_SIZE_REACHED"))
        elif is_unknown:
            self._join_new_member(group, request, reply)
        else:
            self._join_existing_member(group, request, reply)

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        state = group.state
        if state in (GroupState.EMPTY, GroupState.DEAD):
            return True
        if state is GroupState.PREPARING_REBALANCE:
            return (
                group.has_member(member_id) and group.member(member_id).is_awaiting_join
            ) or group.num_members_awaiting_join < self.config.max_size
        return group.has_member(member_id) or len(group.members) < self.config.max_size

    def _join_new_member(
        self, group: ClassicGroup, request: _JoinRequest, reply: ResponseFuture
    ) -> None:
        if group.is_in_state(GroupState.DEAD):
            reply.complete(join_response("COORDINATOR_NOT_AVAILABLE"))
            return
        if not group.supports_protocols(request.protocol_type, request.protocols):
            reply.complete(join_response("INCONSISTENT_GROUP_PROTOCOL"))
            return
        prefix = request.group_instance_id or request.client_id
        new_member_id = self._id_generator(prefix)
        if request.group_instance_id is not None:
            existing = group.static_member_id(request.group_instance_id)
            if existing is not None:
                self._update_static_member(group, request, existing, new_member_id, reply)
            else:
                self._add_member_then_rebalance(group, request, new_member_id, reply)
        elif request.version >= 4:
            group.pending_join_members.add(new_member_id)
            self.timer.schedule(
                heartbeat_key(group.group_id, new_member_id),
                request.session_timeout_ms,
                self._heartbeat_expiry(group.group_id, new_member_id),
            )
            reply.complete(join_response("MEMBER_ID_REQUIRED", member_id=new_member_id))
        else:
            self._add_member_then_rebalance(group, request, new_member_id, reply)

    def _join_existing_member(
        self, group: ClassicGroup, request: _JoinRequest, reply: ResponseFuture
    ) -> None:
        member_id = request.member_id
        if group.is_in_state(GroupState.DEAD):
            reply.complete(join_response("COORDINATOR_NOT_AVAILABLE", member_id=member_id))
            return
        if not group.supports_protocols(request.protocol_type, request.protocols):
            reply.complete(join_response("INCONSISTENT_GROUP_PROTOCOL", member_id=member_id))
            return
        if group.is_pending_member(member_id):
            if request.group_instance_id is not None:
                # Kafka throws IllegalStateException; the service answers UNKNOWN_SERVER_ERROR.
                reply.complete(join_response("UNKNOWN_SERVER_ERROR"))
                return
            self._add_member_then_rebalance(group, request, member_id, reply)
            return
        error = group.validate_member(member_id, request.group_instance_id)
        if error is not None:
            reply.complete(join_response(error, member_id=member_id))
            return
        member = group.member(member_id)
        if group.is_in_state(GroupState.PREPARING_REBALANCE):
            self._update_member_then_rebalance(group, member, request, reply)
        elif group.is_in_state(GroupState.COMPLETING_REBALANCE):
            if member.matches(request.protocols):
                reply.complete(
                    join_response(
                        "NONE",
                        member_id=member_id,
                        generation=group.generation_id,
                        protocol_type=group.protocol_type,
                        protocol=group.protocol_name,
                        leader=group.leader_id or "",
                        members=group.current_members_metadata()
                        if group.is_leader(member_id)
                        else [],
                    )
                )
            else:
                self._update_member_then_rebalance(group, member, request, reply)
        elif group.is_in_state(GroupState.STABLE):
            if group.is_leader(member_id) or not member.matches(request.protocols):
                self._update_member_then_rebalance(group, member, request, reply)
            else:
                reply.complete(
                    join_response(
                        "NONE",
                        member_id=member_id,
                        generation=group.generation_id,
                        protocol_type=group.protocol_type,
                        protocol=group.protocol_name,
                        leader=group.leader_id or "",
                    )
                )
        else:
            reply.complete(join_response("UNKNOWN_MEMBER_ID", member_id=member_id))

    def _update_member_then_rebalance(
        self,
        group: ClassicGroup,
        member: ClassicGroupMember,
        request: _JoinRequest,
        reply: ResponseFuture,
    ) -> None:
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms,
            request.session_timeout_ms, reply,
        )
        self._maybe_prepare_rebalance_or_complete_join(group)

    def _add_member_then_rebalance(
        self, group: ClassicGroup, request: _JoinRequest, member_id: str, reply: ResponseFuture
    ) -> None:
        member = ClassicGroupMember(
            member_id=member_id,
            group_instance_id=request.group_instance_id,
            client_id=request.client_id,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            session_timeout_ms=request.session_timeout_ms,
            protocol_type=request.protocol_type,
            protocols=request.protocols,
        )
        member.is_new = True
        if (
            group.is_in_state(GroupState.PREPARING_REBALANCE)
            and group.previous_state is GroupState.EMPTY
        ):
            group.new_member_added = True
        group.add(member, reply)
        self._reschedule_heartbeat(group, member, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance_or_complete_join(group)

    def _update_static_member(
        self,
        group: ClassicGroup,
        request: _JoinRequest,
        old_member_id: str,
        new_member_id: str,
        reply: ResponseFuture,
    ) -> None:
        assert request.group_instance_id is not None
        current_leader = group.leader_id or ""
        new_member = group.replace_static_member(
            request.group_instance_id, old_member_id, new_member_id
        )
        self._reschedule_heartbeat(group, new_member)
        group.update_member(
            new_member, request.protocols, request.rebalance_timeout_ms,
            request.session_timeout_ms, reply,
        )
        if group.is_in_state(GroupState.STABLE):
            if (group.protocol_name or "") == group.select_protocol():
                # No rebalance: the GroupMetadata write commits and the member gets the current
                # generation under its new id (the leader is told to skip the assignment, v9+).
                is_leader = group.is_leader(new_member_id) and request.version >= 9
                group.complete_join_future(
                    new_member,
                    join_response(
                        "NONE",
                        member_id=new_member_id,
                        generation=group.generation_id,
                        protocol_type=group.protocol_type,
                        protocol=group.protocol_name,
                        leader=(group.leader_id or "") if request.version >= 9 else current_leader,
                        skip_assignment=is_leader,
                        members=group.current_members_metadata() if is_leader else [],
                    ),
                )
            else:
                self._maybe_prepare_rebalance_or_complete_join(group)
            return
        if group.is_in_state(GroupState.COMPLETING_REBALANCE):
            self._prepare_rebalance(group)
            return
        self._maybe_complete_join_phase(group)

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

    # -- SyncGroup -----------------------------------------------------------------------
    def sync_group(
        self,
        reply: ResponseFuture,
        group_id: str,
        member_id: str,
        generation_id: int,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: dict[str, bytes],
        version: int = 5,
    ) -> None:
        """SyncGroup (``KafkaApis`` and service checks, then ``classicGroupSync``)."""
        if version >= 5 and (protocol_type is None or protocol_name is None):
            reply.complete(sync_response("INCONSISTENT_GROUP_PROTOCOL"))
            return
        if group_id == "":
            reply.complete(sync_response("INVALID_GROUP_ID"))
            return
        group = self._lookup(group_id)
        if group is None or group.is_in_state(GroupState.EMPTY):
            reply.complete(sync_response("UNKNOWN_MEMBER_ID"))
            return
        error = group.validate_member(member_id, group_instance_id)
        if error is None and generation_id != group.generation_id:
            error = "ILLEGAL_GENERATION"
        if error is None and (
            _inconsistent(protocol_type, group.protocol_type)
            or _inconsistent(protocol_name, group.protocol_name)
        ):
            error = "INCONSISTENT_GROUP_PROTOCOL"
        if error is not None:
            reply.complete(sync_response(error))
        elif group.is_in_state(GroupState.PREPARING_REBALANCE):
            reply.complete(sync_response("REBALANCE_IN_PROGRESS"))
        elif group.is_in_state(GroupState.COMPLETING_REBALANCE):
            group.member(member_id).awaiting_sync = reply
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                for member in group.all_members():
                    member.assignment = assignments.get(member.member_id, EMPTY_ASSIGNMENT)
                self._propagate_assignment(group, "NONE")
                group.transition_to(GroupState.STABLE)
        elif group.is_in_state(GroupState.STABLE):
            self._remove_pending_sync_member(group, member_id)
            reply.complete(
                sync_response(
                    "NONE", group.protocol_type, group.protocol_name,
                    group.member(member_id).assignment,
                )
            )

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if group.state in (
            GroupState.DEAD, GroupState.EMPTY, GroupState.PREPARING_REBALANCE
        ) or len(group.pending_sync_members) == 0:
            self.timer.cancel(sync_key(group.group_id))

    # -- Heartbeat -----------------------------------------------------------------------
    def heartbeat(
        self,
        group_id: str,
        member_id: str,
        generation_id: int,
        group_instance_id: str | None,
    ) -> dict[str, Any]:
        """Heartbeat; returns ``{"error": name}``."""
        if group_id == "":
            return {"error": "INVALID_GROUP_ID"}
        group = self._lookup(group_id)
        if group is None:
            return {"error": "UNKNOWN_MEMBER_ID"}
        if group.is_in_state(GroupState.DEAD):
            return {"error": "COORDINATOR_NOT_AVAILABLE"}
        error = group.validate_member(member_id, group_instance_id)
        if error is not None:
            return {"error": error}
        if generation_id != group.generation_id:
            return {"error": "ILLEGAL_GENERATION"}
        if group.is_in_state(GroupState.EMPTY):
            return {"error": "UNKNOWN_MEMBER_ID"}
        self._reschedule_heartbeat(group, group.member(member_id))
        if group.is_in_state(GroupState.PREPARING_REBALANCE):
            return {"error": "REBALANCE_IN_PROGRESS"}
        return {"error": "NONE"}

    # -- LeaveGroup ----------------------------------------------------------------------
    def leave_group(
        self, group_id: str, members: list[tuple[str, str | None]]
    ) -> dict[str, Any]:
        """LeaveGroup for ``(member id, group.instance.id)`` identities.

        Returns ``{"error": name, "members": [(member id, instance id, error name)]}``.
        """
        if group_id == "":
            return {"error": "INVALID_GROUP_ID", "members": []}
        group = self._lookup(group_id)
        if group is None:
            return {
                "error": "NONE",
                "members": [(m, i, "UNKNOWN_MEMBER_ID") for m, i in members],
            }
        if group.is_in_state(GroupState.DEAD):
            return {"error": "COORDINATOR_NOT_AVAILABLE", "members": []}
        results: list[tuple[str, str | None, str]] = []
        for member_id, instance_id in members:
            if member_id == UNKNOWN_MEMBER_ID:
                static_id = None if instance_id is None else group.static_member_id(instance_id)
                if static_id is not None:
                    self._remove_current_member(group, static_id)
                    results.append((member_id, instance_id, "NONE"))
                else:
                    results.append((member_id, instance_id, "UNKNOWN_MEMBER_ID"))
            elif group.is_pending_member(member_id):
                group.remove(member_id)
                self.timer.cancel(heartbeat_key(group_id, member_id))
                results.append((member_id, instance_id, "NONE"))
            else:
                error = group.validate_member(member_id, instance_id)
                if error is None:
                    self._remove_current_member(group, member_id)
                    results.append((member_id, instance_id, "NONE"))
                else:
                    results.append((member_id, instance_id, error))
        if any(err == "NONE" for _, _, err in results):
            if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join(group)
            elif group.is_in_state(GroupState.PREPARING_REBALANCE):
                self._maybe_complete_join_phase(group)
        return {"error": "NONE", "members": results}

    def _remove_current_member(self, group: ClassicGroup, member_id: str) -> None:
        member = group.member(member_id)
        self.timer.cancel(heartbeat_key(group.group_id, member_id))
        group.complete_join_future(member, join_response("UNKNOWN_MEMBER_ID"))
        group.remove(member_id)

    # -- DeleteGroups --------------------------------------------------------------------
    def delete_group(self, group_id: str) -> dict[str, Any]:
        """DeleteGroups for one group: only an Empty group goes (``validateDeleteGroup``)."""
        group = self._lookup(group_id)
        if group is None or group.is_in_state(GroupState.DEAD):
            return {"error": "GROUP_ID_NOT_FOUND"}
        if group.state in (
            GroupState.STABLE, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE
        ):
            return {"error": "NON_EMPTY_GROUP"}
        del self.groups[group_id]
        return {"error": "NONE"}


@dataclass(frozen=True)
class _JoinRequest:
    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: Protocols
    session_timeout_ms: int
    rebalance_timeout_ms: int
    client_id: str
    version: int


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current
