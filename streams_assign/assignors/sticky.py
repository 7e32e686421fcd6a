"""Kafka Streams' ``LegacyStickyTaskAssignor``: previous owners first, then the least loaded.

Kafka's pre-KIP-441 assignor (named ``StickyTaskAssignor`` before 3.8), still selectable with
``internal.task.assignor.class`` and the delegate of ``FallbackPriorTaskAssignor``. It ignores
lags: no caught-up test, no warmups, never a probing rebalance of its own (reference 7):

1. Every task goes back to its previous active owner while that client has fewer than
   ``capacity * tasksPerThread`` actives (``tasksPerThread = |tasks| // total capacity``);
   with ``must_preserve_active_task_assignment`` (the fallback) always.
2. Tasks still unassigned go to a previous standby owner with quota left.
3. The rest, in TaskId order, go through ``findClient``: the previous owner, unless the load
   should be balanced; else the least-loaded previous standby owner; else the least-loaded
   client, preferring one where the task forms a new task pair (``TaskPairs``) so that no two
   clients end up with the same tasks.
4. Standbys, per stateful task and replica, with the same ``findClient`` among the clients that
   do not hold the task.
5. With rack awareness on: the rack-aware optimiser on stateful actives (costs 1 / 10 by
   default), stateless actives (1 / 0), and standbys (1 / 10, every move allowed).

Kafka iterates ``HashMap``/``HashSet`` instances in steps 1, 2, 4 and in every least-loaded
search (the first of several equally loaded clients wins). Their order is emulated with
:mod:`streams_assign.javacompat`, taking the containers Kafka's ``StreamsPartitionAssignor``
passes: the clients in a ``HashMap<ProcessId, ClientState>`` and the tasks in ``HashSet``\\ s,
each filled in ProcessId / TaskId order (the input does not record the order in which Kafka
met them, which only decides the order within one hash bucket).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from streams_assign._java.hash_order import (
    JavaHashMap,
    JavaHashSet,
    spread,
    table_size_for,
    task_id_hash_code,
)
from streams_assign.assignors.state import AssignmentState
from streams_assign.errors import TaskAssignmentError
from streams_assign.model import (
    LATEST_OFFSET,
    Assignment,
    ClusterState,
    TaskId,
    java_uuid_hash_code,
)

if TYPE_CHECKING:
    from streams_assign.assignors.rack_aware import RackAwareTaskAssignor

log = logging.getLogger(__name__)

#: ``LegacyStickyTaskAssignor.DEFAULT_STATEFUL_TRAFFIC_COST`` / ``..._NON_OVERLAP_COST``.
DEFAULT_STATEFUL_TRAFFIC_COST = 1
DEFAULT_STATEFUL_NON_OVERLAP_COST = 10

# Above this many entries a HashSet's table has at least 64 buckets, where Java never grows a
# table for a crowded bucket, so the order is a plain sort (see _ClientOrder).
_SMALL_SET = 48


def hash_set_capacity(size: int) -> int:
    """Table length of ``new HashSet<>(collection)`` for a collection of ``size`` elements.

    ``HashSet(Collection c)`` asks for ``max((int) (c.size() / .75f) + 1, 16)`` buckets (a
    float division in Java), rounded up to a power of two.
    """
    import numpy as np

    requested = int(np.float32(size) / np.float32(0.75)) + 1
    return table_size_for(max(requested, 16))


def default_hash_set_capacity(size: int) -> int:
    """Table length of a ``new HashSet<>()`` after ``size`` adds (it doubles past 0.75 full)."""
    capacity = 16
    while size > int(capacity * 0.75):
        capacity <<= 1
    return capacity


def java_hash_order(
    members: Sequence[int], hashes: Sequence[int], capacity: int | None = None
) -> list[int]:
    """Iteration order of a ``HashSet`` filled with ``members`` in the given order.

    ``capacity`` is the table length requested at construction (``None``: the default
    constructor). Small sets replay :class:`~streams_assign.javacompat.JavaHashSet`; from 49
    members on the table has at least 64 buckets, where Java never grows it for a crowded
    bucket, so the order is the plain sort by (bucket, insertion position) (tree bins aside,
    as in :mod:`streams_assign.javacompat`).
    """
    if len(members) <= _SMALL_SET:
        return list(JavaHashSet(hashes.__getitem__, members, initial_capacity=capacity))
    length = max(capacity or 0, default_hash_set_capacity(len(members)))
    return _by_bucket(members, hashes, length)


def _by_bucket(members: Sequence[int], hashes: Sequence[int], length: int) -> list[int]:
    """``members`` by bucket of a table of ``length``, then by their order in ``members``."""
    import numpy as np

    array = np.asarray(members, dtype=np.int64)
    buckets = np.asarray([spread(hashes[c]) for c in members], dtype=np.int64) & (length - 1)
    order = np.lexsort((np.arange(len(members)), buckets))
    return array[order].tolist()


class _ClientOrder:
    """Iteration orders of ``HashSet<ProcessId>`` subsets of the clients.

    ``clients`` is the ``HashMap<ProcessId, ClientState>`` order (filled in ProcessId order); a
    set built by adding clients while iterating it lists them by (bucket, position in it).
    """

    def __init__(self, hashes: Sequence[int]) -> None:
        self.hashes = list(hashes)
        table: JavaHashMap[int, bool] = JavaHashMap(self.hashes.__getitem__)
        for c in range(len(self.hashes)):
            table.put(c, True)
        #: The clients map's iteration order.
        self.clients: list[int] = table.keys()
        self._sorted: dict[int, list[int]] = {}

    def hash_set(self, members: Sequence[int], capacity: int | None = None) -> list[int]:
        """Order of a ``HashSet`` filled with ``members`` in the given order."""
        return java_hash_order(members, self.hashes, capacity)

    def all_except(self, excluded: set[int]) -> list[int]:
        """``findClientsWithoutAssignedTask``: a default ``HashSet`` of the other clients."""
        members = [c for c in self.clients if c not in excluded]
        if len(members) <= _SMALL_SET:
            return self.hash_set(members)
        # The full clients list sorted once per table length, then filtered: same order.
        capacity = default_hash_set_capacity(len(members))
        order = self._sorted.get(capacity)
        if order is None:
            order = _by_bucket(self.clients, self.hashes, capacity)
            self._sorted[capacity] = order
        return [c for c in order if c not in excluded]


class _TaskPairs:
    """Kafka's ``TaskPairs``: which tasks already share a client (to avoid identical clients)."""

    def __init__(self, num_tasks: int) -> None:
        self.max_pairs = num_tasks * (num_tasks - 1) // 2
        self.pairs: set[tuple[int, int]] = set()

    def has_new_pair(self, task: int, assigned: Iterable[int]) -> bool:
        """True when ``task`` would share a client with a task it has not shared one with yet."""
        if len(self.pairs) == self.max_pairs:
            return False
        return any((min(task, t), max(task, t)) not in self.pairs for t in assigned)

    def add_pairs(self, task: int, assigned: Iterable[int]) -> None:
        for t in assigned:
            self.pairs.add((min(task, t), max(task, t)))


