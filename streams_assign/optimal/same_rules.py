"""The same-rules optimum: the immediate problem plus the hard rules ``lag_aware_sticky`` obeys.

The immediate problem of :mod:`~streams_assign.optimal.model` knows no client tags and no
balance. :func:`add_same_rules` adds to an (unaggregated) immediate model the rules the issue
asks every assignor to keep, in the form the lag-aware sticky assignor
(:mod:`streams_assign.assignors.lag_aware_sticky`) keeps them:

* **The converged active balance.** Besides where each stateful task runs now, the model picks
  where it will run once the pending moves are done (its *target*): the targets' stateful
  active counts have a load spread of at most one task per stream thread (every count vector
  inside the assignor's ``balanced_count_bounds`` has that spread, Kafka's
  ``assertBalancedActiveAssignment`` criterion), and a task whose target client is caught up
  runs there now; a target that is not caught up restores later (KIP-441's pending move,
  warmups and probing rebalances), so it binds nothing now. The assignor guarantees no bound on
  the stateful load (actives + standbys) or on the active load of this rebalance's output, so
  none is modelled (no tighter than the assignor).
* **Stateless tasks within one task per thread of the least loaded.** The assignor deals
  stateless tasks within the window of Kafka's ``assignStatelessActiveTasks`` deal (every
  client's active load between that deal's least load ``m`` and ``m + 1``, a client above
  ``m + 1`` getting none; ``lag_aware_sticky.stateless.balance_window``), so every client
  ``c`` running a stateless task ends with ``actives_c / capacity_c <= min_d actives_d /
  capacity_d + 1``; the model keeps exactly that (a consequence of the window, so no tighter
  than it; Kafka's own deal, ``(actives_c - 1) / capacity_c <= min``, keeps it too).
* **The zone rule** (KIP-708), exactly as :func:`zone_violations` counts it: a standby that
  shares the value of one ``rack.aware.assignment.tags`` key with its active, while a client
  with another value for that key holds no copy of the task, is one violation per key. The
  rule cannot always be kept (two keys, few clients), so the model minimises the violations
  first: the optimum keeps the rule wherever some assignment does.

The objectives, lexicographic, are :data:`SAME_RULES_OBJECTIVES`: zone violations (with client
tags only), restore records, moves. The immediate problem's active-load spread is not one: the
balance above is a constraint, as in the assignor, which does not minimise this rebalance's
spread either.
"""

from __future__ import annotations

import math
from typing import Any

from ortools.graph.python import min_cost_flow
from ortools.sat.python import cp_model

from streams_assign.model import Assignment, ClientAssignment, ClusterState
from streams_assign.optimal.model import AssignmentModel, balance_windows

__all__ = [
    "SAME_RULES_OBJECTIVES",
    "add_same_rules",
    "target_hint",
    "without_warmups",
    "zone_violations",
]

#: The same-rules problem's objectives, most important first.
SAME_RULES_OBJECTIVES: tuple[str, ...] = ("zone_violations", "restore_records", "moves")


def zone_violations(cluster: ClusterState, assignment: Assignment) -> int:
    """Standby placements that break KIP-708's zone rule, one per tag key.

    Parameters
    ----------
    cluster:
        The cluster state (its ``rack_aware_assignment_tags`` and client tags).
    assignment:
        Any assignment of it; every active task must be on some client.

    Returns
    -------
    int
        Over every standby (warmups included) and every tag key: 1 when the standby's client
        has the same (non-missing) value for the key as the task's active client while a
        client with another value (or none) holds no copy of the task. 0 without tags.

    Examples
    --------
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
    >>> from streams_assign.model import Assignment, ClientAssignment, TaskId
    >>> ids = [f"00000000-0000-0000-0000-00000000000{i}" for i in (1, 2, 3)]
    >>> cluster = parse_cluster_state({
    ...     "configs": {"num_standby_replicas": 1, "rack_aware_assignment_tags": ["zone"]},
    ...     "stateful_tasks": ["0_0"],
    ...     "clients": [{"id": i, "capacity": 1, "tags": {"zone": z}}
    ...                 for i, z in zip(ids, "aab")]})
    >>> task = TaskId(0, 0)
    >>> same_zone = Assignment(clients={ids[0]: ClientAssignment(active=(task,)),
    ...     ids[1]: ClientAssignment(standby=(task,)), ids[2]: ClientAssignment()},
    ...     probing_rebalance_needed=False)
    >>> zone_violations(cluster, same_zone)
    1
    """
    keys = cluster.configs.rack_aware_assignment_tags
    if not keys:
        return 0
    tags = {c.id: c.tags for c in cluster.clients}
    owner = {t: pid for pid, c in assignment.clients.items() for t in c.active}
    holders: dict[Any, set[str]] = {}
    for pid, assigned in assignment.clients.items():
        for task in (*assigned.active, *assigned.standby):
            holders.setdefault(task, set()).add(pid)
    count = 0
    for pid, assigned in assignment.clients.items():
        for task in assigned.standby:
            first = tags[owner[task]]
            for key in keys:
                value = tags[pid].get(key)
                if value is None or value != first.get(key):
                    continue
                if any(
                    c.tags.get(key) != value and c.id not in holders[task] for c in cluster.clients
                ):
                    count += 1
    return count


