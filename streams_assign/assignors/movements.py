"""Warmup movements: Kafka's ``TaskMovement`` (active and standby task movements).

After round-robin and balancing, an active task on a client that is not caught up moves to a
caught-up (or more caught-up) client; the old holder keeps a warmup replica while the shared
``max.warmup.replicas`` budget lasts. Standbys on clients that are not caught up get a copy on a
more caught-up client the same way.

Kafka keeps every client in one priority queue and pops clients until a caught-up one appears:
O(C log C) per movement. While Java's heap is valid, that is the minimum of
``(assignedTaskLoad, ProcessId)`` over the task's caught-up clients, O(k); but a load that
changes while its client sits in the heap (the old holder losing a task when the warmup budget
is spent) can leave the heap out of order, and Kafka's answers then depend on the array layout.
:class:`~streams_assign.assignors.caught_up_clients.ExactCaughtUpClients` answers by the minimum and
rebuilds Java's array only when such a change can matter, so it gives Kafka's exact answers; in
the literal mode ``AssignmentState.java`` gives the structure-for-structure Java one instead.
"""

from __future__ import annotations

from collections.abc import Callable

from streams_assign.assignors.state import AssignmentState
from streams_assign.errors import TaskAssignmentError
from streams_assign.java.priority_queue import java_poll_order


class WarmupBudget:
    """Kafka's shared ``AtomicInteger remainingWarmupReplicas`` (may go negative).

    Every move-with-warmup attempt takes one unit, even when none is left; swaps take none.
    """

    __slots__ = ("remaining",)

    def __init__(self, max_warmup_replicas: int) -> None:
        self.remaining = max_warmup_replicas

    def get_and_decrement(self) -> int:
        """Return the budget before taking one unit (Java's ``getAndDecrement``)."""
        value = self.remaining
        self.remaining -= 1
        return value


def needs_move(state: AssignmentState, task: int, client: int) -> bool:
    """Kafka's ``taskIsNotCaughtUpOnClientAndOtherMoreCaughtUpClientsExist``.

    True when the client is not caught up on the task and the most caught-up client (first by
    ``(lag, ProcessId)``) has a strictly smaller lag.
    """
    if state.caught_up(client, task):
        return False
    return state.most_caught_up_lag(task) < state.lag(client, task)


def _most_caught_up_eligible_client(
    state: AssignmentState,
    task: int,
    destination: int,
    eligible: Callable[[int], bool] | None = None,
) -> int | None:
    for client in state.clients_by_lag(task):
        if client == destination:
            return None
        if eligible is None or eligible(client):
            return client
    return None


def _movement_order(
    state: AssignmentState, movements: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Kafka's movement ``PriorityQueue``, filled with ``(task, client)`` and then drained.

    Movements order by (number of caught-up clients, TaskId), which no movement changes (lags
    are fixed); equal keys (standby copies of one task) come out in Java's heap order.
    """
    num_tasks = len(state.tasks)

    def key(movement: tuple[int, int]) -> int:
        task = movement[0]
        return len(state.caught_up_clients(task)) * num_tasks + task

    return java_poll_order(movements, key)


def _swap_standby_and_active(
    state: AssignmentState, task: int, source: int, destination: int
) -> None:
    state.unassign_standby(source, task)
    state.assign_active(source, task)
    state.unassign_active(destination, task)
    state.assign_standby(destination, task)


def _move_active_and_try_to_warm_up(
    state: AssignmentState,
    budget: WarmupBudget,
    task: int,
    source: int,
    destination: int,
    warmups: dict[int, set[int]],
) -> None:
    state.assign_active(source, task)
    destination_warmups = warmups.setdefault(destination, set())
    state.unassign_active(destination, task)
    if budget.get_and_decrement() > 0:
        state.assign_standby(destination, task)
        destination_warmups.add(task)


def assign_active_task_movements(
    state: AssignmentState, warmups: dict[int, set[int]], budget: WarmupBudget
) -> int:
    """Move active tasks off clients that are not caught up (Kafka's ``assignActiveTaskMovements``).

    Parameters
    ----------
    state:
        Assignment after active and standby placement; changed in place.
    warmups:
        Filled with ``client -> tasks`` warmups left on the old holders.
    budget:
        The shared warmup budget.

    Returns
    -------
    int
        The number of movements scheduled.

    Raises
    ------
    TaskAssignmentError
        When a scheduled movement finds no client to move to (Kafka's IllegalStateException).

    Notes
    -----
    Strategies in order: swap with a caught-up standby (no budget used); move to the least
    loaded caught-up client and leave a warmup; move to the most caught-up client before the
    holder in ``(lag, ProcessId)`` order (KAFKA-13600), swapping if it holds a standby.
    """
    movements: list[tuple[int, int]] = []
    caught_up = state.java.caught_up_clients_by_task_load(state)
    for client in range(state.num_clients):
        for task in sorted(state.active[client]):
            if needs_move(state, task, client):
                movements.append((task, client))
        caught_up.offer(client)
    needed = len(movements)
    for task, destination in _movement_order(state, movements):

        def holds_standby(client: int, task: int = task) -> bool:
            return task in state.standby[client]

        source = caught_up.poll(task, holds_standby)
        if source is not None:
            _swap_standby_and_active(state, task, source, destination)
            caught_up.offer_all([source, destination])
            continue
        source = caught_up.poll(task)
        if source is not None:
            _move_active_and_try_to_warm_up(state, budget, task, source, destination, warmups)
            caught_up.offer_all([source, destination])
            continue
        source = _most_caught_up_eligible_client(state, task, destination)
        if source is None:
            raise TaskAssignmentError(
                f"tried to move task {state.tasks[task]} to a more caught-up client, "
                "but none exists"
            )
        if task in state.standby[source]:
            _swap_standby_and_active(state, task, source, destination)
        else:
            _move_active_and_try_to_warm_up(state, budget, task, source, destination, warmups)
        caught_up.offer_all([source, destination])
    return needed


def assign_standby_task_movements(
    state: AssignmentState, warmups: dict[int, set[int]], budget: WarmupBudget
) -> int:
    """Give standbys on clients that are not caught up a copy on a more caught-up client.

    Kafka's ``assignStandbyTaskMovements``: warmups made by the active movements are skipped; the
    source is the least-loaded caught-up client without the task, else the first client without
    it before the holder in ``(lag, ProcessId)`` order. The holder keeps its copy as a warmup
    while the budget lasts, else loses it. Movements with no source are dropped and not counted.

    Returns
    -------
    int
        The number of movements made.
    """
    movements: list[tuple[int, int]] = []
    caught_up = state.java.caught_up_clients_by_task_load(state)
    for destination in range(state.num_clients):
        skip = warmups.get(destination, set())
        for task in sorted(state.standby[destination]):
            if task in skip:
                continue
            if needs_move(state, task, destination):
                movements.append((task, destination))
        caught_up.offer(destination)
    made = 0
    for task, destination in _movement_order(state, movements):

        def eligible(client: int, task: int = task) -> bool:
            return not state.has_assigned(client, task)

        source = caught_up.poll(task, eligible)
        if source is None:
            source = _most_caught_up_eligible_client(state, task, destination, eligible)
        if source is None:
            continue
        state.assign_standby(source, task)
        if budget.get_and_decrement() > 0:
            warmups.setdefault(destination, set()).add(task)
        else:
            state.unassign_standby(destination, task)
        caught_up.offer_all([source, destination])
        made += 1
    return made


__all__ = [
    "WarmupBudget",
    "assign_active_task_movements",
    "assign_standby_task_movements",
    "needs_move",
]