class _LegacySticky:
    """One run of the assignor on an :class:`AssignmentState` (Kafka's instance fields)."""

    def __init__(
        self,
        state: AssignmentState,
        must_preserve_active_task_assignment: bool,
        rack: RackAwareTaskAssignor | None,
    ) -> None:
        self.state = state
        self.cluster = state.cluster
        self.must_preserve = must_preserve_active_task_assignment
        self.rack = rack
        self.order = _ClientOrder([java_uuid_hash_code(p) for p in state.client_ids])
        task_hashes = [task_id_hash_code(t) for t in state.tasks]
        self.task_hash = task_hashes.__getitem__
        # Kafka's allTaskIds and statefulTaskIds: HashSets filled in TaskId order.
        self.all_tasks = list(JavaHashSet(self.task_hash, range(len(state.tasks))))
        self.stateful_tasks = list(JavaHashSet(self.task_hash, state.stateful_tasks))
        self.task_pairs = _TaskPairs(len(state.tasks))
        self.previous_active: JavaHashMap[int, int] = JavaHashMap(self.task_hash)
        # Per task, the clients that had it as standby, in the order they were added.
        self._previous_standby_added: dict[int, list[int]] = {}
        self._previous_standby_order: dict[int, list[int]] = {}
        self._map_previous_task_assignment()

    # -- previous assignment -------------------------------------------------------------
    def _map_previous_task_assignment(self) -> None:
        """Kafka's ``mapPreviousTaskAssignment``: a later client overwrites a task's owner."""
        for c in self.order.clients:
            prev_active, prev_standby = previous_task_indices(self.state, c)
            for task in prev_active:
                self.previous_active.put(task, c)
            for task in prev_standby:
                self._previous_standby_added.setdefault(task, []).append(c)

    def previous_standby(self, task: int) -> list[int] | None:
        """Kafka's ``previousStandbyTaskAssignment.get(task)`` in HashSet order, or None."""
        order = self._previous_standby_order.get(task)
        if order is None:
            added = self._previous_standby_added.get(task)
            if added is None:
                return None
            order = self.order.hash_set(added)
            self._previous_standby_order[task] = order
        return order

    # -- ClientState predicates ------------------------------------------------------------
    def _count(self, c: int) -> int:
        return self.state.assigned_count(c)

    def _has_more_available_capacity_than(self, c: int, other: int) -> bool:
        load, other_load = self.state.task_load[c], self.state.task_load[other]
        if load != other_load:
            return load < other_load
        return self.state.capacity[c] > self.state.capacity[other]

    def _reached_capacity(self, c: int) -> bool:
        return self._count(c) >= self.state.capacity[c]

    def _has_unfulfilled_quota(self, c: int, tasks_per_thread: int) -> bool:
        return len(self.state.active[c]) < self.state.capacity[c] * tasks_per_thread

    def _assigned(self, c: int) -> set[int]:
        return self.state.active[c] | self.state.standby[c]

    # -- actives -----------------------------------------------------------------------------
    def assign_active(self) -> None:
        """Kafka's ``assignActive`` (steps 1-3 of the module notes)."""
        state = self.state
        total_capacity = sum(state.capacity)
        if total_capacity == 0:
            raise TaskAssignmentError("`totalCapacity` should never be zero.")
        tasks_per_thread = len(state.tasks) // total_capacity
        assigned: set[int] = set()
        for task, c in self.previous_active.items():
            if self.must_preserve or self._has_unfulfilled_quota(c, tasks_per_thread):
                self._assign_task_to_client(assigned, task, c)
        unassigned = JavaHashSet(
            self.task_hash, self.all_tasks, hash_set_capacity(len(self.all_tasks))
        )
        remaining = [t for t in unassigned if t not in assigned]
        still_unassigned = []
        for task in remaining:
            owners = self.previous_standby(task)
            placed = False
            for c in owners or ():
                if self._has_unfulfilled_quota(c, tasks_per_thread):
                    self._assign_task_to_client(assigned, task, c)
                    placed = True
                    break
            if not placed:
                still_unassigned.append(task)
        for task in sorted(still_unassigned):
            self._allocate_task_with_client_candidates(task, self.order.clients, active=True)

    def _assign_task_to_client(self, assigned: set[int], task: int, c: int) -> None:
        self.task_pairs.add_pairs(task, self._assigned(c))
        self.state.assign_active(c, task)
        assigned.add(task)

    def _allocate_task_with_client_candidates(
        self, task: int, within: list[int], active: bool
    ) -> int:
        c = self._find_client(task, within)
        self.task_pairs.add_pairs(task, self._assigned(c))
        if active:
            self.state.assign_active(c, task)
        else:
            self.state.assign_standby(c, task)
        return c

    # -- standbys ----------------------------------------------------------------------------
    def assign_standby(self, replicas: int) -> None:
        """Kafka's ``assignStandby``: per stateful task, ``replicas`` copies via ``findClient``."""
        holders: dict[int, set[int]] = {task: set() for task in self.stateful_tasks}
        for c in range(self.state.num_clients):
            for task in self.state.active[c] | self.state.standby[c]:
                if task in holders:
                    holders[task].add(c)
        for task in self.stateful_tasks:
            for i in range(replicas):
                ids = self.order.all_except(holders[task])
                if not ids:
                    log.warning(
                        "Unable to assign %d of %d standby tasks for task [%s]. There is not "
                        "enough available capacity. You should increase the number of threads "
                        "and/or application instances to maintain the requested number of "
                        "standby replicas.",
                        replicas - i,
                        replicas,
                        self.state.tasks[task],
                    )
                    break
                holders[task].add(self._allocate_task_with_client_candidates(task, ids, False))

    # -- findClient ----------------------------------------------------------------------------
    def _find_client(self, task: int, within: list[int]) -> int:
        if len(within) == 1:
            return within[0]
        previous = self._find_clients_with_previous_assigned_task(task, within)
        if previous is None:
            return self._least_loaded(task, within)
        if self._should_balance_load(previous):
            standby = self._find_least_loaded_client_with_previous_standby_task(task, within)
            if standby is None or self._should_balance_load(standby):
                return self._least_loaded(task, within)
            return standby
        return previous

    def _should_balance_load(self, c: int) -> bool:
        if not self._reached_capacity(c):
            return False
        # hasClientsWithMoreAvailableCapacity: a lower load, or the same load on more threads.
        loads, capacity = self.state.task_load, self.state.capacity
        load = loads[c]
        if min(loads) < load:
            return True
        return any(loads[o] == load and capacity[o] > capacity[c] for o in range(len(loads)))

    def _find_clients_with_previous_assigned_task(self, task: int, within: list[int]) -> int | None:
        previous = self.previous_active.get(task)
        if previous is not None and previous in within:
            return previous
        return self._find_least_loaded_client_with_previous_standby_task(task, within)

    def _find_least_loaded_client_with_previous_standby_task(
        self, task: int, within: list[int]
    ) -> int | None:
        owners = self.previous_standby(task)
        if owners is None:
            return None
        constrain_to = self.order.hash_set(owners, hash_set_capacity(len(owners)))
        allowed = set(within)
        return self._least_loaded_or_none(task, [c for c in constrain_to if c in allowed])

    def _least_loaded(self, task: int, ids: list[int]) -> int:
        c = self._least_loaded_or_none(task, ids)
        if c is None:  # Kafka would return null here and fail; not reachable with clients
            raise TaskAssignmentError(f"no client to place task {self.state.tasks[task]}")
        return c

    def _least_loaded_or_none(self, task: int, ids: list[int]) -> int | None:
        c = self._find_least_loaded(task, ids, check_task_pairs=True)
        return c if c is not None else self._find_least_loaded(task, ids, check_task_pairs=False)

    def _find_least_loaded(self, task: int, ids: list[int], check_task_pairs: bool) -> int | None:
        active, standby = self.state.active, self.state.standby
        loads, capacity = self.state.task_load, self.state.capacity
        least: int | None = None
        for c in ids:
            if not active[c] and not standby[c]:
                return c
            # Skip unless hasMoreAvailableCapacityThan(least): lower load, or equal and more threads
            if least is not None and (
                loads[c] > loads[least]
                or (loads[c] == loads[least] and capacity[c] <= capacity[least])
            ):
                continue
            if not check_task_pairs or self.task_pairs.has_new_pair(task, self._assigned(c)):
                least = c
        return least