def add_same_rules(built: AssignmentModel, zone_rule: bool = True) -> None:
    """Add the converged active balance, the stateless deal and the zone objective to a model.

    Parameters
    ----------
    built:
        An :class:`~streams_assign.optimal.model.AssignmentModel` of the ``immediate`` problem
        built with ``aggregate=False`` (every client named) and no active-spread bound.
    zone_rule:
        Add the zone objective (with client tags). ``False`` keeps only the balance: the rules
        the lag-aware sticky assignor keeps on every state, since it does not keep the zone
        rule as :func:`zone_violations` counts it (``docs/improved-assignor.md``).

    Raises
    ------
    ValueError
        When ``built`` is aggregated (tags make clients distinguishable, and the target
        variables name clients).

    Notes
    -----
    Adds ``built.target[c, t]`` (the client task ``t`` ends on), its balance (one of the
    windows of :func:`~streams_assign.optimal.model.balance_windows` with spread 1 over the
    stateful tasks) and ``target[c, t] <= active[c, t]`` for every client ``c`` caught up on
    ``t``; every client running a stateless task within one task per thread of the least
    loaded;
    with client tags, ``built.objectives["zone_violations"]``.
    """
    if built.client_generic_active or any(
        len(special) != built.costs.num_clients for special in built.special.values()
    ):
        raise ValueError("the same-rules model needs the unaggregated model (aggregate=False)")
    costs, model = built.costs, built.model
    n_clients = costs.num_clients
    stateful = costs.stateful_indices
    target = built.target
    per_client: list[list[Any]] = [[] for _ in range(n_clients)]
    for t in stateful:
        row = []
        for c in range(n_clients):
            var = model.new_bool_var(f"target_{c}_{t}")
            target[c, t] = var
            row.append(var)
            per_client[c].append(var)
            if costs.caught_up[c][t]:
                # A caught-up target runs the task now; the availability rule allows it.
                model.add(var <= built.active[c, t])
        model.add_exactly_one(row)
    if stateful:
        counts = [cp_model.LinearExpr.sum(v) for v in per_client]
        built.add_balance(counts, len(stateful), "target_active")
    if costs.stateless_indices:
        _add_stateless_to_least_loaded(built)
    keys = costs.cluster.configs.rack_aware_assignment_tags
    if zone_rule and keys and costs.num_standbys:
        built.objectives["zone_violations"] = _zone_expression(built, keys)


def _add_stateless_to_least_loaded(built: AssignmentModel) -> None:
    """Every client with a stateless task is within one task per thread of the least loaded.

    In integers, with ``L`` the least common multiple of the capacities and ``w_c = L / q_c``:
    ``least <= actives_d * w_d`` for every client ``d``, and ``actives_c * w_c <= least + L``
    for every client ``c`` that runs a stateless task (``runs_stateless[c]``).
    """
    costs, model = built.costs, built.model
    capacities = costs.capacities
    common = math.lcm(*capacities)
    n_tasks = len(costs.tasks)
    least = model.new_int_var(0, n_tasks * common, "least_active_load")
    for c, capacity in enumerate(capacities):
        weight = common // capacity
        model.add(least <= built.active_count[c] * weight)
        runs_stateless = model.new_bool_var(f"runs_stateless_{c}")
        model.add(built.stateless_count[c] == 0).only_enforce_if(runs_stateless.Not())
        model.add(built.active_count[c] * weight <= least + common).only_enforce_if(runs_stateless)


