"""The flow graphs of rack-aware assignment: Kafka's two graph constructors.

- ``min_traffic`` (Kafka's ``MinTrafficGraphConstructor``): every client keeps
  exactly its task count;
- ``balance_subtopology`` (``BalanceSubtopologyGraphConstructor``): as well,
  each client gets at most ``ceil(count / T * |tasks of the sub-topology|)`` tasks of each
  sub-topology.

Both are rack-compressed (see the package notes) and solved by the solver passed in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from streams_assign.assignors.rack_aware.flow import MinCostFlowSolver, solve_flow
from streams_assign.assignors.state import AssignmentState
from streams_assign.errors import TaskAssignmentError

__all__ = [
    "GraphProblem",
    "MoveStandbyTaskPredicate",
    "movable_standbys",
    "single_owners",
    "solve_balance_subtopology",
    "solve_min_traffic",
    "subtopology_groups",
]

#: ``move_predicate(state, source, destination, task)``: may the standby optimiser move a
#: standby of ``task`` from ``source`` to ``destination`` (Kafka's ``MoveStandbyTaskPredicate``)?
MoveStandbyTaskPredicate = Callable[[AssignmentState, int, int, int], bool]

# Tie-break arcs only when the scaled costs stay far from int64 overflow in the solver.
_MAX_SCALED_COST = 1 << 52


class GraphProblem:
    """One assignment problem: tasks (rows), candidate clients, costs, counts to keep.

    ``current[k]`` is task ``k``'s current client, as a state client index, or, with
    ``local_clients``, as a position in ``clients``. ``new_owner`` arrays use the same
    convention.
    """

    def __init__(
        self,
        rows: np.ndarray,
        current: np.ndarray,
        clients: list[int],
        client_rack: list[int],
        orig: list[int],
        traffic: int,
        non_overlap: int,
        local_clients: bool = False,
    ) -> None:
        self.rows = rows
        self.clients = clients
        self.client_rack = np.asarray(client_rack, dtype=np.int64)
        if local_clients:
            self.current = current
            self.orig = np.asarray(orig, dtype=np.int64)
        else:
            position = {c: k for k, c in enumerate(clients)}
            self.current = np.asarray([position[int(c)] for c in current], dtype=np.int64)
            self.orig = np.asarray([orig[c] for c in clients], dtype=np.int64)
        self.local_clients = local_clients
        self.traffic = traffic
        self.non_overlap = non_overlap

    @property
    def num_tasks(self) -> int:
        return int(self.rows.shape[0])

    def own_cost(self) -> np.ndarray:
        """Cost of each task on its current client (no move)."""
        return self.traffic * self.rows[np.arange(self.num_tasks), self.client_rack[self.current]]

    def cost_of(self, new_owner: np.ndarray) -> int:
        """Kafka's total cost of a placement (``new_owner`` in the caller's convention)."""
        local = self._local(new_owner)
        traffic = self.traffic * self.rows[np.arange(self.num_tasks), self.client_rack[local]]
        moves = int(np.count_nonzero(local != self.current))
        return int(traffic.sum()) + self.non_overlap * moves

    def _local(self, owner: np.ndarray) -> np.ndarray:
        if self.local_clients:
            return owner
        position = {c: k for k, c in enumerate(self.clients)}
        return np.asarray([position[int(c)] for c in owner], dtype=np.int64)

    def to_caller(self, local: np.ndarray) -> np.ndarray:
        """Client positions -> the caller's convention."""
        if self.local_clients:
            return local
        return np.asarray(self.clients, dtype=np.int64)[local]

    def scale(self, num_nodes: int) -> int:
        """Cost multiplier that leaves room for the fewest-moves tie-break (1 = no tie-break)."""
        biggest = abs(self.traffic) * (int(self.rows.max()) if self.rows.size else 0) + abs(
            self.non_overlap
        )
        scale = self.num_tasks + 1
        if (biggest + 1) * scale * max(num_nodes, 1) > _MAX_SCALED_COST:
            return 1
        return scale

    def compressed(self) -> bool:
        """Whether rack nodes may stand for the clients of a rack (see the module notes)."""
        num_racks = len(set(self.client_rack.tolist()))
        return self.non_overlap >= 0 and num_racks < len(self.clients)