def previous_tasks(cluster: ClusterState, client: int) -> tuple[list[TaskId], list[TaskId]]:
    """A client's previous actives and standbys as Kafka's ``initializePrevTasks`` sees them.

    The given ``prev_active``/``prev_standby``, plus the tasks the client reports state for
    (``task_lags``): lag -2 (running active) makes a previous active, any other a previous
    standby, unless already previously active. Both sorted in TaskId order.
    """
    state = cluster.clients[client]
    active = set(state.prev_active)
    active.update(t for t, lag in state.task_lags.items() if lag == LATEST_OFFSET)
    standby = (set(state.prev_standby) | set(state.task_lags)) - active
    return sorted(active), sorted(standby)


def previous_task_indices(state: AssignmentState, client: int) -> tuple[list[int], list[int]]:
    """:func:`previous_tasks` as sorted task indices of ``state`` (unknown tasks dropped)."""
    cluster_client = state.cluster.clients[client]
    index = state.task_index
    lags = state.explicit_lags[client]  # the task_lags, keyed by task index
    active = {index[t] for t in cluster_client.prev_active if t in index}
    active.update(t for t, lag in lags.items() if lag == LATEST_OFFSET)
    standby = {index[t] for t in cluster_client.prev_standby if t in index}
    standby.update(lags)
    return sorted(active), sorted(standby - active)