def target_hint(built: AssignmentModel, active: dict[int, int]) -> None:
    """Hint ``built.target`` with balanced targets for given actives, when some exist.

    Parameters
    ----------
    built:
        A model that :func:`add_same_rules` extended.
    active:
        Per stateful task index, the client index running it in the hinted assignment.

    Notes
    -----
    A hint without the targets leaves CP-SAT to find them, which on the largest shared states
    (80 clients) takes longer than the time limit; with them the hinted assignment is a
    complete solution to start from. Per window of
    :func:`~streams_assign.optimal.model.balance_windows` a min-cost flow (OR-Tools
    ``SimpleMinCostFlow``) sends each task to its active's client or to a client not caught up
    on it; each client's first ``low`` units earn -1, so the window is met exactly when the
    cost reaches ``-sum(low)``.
    """
    costs = built.costs
    stateful = list(costs.stateful_indices)
    if any(t not in active for t in stateful):
        return
    n_clients = costs.num_clients
    n_tasks = len(stateful)
    source, sink = n_tasks + n_clients, n_tasks + n_clients + 1
    for window in balance_windows(costs.capacities, n_tasks):
        flow = min_cost_flow.SimpleMinCostFlow()
        arcs: dict[int, tuple[int, int]] = {}
        for i, t in enumerate(stateful):
            flow.add_arc_with_capacity_and_unit_cost(source, i, 1, 0)
            for c in range(n_clients):
                if c == active[t] or not costs.caught_up[c][t]:
                    arcs[flow.add_arc_with_capacity_and_unit_cost(i, n_tasks + c, 1, 0)] = (c, t)
        wanted = 0
        for c, capacity in enumerate(costs.capacities):
            low, high = window[capacity]
            wanted += low
            if low:
                flow.add_arc_with_capacity_and_unit_cost(n_tasks + c, sink, low, -1)
            if high > low:
                flow.add_arc_with_capacity_and_unit_cost(n_tasks + c, sink, high - low, 0)
        flow.set_node_supply(source, n_tasks)
        flow.set_node_supply(sink, -n_tasks)
        if flow.solve() != flow.OPTIMAL or flow.optimal_cost() != -wanted:
            continue
        chosen = {arcs[a] for a in arcs if flow.flow(a)}
        for (c, t), var in built.target.items():
            built.model.add_hint(var, int((c, t) in chosen))
        return


def _zone_expression(built: AssignmentModel, keys: tuple[str, ...]) -> Any:
    """The number of zone violations (:func:`zone_violations`) as a linear expression."""
    costs, model = built.costs, built.model
    clients = costs.cluster.clients
    n_standbys = costs.num_standbys
    # Per tag key and value: the clients with that value and those with another (or none).
    groups: list[tuple[int, str, list[int], list[int]]] = []
    for k, key in enumerate(keys):
        for v in sorted({v for c in clients if (v := c.tags.get(key)) is not None}):
            same = [c for c, client in enumerate(clients) if client.tags.get(key) == v]
            other = [c for c, client in enumerate(clients) if client.tags.get(key) != v]
            if other:  # nobody with another value: sharing breaks nothing
                groups.append((k, v, same, other))
    parts: list[Any] = []
    for t in costs.stateful_indices:
        for k, v, same, other in groups:
            active_here = [built.active[c, t] for c in same if (c, t) in built.active]
            if not active_here:
                continue
            standbys_here = [built.standby[c, t] for c in same]
            held_elsewhere = [
                var
                for c in other
                for var in (built.active.get((c, t)), built.standby[c, t])
                if var is not None
            ]
            # uncovered = 0 forces every client with another value to hold a copy.
            uncovered = model.new_bool_var(f"zone_uncovered_{t}_{k}_{v}")
            model.add(
                cp_model.LinearExpr.sum(held_elsewhere) + len(other) * uncovered >= len(other)
            )
            violations = model.new_int_var(0, n_standbys, f"zone_violations_{t}_{k}_{v}")
            model.add(
                violations
                >= cp_model.LinearExpr.sum(standbys_here)
                - n_standbys * (2 - cp_model.LinearExpr.sum(active_here) - uncovered)
            )
            parts.append(violations)
    return cp_model.LinearExpr.sum(parts)


def without_warmups(assignment: Assignment) -> Assignment:
    """``assignment`` less its warmup replicas: what an optimum of one rebalance is compared with.

    The optima of one rebalance place no warmup replicas (in one rebalance a warmup only costs
    a move and records to restore), so an assignor's output is compared with them without its
    warmups (KIP-441: a warmup is a standby beyond ``num.standby.replicas``).

    Parameters
    ----------
    assignment:
        Any assignment; each client's ``warmup`` tasks are a subset of its ``standby`` tasks.

    Returns
    -------
    Assignment
        The same actives, standbys less warmups, the same probing flag and assignor name.
    """
    return Assignment(
        clients={
            pid: ClientAssignment(
                active=c.active, standby=tuple(t for t in c.standby if t not in c.warmup)
            )
            for pid, c in assignment.clients.items()
        },
        probing_rebalance_needed=assignment.probing_rebalance_needed,
        assignor=assignment.assignor,
    )
