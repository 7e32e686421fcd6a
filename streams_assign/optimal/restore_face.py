"""The target's restore optimum by min-cost flows, and the face of assignments that reach it.

The target's first objective, restore records, does not depend on which copy of a task is the
active: it is a transportation problem over *copies* (every stateful task ships ``1 + s``
copies, at most one per client, each client's count inside one stateful balance window), except
for the active-load balance, which only the choice of actives among a task's holders decides.
:func:`restore_optimum` therefore

1. solves, per stateful balance window of :func:`~streams_assign.optimal.model.balance_windows`,
   the transportation problem as a min-cost flow (OR-Tools ``SimpleMinCostFlow``), with the
   clients that have no state and no history for a task (all of which cost the same) reached
   through one pool node; the cheapest window's cost is a lower bound on every balanced
   assignment's restore records (a relaxation: the pool may give a client two copies of one
   task, and actives are not balanced);
2. names the pool's copies (:func:`~streams_assign.optimal.model.realize_generic`) and picks the
   actives among each task's holders, with the stateless tasks, by a second min-cost flow inside
   an active balance window (fewest moves). When both succeed the assignment is feasible and
   reaches the bound, so its restore records are optimal: the flow's optimality, integral by
   total unimodularity, is the proof;
3. computes node potentials of each window whose flow reaches the optimum (shortest distances
   in the residual network, Bellman-Ford) and, by complementary slackness, the *face* of that
   window: an arc with positive reduced cost carries no flow in *any* optimal flow, one with a
   negative reduced cost is full in every one. Every assignment whose restore records are
   optimal maps to an optimal flow of some such window, and every flow on the face costs the
   optimum, so the face describes exactly the assignments the second objective (moves) chooses
   among, without a restore-records constraint.

:func:`~streams_assign.optimal.face_moves.solve_moves_on_faces` then minimises moves over
the faces with a much smaller CP-SAT model than the whole target.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
from ortools.graph.python import min_cost_flow

from streams_assign.model import Assignment, ClientAssignment
from streams_assign.optimal.costs import PlacementCosts
from streams_assign.optimal.model import balance_windows, realize_generic

#: ``SimpleMinCostFlow`` multiplies unit costs by the node count and sums them in int64; beyond
#: this product the flows are not attempted (the caller falls back to the CP-SAT model).
_FLOW_COST_LIMIT = 2**62


@dataclass(frozen=True, slots=True)
class RestoreFace:
    """The restore-optimal assignments of one stateful balance window (see the module notes).

    Attributes
    ----------
    low, high:
        Per client, the least and most stateful copies (actives + standbys) it may hold:
        the window's bounds, narrowed to one end where complementary slackness fixes it.
    allowed:
        Per stateful task, the clients with state or history for it that may hold a copy.
    forced:
        Per stateful task, those of ``allowed`` that hold a copy in every such assignment.
    generic_range:
        Per stateful task, the least and most copies on clients without state and history for
        it (they all cost the same, so only their number is fixed).
    generic_clients:
        Clients that may take such copies at all.
    generic_exact:
        Clients that take exactly this many such copies, over all tasks.
    """

    low: tuple[int, ...]
    high: tuple[int, ...]
    allowed: dict[int, tuple[int, ...]]
    forced: dict[int, frozenset[int]]
    generic_range: dict[int, tuple[int, int]]
    generic_clients: tuple[int, ...]
    generic_exact: dict[int, int]


@dataclass(frozen=True, slots=True)
class RestoreOptimum:
    """The target's least restore records, the faces that reach it, and one assignment that does.

    Attributes
    ----------
    records:
        The least restore records of any assignment whose stateful load is balanced (a lower
        bound on the target's first objective; optimal when ``assignment`` is not ``None``).
    faces:
        One :class:`RestoreFace` per stateful balance window whose flow reaches ``records``.
    assignment:
        A balanced assignment (active and stateful load) restoring exactly ``records``, with
        the fewest moves for its holders; ``None`` when the pool's copies could not be named or
        no active window admits the actives (then ``records`` is only a bound).
    windows:
        How many stateful balance windows were solved.
    seconds:
        Wall time.
    """

    records: int
    faces: tuple[RestoreFace, ...]
    assignment: Assignment | None
    windows: int
    seconds: float


@dataclass(frozen=True, slots=True)
class _Network:
    """One window's copies network: arcs (numpy int64 arrays), supplies and what each arc is.

    ``kinds[i]`` is 0 for task -> special client, 1 for task -> pool, 2 for pool -> client and 3
    for client -> sink; ``tasks[i]``/``clients[i]`` name its task and client (-1 when none).
    """

    tails: np.ndarray
    heads: np.ndarray
    capacities: np.ndarray
    costs: np.ndarray
    supplies: np.ndarray
    kinds: np.ndarray
    tasks: np.ndarray
    clients: np.ndarray


def restore_optimum(
    costs: PlacementCosts, special: dict[int, tuple[int, ...]]
) -> RestoreOptimum | None:
    """The target's restore optimum by min-cost flows (see the module docstring).

    Parameters
    ----------
    costs:
        The cluster's cost table.
    special:
        Per stateful task, the clients with state or history for it (every other client costs
        the same for it); see :class:`~streams_assign.optimal.model.AssignmentModel`.

    Returns
    -------
    RestoreOptimum or None
        ``None`` when the flows cannot be used: restore costs too large for the flow's int64
        arithmetic, or no stateful balance window admits the copies (the target is then
        infeasible, which the CP-SAT path explains).

    References
    ----------
    Ahuja, Magnanti, Orlin, *Network Flows* (1993): ch. 9 (optimality conditions, reduced
    costs and complementary slackness), ch. 11 (transportation problems).
    """
    start = time.monotonic()
    stateful = costs.stateful_indices
    copies = 1 + costs.num_standbys
    total = len(stateful) * copies
    windows = balance_windows(costs.capacities, total)
    solved: list[tuple[int, _Network, np.ndarray]] = []
    for window in windows:
        low = np.array([window[q][0] for q in costs.capacities], dtype=np.int64)
        high = np.array([window[q][1] for q in costs.capacities], dtype=np.int64)
        network = _copies_network(costs, special, low, high)
        n_nodes = network.supplies.size
        if int(network.costs.max(initial=0)) * (n_nodes + 1) * max(total, 1) > _FLOW_COST_LIMIT:
            return None
        flow = min_cost_flow.SimpleMinCostFlow()
        arcs = flow.add_arcs_with_capacity_and_unit_cost(
            network.tails, network.heads, network.capacities, network.costs
        )
        flow.set_nodes_supplies(np.arange(n_nodes, dtype=np.int64), network.supplies)
        if flow.solve() != flow.OPTIMAL:
            continue
        solved.append((int(flow.optimal_cost()), network, flow.flows(arcs)))
    if not solved:
        return None
    records = min(cost for cost, _, _ in solved)
    best = [(network, flows) for cost, network, flows in solved if cost == records]
    faces = tuple(_face(costs, network, flows) for network, flows in best)
    assignment = None
    for network, flows in best:
        holders = _name_holders(costs, special, network, flows)
        if holders is not None:
            assignment = choose_actives(costs, holders)
        if assignment is not None:
            break
    return RestoreOptimum(records, faces, assignment, len(windows), time.monotonic() - start)


def _copies_network(
    costs: PlacementCosts,
    special: dict[int, tuple[int, ...]],
    low: np.ndarray,
    high: np.ndarray,
) -> _Network:
    """Nodes: stateful tasks ``[0, T)``, clients ``[T, T + C)``, the pool, the sink."""
    stateful = costs.stateful_indices
    n_tasks, n_clients = len(stateful), costs.num_clients
    copies = 1 + costs.num_standbys
    pool, sink = n_tasks + n_clients, n_tasks + n_clients + 1
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    unit: list[int] = []
    kinds: list[int] = []
    tasks: list[int] = []
    clients: list[int] = []

    def arc(tail: int, head: int, cap: int, cost: int, kind: int, t: int, c: int) -> None:
        tails.append(tail)
        heads.append(head)
        caps.append(cap)
        unit.append(cost)
        kinds.append(kind)
        tasks.append(t)
        clients.append(c)

    for i, t in enumerate(stateful):
        for c in special[t]:
            arc(i, n_tasks + c, 1, costs.restore[c][t], 0, t, c)
        generic = n_clients - len(special[t])
        if generic:
            stranger = _first_generic(special[t], n_clients)
            arc(i, pool, min(copies, generic), costs.restore[stranger][t], 1, t, -1)
    for c in range(n_clients):
        arc(pool, n_tasks + c, int(high[c]), 0, 2, -1, c)
    for c in range(n_clients):
        arc(n_tasks + c, sink, int(high[c] - low[c]), 0, 3, -1, c)
    supplies = (
        [copies] * n_tasks + [-int(x) for x in low] + [0, -(n_tasks * copies - int(low.sum()))]
    )

    def as_array(values: Sequence[int]) -> np.ndarray:
        return np.array(values, dtype=np.int64)

    return _Network(
        as_array(tails),
        as_array(heads),
        as_array(caps),
        as_array(unit),
        as_array(supplies),
        as_array(kinds),
        as_array(tasks),
        as_array(clients),
    )


def _potentials(network: _Network, flows: np.ndarray) -> list[int]:
    """Node potentials ``d`` with reduced costs ``cost + d[tail] - d[head] >= 0`` on every
    residual arc: shortest distances from a root joined to every node at cost 0 (Bellman-Ford;
    the residual network of an optimal flow has no negative cycle)."""
    graph = nx.DiGraph()
    n_nodes = network.supplies.size
    root = n_nodes
    graph.add_nodes_from(range(n_nodes + 1))
    for node in range(n_nodes):
        graph.add_edge(root, node, weight=0)
    arcs = zip(
        network.tails.tolist(),
        network.heads.tolist(),
        network.capacities.tolist(),
        network.costs.tolist(),
        flows.tolist(),
        strict=True,
    )
    for tail, head, cap, cost, amount in arcs:
        # The network has no antiparallel arcs, so each residual arc has its own (tail, head).
        if amount < cap:
            graph.add_edge(tail, head, weight=cost)
        if amount > 0:
            graph.add_edge(head, tail, weight=-cost)
    _, distance = nx.goldberg_radzik(graph, root)
    return [int(distance[node]) for node in range(n_nodes)]


def _face(costs: PlacementCosts, network: _Network, flows: np.ndarray) -> RestoreFace:
    """The window's optimal face by complementary slackness (see the module docstring)."""
    potential = np.array(_potentials(network, flows), dtype=np.int64)
    reduced = network.costs + potential[network.tails] - potential[network.heads]
    n_clients = costs.num_clients
    low = [0] * n_clients
    high = [0] * n_clients
    allowed: dict[int, list[int]] = {t: [] for t in costs.stateful_indices}
    forced: dict[int, set[int]] = {t: set() for t in costs.stateful_indices}
    generic_range = dict.fromkeys(costs.stateful_indices, (0, 0))
    generic_clients: list[int] = []
    generic_exact: dict[int, int] = {}
    rows = zip(
        network.kinds.tolist(),
        network.tasks.tolist(),
        network.clients.tolist(),
        network.capacities.tolist(),
        reduced.tolist(),
        network.tails.tolist(),
        strict=True,
    )
    for kind, t, c, cap, rc, tail in rows:
        if kind == 0 and rc <= 0:
            allowed[t].append(c)
            if rc < 0:
                forced[t].add(c)
        elif kind == 1 and rc <= 0:
            generic_range[t] = (cap if rc < 0 else 0, cap)
        elif kind == 2 and rc <= 0:
            generic_clients.append(c)
            if rc < 0:
                generic_exact[c] = cap
        elif kind == 3:
            floor, slack = -int(network.supplies[tail]), cap
            low[c], high[c] = floor, floor + slack
            if rc > 0:
                high[c] = floor
            elif rc < 0:
                low[c] = floor + slack
    return RestoreFace(
        tuple(low),
        tuple(high),
        {t: tuple(cs) for t, cs in allowed.items()},
        {t: frozenset(cs) for t, cs in forced.items()},
        generic_range,
        tuple(generic_clients),
        generic_exact,
    )


def _name_holders(
    costs: PlacementCosts,
    special: dict[int, tuple[int, ...]],
    network: _Network,
    flows: np.ndarray,
) -> dict[int, list[int]] | None:
    """Per stateful task, the clients holding its copies in the flow (pool copies named)."""
    holders: dict[int, list[int]] = {t: [] for t in costs.stateful_indices}
    task_generic: dict[int, int] = {}
    client_generic = [0] * costs.num_clients
    used = np.flatnonzero(flows)
    for i in used.tolist():
        kind, t, c = int(network.kinds[i]), int(network.tasks[i]), int(network.clients[i])
        if kind == 0:
            holders[t].append(c)
        elif kind == 1:
            task_generic[t] = int(flows[i])
        elif kind == 2:
            client_generic[c] = int(flows[i])
    named = realize_generic(
        costs.num_clients, special, {}, task_generic, [0] * costs.num_clients, client_generic
    )
    if named is None:
        return None
    for t, (_, clients) in named.items():
        holders[t].extend(clients)
    return holders


def choose_actives(costs: PlacementCosts, holders: dict[int, list[int]]) -> Assignment | None:
    """Pick each stateful task's active among its holders, and place the stateless tasks.

    Parameters
    ----------
    costs:
        The cluster's cost table.
    holders:
        Per stateful task, the ``1 + s`` distinct clients that hold a copy.

    Returns
    -------
    Assignment or None
        The assignment with the fewest moves whose active load (actives incl. stateless per
        thread) lies in one window of :func:`~streams_assign.optimal.model.balance_windows`
        (spread <= 1); ``None`` when no window admits one.

    Notes
    -----
    A min-cost flow per active window: stateful task -> each holder (cost: the active's move
    minus the standby's there), stateless tasks grouped by previous owners -> each owner (cost
    0) or -> a pool -> any client (cost 1 when the task ran before), client -> sink within the
    window's counts.
    """
    stateful = costs.stateful_indices
    n_clients = costs.num_clients
    groups: dict[tuple[int, ...], list[int]] = {}
    for t in costs.stateless_indices:
        groups.setdefault(tuple(sorted(costs.prev_active[t])), []).append(t)
    ordered = sorted(groups.items())
    n_tasks, n_groups = len(stateful), len(ordered)
    first_client = n_tasks + n_groups
    pool, sink = first_client + n_clients, first_client + n_clients + 1
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    unit: list[int] = []
    for i, t in enumerate(stateful):
        for c in holders[t]:
            tails.append(i)
            heads.append(first_client + c)
            caps.append(1)
            unit.append(costs.active_move(c, t) - costs.standby_move(c, t))
    for g, (owners, members) in enumerate(ordered):
        for c in owners:
            tails.append(n_tasks + g)
            heads.append(first_client + c)
            caps.append(len(members))
            unit.append(0)
        tails.append(n_tasks + g)
        heads.append(pool)
        caps.append(len(members))
        unit.append(1 if owners else 0)
    n_stateless = len(costs.stateless_indices)
    client_arcs = len(tails)
    for c in range(n_clients):
        tails.append(pool)
        heads.append(first_client + c)
        caps.append(n_stateless)
        unit.append(0)
    best: tuple[int, list[int]] | None = None
    for window in balance_windows(costs.capacities, len(costs.tasks)):
        low = [window[q][0] for q in costs.capacities]
        high = [window[q][1] for q in costs.capacities]
        flow = min_cost_flow.SimpleMinCostFlow()
        arcs = flow.add_arcs_with_capacity_and_unit_cost(
            np.array(tails + [first_client + c for c in range(n_clients)], dtype=np.int64),
            np.array(heads + [sink] * n_clients, dtype=np.int64),
            np.array(caps + [h - lo for lo, h in zip(low, high, strict=True)], dtype=np.int64),
            np.array(unit + [0] * n_clients, dtype=np.int64),
        )
        supplies = (
            [1] * n_tasks
            + [len(members) for _, members in ordered]
            + [-x for x in low]
            + [0, -(len(costs.tasks) - sum(low))]
        )
        flow.set_nodes_supplies(
            np.arange(len(supplies), dtype=np.int64), np.array(supplies, dtype=np.int64)
        )
        if flow.solve() != flow.OPTIMAL:
            continue
        if best is None or flow.optimal_cost() < best[0]:
            best = (int(flow.optimal_cost()), flow.flows(arcs).tolist())
    if best is None:
        return None
    amounts = best[1]
    active: list[list[int]] = [[] for _ in range(n_clients)]
    standby: list[list[int]] = [[] for _ in range(n_clients)]
    arc = 0
    for t in stateful:
        for c in holders[t]:
            (active if amounts[arc] else standby)[c].append(t)
            arc += 1
    leftovers: list[int] = []
    for owners, members in ordered:
        queue = list(members)
        for c in owners:
            keep, arc = amounts[arc], arc + 1
            active[c].extend(queue[:keep])
            queue = queue[keep:]
        arc += 1  # the group's pool arc: its tasks are the ones left in the queue
        leftovers.extend(queue)
    assert arc == client_arcs
    for c in range(n_clients):
        take = amounts[client_arcs + c]
        active[c].extend(leftovers[:take])
        leftovers = leftovers[take:]
    return assignment_of(costs, active, standby, "optimal_target")


def assignment_of(
    costs: PlacementCosts, active: list[list[int]], standby: list[list[int]], assignor: str
) -> Assignment:
    """An :class:`Assignment` from per-client lists of task indices."""
    tasks = costs.tasks
    return Assignment(
        clients={
            pid: ClientAssignment(
                active=tuple(tasks[t] for t in sorted(active[c])),
                standby=tuple(tasks[t] for t in sorted(standby[c])),
            )
            for c, pid in enumerate(costs.client_ids)
        },
        probing_rebalance_needed=False,
        assignor=assignor,
    )


def _first_generic(special: Sequence[int], n_clients: int) -> int:
    taken = set(special)
    return next(c for c in range(n_clients) if c not in taken)


__all__ = ["RestoreFace", "RestoreOptimum", "assignment_of", "choose_actives", "restore_optimum"]