def assign_legacy_sticky(
    state: AssignmentState,
    must_preserve_active_task_assignment: bool = False,
    rack: RackAwareTaskAssignor | None = None,
) -> None:
    """Run ``LegacyStickyTaskAssignor.assign`` on a prepared state (changed in place).

    Parameters
    ----------
    state:
        A fresh assignment state.
    must_preserve_active_task_assignment:
        Give every previous active back to its owner whatever the balance (the fallback).
    rack:
        The rack-aware optimiser, or ``None`` (as the fallback passes).
    """
    run = _LegacySticky(state, must_preserve_active_task_assignment, rack)
    configs = state.cluster.configs
    run.assign_active()
    enabled = rack is not None and rack.can_enable_rack_aware_assignor()
    traffic = configs.rack_aware_assignment_traffic_cost
    non_overlap = configs.rack_aware_assignment_non_overlap_cost
    traffic = DEFAULT_STATEFUL_TRAFFIC_COST if traffic is None else traffic
    non_overlap = DEFAULT_STATEFUL_NON_OVERLAP_COST if non_overlap is None else non_overlap
    if enabled:
        from streams_assign.assignors.rack_aware import (
            STATELESS_NON_OVERLAP_COST,
            STATELESS_TRAFFIC_COST,
        )

        assert rack is not None
        rack.optimize_active_tasks(state.stateful_tasks, state, traffic, non_overlap)
        rack.optimize_active_tasks(
            state.stateless_tasks, state, STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST
        )
    run.assign_standby(configs.num_standby_replicas)
    if enabled and configs.num_standby_replicas > 0:
        assert rack is not None
        rack.optimize_standby_tasks(state, traffic, non_overlap, None)


