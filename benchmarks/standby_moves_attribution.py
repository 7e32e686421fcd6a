"""Where the lag-aware sticky assignor's moves go, beside the relaxed CP-SAT optimum's.

On the 280 shared states (kafka-diff 160 + kafka-ext 120), one rebalance each:

1. **Decomposition** of the scorer's moves (``docs/optimal.md``) for ours, Kafka's HA and the
   relaxed optimum (solved per state, 1 search worker): moved stateful actives, moved stateless
   actives, standby moves that are not warmups, warmup moves.
2. **Attribution** of each of ours' standby moves (a standby or warmup on a client that held no
   copy of the task before) to one cause, the first that holds: a warmup for a pending active
   move or a pending standby move; the target of a pending move restoring in the standby slot
   its old owner gave up; too few holders (the task has fewer clients that held it, besides
   the client running it, than standbys); and, when an unused holder existed, why it was not
   taken: it shares more client tags with the active (KIP-708's zone rule intent), it was at
   its upper stateful-load bound, the chosen client is at (or below) its lower bound, the
   holder restores more records than the chosen client, or another reason. Per cause the
   total and the states that hold the most.
3. **What the stateful bound costs**: for each state without client tags, the standby
   placement that moves the fewest copies (then restores the fewest records) given ours'
   target actives, as an exact min-cost flow (OR-Tools), within ours' stateful-load bounds and
   without them, beside ours' own placement (before the settle pass, which keeps standbys on
   holders while their places restore).

    .venv/bin/python benchmarks/standby_moves_attribution.py [--top 8]
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter, defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.paths import CORPORA  # noqa: E402
from streams_assign.assignors import assign  # noqa: E402
from streams_assign.assignors.lag_aware_sticky import (  # noqa: E402
    assign_immediate_stateful_actives,
    assign_standby_tasks,
    assign_target_stateful_actives,
    balanced_count_bounds,
    warmup_priority,
)
from streams_assign.assignors.lag_aware_sticky.problem import IndexedCluster, index_cluster  # noqa: E402
from streams_assign.formats.cluster_state import load_cluster_state  # noqa: E402
from streams_assign.model import Assignment, ClusterState  # noqa: E402
from streams_assign.optimal.costs import PlacementCosts  # noqa: E402
from streams_assign.optimal.metrics import score  # noqa: E402

#: CP-SAT wall seconds per state for the relaxed optimum, and search workers (a shared machine).
OPTIMUM_TIME_LIMIT = 30.0
OPTIMUM_WORKERS = 1


def decompose(cluster: ClusterState, assignment: Assignment, costs: PlacementCosts) -> Counter[str]:
    """The scorer's moves of one assignment, split four ways (tasks).

    Returns
    -------
    Counter
        ``stateful actives``, ``stateless actives`` (actives not on a previous active client),
        ``standbys`` (standbys that are not warmups, on a client that held no copy) and
        ``warmups`` (warmups on such a client).
    """
    client_index = {process_id: c for c, process_id in enumerate(costs.client_ids)}
    task_index = {task: t for t, task in enumerate(costs.tasks)}
    parts: Counter[str] = Counter()
    for process_id, assigned in assignment.clients.items():
        c = client_index[process_id]
        for task in assigned.active:
            t = task_index[task]
            kind = "stateful actives" if costs.stateful[t] else "stateless actives"
            parts[kind] += costs.active_move(c, t)
        warm = set(assigned.warmup)
        for task in assigned.standby:
            kind = "warmups" if task in warm else "standbys"
            parts[kind] += costs.standby_move(c, task_index[task])
    return parts


def _held(problem: IndexedCluster, t: int) -> set[int]:
    return set(problem.prev_active[t]) | problem.prev_standby[t]


def attribute(cluster: ClusterState, ours: Assignment) -> Counter[str]:
    """Each of ours' standby moves in one state, counted by cause (see the module docstring)."""
    problem = index_cluster(cluster)
    n_tasks = len(problem.tasks)
    target = assign_target_stateful_actives(problem)
    active, moving = assign_immediate_stateful_actives(problem, target)
    budget = cluster.configs.max_warmup_replicas
    early = set(sorted(moving, key=lambda t: warmup_priority(problem, t, target[t]))[:budget])
    replicas = min(cluster.configs.num_standby_replicas, problem.num_clients - 1)
    lower, upper = balanced_count_bounds(n_tasks * (1 + replicas), problem.capacity)
    position = {task: t for t, task in enumerate(problem.tasks)}
    standbys: list[list[int]] = [[] for _ in range(n_tasks)]
    warmups: list[list[int]] = [[] for _ in range(n_tasks)]
    counts = [0] * problem.num_clients
    for c in target:
        counts[c] += 1
    for c, client in enumerate(cluster.clients):
        assigned = ours.clients[client.id]
        warm = set(assigned.warmup)
        for task in assigned.standby:
            t = position[task]
            (warmups if task in warm else standbys)[t].append(c)
            counts[c] += task not in warm
    causes: Counter[str] = Counter()
    for t in range(n_tasks):
        held = _held(problem, t)
        if not held:
            continue
        for c in warmups[t]:
            if c not in held:
                pending = "active" if c == target[t] and t in moving else "standby"
                causes[f"warmup for a pending {pending} move"] += 1
        moved = [c for c in standbys[t] if c not in held]
        spare = held - {active[t]} - set(standbys[t]) - {target[t]}
        forced = max(0, replicas - len(held - {active[t]}))
        for c in moved:
            if t in early and c == target[t]:
                causes["target restores in the old owner's standby slot"] += 1
            elif forced > 0:
                forced -= 1
                causes["fewer holders than standbys"] += 1
            elif not spare:
                causes["holders taken by the active's move"] += 1
            elif (
                problem.tags
                and problem.tags[0]
                and all(
                    problem.shared_tags(h, active[t]) > problem.shared_tags(c, active[t])
                    for h in spare
                )
            ):
                causes["zone rule: the holders share more tags with the active"] += 1
            elif all(counts[h] >= upper[h] for h in spare):
                causes["holders at their upper stateful bound"] += 1
            elif counts[c] <= lower[c]:
                causes["the chosen client needs it for its lower stateful bound"] += 1
            elif all(problem.restore_cost(h, t) > problem.restore_cost(c, t) for h in spare):
                causes["the chosen client restores fewer records"] += 1
            else:
                causes["other"] += 1
    return causes