def solve_min_traffic(problem: GraphProblem, solver: MinCostFlowSolver) -> np.ndarray:
    """MinTrafficGraphConstructor: each client keeps its count; returns the new owners."""
    t_count, c_count = problem.num_tasks, len(problem.clients)
    own = problem.own_cost()
    current = problem.current
    if not problem.compressed():
        # Dense: task -> every client.
        tails = np.repeat(np.arange(t_count), c_count)
        client_pos = np.tile(np.arange(c_count), t_count)
        heads = t_count + client_pos
        stay = client_pos == np.repeat(current, c_count)
        base = problem.traffic * problem.rows[tails, problem.client_rack[client_pos]]
        num_nodes = t_count + c_count
        scale = problem.scale(num_nodes)
        tie = 1 if scale > 1 else 0
        costs = np.where(stay, base * scale, (base + problem.non_overlap) * scale + tie)
        supplies = np.concatenate([np.ones(t_count, dtype=np.int64), -problem.orig])
        flows = solve_flow(
            solver, num_nodes, tails, heads, np.ones(len(tails), dtype=np.int64), costs, supplies
        )
        chosen = flows > 0
        local = np.empty(t_count, dtype=np.int64)
        local[tails[chosen]] = client_pos[chosen]
        return problem.to_caller(local)

    rack_ids = sorted(set(problem.client_rack.tolist()))
    r_count = len(rack_ids)
    rack_pos = {r: k for k, r in enumerate(rack_ids)}
    rack_node = t_count
    client_node = t_count + r_count
    num_nodes = client_node + c_count
    scale = problem.scale(num_nodes)
    tie = 1 if scale > 1 else 0
    # Arcs: task -> its client, task -> each rack, rack -> its clients.
    direct_tails = np.arange(t_count)
    direct_heads = client_node + current
    direct_costs = own * scale
    rack_tails = np.repeat(np.arange(t_count), r_count)
    rack_cols = np.tile(np.asarray(rack_ids, dtype=np.int64), t_count)
    rack_heads = rack_node + np.tile(np.arange(r_count), t_count)
    rack_costs = (
        problem.traffic * problem.rows[rack_tails, rack_cols] + problem.non_overlap
    ) * scale + tie
    feed_clients = np.flatnonzero(problem.orig > 0)
    feed_tails = rack_node + np.asarray(
        [rack_pos[int(problem.client_rack[c])] for c in feed_clients], dtype=np.int64
    )
    feed_heads = client_node + feed_clients
    tails = np.concatenate([direct_tails, rack_tails, feed_tails])
    heads = np.concatenate([direct_heads, rack_heads, feed_heads])
    caps = np.concatenate(
        [np.ones(t_count + t_count * r_count, dtype=np.int64), problem.orig[feed_clients]]
    )
    costs = np.concatenate([direct_costs, rack_costs, np.zeros(len(feed_clients), dtype=np.int64)])
    supplies = np.concatenate(
        [np.ones(t_count, dtype=np.int64), np.zeros(r_count, dtype=np.int64), -problem.orig]
    )
    flows = solve_flow(solver, num_nodes, tails, heads, caps, costs, supplies)
    local = current.copy()
    via = flows[t_count : t_count + t_count * r_count].reshape(t_count, r_count)
    feed = flows[t_count + t_count * r_count :]
    rack_of_client = np.asarray([rack_pos[int(r)] for r in problem.client_rack], dtype=np.int64)
    _zip_via_rack(local, np.arange(t_count), via, feed_clients, feed, rack_of_client)
    return problem.to_caller(local)


def solve_balance_subtopology(
    problem: GraphProblem, groups: list[list[int]], solver: MinCostFlowSolver
) -> np.ndarray:
    """BalanceSubtopologyGraphConstructor: counts kept, per-sub-topology caps; new owners.

    Client ``c`` may take at most ``ceil(orig[c] / T * n_g)`` tasks of sub-topology ``g``
    (``n_g`` of them are being placed; Kafka's stage-one capacity) and exactly ``orig[c]`` in
    total (stage two). Per group: task -> (its client, g) and task -> (rack, g) -> (client, g),
    then (client, g) -> client.
    """
    t_count, c_count = problem.num_tasks, len(problem.clients)
    own = problem.own_cost()
    current = problem.current
    rack_ids = sorted(set(problem.client_rack.tolist()))
    r_count = len(rack_ids)
    rack_pos = {r: k for k, r in enumerate(rack_ids)}
    rack_of_client = np.asarray([rack_pos[int(r)] for r in problem.client_rack], dtype=np.int64)
    client_base = t_count + len(groups) * (r_count + c_count)
    num_nodes = client_base + c_count
    scale = problem.scale(num_nodes)
    tie = 1 if scale > 1 else 0

    tails: list[np.ndarray] = []
    heads: list[np.ndarray] = []
    caps: list[np.ndarray] = []
    costs: list[np.ndarray] = []
    layout: list[tuple[np.ndarray, int, np.ndarray, int]] = []  # members, via at, open, feed at
    arcs = 0

    def add(t: np.ndarray, h: np.ndarray, cap: np.ndarray, cost: np.ndarray) -> int:
        nonlocal arcs
        tails.append(t)
        heads.append(h)
        caps.append(cap)
        costs.append(cost)
        arcs += len(t)
        return arcs - len(t)

    for g, members in enumerate(groups):
        idx = np.asarray(members, dtype=np.int64)
        k = len(members)
        rack_base = t_count + g * (r_count + c_count)
        cg_base = rack_base + r_count
        cap = np.asarray(
            [math.ceil(int(o) * 1.0 / t_count * k) if o > 0 else 0 for o in problem.orig],
            dtype=np.int64,
        )
        add(idx, cg_base + current[idx], np.ones(k, dtype=np.int64), own[idx] * scale)
        via_tails = np.repeat(idx, r_count)
        via_cols = np.tile(np.asarray(rack_ids, dtype=np.int64), k)
        via_costs = problem.traffic * problem.rows[via_tails, via_cols] + problem.non_overlap
        via_at = add(
            via_tails,
            rack_base + np.tile(np.arange(r_count), k),
            np.ones(k * r_count, dtype=np.int64),
            via_costs * scale + tie,
        )
        open_clients = np.flatnonzero(cap > 0)
        zeros = np.zeros(len(open_clients), dtype=np.int64)
        feed_at = add(
            rack_base + rack_of_client[open_clients],
            cg_base + open_clients,
            cap[open_clients],
            zeros,
        )
        add(cg_base + open_clients, client_base + open_clients, cap[open_clients], zeros)
        layout.append((idx, via_at, open_clients, feed_at))

    supplies = np.zeros(num_nodes, dtype=np.int64)
    supplies[:t_count] = 1
    supplies[client_base:] = -problem.orig
    flows = solve_flow(
        solver,
        num_nodes,
        np.concatenate(tails),
        np.concatenate(heads),
        np.concatenate(caps),
        np.concatenate(costs),
        supplies,
        infeasible_message=f"max flow calculated doesn't match taskSize: {t_count}",
    )
    local = current.copy()
    for idx, via_at, open_clients, feed_at in layout:
        via = flows[via_at : via_at + len(idx) * r_count].reshape(len(idx), r_count)
        feed = flows[feed_at : feed_at + len(open_clients)]
        _zip_via_rack(local, idx, via, open_clients, feed, rack_of_client)
    return problem.to_caller(local)