class LegacyStickyTaskAssignor:
    """Kafka's ``LegacyStickyTaskAssignor``: sticky, capacity-proportional, lag-blind.

    Parameters
    ----------
    must_preserve_active_task_assignment:
        Keep every previous active on its owner even past its quota (what
        ``FallbackPriorTaskAssignor`` asks for).

    Examples
    --------
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
    >>> cluster = parse_cluster_state({
    ...     "stateful_tasks": ["0_0", "0_1", "0_2"],
    ...     "clients": [
    ...         {"id": "00000000-0000-0000-0000-000000000001", "capacity": 1,
    ...          "prev_active": ["0_0", "0_2"]},
    ...         {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1,
    ...          "prev_active": ["0_1"]},
    ...         {"id": "00000000-0000-0000-0000-000000000003", "capacity": 1}]})
    >>> result = LegacyStickyTaskAssignor().assign(cluster)
    >>> [str(t) for t in result.clients["00000000-0000-0000-0000-000000000002"].active]
    ['0_1']
    >>> [len(c.active) for c in result.clients.values()]
    [1, 1, 1]

    Notes
    -----
    Source: ``org.apache.kafka.streams.processor.internals.assignment.LegacyStickyTaskAssignor``
    at Kafka 4.0.0-SNAPSHOT (commit 1eb7644349cb); reference section 7. HashMap/HashSet
    iteration follows :mod:`streams_assign.javacompat` (see the module notes). Never requests a
    probing rebalance.
    """

    name = "sticky"

    def __init__(self, must_preserve_active_task_assignment: bool = False) -> None:
        self.must_preserve_active_task_assignment = must_preserve_active_task_assignment

    def assign(self, cluster: ClusterState) -> Assignment:
        """Decide actives and standbys; ``probing_rebalance_needed`` is always false."""
        state = AssignmentState(cluster)
        rack = None
        if cluster.configs.rack_aware_assignment_strategy != "none":
            from streams_assign.assignors.rack_aware import RackAwareTaskAssignor

            rack = RackAwareTaskAssignor(cluster)
        assign_legacy_sticky(state, self.must_preserve_active_task_assignment, rack)
        return state.to_assignment(False, assignor=self.name)


__all__ = [
    "DEFAULT_STATEFUL_NON_OVERLAP_COST",
    "DEFAULT_STATEFUL_TRAFFIC_COST",
    "LegacyStickyTaskAssignor",
    "assign_legacy_sticky",
    "default_hash_set_capacity",
    "hash_set_capacity",
    "java_hash_order",
    "previous_task_indices",
    "previous_tasks",
]