def flow_standby_moves(
    problem: IndexedCluster, anchor: list[int], target: list[int], bounded: bool
) -> int | None:
    """Fewest standby moves (then records) for the given actives, as an exact min-cost flow.

    Tasks supply ``min(num.standby.replicas, clients - 1)`` units each, one per client other
    than the task's anchor (its active, or its target for a move that restores now); with
    ``bounded`` every client's stateful count (target actives plus standbys) stays within
    ``balanced_count_bounds``. None when no placement fits.
    """
    from ortools.graph.python import min_cost_flow

    configs = problem.cluster.configs
    n_tasks, n_clients = len(problem.tasks), problem.num_clients
    replicas = min(configs.num_standby_replicas, n_clients - 1)
    lower, upper = balanced_count_bounds(n_tasks * (1 + replicas), problem.capacity)
    counts = [0] * n_clients
    for c in target:
        counts[c] += 1
    flow = min_cost_flow.SimpleMinCostFlow()
    sink = 1 + n_tasks + n_clients
    big = 10**12
    for t in range(n_tasks):
        flow.add_arc_with_capacity_and_unit_cost(0, 1 + t, replicas, 0)
        held = _held(problem, t)
        for c in range(n_clients):
            if c != anchor[t]:
                move = int(bool(held) and c not in held)
                cost = move * big + problem.restore_cost(c, t)
                flow.add_arc_with_capacity_and_unit_cost(1 + t, 1 + n_tasks + c, 1, cost)
    for c in range(n_clients):
        node = 1 + n_tasks + c
        if not bounded:
            flow.add_arc_with_capacity_and_unit_cost(node, sink, n_tasks, 0)
            continue
        if counts[c] > upper[c]:
            return None
        need, room = max(0, lower[c] - counts[c]), upper[c] - counts[c]
        if need:
            flow.add_arc_with_capacity_and_unit_cost(node, sink, need, -big * 1000)
        if room > need:
            flow.add_arc_with_capacity_and_unit_cost(node, sink, room - need, 0)
    flow.set_node_supply(0, n_tasks * replicas)
    flow.set_node_supply(sink, -n_tasks * replicas)
    if flow.solve() != flow.OPTIMAL:
        return None
    moves = 0
    for arc in range(flow.num_arcs()):
        tail, head = flow.tail(arc), flow.head(arc)
        if flow.flow(arc) and 1 <= tail <= n_tasks and head != sink:
            t, c = tail - 1, head - 1 - n_tasks
            held = _held(problem, t)
            moves += bool(held) and c not in held
    if bounded:
        placed = list(counts)
        for arc in range(flow.num_arcs()):
            if flow.flow(arc) and flow.head(arc) == sink:
                placed[flow.tail(arc) - 1 - n_tasks] += flow.flow(arc)
        if any(placed[c] < lower[c] for c in range(n_clients)):
            return None
    return moves


