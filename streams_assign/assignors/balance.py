"""Kafka's ``balanceTasksOverThreads`` and ``shouldMoveATask``, with the same answer, faster.

Kafka's fixed-point loop visits every (source, destination) client pair on every pass:
O(passes * C^2 * T). The answer only depends on the pairs where ``shouldMoveATask`` holds, and
while one source's inner loop runs its load only falls and the later destinations' loads stay as
they were, so the pairs that can still move are a subset of those that could when the source's
loop began. One vectorised test per source finds that superset; the exact scalar test of Kafka
then decides each pair in Kafka's order, so the moves are Kafka's moves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from streams_assign.assignors.state import AssignmentState

#: ``predicate(source, destination, task)``: whether a balancing move is allowed.
MovePredicate = Callable[[int, int, int], bool]

# The vectorised filter must never drop a pair the exact test would accept; this margin only
# lets through a few more pairs than needed, which the exact test then rejects.
_MARGIN = 1e-9


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
    Source: ``HighAvailabilityTaskAssignor.balanceTasksOverThreads`` (reference 4.2). Clients are
    visited as sources and destinations in ProcessId order; each pair moves the source's tasks in
    TaskId order from a snapshot taken when the pair starts, re-testing ``shouldMoveATask`` before
    each task. The load is actives plus standbys in both calls.
    """
    n = state.num_clients
    if n < 2:
        return
    if state.java.visits_every_pair:
        _balance_all_pairs(state, standby, predicate)
        return
    role = state.standby if standby else state.active
    cap_list = state.capacity
    loads: _Loads = (_NumpyLoads if n >= _NUMPY_FROM else _ListLoads)(
        cap_list, [state.assigned_count(c) for c in range(n)]
    )
    counts = loads.counts
    keep_balancing = True
    while keep_balancing:
        keep_balancing = False
        # Smallest load a destination could reach after receiving a task: a source whose load
        # after giving one away is below it cannot move anything.
        floor = loads.floor()
        for src in range(n):
            src_cap = cap_list[src]
            if (counts[src] - 1.0) / src_cap < floor - _MARGIN:
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


#: From this many clients the destination test runs vectorised (numpy); below it a list does the
#: same float arithmetic without importing numpy (which costs more than a small assignment).
_NUMPY_FROM = 64


class _Loads(Protocol):
    counts: Any

    def floor(self) -> float: ...

    def candidates(self, src: int) -> list[int]: ...


class _ListLoads:
    """Per-client loads as Python floats (same IEEE operations as the numpy version)."""

    def __init__(self, capacity: list[int], counts: list[int]) -> None:
        self.capacity = [float(c) for c in capacity]
        self.counts = [float(c) for c in counts]

    def floor(self) -> float:
        return min((c + 1.0) / k for c, k in zip(self.counts, self.capacity, strict=True))

    def candidates(self, src: int) -> list[int]:
        counts, capacity = self.counts, self.capacity
        src_count, src_cap = counts[src], capacity[src]
        high, low = src_count / src_cap, (src_count - 1.0) / src_cap
        return [
            dst
            for dst in range(len(counts))
            if dst != src
            and high - counts[dst] / capacity[dst] > -_MARGIN
            and low - (counts[dst] + 1.0) / capacity[dst] >= -_MARGIN
        ]


class _NumpyLoads:
    """Per-client loads as numpy arrays: one vectorised destination test per source."""

    def __init__(self, capacity: list[int], counts: list[int]) -> None:
        import numpy as np

        self.np = np
        self.capacity = np.asarray(capacity, dtype=np.float64)
        self.counts = np.asarray(counts, dtype=np.float64)

    def floor(self) -> float:
        return float(self.np.min((self.counts + 1.0) / self.capacity))

    def candidates(self, src: int) -> list[int]:
        counts, capacity = self.counts, self.capacity
        src_count, src_cap = counts[src], capacity[src]
        mask = (src_count / src_cap - counts / capacity > -_MARGIN) & (
            (src_count - 1.0) / src_cap - (counts + 1.0) / capacity >= -_MARGIN
        )
        mask[src] = False
        result: list[int] = self.np.flatnonzero(mask).tolist()
        return result


def _move(state: AssignmentState, standby: bool, src: int, dst: int, task: int) -> None:
    if standby:
        state.unassign_standby(src, task)
        state.assign_standby(dst, task)
    else:
        state.unassign_active(src, task)
        state.assign_active(dst, task)


def _balance_all_pairs(
    state: AssignmentState, standby: bool, predicate: MovePredicate | None
) -> None:
    """Kafka's loop as written: every (source, destination) pair on every pass (verification)."""
    role = state.standby if standby else state.active
    n, cap = state.num_clients, state.capacity
    keep_balancing = True
    while keep_balancing:
        keep_balancing = False
        for src in range(n):
            for dst in range(n):
                if src == dst:
                    continue
                for task in sorted(role[src]):
                    if not should_move_a_task(
                        state.assigned_count(src), cap[src], state.assigned_count(dst), cap[dst]
                    ):
                        break
                    if state.has_assigned(dst, task) or (
                        predicate is not None and not predicate(src, dst, task)
                    ):
                        continue
                    _move(state, standby, src, dst, task)
                    keep_balancing = True


__all__ = [
    "MovePredicate",
    "balance_tasks_over_threads",
    "should_move_a_task",
]
