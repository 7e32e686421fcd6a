"""Costs of one consumer-group rebalance: what stops, what moves.

Counts partitions, given the members' owned partitions before the rebalance and the
assignor's decision:

- ``revoked``: partitions a member stops. Under the eager protocol (``range``,
  ``roundrobin``, ``sticky``) every member revokes everything it owns before rejoining; under
  the cooperative protocol (``cooperative-sticky``, KIP-429) only the owned partitions missing
  from its new assignment.
- ``moved``: partitions assigned to a member other than their previous owner; under the
  cooperative protocol these arrive in the follow-up rebalance, so ``moved`` also counts the
  withheld partitions (owned, revoked, not assigned to anyone this round).
- ``kept``: owned partitions assigned to the same member again.
- ``rounds``: 1, or 2 when a cooperative rebalance withholds partitions (the follow-up round).
"""

from __future__ import annotations

from dataclasses import dataclass

from streams_assign.consumer.common import Assignment
from streams_assign.consumer.model import ConsumerGroupState

__all__ = ["COOPERATIVE_ASSIGNORS", "ConsumerScore", "score_consumer_assignment"]

COOPERATIVE_ASSIGNORS = frozenset({"cooperative-sticky"})
"""Assignors that run under the cooperative rebalance protocol."""


@dataclass(frozen=True)
class ConsumerScore:
    """Partition counts of one rebalance (see the module notes)."""

    revoked: int
    moved: int
    kept: int
    rounds: int


def score_consumer_assignment(
    state: ConsumerGroupState, assignment: Assignment, assignor: str | None = None
) -> ConsumerScore:
    """Count revoked, moved and kept partitions of one rebalance.

    Parameters
    ----------
    state:
        The group before the rebalance (owned partitions per member).
    assignment:
        The assignor's decision (member id -> partitions).
    assignor:
        Overrides ``state.assignor`` (decides eager or cooperative).

    Returns
    -------
    ConsumerScore
    """
    cooperative = (assignor or state.assignor) in COOPERATIVE_ASSIGNORS
    previous = {tp: m.member_id for m in state.members for tp in m.owned_partitions}
    assigned = {tp: member for member, parts in assignment.items() for tp in parts}
    kept = sum(1 for tp, member in assigned.items() if previous.get(tp) == member)
    moved = sum(1 for tp, member in assigned.items() if previous.get(tp, member) != member)
    withheld = [tp for tp in previous if tp not in assigned]
    if cooperative:
        revoked = sum(
            1
            for m in state.members
            for tp in m.owned_partitions
            if tp not in set(assignment.get(m.member_id, []))
        )
        subscribed = {t for m in state.members for t in m.topics}
        moved += sum(
            1
            for tp in withheld
            if tp.topic in subscribed and tp.partition < state.topics.get(tp.topic, 0)
        )
        rounds = 2 if withheld else 1
    else:
        revoked = len(previous)
        rounds = 1
    return ConsumerScore(revoked, moved, kept, rounds)