def _zip_via_rack(
    local: np.ndarray,
    members: np.ndarray,
    via: np.ndarray,
    feed_clients: np.ndarray,
    feed: np.ndarray,
    rack_of_client: np.ndarray,
) -> None:
    """Hand the tasks that flowed through each rack node to that rack's clients.

    ``via[m, r]`` is the flow of task ``members[m]`` into rack ``r``; ``feed[q]`` the flow from
    its rack into client ``feed_clients[q]``. Clients of one rack cost the same for a task they
    do not hold, so any pairing is optimal: tasks ascending meet clients ascending.
    """
    incoming: dict[int, list[int]] = {}
    for m, r in zip(*np.nonzero(via), strict=True):
        incoming.setdefault(int(r), []).append(int(members[int(m)]))
    slots: dict[int, list[int]] = {}
    for q, c in enumerate(feed_clients.tolist()):
        if feed[q] > 0:
            slots.setdefault(int(rack_of_client[c]), []).extend([c] * int(feed[q]))
    for r, tasks in incoming.items():
        for t, c in zip(sorted(tasks), slots.get(r, []), strict=True):
            local[t] = c


# -- helpers ----------------------------------------------------------------------------------
def single_owners(
    state: AssignmentState, task_list: Sequence[int], role: Sequence[set[int]]
) -> list[int]:
    """Each task's one holder in ``role``; Kafka's errors for a task held twice or never."""
    owner: dict[int, int] = {}
    wanted = set(task_list)
    for c, held in enumerate(role):
        for t in sorted(held & wanted):
            if t in owner:
                raise TaskAssignmentError(
                    f"Task {state.tasks[t]} assigned to multiple clients "
                    f"{state.client_ids[c]}, {state.client_ids[owner[t]]}"
                )
            owner[t] = c
    for t in task_list:
        if t not in owner:
            raise TaskAssignmentError(f"Task {state.tasks[t]} not assigned to any client")
    return [owner[t] for t in task_list]


def movable_standbys(
    state: AssignmentState,
    source: int,
    destination: int,
    predicate: MoveStandbyTaskPredicate | None,
) -> list[int]:
    """Kafka's ``getMovableTasks``: source's standbys the destination may take, sorted."""
    return sorted(
        t
        for t in state.standby[source]
        if not state.has_assigned(destination, t)
        and (predicate is None or predicate(state, source, destination, t))
    )


def subtopology_groups(state: AssignmentState, task_list: Sequence[int]) -> list[list[int]]:
    """Positions in ``task_list`` grouped by sub-topology, in Kafka's ``Subtopology`` order.

    Kafka's ``tasksForTopicGroup`` holds every task of a sub-topology; the graph only keeps
    the ones being placed. ``Subtopology.compareTo`` orders by id, then topology name.
    """
    groups: dict[tuple[int, str], list[int]] = {}
    for position, t in enumerate(task_list):
        task = state.tasks[t]
        groups.setdefault((task.subtopology, task.topology_name or ""), []).append(position)
    return [groups[key] for key in sorted(groups)]
