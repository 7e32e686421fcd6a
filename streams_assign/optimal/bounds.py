"""Lower bounds from min-cost flows, for clusters too large to solve to optimality.

Dropping the coupling between a task's active and its standbys (and, for moves, the active-load
balance) leaves a transportation problem: every stateful task ships ``1 + standbys`` copies, at
most one per client, and each client takes a number of copies that keeps the stateful load
balanced. Its min-cost flow, computed with OR-Tools' ``SimpleMinCostFlow``, is a lower bound on
the restore records (and, with move costs on the arcs, the moves) of every feasible assignment.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from ortools.graph.python import min_cost_flow

from streams_assign.model import ClusterState
from streams_assign.optimal.costs import PlacementCosts
from streams_assign.optimal.model import Problem, balance_windows


@dataclass(frozen=True, slots=True)
class FlowBound:
    """Lower bounds of one problem from min-cost flows.

    Attributes
    ----------
    problem:
        ``target`` or ``immediate``.
    restore_records:
        No feasible assignment restores fewer records; ``None`` when no balanced assignment
        exists (target only). Costs too large for the flow's int64 arithmetic are divided by a
        common factor rounding down, and the result multiplied back, which stays a bound.
    moves:
        No feasible assignment makes fewer moves (``None`` as above). Stateless tasks are
        left out, so this counts stateful moves only.
    feasible:
        False when the flows prove the target infeasible (no balanced way to place the copies).
    windows:
        How many balance windows (flows per objective) were solved.
    seconds:
        Wall time.
    """

    problem: Problem
    restore_records: int | None
    moves: int | None
    feasible: bool
    windows: int
    seconds: float


def flow_lower_bound(
    cluster: ClusterState,
    problem: Problem | str = Problem.TARGET,
    costs: PlacementCosts | None = None,
) -> FlowBound:
    """Lower bounds on restore records and moves of ``problem`` by min-cost flow.

    Parameters
    ----------
    cluster:
        The validated rebalance input.
    problem:
        ``target`` (the stateful load must be balanced: one flow per balance window, the
        cheapest counts) or ``immediate`` (no balance; actives of tasks with a caught-up client
        only on caught-up clients).
    costs:
        The cluster's cost table, when already built.

    Returns
    -------
    FlowBound

    Notes
    -----
    Network: one node per stateful task with supply ``1 + s`` (``s = min(num.standby.replicas,
    clients - 1)``), one per client, one sink. Arc task -> client has capacity 1 (a client holds
    a task once) and the placement's cost. For the target, client ``c`` of capacity ``q`` must
    take between ``low_q`` and ``high_q`` copies of one window of
    :func:`~streams_assign.optimal.model.balance_windows` (lower bounds as client demands,
    the rest on the client -> sink arc); the bound is the cheapest window. For moves the task's
    active and standby copies ship from separate nodes with their own move costs. Relaxed: an
    active and a standby of one task may share a client, the active load is not balanced, and
    the immediate problem's availability rule costs nothing in restore records (a caught-up
    placement is free), so it is only enforced for moves.

    References
    ----------
    Ahuja, Magnanti, Orlin, *Network Flows* (1993), ch. 9 (transportation problems);
    OR-Tools ``SimpleMinCostFlow``.
    """
    problem = Problem(problem)
    start = time.monotonic()
    costs = costs or PlacementCosts.of(cluster)
    stateful = np.array(costs.stateful_indices, dtype=np.int64)
    n_clients = costs.num_clients
    copies = 1 + costs.num_standbys
    if stateful.size == 0:
        return FlowBound(problem, 0, 0, True, 0, time.monotonic() - start)
    restore = np.asarray(costs.restore, dtype=np.int64)[:, stateful]  # clients x tasks
    active_move, standby_move = _move_matrices(costs, stateful)
    allowed_active = np.ones_like(restore, dtype=bool)
    if problem is Problem.IMMEDIATE:
        caught = np.asarray(costs.caught_up, dtype=bool)[:, stateful]
        has_caught = np.asarray(caught.any(axis=0), dtype=bool)
        allowed_active = np.where(has_caught[None, :], caught, True)
    windows: Sequence[tuple[np.ndarray, np.ndarray]]
    if problem is Problem.TARGET:
        total = int(stateful.size) * copies
        caps = costs.capacities
        windows = [
            (
                np.array([w[q][0] for q in caps], dtype=np.int64),
                np.array([w[q][1] for q in caps], dtype=np.int64),
            )
            for w in balance_windows(caps, total)
        ]
        if not windows:
            return FlowBound(problem, None, None, False, 0, time.monotonic() - start)
    else:
        unbounded = np.full(n_clients, int(stateful.size) * copies, dtype=np.int64)
        windows = [(np.zeros(n_clients, dtype=np.int64), unbounded)]
    best_restore: int | None = None
    best_moves: int | None = None
    for low, high in windows:
        value = _copies_flow(restore, copies, low, high)
        if value is not None and (best_restore is None or value < best_restore):
            best_restore = value
        moves = _roles_flow(
            active_move, standby_move, allowed_active, costs.num_standbys, low, high
        )
        if moves is not None and (best_moves is None or moves < best_moves):
            best_moves = moves
    return FlowBound(
        problem,
        best_restore,
        best_moves if best_restore is not None else None,
        best_restore is not None,
        len(windows),
        time.monotonic() - start,
    )


def _move_matrices(costs: PlacementCosts, stateful: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per (client, stateful task), 1 where an active (resp. standby) there is a move."""
    n_clients = costs.num_clients
    active = np.zeros((n_clients, stateful.size), dtype=np.int64)
    standby = np.zeros((n_clients, stateful.size), dtype=np.int64)
    for j, t in enumerate(stateful.tolist()):
        if costs.prev_active[t]:
            active[:, j] = 1
            active[list(costs.prev_active[t]), j] = 0
        if costs.prev_holders[t]:
            standby[:, j] = 1
            standby[list(costs.prev_holders[t]), j] = 0
    return active, standby


