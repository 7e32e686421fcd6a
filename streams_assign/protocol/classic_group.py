"""Kafka's ``ClassicGroup`` and ``ClassicGroupMember``: the classic group's membership state.

Follows ``org.apache.kafka.coordinator.group.classic.ClassicGroup`` (group-coordinator module,
Kafka 4.0). The maps whose iteration order decides outcomes (``members``, the protocol votes, the
pending-sync copy) are :class:`~streams_assign.javacompat.JavaHashMap` keyed by Java
``String.hashCode``, so leader choice and response order match Kafka's.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streams_assign.errors import CoordinatorStateError
from streams_assign.javacompat import JavaHashMap, JavaHashSet, java_string_hash_code
from streams_assign.protocol.responses import EMPTY_ASSIGNMENT, join_response, sync_response

__all__ = [
    "ClassicGroup",
    "ClassicGroupMember",
    "GroupState",
    "NO_LEADER",
    "Protocols",
    "ResponseFuture",
    "clear_keeping_capacity",
]

Protocols = tuple[tuple[str, bytes], ...]
"""A JoinGroup protocol list: ``(name, metadata bytes)`` in the member's preference order."""

NO_LEADER = ""


class GroupState(enum.Enum):
    """``ClassicGroupState``: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}


class ResponseFuture:
    """A ``CompletableFuture`` for one parked response: only the first completion counts.

    Parameters
    ----------
    on_complete:
        Called once with the response (a dict of response fields).
    """

    __slots__ = ("_on_complete", "done")

    def __init__(self, on_complete: Callable[[dict[str, Any]], None]) -> None:
        self._on_complete = on_complete
        self.done = False

    def complete(self, response: dict[str, Any]) -> bool:
        """Complete with ``response``; returns False (and does nothing) if already completed."""
        if self.done:
            return False
        self.done = True
        self._on_complete(response)
        return True


@dataclass(eq=False)
class ClassicGroupMember:
    """``ClassicGroupMember``: one member of a classic group.

    Attributes
    ----------
    member_id, group_instance_id, client_id:
        Identity (``group_instance_id`` is set for a static member).
    rebalance_timeout_ms, session_timeout_ms:
        The timeouts of its last JoinGroup, milliseconds.
    protocol_type, protocols:
        Its protocol type and ``(name, metadata)`` list.
    assignment:
        Its assignment bytes of the current generation.
    awaiting_join, awaiting_sync:
        Its parked JoinGroup / SyncGroup response futures.
    is_new:
        True from its first join until its first join completes.
    """

    member_id: str
    group_instance_id: str | None
    client_id: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    assignment: bytes = EMPTY_ASSIGNMENT
    awaiting_join: ResponseFuture | None = field(default=None, repr=False)
    awaiting_sync: ResponseFuture | None = field(default=None, repr=False)
    is_new: bool = False

    @property
    def is_static(self) -> bool:
        """True for a member with a ``group.instance.id``."""
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        """True while its JoinGroup is parked."""
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        """True while its SyncGroup is parked."""
        return self.awaiting_sync is not None

    def metadata(self, protocol_name: str | None) -> bytes:
        """The metadata of the first protocol named ``protocol_name``.

        Raises
        ------
        CoordinatorStateError
            If the member does not support it (Kafka's ``IllegalArgumentException``).
        """
        for name, metadata in self.protocols:
            if name == protocol_name:
                return metadata
        raise CoordinatorStateError(f"member does not support protocol {protocol_name}")

    def has_satisfied_heartbeat(self) -> bool:
        """``hasSatisfiedHeartbeat``: an old member with a parked join or sync is alive."""
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync

    def matches(self, protocols: Protocols) -> bool:
        """Same protocol names and metadata bytes, in the same order."""
        return protocols == self.protocols

    def vote(self, candidates: set[str]) -> str:
        """The first of its protocols that every member supports."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise CoordinatorStateError("member does not support any of the candidate protocols")


def _string_map() -> JavaHashMap[str, Any]:
    return JavaHashMap(java_string_hash_code)


class ClassicGroup:
    """``ClassicGroup``: state, generation, leader, members and the protocol vote.

    Parameters
    ----------
    group_id:
        The group id.
    clock:
        Returns the current time in milliseconds (for ``currentStateTimestamp``).
    """

    def __init__(self, group_id: str, clock: Callable[[], int]) -> None:
        self.group_id = group_id
        self._clock = clock
        self.state = GroupState.EMPTY
        self.previous_state = GroupState.DEAD
        self.state_timestamp_ms = clock()
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: JavaHashMap[str, ClassicGroupMember] = _string_map()
        self.static_members: JavaHashMap[str, str] = _string_map()
        self.pending_join_members: JavaHashSet[str] = JavaHashSet(java_string_hash_code)
        self.num_members_awaiting_join = 0
        self.supported_protocols: JavaHashMap[str, int] = _string_map()
        self.pending_sync_members: JavaHashSet[str] = JavaHashSet(java_string_hash_code)
        self.new_member_added = False

    # -- queries -------------------------------------------------------------------------
    def is_in_state(self, state: GroupState) -> bool:
        """True when the group is in ``state``."""
        return self.state is state

    def has_member(self, member_id: str) -> bool:
        """True for a (non-pending) member."""
        return member_id in self.members

    def member(self, member_id: str) -> ClassicGroupMember:
        """The member of id ``member_id`` (KeyError if absent)."""
        return self.members[member_id]

    def all_members(self) -> list[ClassicGroupMember]:
        """``members.values()`` in Java HashMap order."""
        return [m for _, m in self.members.items()]

    def is_leader(self, member_id: str) -> bool:
        """True if ``member_id`` is the leader."""
        return self.leader_id is not None and self.leader_id == member_id

    def is_pending_member(self, member_id: str) -> bool:
        """True for a member id handed out with MEMBER_ID_REQUIRED that has not joined yet."""
        return member_id in self.pending_join_members

    def static_member_id(self, instance_id: str) -> str | None:
        """The member id mapped to ``group.instance.id`` ``instance_id``."""
        return self.static_members.get(instance_id)

    def has_all_members_joined(self) -> bool:
        """Every member has a parked JoinGroup and no pending member is left."""
        return (
            len(self.members) == self.num_members_awaiting_join
            and len(self.pending_join_members) == 0
        )

    def rebalance_timeout_ms(self) -> int:
        """The largest rebalance timeout among the members (0 when empty), milliseconds."""
        return max((m.rebalance_timeout_ms for m in self.all_members()), default=0)

    def can_rebalance(self) -> bool:
        """True in the states PreparingRebalance may be entered from."""
        return self.state in _VALID_PREVIOUS[GroupState.PREPARING_REBALANCE]

    def not_yet_rejoined_members(self) -> JavaHashMap[str, ClassicGroupMember]:
        """A fresh ``HashMap`` of the members without a parked JoinGroup."""
        result: JavaHashMap[str, ClassicGroupMember] = _string_map()
        for member in self.all_members():
            if not member.is_awaiting_join:
                result.put(member.member_id, member)
        return result

    # -- protocols -----------------------------------------------------------------------
    def _increment_supported(self, member: ClassicGroupMember, delta: int) -> None:
        for name, _ in member.protocols:
            current = self.supported_protocols.get(name)
            self.supported_protocols.put(name, (current or 0) + delta)

    def supports_protocols(self, protocol_type: str, protocols: Protocols) -> bool:
        """``supportsProtocols``: whether a member with these protocols may join."""
        names = {name for name, _ in protocols}
        if self.is_in_state(GroupState.EMPTY):
            return protocol_type != "" and len(names) > 0
        return (
            self.protocol_type is not None
            and self.protocol_type == protocol_type
            and any((self.supported_protocols.get(n) or 0) == len(self.members) for n in names)
        )

    def select_protocol(self) -> str:
        """``selectProtocol``: the most voted candidate; ties go to the first in HashMap order.

        Raises
        ------
        CoordinatorStateError
            For an empty group.
        """
        if len(self.members) == 0:
            raise CoordinatorStateError("cannot select protocol for empty group")
        size = len(self.members)
        candidates = {n for n, c in self.supported_protocols.items() if c == size}
        votes: JavaHashMap[str, int] = _string_map()
        for member in self.all_members():
            name = member.vote(candidates)
            votes.put(name, (votes.get(name) or 0) + 1)
        best: str | None = None
        best_count = -1
        for name, count in votes.items():
            if count > best_count:  # Stream.max keeps the first of equal maxima
                best, best_count = name, count
        assert best is not None
        return best

    # -- mutation ------------------------------------------------------------------------
    def transition_to(self, state: GroupState) -> None:
        """Move to ``state``, remembering the previous one.

        Raises
        ------
        CoordinatorStateError
            For a transition Kafka does not allow.
        """
        if self.state not in _VALID_PREVIOUS[state]:
            raise CoordinatorStateError(
                f"group {self.group_id} cannot move from {self.state.value} to {state.value}"
            )
        self.previous_state = self.state
        self.state = state
        self.state_timestamp_ms = self._clock()

    def add(self, member: ClassicGroupMember, future: ResponseFuture | None) -> None:
        """``add``: register a member (first member sets the protocol type and the leader)."""
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise CoordinatorStateError(
                    f"static member {member.group_instance_id} is already a member"
                )
            self.static_members.put(member.group_instance_id, member.member_id)
        if len(self.members) == 0:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise CoordinatorStateError("the group and member's protocol type must be the same")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members.put(member.member_id, member)
        self._increment_supported(member, 1)
        member.awaiting_join = future
        if member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        self.pending_join_members.discard(member.member_id)

    def remove(self, member_id: str) -> None:
        """``remove``: drop a member; a removed leader passes to the first member in order."""
        removed = self.members.remove(member_id)
        if removed is not None:
            self._increment_supported(removed, -1)
            if removed.is_awaiting_join:
                self.num_members_awaiting_join -= 1
            if removed.group_instance_id is not None:
                self.static_members.remove(removed.group_instance_id)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep a rejoined leader, else elect the first rejoined member; False if none."""
        if self.leader_id is None:
            return False
        current = self.members[self.leader_id]
        if current.is_awaiting_join:
            return True
        for member in self.all_members():
            if member.is_awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    def replace_static_member(
        self, instance_id: str, old_member_id: str, new_member_id: str
    ) -> ClassicGroupMember:
        """Fence ``old_member_id`` (FENCED_INSTANCE_ID to its parked requests), insert the new id.

        Raises
        ------
        CoordinatorStateError
            If ``old_member_id`` is not a member.
        """
        removed = self.members.remove(old_member_id)
        if removed is None:
            raise CoordinatorStateError(f"cannot replace non-existing member id {old_member_id}")
        self.complete_join_future(
            removed, join_response("FENCED_INSTANCE_ID", member_id=old_member_id, leader=NO_LEADER)
        )
        self.complete_sync_future(removed, sync_response("FENCED_INSTANCE_ID"))
        new_member = ClassicGroupMember(
            member_id=new_member_id,
            group_instance_id=removed.group_instance_id,
            client_id=removed.client_id,
            rebalance_timeout_ms=removed.rebalance_timeout_ms,
            session_timeout_ms=removed.session_timeout_ms,
            protocol_type=removed.protocol_type,
            protocols=removed.protocols,
            assignment=removed.assignment,
        )
        self.members.put(new_member_id, new_member)
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members.put(instance_id, new_member_id)
        return new_member

    def update_member(
        self,
        member: ClassicGroupMember,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        future: ResponseFuture | None,
    ) -> None:
        """``updateMember``: new protocols and timeouts, and park (or unpark) its JoinGroup."""
        self._increment_supported(member, -1)
        member.protocols = protocols
        self._increment_supported(member, 1)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if future is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        elif future is None and member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        member.awaiting_join = future

    def complete_join_future(self, member: ClassicGroupMember, response: dict[str, Any]) -> bool:
        """Answer the member's parked JoinGroup, if any."""
        if member.awaiting_join is not None:
            future = member.awaiting_join
            member.awaiting_join = None
            self.num_members_awaiting_join -= 1
            future.complete(response)
            return True
        return False

    def complete_sync_future(self, member: ClassicGroupMember, response: dict[str, Any]) -> bool:
        """Answer the member's parked SyncGroup, if any."""
        if member.awaiting_sync is not None:
            future = member.awaiting_sync
            member.awaiting_sync = None
            future.complete(response)
            return True
        return False

    def init_next_generation(self) -> None:
        """Bump the generation; CompletingRebalance with a selected protocol, or Empty."""
        self.generation_id += 1
        if len(self.members) > 0:
            self.protocol_name = self.select_protocol()
            self.transition_to(GroupState.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.transition_to(GroupState.EMPTY)
        clear_keeping_capacity(self.pending_sync_members)

    def current_members_metadata(self) -> list[tuple[str, str | None, bytes]]:
        """The leader's JoinGroup member list: ``(member id, instance id, metadata)``.

        Raises
        ------
        CoordinatorStateError
            In PreparingRebalance or Dead, as Kafka.
        """
        if self.state in (GroupState.DEAD, GroupState.PREPARING_REBALANCE):
            raise CoordinatorStateError(f"no member metadata in state {self.state.value}")
        return [
            (m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
            for m in self.all_members()
        ]

    def validate_member(self, member_id: str, instance_id: str | None) -> str | None:
        """``validateMember``: the error name (FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID) or None."""
        if instance_id is not None:
            existing = self.static_member_id(instance_id)
            if existing is None:
                return "UNKNOWN_MEMBER_ID"
            if existing != member_id:
                return "FENCED_INSTANCE_ID"
        if not self.has_member(member_id):
            return "UNKNOWN_MEMBER_ID"
        return None


def clear_keeping_capacity(items: JavaHashSet[str]) -> None:
    """``HashSet.clear``: empty the set but keep its table size, as Java does."""
    for item in list(items):
        items.discard(item)
