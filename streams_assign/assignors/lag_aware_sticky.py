"""A lag-aware, sticky task assignor: Kafka's hard rules, fewer moves, less state to restore.

Kafka's ``HighAvailabilityTaskAssignor`` deals stateful actives round-robin and then balances
them, ignoring where state already is; every task that lands on a client without its state then
needs a warmup replica and a probing rebalance before it can move. This assignor starts from where
state is instead:

1. **Balance bounds** (:func:`balanced_count_bounds`): per client a lower and an upper count such
   that *any* choice between them keeps tasks per stream thread within one of each other, Kafka's
   balance criterion (``assertBalancedActiveAssignment``).
2. **Target actives** (:func:`assign_target_stateful_actives`): previous actives stay where they
   are caught up, up to the upper bound; the rest go to caught-up clients with room (previous
   standbys first), then to the client with the least to restore; clients under their lower bound
   take tasks from the most loaded clients.
3. **Immediate actives** (:func:`assign_immediate_stateful_actives`): a task whose target client is
   not caught up stays on a caught-up client (its previous owner when possible) and becomes a
   pending move, as KIP-441 requires (no task unavailable while its new owner restores).
4. **Standbys** (:func:`assign_standby_tasks`): ``min(num.standby.replicas, clients - 1)`` per
   stateful task, on the clients with the least to restore (a pending move's target first, so its
   standby is the warmup it needs), spread over client tags when ``rack.aware.assignment.tags``
   is set, within the stateful-load bounds when room allows.
5. **Warmups** (:func:`assign_warmup_replicas`): a pending move whose target holds no standby gets a
   warmup replica while ``max.warmup.replicas`` lasts; any pending move asks for a probing
   rebalance.
6. **Stateless actives** (:func:`assign_stateless_tasks`): the per-client counts Kafka's
   least-loaded deal gives, filled with each client's previous stateless tasks first.

Complexity: O((T + C) log C) for T tasks and C clients without client tags (heaps keyed by load
per thread), plus O(T * C) for the tag-aware standby choice. ``docs/improved-assignor.md`` gives
the measurements against Kafka's assignor and the CP-SAT optimum.

References: KIP-441 (warmup replicas, probing rebalances, the caught-up rule), KIP-708 (client
tags), Kafka's ``TaskAssignorConvergenceTest`` balance criteria.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from fractions import Fraction
from math import ceil, floor

from streams_assign.model import (
    LONG_MAX_VALUE,
    Assignment,
    ClientAssignment,
    ClusterState,
    TaskId,
    is_caught_up,
)

__all__ = [
    "LagAwareStickyTaskAssignor",
    "assign_immediate_stateful_actives",
    "assign_stateless_tasks",
    "assign_standby_tasks",
    "assign_target_stateful_actives",
    "assign_warmup_replicas",
    "balanced_count_bounds",
    "estimated_changelog_records",
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
        return [0] * len(capacities), [floor(cap) for cap in capacities]
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
class _Problem:
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

    @property
    def num_clients(self) -> int:
        return len(self.capacity)

    def lag(self, client: int, task: int) -> int:
        value = self.lags[task].get(client)
        return self.no_state_lag[task] if value is None else value

    def caught_up(self, client: int, task: int) -> bool:
        value = self.lags[task].get(client)
        if value is None:
            return self.generic_caught_up[task]
        return is_caught_up(value, self.acceptable)

    def restore_cost_of(self, task: int, client: int) -> int:
        """:meth:`restore_cost` with the task first."""
        return self.restore_cost(client, task)

    def restore_cost(self, client: int, task: int) -> int:
        """Records to restore before ``client`` could run ``task`` (0 when caught up)."""
        if self.caught_up(client, task):
            return 0
        value = self.lags[task].get(client)
        if value is None or value < 0 or value >= LONG_MAX_VALUE:
            return self.no_state_lag[task]
        return value


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


def _index(cluster: ClusterState) -> _Problem:
    clients = cluster.clients
    tasks = list(cluster.stateful_tasks)
    position = {task: i for i, task in enumerate(tasks)}
    lags: list[dict[int, int]] = [{} for _ in tasks]
    state_tasks: list[list[int]] = [[] for _ in clients]
    prev_active: list[list[int]] = [[] for _ in tasks]
    prev_standby: list[set[int]] = [set() for _ in tasks]
    for c, client in enumerate(clients):
        for task, lag in client.task_lags.items():
            t = position.get(task)
            if t is not None:
                lags[t][c] = lag
                state_tasks[c].append(t)
        for task in client.prev_active:
            t = position.get(task)
            if t is not None:
                prev_active[t].append(c)
        for task in client.prev_standby:
            t = position.get(task)
            if t is not None:
                prev_standby[t].add(c)
    estimate = estimated_changelog_records(cluster)
    no_state = [estimate[task] for task in tasks]
    acceptable = cluster.configs.acceptable_recovery_lag
    problem = _Problem(
        cluster=cluster,
        capacity=[client.capacity for client in clients],
        tasks=tasks,
        lags=lags,
        prev_active=prev_active,
        prev_standby=prev_standby,
        no_state_lag=no_state,
        acceptable=acceptable,
        state_tasks=state_tasks,
    )
    problem.generic_caught_up = [
        is_caught_up(cluster.no_state_lag(task), acceptable) for task in tasks
    ]
    return problem


class _LeastLoaded:
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


def assign_target_stateful_actives(problem: _Problem) -> list[int]:
    """Where each stateful task should run once every move has completed.

    Returns
    -------
    list[int]
        Per stateful task, its target client. Counts per client lie within
        :func:`balanced_count_bounds` of the stateful tasks.

    Notes
    -----
    Order of preference for a task: its previous active client when caught up and within the
    upper bound; a caught-up client with room (least loaded, then least lag); the client with room
    that has the least to restore. Clients below their lower bound then take tasks from the most
    loaded clients, those already moving first.
    """
    n_tasks = len(problem.tasks)
    n_clients = problem.num_clients
    lower, upper = balanced_count_bounds(n_tasks, problem.capacity)
    counts = [0] * n_clients
    target = [-1] * n_tasks
    kept: list[list[int]] = [[] for _ in range(n_clients)]
    for t in range(n_tasks):
        owners = problem.prev_active[t]
        if not owners:
            continue
        owner = min(owners, key=lambda c: (problem.restore_cost(c, t), c))
        if problem.caught_up(owner, t) or not any(
            problem.caught_up(c, t) for c in problem.lags[t]
        ):
            # Caught up, or nobody is: the previous owner has the most state (or ties for it).
            kept[owner].append(t)
    has_alternative = [
        sum(1 for c in problem.lags[t] if problem.caught_up(c, t)) > 1
        or problem.generic_caught_up[t]
        for t in range(n_tasks)
    ]
    for c in range(n_clients):
        tasks = kept[c]
        if len(tasks) > upper[c]:
            # Shed first what another caught-up client can take without restoring.
            tasks.sort(key=lambda t: (has_alternative[t], t))
            tasks = tasks[: upper[c]]
        for t in tasks:
            target[t] = c
        counts[c] = len(tasks)

    heap = _LeastLoaded(counts, problem.capacity, upper)
    pending = [t for t in range(n_tasks) if target[t] < 0]
    # The most constrained tasks first: those with the fewest caught-up holders.
    pending.sort(
        key=lambda t: (
            problem.generic_caught_up[t],
            sum(1 for c in problem.lags[t] if problem.caught_up(c, t)),
            t,
        )
    )
    for t in pending:
        best = None
        best_key: tuple[int, Fraction, int] | None = None
        for c in problem.lags[t]:
            if counts[c] >= upper[c]:
                continue
            key = (problem.restore_cost(c, t), (counts[c] + 1) / problem.capacity[c], c)
            if best_key is None or key < best_key:
                best, best_key = c, key
        generic = heap.pop(exclude=problem.lags[t].keys())
        if generic is not None:
            cost = 0 if problem.generic_caught_up[t] else problem.no_state_lag[t]
            key = (cost, (counts[generic] + 1) / problem.capacity[generic], generic)
            if best_key is None or key < best_key:
                best = generic
        if best is None:
            # Every client is full (only when the bounds are tight and holders crowd it).
            best = min(range(n_clients), key=lambda c: (counts[c] / problem.capacity[c], c))
        target[t] = best
        counts[best] += 1
        heap.touch(best)

    _raise_to_lower_bounds(problem, target, counts, lower)
    spread_subtopologies(
        _subtopology_indices(problem.tasks), target, counts, lower, upper, problem.restore_cost_of
    )
    return target


def _subtopology_indices(tasks: Sequence[TaskId]) -> list[int]:
    """Per task, an index of its (topology name, subtopology), in order of first appearance."""
    index: dict[tuple[str | None, int], int] = {}
    return [index.setdefault((t.topology_name, t.subtopology), len(index)) for t in tasks]


def _raise_to_lower_bounds(
    problem: _Problem, target: list[int], counts: list[int], lower: list[int]
) -> None:
    """Give each client below its lower bound tasks from the most loaded clients."""
    deficient = [c for c in range(problem.num_clients) if counts[c] < lower[c]]
    if not deficient:
        return
    owned: list[list[int]] = [[] for _ in range(problem.num_clients)]
    for t, c in enumerate(target):
        owned[c].append(t)
    donors = [
        (-counts[c] / problem.capacity[c], c)
        for c in range(problem.num_clients)
        if counts[c] > lower[c]
    ]
    heapq.heapify(donors)
    for d in deficient:
        # First the tasks this client is caught up on, from the most loaded owner above its bound.
        candidates = [
            t
            for t in problem.state_tasks[d]
            if problem.caught_up(d, t) and target[t] != d
        ]
        while counts[d] < lower[d] and candidates:
            movable = [t for t in candidates if counts[target[t]] > lower[target[t]]]
            if not movable:
                break
            t = max(
                movable,
                key=lambda t: (
                    counts[target[t]] / problem.capacity[target[t]],
                    target[t] not in problem.prev_active[t],
                    -t,
                ),
            )
            candidates.remove(t)
            _move_target(t, d, target, counts, owned)
        while counts[d] < lower[d]:
            while donors:
                key, donor = donors[0]
                if counts[donor] <= lower[donor]:
                    heapq.heappop(donors)
                    continue
                current = -counts[donor] / problem.capacity[donor]
                if key != current:
                    heapq.heapreplace(donors, (current, donor))
                    continue
                break
            if not donors:
                return
            donor = donors[0][1]
            # Move the task that costs the least on the deficient client; ties: one that is not
            # running on the donor already (its move is happening anyway), then the highest id.
            t = min(
                owned[donor],
                key=lambda t: (
                    problem.restore_cost(d, t),
                    donor in problem.prev_active[t],
                    -t,
                ),
            )
            _move_target(t, d, target, counts, owned)


def _move_target(
    task: int, client: int, target: list[int], counts: list[int], owned: list[list[int]]
) -> None:
    owned[target[task]].remove(task)
    counts[target[task]] -= 1
    owned[client].append(task)
    counts[client] += 1
    target[task] = client


def spread_subtopologies(
    groups: Sequence[int],
    owner: list[int],
    counts: list[int],
    lower: Sequence[int],
    upper: Sequence[int],
    cost: Callable[[int, int], int],
) -> None:
    """Even out each subtopology's tasks over the clients, within one task (best effort).

    Kafka's balance check (``TaskAssignorConvergenceTest``) wants, per subtopology, the counts
    of its active tasks over all clients to differ by at most one. A task of an over-full client
    moves to an under-full one when both stay within their total bounds; otherwise it is swapped
    with a task of another subtopology that the receiver can spare and the donor can take.

    Parameters
    ----------
    groups:
        Per task, its subtopology as an index.
    owner:
        Per task, its client; updated in place.
    counts:
        Per client, its number of tasks; updated in place (unchanged by swaps).
    lower, upper:
        Per client, the bounds of :func:`balanced_count_bounds` that moves must keep.
    cost:
        ``cost(task, client)``: what placing the task there costs (records to restore); the
        cheapest candidate moves.
    """
    n_clients = len(counts)
    if n_clients < 2 or not groups:
        return
    n_groups = max(groups) + 1
    by_client: list[list[list[int]]] = [[[] for _ in range(n_clients)] for _ in range(n_groups)]
    for t, g in enumerate(groups):
        by_client[g][owner[t]].append(t)
    size = [sum(len(tasks) for tasks in by_client[g]) for g in range(n_groups)]

    def bounds(g: int) -> tuple[int, int]:
        return size[g] // n_clients, -(-size[g] // n_clients)

    def move(t: int, g: int, src: int, dst: int) -> None:
        by_client[g][src].remove(t)
        by_client[g][dst].append(t)
        owner[t] = dst

    for g in range(n_groups):
        low, high = bounds(g)
        for _ in range(size[g]):
            counts_g = [len(tasks) for tasks in by_client[g]]
            donor = max(range(n_clients), key=lambda c: (counts_g[c], -c))
            receiver = min(range(n_clients), key=lambda c: (counts_g[c], c))
            if counts_g[donor] - counts_g[receiver] <= 1:
                break
            t = min(by_client[g][donor], key=lambda t: (cost(t, receiver), t))
            if counts[donor] > lower[donor] and counts[receiver] < upper[receiver]:
                move(t, g, donor, receiver)
                counts[donor] -= 1
                counts[receiver] += 1
                continue
            # Swap with a task of another subtopology the receiver has to spare.
            swap = None
            for h in range(n_groups):
                if h == g or not by_client[h][receiver]:
                    continue
                h_low, h_high = bounds(h)
                if len(by_client[h][receiver]) > h_low and len(by_client[h][donor]) < h_high:
                    swap = min(by_client[h][receiver], key=lambda u: (cost(u, donor), u))
                    break
            if swap is None:
                break
            move(t, g, donor, receiver)
            move(swap, groups[swap], receiver, donor)
        del low, high


def assign_immediate_stateful_actives(problem: _Problem, target: list[int]) -> tuple[list[int], list[int]]:
    """Where each stateful task runs now, and which tasks still have to move.

    A task whose target client is not caught up, while some client is, stays on a caught-up
    client (its previous active client when caught up, else the one with the least lag) and is
    a pending move: KIP-441's rule that no task is unavailable while its new owner restores.

    Returns
    -------
    (active, moving)
        Per stateful task its client now; the tasks whose target differs from it.
    """
    active = list(target)
    moving = []
    for t, c in enumerate(target):
        if problem.caught_up(c, t):
            continue
        caught_up = [h for h in problem.lags[t] if problem.caught_up(h, t)]
        if caught_up:
            owners = [h for h in problem.prev_active[t] if h in caught_up]
            pool = owners or caught_up
        else:
            # Nobody can run it without restoring: the client with the least to restore does.
            pool = [c, *problem.lags[t]]
        best = min(pool, key=lambda h: (problem.restore_cost(h, t), h != c, h))
        if best != c:
            active[t] = best
            moving.append(t)
    return active, moving


def assign_standby_tasks(
    problem: _Problem, active: list[int], target: list[int]
) -> list[list[int]]:
    """``min(num.standby.replicas, clients - 1)`` standbys per stateful task.

    Candidates are ranked by client-tag overlap with the task's other copies (when
    ``rack.aware.assignment.tags`` is set), then by records to restore (a pending move's target
    ranks first: its standby is the warmup it needs), then by load per thread. Clients at the
    upper stateful-load bound are used only when no other client is allowed.

    Returns
    -------
    list[list[int]]
        Per stateful task, its standby clients.
    """
    configs = problem.cluster.configs
    n_clients = problem.num_clients
    replicas = min(configs.num_standby_replicas, n_clients - 1)
    n_tasks = len(problem.tasks)
    standbys: list[list[int]] = [[] for _ in range(n_tasks)]
    if replicas <= 0:
        return standbys
    bounds = balanced_count_bounds(n_tasks * (1 + replicas), problem.capacity)
    upper = bounds[1]
    counts = [0] * n_clients
    for c in target:
        counts[c] += 1
    tag_keys = configs.rack_aware_assignment_tags
    tags = [
        tuple(client.tags.get(key) for key in tag_keys) for client in problem.cluster.clients
    ]
    heap = _LeastLoaded(counts, problem.capacity, upper)
    for t in range(n_tasks):
        chosen: list[int] = []
        taken = {active[t]}
        for _ in range(replicas):
            if tag_keys:
                c = _tag_aware_choice(problem, t, active[t], taken, tags, counts, bounds)
            else:
                c = _standby_choice(problem, t, taken, counts, bounds, heap)
            if c is None:
                break
            chosen.append(c)
            taken.add(c)
            counts[c] += 1
            heap.touch(c)
        standbys[t] = chosen
    _even_out_standbys(problem, active, standbys, counts, bounds)
    return standbys


def _even_out_standbys(
    problem: _Problem,
    active: list[int],
    standbys: list[list[int]],
    counts: list[int],
    bounds: tuple[list[int], list[int]],
) -> None:
    """Move standbys from clients above their bounds to clients below them.

    The per-task greedy can leave a client below its lower bound when the earlier tasks filled
    the clients that hold state; each such client takes a standby of a task it holds no copy
    of from the most loaded client, the one cheapest to restore first.
    """
    lower, upper = bounds
    n_clients = problem.num_clients
    held_by: list[list[int]] = [[] for _ in range(n_clients)]
    for t, chosen in enumerate(standbys):
        for c in chosen:
            held_by[c].append(t)
    for receiver in range(n_clients):
        while counts[receiver] < lower[receiver]:
            donors = [c for c in range(n_clients) if counts[c] > lower[c]]
            if not donors:
                return
            best = None
            for donor in sorted(donors, key=lambda c: (-counts[c] / problem.capacity[c], c)):
                movable = [
                    t
                    for t in held_by[donor]
                    if active[t] != receiver and receiver not in standbys[t]
                ]
                if movable:
                    best = (donor, min(movable, key=lambda t: (problem.restore_cost(receiver, t), t)))
                    break
            if best is None:
                break
            donor, t = best
            standbys[t][standbys[t].index(donor)] = receiver
            held_by[donor].remove(t)
            held_by[receiver].append(t)
            counts[donor] -= 1
            counts[receiver] += 1


def _standby_key(
    problem: _Problem, c: int, t: int, counts: list[int], bounds: tuple[list[int], list[int]]
) -> tuple[bool, bool, int, bool, float, int]:
    held = c in problem.prev_standby[t] or c in problem.prev_active[t]
    lower, upper = bounds
    return (
        counts[c] >= upper[c],
        counts[c] >= lower[c],
        problem.restore_cost(c, t),
        not held,
        (counts[c] + 1) / problem.capacity[c],
        c,
    )


def _standby_choice(
    problem: _Problem,
    t: int,
    taken: set[int],
    counts: list[int],
    bounds: tuple[list[int], list[int]],
    heap: _LeastLoaded,
) -> int | None:
    best, best_key = None, None
    holders = set(problem.lags[t]) | problem.prev_standby[t]
    for c in holders:
        if c in taken:
            continue
        key = _standby_key(problem, c, t, counts, bounds)
        if best_key is None or key < best_key:
            best, best_key = c, key
    generic = heap.pop(exclude=taken | holders)
    if generic is not None:
        key = _standby_key(problem, generic, t, counts, bounds)
        if best_key is None or key < best_key:
            best = generic
    if best is None:
        # Every allowed client is at the bound: take the least loaded one anyway.
        free = [c for c in range(problem.num_clients) if c not in taken]
        if not free:
            return None
        best = min(free, key=lambda c: _standby_key(problem, c, t, counts, bounds))
    return best


def _tag_aware_choice(
    problem: _Problem,
    t: int,
    active: int,
    taken: set[int],
    tags: list[tuple[str | None, ...]],
    counts: list[int],
    bounds: tuple[list[int], list[int]],
) -> int | None:
    first = tags[active]
    used = [tags[c] for c in taken]

    def shares_with_active(c: int) -> int:
        return sum(1 for i, value in enumerate(tags[c]) if value is not None and value == first[i])

    def overlap(c: int) -> int:
        return sum(
            1
            for i, value in enumerate(tags[c])
            if value is not None and any(other[i] == value for other in used)
        )

    free = [c for c in range(problem.num_clients) if c not in taken]
    if not free:
        return None
    return min(
        free,
        key=lambda c: (
            shares_with_active(c) == len(first),
            counts[c] >= bounds[1][c],
            counts[c] >= bounds[0][c],
            problem.restore_cost(c, t),
            shares_with_active(c),
            overlap(c),
            c not in problem.prev_standby[t] and c not in problem.prev_active[t],
            (counts[c] + 1) / problem.capacity[c],
            c,
        ),
    )


def settle_standby_moves(
    problem: _Problem, active: list[int], standbys: list[list[int]]
) -> list[tuple[int, int]]:
    """Keep standbys on caught-up clients while their balanced places restore.

    A standby whose target client is not caught up, while another caught-up client may hold
    it (not the active's client, not sharing more client tags with the active than the target
    does), stays on that caught-up client for now; the target becomes a pending standby move,
    to get a warmup replica, as Kafka's ``assignStandbyTaskMovements`` does (KIP-441).

    Returns
    -------
    list[tuple[int, int]]
        The pending standby moves as ``(task, target client)``; ``standbys`` is updated in
        place to the standbys that run now.
    """
    tag_keys = problem.cluster.configs.rack_aware_assignment_tags
    clients = problem.cluster.clients

    def shared(c: int, t: int) -> int:
        first = clients[active[t]].tags
        return sum(
            1 for key in tag_keys if clients[c].tags.get(key) is not None
            and clients[c].tags.get(key) == first.get(key)
        )

    moves = []
    for t, chosen in enumerate(standbys):
        planned = set(chosen)
        for i, c in enumerate(chosen):
            if problem.caught_up(c, t):
                continue
            taken = {active[t], *chosen, *planned}
            cost = problem.restore_cost(c, t)
            spare = [
                h
                for h in problem.lags[t]
                if h not in taken
                and problem.restore_cost(h, t) < cost
                and (not tag_keys or shared(h, t) <= shared(c, t))
            ]
            if not spare:
                continue
            held = problem.prev_standby[t]
            chosen[i] = min(spare, key=lambda h: (h not in held, problem.restore_cost(h, t), h))
            moves.append((t, c))
    return moves


def assign_warmup_replicas(
    problem: _Problem,
    moving: list[int],
    target: list[int],
    standbys: list[list[int]],
    standby_moves: list[tuple[int, int]],
) -> list[tuple[int, int]]:
    """Warmup replicas for pending moves, at most ``max.warmup.replicas`` in all.

    Pending active moves first (a target client that already holds a standby of the task needs
    none), then pending standby moves, each the least to restore first (they finish soonest).

    Returns
    -------
    list[tuple[int, int]]
        ``(task, client)`` pairs.
    """
    budget = problem.cluster.configs.max_warmup_replicas
    wanted = [(t, target[t]) for t in moving if target[t] not in standbys[t]]
    wanted.sort(key=lambda m: (problem.restore_cost(m[1], m[0]), m[0]))
    later = sorted(standby_moves, key=lambda m: (problem.restore_cost(m[1], m[0]), m))
    warmups: list[tuple[int, int]] = []
    placed: set[tuple[int, int]] = set()
    for t, c in wanted + later:
        if len(warmups) == budget:
            break
        if (t, c) not in placed and c not in standbys[t]:
            warmups.append((t, c))
            placed.add((t, c))
    return warmups


def assign_stateless_tasks(
    cluster: ClusterState, active_counts: list[int]
) -> list[list[TaskId]]:
    """Stateless tasks, one subtopology at a time, each to the least-loaded client.

    A task goes to the client with the fewest actives per thread (Kafka's
    ``assignStatelessActiveTasks`` rule), then the fewest tasks of its subtopology, then one that
    ran a task of that subtopology before and has not got it back yet, then the smaller process
    id. Within those
    counts each client gets back the tasks it ran before.

    Parameters
    ----------
    cluster:
        The rebalance input.
    active_counts:
        Per client (UUID order), its stateful actives.

    Returns
    -------
    list[list[TaskId]]
        Per client, its stateless actives.
    """
    clients = cluster.clients
    n_clients = len(clients)
    capacity = [client.capacity for client in clients]
    load = list(active_counts)
    by_sub: dict[tuple[str | None, int], list[TaskId]] = {}
    for task in cluster.stateless_tasks:
        by_sub.setdefault((task.topology_name, task.subtopology), []).append(task)
    previous: dict[TaskId, int] = {}
    for c, client in enumerate(clients):
        for task in client.prev_active:
            previous.setdefault(task, c)
    result: list[list[TaskId]] = [[] for _ in range(n_clients)]
    for tasks in by_sub.values():
        returning = [0] * n_clients
        for task in tasks:
            if task in previous:
                returning[previous[task]] += 1
        quota = [0] * n_clients
        heap = [(load[c] / capacity[c], 0, returning[c] == 0, c) for c in range(n_clients)]
        heapq.heapify(heap)
        for _ in tasks:
            _, _, _, c = heapq.heappop(heap)
            quota[c] += 1
            load[c] += 1
            returning[c] = max(0, returning[c] - 1)
            heapq.heappush(heap, (load[c] / capacity[c], quota[c], returning[c] == 0, c))
        rest = []
        for task in tasks:
            c = previous.get(task, -1)
            if c >= 0 and quota[c] > 0:
                result[c].append(task)
                quota[c] -= 1
            else:
                rest.append(task)
        slots = (c for c in range(n_clients) for _ in range(quota[c]))
        for task in rest:
            result[next(slots)].append(task)
    return result


class LagAwareStickyTaskAssignor:
    """Kafka's hard rules with fewer moves and less state to restore than Kafka's HA assignor.

    Same input and output as :class:`~streams_assign.assignors.high_availability.
    HighAvailabilityTaskAssignor`: every task active exactly once,
    ``min(num.standby.replicas, clients - 1)`` standbys per stateful task, never an active and a
    standby of one task on one client, at most ``max.warmup.replicas`` warmups, and a probing
    rebalance while a stateful task still has to move.

    Examples
    --------
    >>> from streams_assign.scenario import parse_cluster_state
    >>> cluster = parse_cluster_state({
    ...     "configs": {"num_standby_replicas": 1},
    ...     "stateful_tasks": ["0_0", "0_1"],
    ...     "clients": [
    ...         {"id": "00000000-0000-0000-0000-000000000001", "capacity": 1,
    ...          "prev_active": ["0_1"], "task_lags": {"0_0": 0, "0_1": -2}},
    ...         {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1,
    ...          "prev_active": ["0_0"], "task_lags": {"0_0": -2, "0_1": 0}}]})
    >>> result = LagAwareStickyTaskAssignor().assign(cluster)
    >>> [str(t) for t in result.clients["00000000-0000-0000-0000-000000000001"].active]
    ['0_1']
    >>> result.probing_rebalance_needed
    False

    Notes
    -----
    See the module docstring for the steps and ``docs/improved-assignor.md`` for the measured
    comparison with Kafka's assignor and the optimum.
    """

    name = "lag_aware_sticky"

    def assign(self, cluster: ClusterState) -> Assignment:
        """Decide actives, standbys and warmups for one rebalance.

        Parameters
        ----------
        cluster:
            The validated rebalance input.

        Returns
        -------
        Assignment
            Per client its actives, standbys (warmups included) and warmups, and whether a
            probing rebalance follows (some stateful task still has to move).
        """
        problem = _index(cluster)
        target = assign_target_stateful_actives(problem)
        active, moving = assign_immediate_stateful_actives(problem, target)
        standbys = assign_standby_tasks(problem, active, target)
        standby_moves = settle_standby_moves(problem, active, standbys)
        warmups = assign_warmup_replicas(problem, moving, target, standbys, standby_moves)
        n_clients = problem.num_clients
        act: list[list[TaskId]] = [[] for _ in range(n_clients)]
        stby: list[list[TaskId]] = [[] for _ in range(n_clients)]
        warm: list[list[TaskId]] = [[] for _ in range(n_clients)]
        for t, c in enumerate(active):
            act[c].append(problem.tasks[t])
        for t, clients in enumerate(standbys):
            for c in clients:
                stby[c].append(problem.tasks[t])
        for t, c in warmups:
            stby[c].append(problem.tasks[t])
            warm[c].append(problem.tasks[t])
        stateless = assign_stateless_tasks(cluster, [len(a) for a in act])
        clients = {}
        for c, client in enumerate(cluster.clients):
            clients[client.id] = ClientAssignment(
                active=tuple(sorted(act[c] + stateless[c])),
                standby=tuple(sorted(stby[c])),
                warmup=tuple(sorted(warm[c])),
            )
        return Assignment(
            clients=clients,
            probing_rebalance_needed=bool(moving or standby_moves),
            assignor=self.name,
        )

