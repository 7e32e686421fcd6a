"""Kafka's ``balanceTasksOverThreads`` and ``shouldMoveATask``, with the same answer, faster.

Kafka's fixed-point loop visits every (source, destination) client pair on every pass. The loop
here visits the pairs :attr:`AssignmentState.java <streams_assign.assignors.state.AssignmentState>`
hands it (:mod:`streams_assign.assignors.balance_pairs`: by default only the pairs where a move
can happen, every pair in verification mode); the exact scalar test of Kafka then decides each
pair in Kafka's order, so the moves are Kafka's moves.
"""

from __future__ import annotations

from collections.abc import Callable

from streams_assign.assignors.balance_pairs import MARGIN
from streams_assign.assignors.state import AssignmentState

#: ``predicate(source, destination, task)``: whether a balancing move is allowed.
MovePredicate = Callable[[int, int, int], bool]


def should_move_a_task(
    source_count: int, source_capacity: int, dest_count: int, dest_capacity: int
) -> bool:
    """Kafka's ``shouldMoveATask`` on assigned-task counts (actives plus standbys).

    True when the source is more loaded per thread than the destination and moving one task
    would reduce the skew without reversing it; the comparisons are Java's on doubles
    (``skew <= 0``, ``proposedSkew < 0``, ``proposedSkew < skew``).
    """
    skew = source_count / source_capacity - dest_count / dest_capacity
    if skew <= 0:
        return False
    proposed = (source_count - 1.0) / source_capacity - (dest_count + 1.0) / dest_capacity
    if proposed < 0:
        return False
    return proposed < skew


def balance_tasks_over_threads(
    state: AssignmentState,
    standby: bool,
    predicate: MovePredicate | None = None,
) -> None:
    """Move tasks of one role from over- to under-loaded clients until no move helps.

    Parameters
    ----------
    state:
        The assignment under construction; changed in place.
    standby:
        False to move active tasks (Kafka's first call), True to move standbys.
    predicate:
        Extra condition per move (the standby assignor's ``isAllowedTaskMovement``); ``None``
        allows every move.

    Notes
    -----
    Source: ``HighAvailabilityTaskAssignor.balanceTasksOverThreads``. Clients are
    visited as sources and destinations in ProcessId order; each pair moves the source's tasks in
    TaskId order from a snapshot taken when the pair starts, re-testing ``shouldMoveATask`` before
    each task. The load is actives plus standbys in both calls.
    """
    n = state.num_clients
    if n < 2:
        return
    role = state.standby if standby else state.active
    cap_list = state.capacity
    loads = state.java.balancing_pairs(cap_list, [state.assigned_count(c) for c in range(n)])
    counts = loads.counts
    keep_balancing = True
    while keep_balancing:
        keep_balancing = False
        # Smallest load a destination could reach after receiving a task: a source whose load
        # after giving one away is below it cannot move anything.
        floor = loads.floor()
        for src in range(n):
            src_cap = cap_list[src]
            if (counts[src] - 1.0) / src_cap < floor - MARGIN:
                continue
            candidates = loads.candidates(src)
            if not candidates:
                continue
            moved_from_src = False
            for dst in candidates:
                dst_cap = cap_list[dst]
                if not should_move_a_task(int(counts[src]), src_cap, int(counts[dst]), dst_cap):
                    continue
                for task in sorted(role[src]):
                    if not should_move_a_task(int(counts[src]), src_cap, int(counts[dst]), dst_cap):
                        break
                    if state.has_assigned(dst, task):
                        continue
                    if predicate is not None and not predicate(src, dst, task):
                        continue
                    _move(state, standby, src, dst, task)
                    counts[src] -= 1.0
                    counts[dst] += 1.0
                    keep_balancing = True
                    moved_from_src = True
            if moved_from_src:
                floor = loads.floor()


def _move(state: AssignmentState, standby: bool, src: int, dst: int, task: int) -> None:
    if standby:
        state.unassign_standby(src, task)
        state.assign_standby(dst, task)
    else:
        state.unassign_active(src, task)
        state.assign_active(dst, task)


__all__ = [
    "MovePredicate",
    "balance_tasks_over_threads",
    "should_move_a_task",
]
