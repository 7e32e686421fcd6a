"""The rebalance input indexed for the lag-aware sticky assignor, and its balance bounds.

Clients are numbered ``0..C-1`` in UUID order and stateful tasks ``0..T-1`` in TaskId order;
per task only the clients with local state are listed, so indexing is linear in the input.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from fractions import Fraction

from streams_assign.model import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    ClusterState,
    TaskId,
    is_caught_up,
)

__all__ = [
    "IndexedCluster",
    "LeastLoaded",
    "balanced_count_bounds",
    "estimated_changelog_records",
    "index_cluster",
    "subtopology_indices",
]


def balanced_count_bounds(total: int, capacities: Sequence[int]) -> tuple[list[int], list[int]]:
    """Per-client count bounds within which any assignment of ``total`` tasks is balanced.

    Parameters
    ----------
    total:
        Number of task copies to place (>= 0).
    capacities:
        Stream threads per client (each >= 1).

    Returns
    -------
    (lower, upper)
        Lists of per-client counts with ``sum(lower) <= total <= sum(upper)``. Every choice of
        counts ``lower[c] <= n[c] <= upper[c]`` summing to ``total`` has all loads ``n[c] / cap[c]``
        in ``[lam, lam + 1]`` for one ``lam``, so the spread of tasks per thread is at most 1.

    Notes
    -----
    ``lam`` is the largest load with ``sum(ceil(lam * cap)) <= total``; it lies in
    ``[total / Q - 1, total / Q]`` (``Q`` = all threads) and at a breakpoint ``k / cap``. Then
    ``lower = ceil(lam * cap)`` and ``upper = floor((lam + 1) * cap)``, and
    ``sum(upper) >= sum(ceil((lam + eps) * cap)) > total`` by the choice of ``lam``.

    Examples
    --------
    >>> balanced_count_bounds(7, [1, 1, 2])
    ([2, 2, 3], [2, 2, 5])
    """
    if not capacities:
        return [], []
    if total == 0:
        return [0] * len(capacities), list(capacities)
    threads = sum(capacities)
    distinct = sorted(set(capacities))
    weight = {cap: capacities.count(cap) for cap in distinct}
    # Candidate loads k / cap around total / threads, as exact fractions.
    candidates = {Fraction(0)}
    for cap in distinct:
        low = max(0, (total - threads) * cap // threads)
        high = -(-total * cap // threads)
        candidates.update(Fraction(k, cap) for k in range(low, high + 1))
    ordered = sorted(candidates)

    def lower_sum(lam: Fraction) -> int:
        n, d = lam.numerator, lam.denominator
        return sum(weight[cap] * -(-n * cap // d) for cap in distinct)

    lo, hi = 0, len(ordered) - 1  # ordered[0] == 0 always fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if lower_sum(ordered[mid]) <= total:
            lo = mid
        else:
            hi = mid - 1
    n, d = ordered[lo].numerator, ordered[lo].denominator
    return [-(-n * cap // d) for cap in capacities], [(n + d) * cap // d for cap in capacities]


@dataclass
class IndexedCluster:
    """The rebalance input indexed for the steps: clients ``0..C-1`` in UUID order."""

    cluster: ClusterState
    capacity: list[int]
    tasks: list[TaskId]
    lags: list[dict[int, int]]  # per stateful task: client -> lag with local state
    prev_active: list[list[int]]  # per stateful task: clients that ran it as active
    prev_standby: list[set[int]]  # per stateful task: clients that held it as standby
    no_state_lag: list[int]  # per stateful task: lag of a client without state
    acceptable: int
    generic_caught_up: list[bool] = field(default_factory=list)
    state_tasks: list[list[int]] = field(default_factory=list)  # per client: tasks with state
    caught: list[set[int]] = field(default_factory=list)  # per task: caught-up holders
    tags: list[tuple[str | None, ...]] = field(default_factory=list)  # per client, per tag key
    # Per stateful task: client with local state -> records to restore there (restore_cost),
    # and the records a client without state restores. Computed once: the steps ask about
    # 20,000 times per assignment at 1000 clients.
    costs: list[dict[int, int]] = field(default_factory=list)
    base_cost: list[int] = field(default_factory=list)

    @property
    def num_clients(self) -> int:
        return len(self.capacity)

    def lag(self, client: int, task: int) -> int:
        value = self.lags[task].get(client)
        return self.no_state_lag[task] if value is None else value

    def caught_up(self, client: int, task: int) -> bool:
        if client in self.caught[task]:
            return True
        return client not in self.lags[task] and self.generic_caught_up[task]

    def fresh(self, client: int, task: int) -> bool:
        """The client held no copy of the task before (a standby placed there is a move)."""
        return client not in self.prev_standby[task] and client not in self.prev_active[task]

    def shared_tags(self, client: int, other: int) -> int:
        """How many ``rack.aware.assignment.tags`` keys the two clients have the same value for."""
        return sum(
            1
            for mine, theirs in zip(self.tags[client], self.tags[other], strict=True)
            if mine is not None and mine == theirs
        )

    def tag_spread(self, clients: Iterable[int]) -> int:
        """How spread a task's copies are over client tags: per tag key, the distinct values.

        Summed over the ``rack.aware.assignment.tags`` keys; a missing value counts nothing.
        KIP-708's aim is as many distinct values per key as the clients offer, so a set of copies
        with a larger spread is better; 0 without tags.
        """
        tags = self.tags
        if not tags or not tags[0]:
            return 0
        members = list(clients)
        return sum(len({tags[c][i] for c in members} - {None}) for i in range(len(tags[0])))

    def restore_cost(self, client: int, task: int) -> int:
        """Records to restore before ``client`` could run ``task`` (0 when caught up).

        A caught-up client restores nothing; a client with a finite lag its lag; one with an
        unknown lag (-3), a lag of ``Long.MAX_VALUE`` or no state the changelog estimate
        (:func:`estimated_changelog_records`), or nothing when every client counts as caught
        up. Looked up in the table :func:`index_cluster` builds, ``O(1)``.
        """
        return self.costs[task].get(client, self.base_cost[task])


def estimated_changelog_records(cluster: ClusterState) -> dict[TaskId, int]:
    """Per stateful task, the records a client without usable local state must restore.

    The changelog end offset sum when the input gives it; otherwise a lower estimate: the
    largest finite lag any client reports for the task (a lag never exceeds the changelog), or
    the largest of the whole cluster when nobody reports one, and never less than
    ``acceptable.recovery.lag + 1`` (such a client is not caught up). The same estimate stands
    for an unknown lag (-3) and for a lag of ``Long.MAX_VALUE``. The scorer
    (:class:`~streams_assign.optimal.costs.PlacementCosts`) charges the same numbers.
    """
    configs = cluster.configs
    least = 0 if configs.unbounded_recovery_lag else configs.acceptable_recovery_lag + 1
    known: dict[TaskId, int] = {}
    for client in cluster.clients:
        for task, lag in client.task_lags.items():
            if 0 <= lag < LONG_MAX_VALUE and lag > known.get(task, -1):
                known[task] = lag
    cluster_max = max(known.values(), default=0)
    ends = cluster.changelog_end_offset_sums or {}
    result = {}
    for task in cluster.stateful_tasks:
        end = ends.get(task)
        if end is not None and 0 <= end < LONG_MAX_VALUE:
            result[task] = end
        else:
            result[task] = max(known.get(task, cluster_max), least)
    return result


def index_cluster(cluster: ClusterState) -> IndexedCluster:
    """Index the rebalance input for the steps: one pass over every client's lags.

    Parameters
    ----------
    cluster:
        The validated rebalance input.

    Returns
    -------
    IndexedCluster
        Clients ``0..C-1`` in UUID order, stateful tasks ``0..T-1`` in TaskId order, per task
        the lags of the clients with local state (records), the caught-up ones, the previous
        active and standby clients, and the records each client restores
        (:meth:`IndexedCluster.restore_cost`).

    Notes
    -----
    ``O(L + T + C)`` for ``L`` reported lags. The changelog estimate of a client without state
    is :func:`estimated_changelog_records`' rule, computed in the same pass over the lags.
    """
    clients = cluster.clients
    tasks = list(cluster.stateful_tasks)
    acceptable = cluster.configs.acceptable_recovery_lag
    scan = _scan_clients(cluster, tasks)
    no_state = _no_state_lags(cluster, tasks, scan.largest, scan.cluster_max)
    generic = _generic_caught_up(cluster, tasks)
    # The places whose lag is not finite restore the changelog estimate, known only now.
    costs = scan.costs
    for t, c in scan.estimated:
        costs[t][c] = no_state[t]
    keys = cluster.configs.rack_aware_assignment_tags
    return IndexedCluster(
        cluster=cluster,
        capacity=[client.capacity for client in clients],
        tasks=tasks,
        lags=scan.lags,
        prev_active=scan.prev_active,
        prev_standby=scan.prev_standby,
        no_state_lag=no_state,
        acceptable=acceptable,
        generic_caught_up=generic,
        state_tasks=scan.state_tasks,
        caught=scan.caught,
        tags=(
            [tuple(client.tags.get(key) for key in keys) for client in clients]
            if keys
            else [()] * len(clients)
        ),
        costs=costs,
        base_cost=[0 if generic[t] else no_state[t] for t in range(len(tasks))],
    )


@dataclass
class _ClientScan:
    """What :func:`_scan_clients` gathers in its one pass over the clients."""

    lags: list[dict[int, int]]  # per stateful task: client -> lag with local state
    state_tasks: list[list[int]]  # per client: tasks with state, in TaskId order
    prev_active: list[list[int]]  # per stateful task: clients that ran it as active
    prev_standby: list[set[int]]  # per stateful task: clients that held it as standby
    caught: list[set[int]]  # per stateful task: caught-up holders
    # Per stateful task: client with state -> records to restore there, -1 for a lag that is
    # not finite (-3 unknown, Long.MAX_VALUE): the changelog estimate, listed in ``estimated``
    # as (task, client) and filled in once known.
    costs: list[dict[int, int]]
    estimated: list[tuple[int, int]]
    # The largest finite lag per stateful task (-1: none) and of any task at all: the changelog
    # estimate of estimated_changelog_records, whose rule counts the lags of every task.
    largest: list[int]
    cluster_max: int


def _scan_clients(cluster: ClusterState, tasks: list[TaskId]) -> _ClientScan:
    """One pass over every client's lags, previous actives and previous standbys.

    Parameters
    ----------
    cluster:
        The validated rebalance input.
    tasks:
        Its stateful tasks in TaskId order (their indices are the task numbers).

    Returns
    -------
    _ClientScan
        Per task the lags, caught-up holders, records to restore and previous copies by client
        index; per client its tasks with state.
    """
    clients = cluster.clients
    position = {task: i for i, task in enumerate(tasks)}
    # The parser shares one TaskId object per task, so most lookups match by identity: an
    # int-keyed dict, without calling TaskId.__hash__ (a Python method); equal task ids that
    # are other objects fall back to ``position``. ``tasks`` keeps them alive: ids stay unique.
    by_id = {id(task): i for i, task in enumerate(tasks)}
    lags: list[dict[int, int]] = [{} for _ in tasks]
    state_tasks: list[list[int]] = [[] for _ in clients]
    prev_active: list[list[int]] = [[] for _ in tasks]
    prev_standby: list[set[int]] = [set() for _ in tasks]
    largest = [-1] * len(tasks)
    cluster_max = 0
    acceptable = cluster.configs.acceptable_recovery_lag
    unbounded = acceptable == LONG_MAX_VALUE
    caught: list[set[int]] = [set() for _ in tasks]
    costs: list[dict[int, int]] = [{} for _ in tasks]
    estimated: list[tuple[int, int]] = []
    for c, client in enumerate(clients):
        held = state_tasks[c]
        for task, lag in client.task_lags.items():
            t = by_id.get(id(task))
            if t is None:
                t = position.get(task)
            finite = 0 <= lag < LONG_MAX_VALUE
            if finite and lag > cluster_max:
                cluster_max = lag
            if t is not None:
                lags[t][c] = lag
                held.append(t)
                if finite and lag > largest[t]:
                    largest[t] = lag
                # is_caught_up, inlined: a running active (-2), any lag when unbounded, or a
                # finite lag up to acceptable.recovery.lag.
                if lag == LATEST_OFFSET or unbounded or (finite and lag <= acceptable):
                    caught[t].add(c)
                    costs[t][c] = 0
                elif finite:
                    costs[t][c] = lag
                else:
                    costs[t][c] = -1
                    estimated.append((t, c))
        for task in client.prev_active:
            t = by_id.get(id(task))
            if t is None:
                t = position.get(task)
            if t is not None:
                prev_active[t].append(c)
        for task in client.prev_standby:
            t = by_id.get(id(task))
            if t is None:
                t = position.get(task)
            if t is not None:
                prev_standby[t].add(c)
        # In TaskId order, not the input's: the hand-over chains search in this order.
        held.sort()
    return _ClientScan(
        lags=lags,
        state_tasks=state_tasks,
        prev_active=prev_active,
        prev_standby=prev_standby,
        caught=caught,
        costs=costs,
        estimated=estimated,
        largest=largest,
        cluster_max=cluster_max,
    )


def _no_state_lags(
    cluster: ClusterState, tasks: list[TaskId], largest: list[int], cluster_max: int
) -> list[int]:
    """Per stateful task, the records a client without state restores.

    :func:`estimated_changelog_records`' rule, from the largest finite lags of the scan.
    """
    configs = cluster.configs
    least = 0 if configs.unbounded_recovery_lag else configs.acceptable_recovery_lag + 1
    ends = cluster.changelog_end_offset_sums or {}
    no_state = []
    for t, task in enumerate(tasks):
        end = ends.get(task)
        if end is not None and 0 <= end < LONG_MAX_VALUE:
            no_state.append(end)
        else:
            no_state.append(max(largest[t] if largest[t] >= 0 else cluster_max, least))
    return no_state


def _generic_caught_up(cluster: ClusterState, tasks: list[TaskId]) -> list[bool]:
    """Per stateful task, whether a client without state of it counts as caught up."""
    acceptable = cluster.configs.acceptable_recovery_lag
    if cluster.changelog_end_offset_sums is None:
        # Every client without state has the same lag (Long.MAX_VALUE): one answer for all.
        return [is_caught_up(LONG_MAX_VALUE, acceptable)] * len(tasks)
    return [is_caught_up(cluster.no_state_lag(task), acceptable) for task in tasks]


class LeastLoaded:
    """Clients by ``(count + 1) / capacity``, then index: a heap with lazy deletion.

    Every change of a client's count is followed by :meth:`touch`, which pushes its new key; an
    entry whose key no longer matches its client's count is stale and dropped when met.
    """

    def __init__(self, counts: list[int], capacity: list[int], limit: list[int]) -> None:
        self.counts = counts
        self.capacity = capacity
        self.limit = limit
        self.heap = [
            ((counts[c] + 1) / capacity[c], c) for c in range(len(counts)) if counts[c] < limit[c]
        ]
        heapq.heapify(self.heap)

    def pop(self, exclude: AbstractSet[int] = frozenset()) -> int | None:
        """The least-loaded client with room and not in ``exclude`` (it stays in the heap)."""
        heap = self.heap
        aside = []
        found = None
        while heap:
            key, c = heap[0]
            if self.counts[c] >= self.limit[c] or key != (self.counts[c] + 1) / self.capacity[c]:
                heapq.heappop(heap)
                continue
            if c in exclude:
                aside.append(heapq.heappop(heap))
                continue
            found = c
            break
        for item in aside:
            heapq.heappush(heap, item)
        return found

    def touch(self, client: int) -> None:
        """Re-key ``client`` after its count changed."""
        if self.counts[client] < self.limit[client]:
            heapq.heappush(self.heap, ((self.counts[client] + 1) / self.capacity[client], client))


def subtopology_indices(tasks: Sequence[TaskId]) -> list[int]:
    """Per task, an index of its (topology name, subtopology), in order of first appearance."""
    index: dict[tuple[str | None, int], int] = {}
    return [index.setdefault((t.topology_name, t.subtopology), len(index)) for t in tasks]
