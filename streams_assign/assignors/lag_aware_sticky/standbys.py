"""Standby replicas where state already is, spread over client tags, and warmup replicas."""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from streams_assign.assignors.lag_aware_sticky.problem import (
    IndexedCluster,
    LeastLoaded,
    balanced_count_bounds,
)
from streams_assign.assignors.lag_aware_sticky.standby_bounds import (
    even_out_standbys,
    exchange_standbys,
)

__all__ = [
    "assign_standby_tasks",
    "assign_warmup_replicas",
    "settle_standby_moves",
    "warmup_priority",
]


def assign_standby_tasks(
    problem: IndexedCluster,
    active: list[int],
    target: list[int],
    early: AbstractSet[int] = frozenset(),
) -> list[list[int]]:
    """``min(num.standby.replicas, clients - 1)`` standbys per stateful task.

    Candidates are ranked by client-tag overlap with the task's other copies (when
    ``rack.aware.assignment.tags`` is set), then by records to restore (a pending move's target
    ranks first: its standby is the warmup it needs), then by load per thread. Clients at the
    upper stateful-load bound are used only when no other client is allowed.

    Parameters
    ----------
    problem:
        The indexed rebalance input.
    active, target:
        Per stateful task, the client running it now and the one it should end on.
    early:
        Moving tasks whose target restores now: their standbys are chosen beside the target
        active, and when the old owner is among them it gives its slot to the target. The
        others' standbys are chosen beside the current active.

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
    heap = LeastLoaded(counts, problem.capacity, upper)
    # An early task's standbys are chosen for the converged assignment (beside its target); its
    # active stays on the old owner for now, so that client gives its standby slot to the
    # target, which restores there meanwhile.
    anchor = [target[t] if t in early else active[t] for t in range(n_tasks)]
    for t in range(n_tasks):
        chosen: list[int] = []
        taken = {anchor[t]}
        for _ in range(replicas):
            choice = (
                _tag_aware_choice(problem, t, anchor[t], taken, counts, bounds)
                if tag_keys
                else _standby_choice(problem, t, taken, counts, bounds, heap)
            )
            if choice is None:
                break
            c = choice
            chosen.append(c)
            taken.add(c)
            counts[c] += 1
            heap.touch(c)
        standbys[t] = chosen
    even_out_standbys(problem, anchor, standbys, counts, bounds)
    if not tag_keys:
        exchange_standbys(problem, anchor, standbys, counts, bounds)
    for t in early:
        chosen = standbys[t]
        if active[t] != target[t] and active[t] in chosen:
            chosen[chosen.index(active[t])] = target[t]
    return standbys


def _standby_key(
    problem: IndexedCluster, c: int, t: int, counts: list[int], bounds: tuple[list[int], list[int]]
) -> tuple[bool, int, bool, bool, float, int]:
    held = c in problem.prev_standby[t] or c in problem.prev_active[t]
    lower, upper = bounds
    return (
        counts[c] >= upper[c],
        problem.restore_cost(c, t),
        not held,
        counts[c] >= lower[c],
        (counts[c] + 1) / problem.capacity[c],
        c,
    )


def _standby_choice(
    problem: IndexedCluster,
    t: int,
    taken: set[int],
    counts: list[int],
    bounds: tuple[list[int], list[int]],
    heap: LeastLoaded,
) -> int | None:
    best, best_key = None, None
    prev_standby, prev_active = problem.prev_standby[t], problem.prev_active[t]
    holders = prev_standby.union(problem.lags[t])
    lower, upper = bounds
    costs, base_cost, capacity = problem.costs[t], problem.base_cost[t], problem.capacity
    for c in holders:
        if c in taken:
            continue
        n = counts[c]
        # _standby_key, inlined (the hot loop of the standby choice).
        key = (
            n >= upper[c],
            costs.get(c, base_cost),
            c not in prev_standby and c not in prev_active,
            n >= lower[c],
            (n + 1) / capacity[c],
            c,
        )
        if best_key is None or key < best_key:
            best, best_key = c, key
    generic = heap.pop(exclude=taken | holders)
    if generic is not None:
        n = counts[generic]
        key = (  # _standby_key, inlined
            n >= upper[generic],
            costs.get(generic, base_cost),
            generic not in prev_standby and generic not in prev_active,
            n >= lower[generic],
            (n + 1) / capacity[generic],
            generic,
        )
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
    problem: IndexedCluster,
    t: int,
    active: int,
    taken: set[int],
    counts: list[int],
    bounds: tuple[list[int], list[int]],
) -> int | None:
    keys = len(problem.tags[active])
    tags = problem.tags

    def overlap(c: int) -> int:
        return sum(
            1
            for i, value in enumerate(tags[c])
            if value is not None and any(tags[other][i] == value for other in taken)
        )

    free = [c for c in range(problem.num_clients) if c not in taken]
    if not free:
        return None
    return min(
        free,
        key=lambda c: (
            problem.shared_tags(c, active) == keys,
            counts[c] >= bounds[1][c],
            problem.restore_cost(c, t),
            c not in problem.prev_standby[t] and c not in problem.prev_active[t],
            problem.shared_tags(c, active),
            overlap(c),
            counts[c] >= bounds[0][c],
            (counts[c] + 1) / problem.capacity[c],
            c,
        ),
    )


def settle_standby_moves(
    problem: IndexedCluster,
    active: list[int],
    standbys: list[list[int]],
    target: list[int],
    early: AbstractSet[int] = frozenset(),
) -> list[tuple[int, int]]:
    """Keep standbys on caught-up clients while their balanced places restore.

    A standby whose target client is not caught up, while another caught-up client may hold
    it (not the active's client, not sharing more client tags with the active than the target
    does), stays on that caught-up client for now; the target becomes a pending standby move,
    to get a warmup replica, as Kafka's ``assignStandbyTaskMovements`` does (KIP-441).

    Parameters
    ----------
    early:
        Moving tasks whose target active restores now in a standby slot (within
        ``max.warmup.replicas``, see :func:`assign_standby_tasks`): that standby stays. The
        other moving tasks' targets restore through warmup replicas, as Kafka's do.

    Returns
    -------
    list[tuple[int, int]]
        The pending standby moves as ``(task, target client)``; ``standbys`` is updated in
        place to the standbys that run now.
    """
    moves: list[tuple[int, int]] = []
    # Without rack.aware.assignment.tags every tag spread is 0: the spread test is moot.
    tagged = bool(problem.cluster.configs.rack_aware_assignment_tags)
    caught, lags, generic = problem.caught, problem.lags, problem.generic_caught_up
    for t, chosen in enumerate(standbys):
        held: set[int] | None = None
        displaced: list[int] = []
        costs, base_cost = problem.costs[t], problem.base_cost[t]
        for i, c in enumerate(chosen):
            # problem.caught_up(c, t), inlined
            if (
                c in caught[t]
                or (c not in lags[t] and generic[t])
                or (c == target[t] and t in early)
            ):
                continue
            # A planned place another standby of the task gave up may take this one: it then
            # restores less than this place, and is no pending move.
            taken = {active[t], *chosen}
            if held is None:
                held = problem.prev_standby[t] | set(problem.prev_active[t])
            # A holder is cheaper when it restores fewer records, or as many while the target
            # held nothing (a lag of -3: state of unknown size, charged like none at all).
            cost = (costs.get(c, base_cost), c not in held)
            spare = [
                h
                for h in held.union(lags[t])
                if h not in taken and (costs.get(h, base_cost), h not in held) < cost
            ]
            if tagged and spare:
                others = chosen[:i] + chosen[i + 1 :]
                spread = problem.tag_spread([active[t], c, *others])
                spare = [h for h in spare if problem.tag_spread([active[t], h, *others]) >= spread]
            if not spare:
                continue
            places = held
            chosen[i] = min(spare, key=lambda h: (h not in places, costs.get(h, base_cost), h))
            displaced.append(c)
        moves.extend((t, c) for c in displaced if c not in chosen)
    return moves


def warmup_priority(problem: IndexedCluster, task: int, client: int) -> tuple[bool, int, int]:
    """The order in which pending moves restore now, within ``max.warmup.replicas``.

    A target client that held the task before (as active or standby) first: it keeps that
    copy, which it would otherwise drop now and take again later (a move then); then the
    fewest records to restore (the move finishes soonest), then the TaskId.

    Parameters
    ----------
    problem:
        The indexed rebalance input.
    task, client:
        A pending move's stateful task and its target client (indices).

    Returns
    -------
    tuple[bool, int, int]
        A sort key: (the client held no copy, records to restore, task).
    """
    return problem.fresh(client, task), problem.restore_cost(client, task), task


def assign_warmup_replicas(
    problem: IndexedCluster,
    moving: list[int],
    target: list[int],
    standbys: list[list[int]],
    standby_moves: list[tuple[int, int]],
    budget: int | None = None,
) -> list[tuple[int, int]]:
    """Warmup replicas for pending moves, at most ``max.warmup.replicas`` in all.

    Pending active moves first (a target client that already holds a standby of the task needs
    none), then pending standby moves, each the least to restore first (they finish soonest).

    Returns
    -------
    list[tuple[int, int]]
        ``(task, client)`` pairs.
    """
    if budget is None:
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