def _solve(
    tails: np.ndarray,
    heads: np.ndarray,
    capacities: np.ndarray,
    unit_costs: np.ndarray,
    supplies: np.ndarray,
) -> int | None:
    flow = min_cost_flow.SimpleMinCostFlow()
    flow.add_arcs_with_capacity_and_unit_cost(tails, heads, capacities, unit_costs)
    flow.set_nodes_supplies(np.arange(supplies.size, dtype=np.int64), supplies)
    status = flow.solve()
    if status != flow.OPTIMAL:
        return None
    return int(flow.optimal_cost())


def _copies_flow(restore: np.ndarray, copies: int, low: np.ndarray, high: np.ndarray) -> int | None:
    """Cheapest placement of ``copies`` copies per task, client counts within [low, high]."""
    n_clients, n_tasks = restore.shape
    total = n_tasks * copies
    if low.sum() > total or high.sum() < total:
        return None
    sink = n_tasks + n_clients
    task_nodes = np.repeat(np.arange(n_tasks, dtype=np.int64), n_clients)
    client_nodes = np.tile(np.arange(n_clients, dtype=np.int64), n_tasks) + n_tasks
    tails = np.concatenate([task_nodes, np.arange(n_clients, dtype=np.int64) + n_tasks])
    heads = np.concatenate([client_nodes, np.full(n_clients, sink, dtype=np.int64)])
    capacities = np.concatenate([np.ones(task_nodes.size, dtype=np.int64), high - low])
    # SimpleMinCostFlow multiplies costs by the node count and sums them in int64: divide
    # huge costs by a common factor, rounding down, which keeps the result a lower bound.
    limit = 2**62 // ((sink + 2) * max(total, 1))
    scale = max(1, -(-int(restore.max(initial=0)) // limit))
    unit_costs = np.concatenate(
        [restore.T.reshape(-1) // scale, np.zeros(n_clients, dtype=np.int64)]
    )
    supplies = np.concatenate(
        [
            np.full(n_tasks, copies, dtype=np.int64),
            -low,
            np.array([-(total - low.sum())], dtype=np.int64),
        ]
    )
    cost = _solve(tails, heads, capacities, unit_costs, supplies)
    return None if cost is None else cost * scale


def _roles_flow(
    active_move: np.ndarray,
    standby_move: np.ndarray,
    allowed_active: np.ndarray,
    n_standbys: int,
    low: np.ndarray,
    high: np.ndarray,
) -> int | None:
    """Fewest moves with actives and standbys shipped separately (see flow_lower_bound)."""
    n_clients, n_tasks = active_move.shape
    copies = 1 + n_standbys
    total = n_tasks * copies
    if low.sum() > total or high.sum() < total:
        return None
    # nodes: active sources [0, T), standby sources [T, 2T), clients [2T, 2T + C), sink.
    first_client = 2 * n_tasks
    sink = first_client + n_clients
    task_index = np.repeat(np.arange(n_tasks, dtype=np.int64), n_clients)
    client_index = np.tile(np.arange(n_clients, dtype=np.int64), n_tasks)
    keep = allowed_active.T.reshape(-1)
    tails = [task_index[keep]]
    heads = [client_index[keep] + first_client]
    unit_costs = [active_move.T.reshape(-1)[keep]]
    if n_standbys:
        tails.append(task_index + n_tasks)
        heads.append(client_index + first_client)
        unit_costs.append(standby_move.T.reshape(-1))
    tails.append(np.arange(n_clients, dtype=np.int64) + first_client)
    heads.append(np.full(n_clients, sink, dtype=np.int64))
    unit_costs.append(np.zeros(n_clients, dtype=np.int64))
    capacities = np.concatenate(
        [np.ones(sum(t.size for t in tails[:-1]), dtype=np.int64), high - low]
    )
    supplies = np.concatenate(
        [
            np.ones(n_tasks, dtype=np.int64),
            np.full(n_tasks, n_standbys, dtype=np.int64),
            -low,
            np.array([-(total - low.sum())], dtype=np.int64),
        ]
    )
    return _solve(
        np.concatenate(tails),
        np.concatenate(heads),
        capacities,
        np.concatenate(unit_costs),
        supplies,
    )


@dataclass(frozen=True, slots=True)
class SpreadOptimum:
    """The least active-load spread of the immediate problem, found by flows.

    Attributes
    ----------
    spread:
        The optimum: no assignment under Kafka's availability rule spreads actives per thread
        less, and some assignment reaches it.
    flows:
        How many feasibility flows were solved.
    seconds:
        Wall time.
    """

    spread: Fraction
    flows: int
    seconds: float


def min_active_spread(costs: PlacementCosts) -> SpreadOptimum:
    """The immediate problem's first objective, solved exactly with feasibility flows.

    Parameters
    ----------
    costs:
        The cluster's cost table.

    Returns
    -------
    SpreadOptimum

    Notes
    -----
    The spread depends on actives only, and standbys can always be added afterwards (there
    are ``min(num.standby.replicas, clients - 1)`` other clients), so the stage asks: what is
    the least ``s`` such that every stateful task can be active on an allowed client (a
    caught-up one when it has any) and every stateless task anywhere, with every client's
    count inside one window of :func:`~streams_assign.optimal.model.balance_windows` for
    spread ``s``? For a window that is a flow feasibility problem (tasks grouped by their
    allowed clients -> clients with demands ``[low, high]``); feasibility grows with ``s``,
    and ``s`` is a multiple of ``1 / lcm(capacities)``, so a binary search over those
    multiples up to a greedy assignment's spread finds the optimum.
    """
    start = time.monotonic()
    capacities = costs.capacities
    n_clients = costs.num_clients
    scale = math.lcm(*capacities)
    groups: dict[tuple[int, ...], int] = {}
    for t in costs.stateful_indices:
        allowed = costs.caught_up_clients(t) or tuple(range(n_clients))
        groups[allowed] = groups.get(allowed, 0) + 1
    n_stateless = len(costs.stateless_indices)
    total = len(costs.tasks)
    flows = 0

    def feasible(spread: Fraction) -> bool:
        nonlocal flows
        for window in balance_windows(capacities, total, spread):
            low = np.array([window[q][0] for q in capacities], dtype=np.int64)
            high = np.array([window[q][1] for q in capacities], dtype=np.int64)
            flows += 1
            if _actives_fit(groups, n_stateless, n_clients, low, high):
                return True
        return False

    upper = _greedy_spread(costs, groups, n_stateless)
    lo, hi = 0, int(upper * scale)
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(Fraction(mid, scale)):
            hi = mid
        else:
            lo = mid + 1
    return SpreadOptimum(Fraction(lo, scale), flows, time.monotonic() - start)


def _actives_fit(
    groups: dict[tuple[int, ...], int],
    n_stateless: int,
    n_clients: int,
    low: np.ndarray,
    high: np.ndarray,
) -> bool:
    """Whether every active can be placed with client counts inside ``[low, high]``."""
    total = sum(groups.values()) + n_stateless
    if low.sum() > total or high.sum() < total:
        return False
    # nodes: groups [0, G), stateless pool G, clients [G + 1, G + 1 + C), sink.
    n_groups = len(groups)
    first_client = n_groups + 1
    sink = first_client + n_clients
    tails: list[int] = []
    heads: list[int] = []
    capacities: list[int] = []
    supplies = [0] * (sink + 1)
    for g, (allowed, size) in enumerate(sorted(groups.items())):
        supplies[g] = size
        for c in allowed:
            tails.append(g)
            heads.append(first_client + c)
            capacities.append(size)
    supplies[n_groups] = n_stateless
    for c in range(n_clients):
        tails.append(n_groups)
        heads.append(first_client + c)
        capacities.append(n_stateless)
        tails.append(first_client + c)
        heads.append(sink)
        capacities.append(int(high[c] - low[c]))
        supplies[first_client + c] = -int(low[c])
    supplies[sink] = -(total - int(low.sum()))
    flow = _solve(
        np.array(tails, dtype=np.int64),
        np.array(heads, dtype=np.int64),
        np.array(capacities, dtype=np.int64),
        np.zeros(len(tails), dtype=np.int64),
        np.array(supplies, dtype=np.int64),
    )
    return flow is not None


def _greedy_spread(
    costs: PlacementCosts, groups: dict[tuple[int, ...], int], n_stateless: int
) -> Fraction:
    """The spread of a quick feasible placement: each active on the least-loaded allowed client."""
    capacities = costs.capacities
    counts = [0] * costs.num_clients
    for allowed, size in sorted(groups.items(), key=lambda item: len(item[0])):
        for _ in range(size):
            c = min(allowed, key=lambda k: (Fraction(counts[k] + 1, capacities[k]), k))
            counts[c] += 1
    for _ in range(n_stateless):
        c = min(range(costs.num_clients), key=lambda k: (Fraction(counts[k] + 1, capacities[k]), k))
        counts[c] += 1
    loads = [Fraction(n, q) for n, q in zip(counts, capacities, strict=True)]
    return max(loads) - min(loads)


__all__ = [
    "FlowBound",
    "SpreadOptimum",
    "flow_lower_bound",
    "min_active_spread",
]
