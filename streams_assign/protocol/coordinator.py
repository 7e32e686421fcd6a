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

from typing import Any

from streams_assign.protocol.classic_group import (
    ClassicGroup,
    ClassicGroupMember,
    GroupState,
    Protocols,
    ResponseFuture,
)
from streams_assign.protocol.rebalance import (
    NEW_MEMBER_JOIN_TIMEOUT_MS,
    UNKNOWN_MEMBER_ID,
    CoordinatorConfig,
    JoinRequest,
    RebalancePhases,
    heartbeat_key,
    join_key,
    parse_timer_key,
    sync_key,
)
from streams_assign.protocol.responses import EMPTY_ASSIGNMENT, join_response, sync_response

__all__ = [
    "NEW_MEMBER_JOIN_TIMEOUT_MS",
    "UNKNOWN_MEMBER_ID",
    "CoordinatorConfig",
    "GroupCoordinator",
    "heartbeat_key",
    "join_key",
    "parse_timer_key",
    "sync_key",
]


class GroupCoordinator(RebalancePhases):
    """The classic-group half of Kafka's ``GroupMetadataManager`` plus the service checks.

    Requests (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DeleteGroups) on top of
    :class:`~streams_assign.protocol.rebalance.RebalancePhases`; construct it with the same
    parameters (``config``, ``id_generator``, ``start_ms``, ``fast_timer``).

    Notes
    -----
    Join and sync answers go to the :class:`ResponseFuture` passed with the request (they may
    complete later, from another request or a timer); heartbeat, leave and delete answer with
    the returned dict. Errors are Kafka ``Errors`` names.
    """

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
        request = JoinRequest(
            member_id,
            group_instance_id,
            protocol_type,
            protocols,
            session_timeout_ms,
            rebalance_timeout_ms,
            client_id,
            version,
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
        self, group: ClassicGroup, request: JoinRequest, reply: ResponseFuture
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
        self, group: ClassicGroup, request: JoinRequest, reply: ResponseFuture
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
        request: JoinRequest,
        reply: ResponseFuture,
    ) -> None:
        group.update_member(
            member,
            request.protocols,
            request.rebalance_timeout_ms,
            request.session_timeout_ms,
            reply,
        )
        self._maybe_prepare_rebalance_or_complete_join(group)

    def _add_member_then_rebalance(
        self, group: ClassicGroup, request: JoinRequest, member_id: str, reply: ResponseFuture
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
        request: JoinRequest,
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
            new_member,
            request.protocols,
            request.rebalance_timeout_ms,
            request.session_timeout_ms,
            reply,
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
                    "NONE",
                    group.protocol_type,
                    group.protocol_name,
                    group.member(member_id).assignment,
                )
            )

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if (
            group.state in (GroupState.DEAD, GroupState.EMPTY, GroupState.PREPARING_REBALANCE)
            or len(group.pending_sync_members) == 0
        ):
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
    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]) -> dict[str, Any]:
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
            GroupState.STABLE,
            GroupState.PREPARING_REBALANCE,
            GroupState.COMPLETING_REBALANCE,
        ):
            return {"error": "NON_EMPTY_GROUP"}
        del self.groups[group_id]
        return {"error": "NONE"}


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current