def stateful_bound_cost(cluster: ClusterState) -> tuple[int, int, int] | None:
    """(ours, exact within the bounds, exact without) standby moves before the settle pass.

    None for states with client tags or without standbys, or when no placement keeps the
    bounds.
    """
    problem = index_cluster(cluster)
    configs = cluster.configs
    if (
        configs.rack_aware_assignment_tags
        or min(configs.num_standby_replicas, problem.num_clients - 1) <= 0
    ):
        return None
    target = assign_target_stateful_actives(problem)
    active, moving = assign_immediate_stateful_actives(problem, target)
    early = set(
        sorted(moving, key=lambda t: warmup_priority(problem, t, target[t]))[
            : configs.max_warmup_replicas
        ]
    )
    anchor = [target[t] if t in early else active[t] for t in range(len(problem.tasks))]
    standbys = assign_standby_tasks(problem, active, target, early)
    # Undo the old owner's slot handed to an early target, so all three count the same thing.
    for t in early:
        if target[t] in standbys[t] and active[t] != target[t]:
            standbys[t][standbys[t].index(target[t])] = active[t]
    ours = sum(
        1
        for t, chosen in enumerate(standbys)
        for c in chosen
        if _held(problem, t) and c not in _held(problem, t)
    )
    bounded = flow_standby_moves(problem, anchor, target, bounded=True)
    free = flow_standby_moves(problem, anchor, target, bounded=False)
    if bounded is None or free is None:
        return None
    return ours, bounded, free


def main() -> None:
    from streams_assign.optimal import Problem, solve_optimal

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=8, help="states shown per cause")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    console = Console(width=200)
    files = sorted((CORPORA / "kafka-diff" / "input").glob("*.json"))
    files += sorted((CORPORA / "kafka-ext" / "input").glob("*.json"))
    parts: dict[str, Counter[str]] = defaultdict(Counter)
    causes: Counter[str] = Counter()
    by_state: dict[str, Counter[str]] = defaultdict(Counter)
    bound_cost: Counter[str] = Counter()
    for path in files:
        cluster = load_cluster_state(path)
        costs = PlacementCosts.of(cluster)
        ours = assign(cluster, assignor="lag_aware_sticky")
        kafka = assign(cluster, assignor="high_availability")
        optimum = solve_optimal(
            cluster,
            Problem.IMMEDIATE,
            time_limit=OPTIMUM_TIME_LIMIT,
            num_workers=OPTIMUM_WORKERS,
            costs=costs,
        )
        parts["ours"] += decompose(cluster, ours, costs)
        parts["HA"] += decompose(cluster, kafka, costs)
        if optimum.assignment is not None:
            parts["relaxed optimum"] += decompose(cluster, optimum.assignment, costs)
        parts["ours"]["moves (scorer)"] += score(cluster, ours, costs).moves
        found = attribute(cluster, ours)
        causes += found
        for cause, n in found.items():
            by_state[cause][path.stem] += n
        measured = stateful_bound_cost(cluster)
        if measured is not None:
            bound_cost["states"] += 1
            for name, value in zip(
                ("ours", "within bounds", "without bounds"), measured, strict=True
            ):
                bound_cost[name] += value
    table = Table(title="Moves on the 280 shared states, split four ways")
    for column in (
        "assignor",
        "stateful actives",
        "stateless actives",
        "standbys",
        "warmups",
        "all",
    ):
        table.add_column(column, justify="right")
    for name in ("HA", "ours", "relaxed optimum"):
        row = parts[name]
        kinds = ("stateful actives", "stateless actives", "standbys", "warmups")
        table.add_row(name, *(f"{row[k]:,}" for k in kinds), f"{sum(row[k] for k in kinds):,}")
    console.print(table)
    table = Table(title="Ours' standby moves (warmups included) by cause")
    for column in ("cause", "moves", "states holding the most"):
        table.add_column(column, justify="left")
    for cause, n in causes.most_common():
        top = by_state[cause].most_common(args.top)
        table.add_row(cause, str(n), ", ".join(f"{s} {k}" for s, k in top))
    console.print(table)
    console.print(
        f"Standby moves before the settle pass on {bound_cost['states']} states without tags "
        f"(ours' targets): ours {bound_cost['ours']:,}, exact within the stateful bounds "
        f"{bound_cost['within bounds']:,}, exact without them {bound_cost['without bounds']:,}"
    )


if __name__ == "__main__":
    main()
