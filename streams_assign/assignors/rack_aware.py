"""Rack-aware task assignment (KIP-925): Kafka's ``RackAwareTaskAssignor`` on a min-cost flow.

After an assignor has balanced its tasks, Kafka moves tasks between clients to cut cross-rack
traffic without changing how many tasks each client has. The cost of running task ``t`` on
client ``c`` is ``traffic_cost`` for every partition of ``t`` with no replica on ``c``'s rack,
plus ``non_overlap_cost`` when ``c`` is not the client that held ``t`` before the optimisation
(reference 6.2). Two graph constructions decide which placements are allowed:

- ``min_traffic`` (:class:`MinTrafficGraphConstructor`, reference 6.3): every client keeps
  exactly its task count;
- ``balance_subtopology`` (:class:`BalanceSubtopologyGraphConstructor`, reference 6.4): as well,
  each client gets at most ``ceil(count / T * |tasks of the sub-topology|)`` tasks of each
  sub-topology.

Standbys are optimised pair by pair (two clients on different racks swap standbys, at most
four rounds, reference 6.6).

Kafka solves each graph by cycle cancelling with Bellman-Ford (``Graph.java``). Here the same
graphs are solved by OR-Tools' ``SimpleMinCostFlow`` (networkx when OR-Tools is missing), so
the optimal cost and every client's task count are Kafka's; where several placements share
the optimal cost, the one that moves the fewest tasks is chosen (Kafka's choice follows its
Bellman-Ford scan order). Where the optimum is unique the placement is Kafka's.

The graphs are rack-compressed: a task has an arc to its current client and one arc per client
rack (cost ``traffic * missing partitions + non_overlap_cost``), and each rack node feeds the
clients of that rack. Every client of one rack costs the same for a task it does not hold, so
the optimum is the dense graph's, with ``T * R`` arcs instead of ``T * C``.

The input comes from optional top-level fields of the cluster state (``docs/rack-aware.md``):
``task_partitions``, ``task_changelog_partitions``, ``partition_racks`` and ``client_racks``
(or the racks of ``clients[].consumers``).
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from streams_assign.assignors.state import AssignmentState
from streams_assign.errors import InvalidScenarioError, StreamsAssignError, TaskAssignmentError
from streams_assign.model import ClusterState, TaskId

log = logging.getLogger(__name__)

#: Kafka's ``RackAwareTaskAssignor.STATELESS_TRAFFIC_COST`` / ``STATELESS_NON_OVERLAP_COST``.
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0
#: ``STANDBY_OPTIMIZER_MAX_ITERATION``: rounds of the pairwise standby optimiser.
STANDBY_OPTIMIZER_MAX_ITERATION = 4

MIN_TRAFFIC = "min_traffic"
BALANCE_SUBTOPOLOGY = "balance_subtopology"

#: ``move_predicate(state, source, destination, task)``: may the standby optimiser move a
#: standby of ``task`` from ``source`` to ``destination`` (Kafka's ``MoveStandbyTaskPredicate``)?
MoveStandbyTaskPredicate = Callable[[AssignmentState, int, int, int], bool]

TopicPartition = tuple[str, int]

# Tie-break arcs only when the scaled costs stay far from int64 overflow in the solver.
_MAX_SCALED_COST = 1 << 52


class RackAwareTaskAssignor:
    """Kafka's ``RackAwareTaskAssignor`` for one cluster state.

    Parameters
    ----------
    cluster:
        The rebalance input. Racks and partitions are read from its extensions (see the module
        notes); malformed values raise :class:`InvalidScenarioError` here.

    Attributes
    ----------
    racks_for_process:
        Process id -> rack, for the clients whose rack is known and consistent (Kafka's
        ``racksForProcess``).
    racks_for_partition:
        ``(topic, partition)`` -> racks of its replicas. Filled by
        :meth:`can_enable_rack_aware_assignor`, as Kafka fills it while describing topics.

    Examples
    --------
    >>> from streams_assign.scenario import parse_cluster_state
    >>> cluster = parse_cluster_state({
    ...     "configs": {"rack_aware_assignment_strategy": "min_traffic"},
    ...     "stateful_tasks": ["0_0", "0_1"],
    ...     "clients": [{"id": "00000000-0000-0000-0000-000000000001", "capacity": 1},
    ...                 {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1}],
    ...     "client_racks": {"00000000-0000-0000-0000-000000000001": "r0",
    ...                      "00000000-0000-0000-0000-000000000002": "r1"},
    ...     "task_partitions": {"0_0": [["in", 0]], "0_1": [["in", 1]]},
    ...     "partition_racks": {"in:0": ["r1"], "in:1": ["r0"]}})
    >>> state = AssignmentState(cluster)
    >>> state.assign_active(0, 0); state.assign_active(1, 1)
    >>> rack = RackAwareTaskAssignor(cluster)
    >>> rack.can_enable_rack_aware_assignor()
    True
    >>> rack.optimize_active_tasks([0, 1], state, traffic_cost=10, non_overlap_cost=1)
    2
    >>> [sorted(a) for a in state.active]
    [[1], [0]]

    Notes
    -----
    Source: ``org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor``,
    ``MinTrafficGraphConstructor`` and ``BalanceSubtopologyGraphConstructor`` at Kafka
    4.0.0-SNAPSHOT (commit 1eb7644349cb); reference section 6.

    References
    ----------
    KIP-925: Rack aware task assignment in Kafka Streams.
    """

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self.configs = cluster.configs
        extensions = cluster.extensions
        known = set(cluster.stateful_tasks) | set(cluster.stateless_tasks)
        self.partitions_for_task: dict[TaskId, tuple[TopicPartition, ...]] = _parse_task_partitions(
            extensions.get("task_partitions"), "task_partitions", known
        )
        self.changelog_partitions_for_task: dict[TaskId, tuple[TopicPartition, ...]] = (
            _parse_task_partitions(
                extensions.get("task_changelog_partitions"), "task_changelog_partitions", known
            )
        )
        self._partition_racks_input = _parse_partition_racks(extensions.get("partition_racks"))
        self.racks_for_process: dict[str, str] = {}
        self.racks_for_partition: dict[TopicPartition, frozenset[str]] = {}
        self._valid_client_rack = self._validate_client_rack(
            _parse_client_racks(extensions.get("client_racks"))
        )
        self._can_enable: bool | None = None
        self._miss_cache: dict[tuple[bool, int], tuple[np.ndarray, list[str]]] = {}

    # -- enablement ------------------------------------------------------------------------
    def valid_client_rack(self) -> bool:
        """Kafka's ``validClientRack``: every client has one rack, shared by all its threads."""
        return self._valid_client_rack

    def can_enable_rack_aware_assignor(self) -> bool:
        """Whether rack-aware optimisation applies (Kafka's ``canEnableRackAwareAssignor``).

        True when the strategy is not ``none``, every client has a consistent rack, every
        source partition of every task has racks, and, with standbys, every changelog
        partition of every stateful task has racks. The answer is cached, as in Kafka.
        Missing rack data disables the optimisation with a warning, as Kafka does.
        """
        if self.configs.rack_aware_assignment_strategy == "none":
            return False
        if self._can_enable is not None:
            return self._can_enable
        self._can_enable = self._valid_client_rack and self._validate_partition_racks(False)
        if self._can_enable and self.configs.num_standby_replicas > 0:
            self._can_enable = self._validate_partition_racks(True)
        return self._can_enable

    def _validate_client_rack(self, client_racks: Mapping[str, str]) -> bool:
        strategy_on = self.configs.rack_aware_assignment_strategy != "none"
        for client in self.cluster.clients:
            if client.consumers is not None:
                entries = [(c.member_id, c.rack) for c in client.consumers]
            else:
                # A client given without its threads: one entry for the whole process.
                rack = getattr(client, "rack", None) or client_racks.get(client.id)
                entries = [(client.id, rack)]
            previous: tuple[str, str] | None = None
            for consumer, rack in entries:
                if rack is None:
                    if strategy_on:
                        log.error(
                            "RackId doesn't exist for process %s and consumer %s",
                            client.id,
                            consumer,
                        )
                    return False
                if previous is None:
                    previous = (consumer, rack)
                elif previous[1] != rack:
                    log.error(
                        "Consumers %s and %s for same process %s has different rackId %s and %s",
                        previous[0],
                        consumer,
                        client.id,
                        previous[1],
                        rack,
                    )
                    return False
            if previous is None:
                if strategy_on:
                    log.error("RackId doesn't exist for process %s", client.id)
                return False
            self.racks_for_process[client.id] = previous[1]
        return True

    def _validate_partition_racks(self, changelog: bool) -> bool:
        if changelog:
            tasks: Iterable[TaskId] = self.cluster.stateful_tasks
            source, label = self.changelog_partitions_for_task, "changelog"
        else:
            tasks = self.cluster.all_tasks
            source, label = self.partitions_for_task, "source"
        for task in tasks:
            partitions = source.get(task)
            if not partitions:
                log.warning(
                    "Task %s has no %s partitions: rack-aware assignment disabled", task, label
                )
                return False
            for tp in partitions:
                racks = self._partition_racks_input.get(tp)
                if not racks:
                    log.warning(
                        "TopicPartition %s-%d has no rack: rack-aware assignment disabled", *tp
                    )
                    return False
                self.racks_for_partition[tp] = racks
        return True

    # -- costs -----------------------------------------------------------------------------
    def get_cost(
        self,
        task: TaskId,
        process_id: str,
        in_current_assignment: bool,
        traffic_cost: int,
        non_overlap_cost: int,
        is_standby: bool,
    ) -> int:
        """Kafka's ``getCost``: the cost of running ``task`` on client ``process_id``.

        ``traffic_cost`` per partition (changelog partitions for a standby, source partitions
        for an active) with no replica on the client's rack, plus ``non_overlap_cost`` when the
        client did not hold the task.

        Raises
        ------
        TaskAssignmentError
            When the client has no rack, the task no partitions, or a partition no racks
            (Kafka's IllegalStateException; call :meth:`can_enable_rack_aware_assignor` first).
        """
        rack = self.racks_for_process.get(process_id)
        if rack is None:
            raise TaskAssignmentError(
                f"Client {process_id} doesn't have rack configured. Maybe forgot to call "
                "canEnableRackAwareAssignor first"
            )
        partitions = self._partitions(task, is_standby)
        cost = 0
        for tp in partitions:
            if rack not in self._racks_of(tp):
                cost += traffic_cost
        return cost if in_current_assignment else cost + non_overlap_cost

    def _partitions(self, task: TaskId, is_standby: bool) -> tuple[TopicPartition, ...]:
        source = self.changelog_partitions_for_task if is_standby else self.partitions_for_task
        partitions = source.get(task)
        if not partitions:
            raise TaskAssignmentError(f"Task {task} has no TopicPartitions")
        return partitions

    def _racks_of(self, tp: TopicPartition) -> frozenset[str]:
        racks = self.racks_for_partition.get(tp)
        if not racks:
            raise TaskAssignmentError(
                f"TopicPartition {tp[0]}-{tp[1]} has no rack information. "
                "Maybe forgot to call canEnableRackAwareAssignor first"
            )
        return racks

    def _miss_matrix(
        self, state: AssignmentState, is_standby: bool
    ) -> tuple[np.ndarray, list[int]]:
        """Partitions missing per (task index, client rack index), and each client's rack index.

        Rows of tasks without partitions, or with a partition without racks, are -1 (they raise
        when used).
        """
        key = (is_standby, len(self.racks_for_partition))
        cached = self._miss_cache.get(key)
        if cached is None:
            racks = sorted(set(self.racks_for_process.values()))
            rack_index = {rack: i for i, rack in enumerate(racks)}
            source = self.changelog_partitions_for_task if is_standby else self.partitions_for_task
            miss = np.full((len(state.tasks), len(racks)), -1, dtype=np.int64)
            for t, task in enumerate(state.tasks):
                partitions = source.get(task)
                if not partitions:
                    continue
                if not all(self.racks_for_partition.get(tp) for tp in partitions):
                    continue
                row = np.full(len(racks), len(partitions), dtype=np.int64)
                for tp in partitions:
                    for rack in self.racks_for_partition[tp]:
                        if rack in rack_index:
                            row[rack_index[rack]] -= 1
                miss[t] = row
            cached = (miss, racks)
            self._miss_cache[key] = cached
        miss, racks = cached
        rack_index = {rack: i for i, rack in enumerate(racks)}
        client_rack = []
        for process_id in state.client_ids:
            client_rack_name = self.racks_for_process.get(process_id)
            if client_rack_name is None:
                raise TaskAssignmentError(
                    f"Client {process_id} doesn't have rack configured. Maybe forgot to call "
                    "canEnableRackAwareAssignor first"
                )
            client_rack.append(rack_index[client_rack_name])
        return miss, client_rack

    def _checked_miss(
        self, state: AssignmentState, tasks: Sequence[int], is_standby: bool
    ) -> tuple[np.ndarray, list[int]]:
        miss, client_rack = self._miss_matrix(state, is_standby)
        if not tasks:
            return miss, client_rack
        bad = np.flatnonzero(miss[np.asarray(tasks, dtype=np.int64)].min(axis=1) < 0)
        if bad.size:
            task = state.tasks[tasks[int(bad[0])]]
            for tp in self._partitions(task, is_standby):
                self._racks_of(tp)
        return miss, client_rack

    def active_tasks_cost(
        self, tasks: Iterable[int], state: AssignmentState, traffic_cost: int, non_overlap_cost: int
    ) -> int:
        """Kafka's ``activeTasksCost``: the traffic cost of the current active placement.

        Raises
        ------
        TaskAssignmentError
            When a task is active on several clients or on none.
        """
        task_list = sorted(tasks)
        if not task_list:
            return 0
        owners = _single_owners(state, task_list, state.active)
        miss, client_rack = self._checked_miss(state, task_list, False)
        return int(
            sum(
                traffic_cost * int(miss[t, client_rack[c]])
                for t, c in zip(task_list, owners, strict=True)
            )
        )

    def standby_tasks_cost(
        self, tasks: Iterable[int], state: AssignmentState, traffic_cost: int, non_overlap_cost: int
    ) -> int:
        """Kafka's ``standByTasksCost``: the traffic cost of every standby copy of ``tasks``.

        Raises
        ------
        TaskAssignmentError
            When one of the tasks has no standby anywhere.
        """
        task_list = sorted(tasks)
        if not task_list:
            return 0
        miss, client_rack = self._checked_miss(state, task_list, True)
        holders: dict[int, list[int]] = {t: [] for t in task_list}
        for c, standbys in enumerate(state.standby):
            for t in standbys:
                if t in holders:
                    holders[t].append(c)
        total = 0
        for t in task_list:
            if not holders[t]:
                raise TaskAssignmentError(f"Task {state.tasks[t]} not assigned to any client")
            total += sum(traffic_cost * int(miss[t, client_rack[c]]) for c in holders[t])
        return total

    # -- optimisation ----------------------------------------------------------------------
    def optimize_active_tasks(
        self, tasks: Iterable[int], state: AssignmentState, traffic_cost: int, non_overlap_cost: int
    ) -> int:
        """Move active tasks to cut cross-rack traffic, keeping every client's task count.

        Parameters
        ----------
        tasks:
            Task indices of ``state``, each active on exactly one client (stateful or stateless
            tasks, as Kafka calls it once for each).
        state:
            Changed in place.
        traffic_cost, non_overlap_cost:
            Cost per partition read across racks, and per task placed on a client that did not
            hold it.

        Returns
        -------
        int
            The optimal total cost (traffic plus moves), as Kafka's ``Graph.totalCost()``.

        Raises
        ------
        TaskAssignmentError
            When a task is active on several clients or none, or rack data is missing.

        Notes
        -----
        Source: ``RackAwareTaskAssignor.optimizeActiveTasks`` with the graph of the configured
        strategy (reference 6.3, 6.4); Kafka's reassignment rule (6.5): each task whose
        optimal client differs from its current one is unassigned there and assigned there.
        """
        task_list = sorted(tasks)
        if not task_list:
            return 0
        owners = _single_owners(state, task_list, state.active)
        miss, client_rack = self._checked_miss(state, task_list, False)
        clients = list(range(state.num_clients))
        orig = [0] * state.num_clients
        for c in owners:
            orig[c] += 1
        problem = _Problem(
            rows=miss[np.asarray(task_list)],
            current=np.asarray(owners, dtype=np.int64),
            clients=clients,
            client_rack=[client_rack[c] for c in clients],
            orig=orig,
            traffic=traffic_cost,
            non_overlap=non_overlap_cost,
        )
        if self.configs.rack_aware_assignment_strategy == BALANCE_SUBTOPOLOGY:
            groups = _subtopology_groups(state, task_list)
            new_owner = _solve_balance_subtopology(problem, groups)
            order = [i for group in groups for i in group]
        else:
            new_owner = _solve_min_traffic(problem)
            order = list(range(len(task_list)))
        cost = problem.cost_of(new_owner)
        for i in order:
            old, new = owners[i], int(new_owner[i])
            if old != new:
                state.unassign_active(old, task_list[i])
                state.assign_active(new, task_list[i])
        return cost

    def optimize_standby_tasks(
        self,
        state: AssignmentState,
        traffic_cost: int,
        non_overlap_cost: int,
        move_predicate: MoveStandbyTaskPredicate | None = None,
    ) -> int:
        """Swap standbys between clients on different racks to cut cross-rack traffic.

        Up to four rounds; in each, every pair of clients ``i < j`` on different racks solves a
        two-client min-traffic graph over the standbys each could hand to the other (not held
        by the other, allowed by ``move_predicate``), so both keep their standby counts.

        Parameters
        ----------
        state:
            Changed in place.
        traffic_cost, non_overlap_cost:
            As in :meth:`optimize_active_tasks`; the traffic counts changelog partitions.
        move_predicate:
            The standby assignor's ``isAllowedTaskMovement(source, destination, task, clients)``;
            ``None`` allows every move.

        Returns
        -------
        int
            The traffic cost of all standbys afterwards (Kafka's ``standByTasksCost``).

        Notes
        -----
        Source: ``RackAwareTaskAssignor.optimizeStandbyTasks`` (reference 6.6). A pair can only
        improve if swapping one standby each way is cheaper; pairs where no such swap exists are
        skipped before the movable lists are built (a vectorised bound per client and rack),
        which never skips a pair Kafka would change: Kafka's cycle cancelling starts from the
        current placement and leaves an already optimal pair as it is.
        """
        standby_tasks = sorted({t for standbys in state.standby for t in standbys})
        if not standby_tasks:
            return 0
        miss, client_rack = self._checked_miss(state, standby_tasks, True)
        n = state.num_clients
        racks = np.asarray(client_rack, dtype=np.int64)
        num_racks = int(miss.shape[1])
        best_move = np.full((n, num_racks), np.inf)

        def refresh(client: int) -> None:
            tasks = sorted(state.standby[client])
            if not tasks:
                best_move[client] = np.inf
                return
            rows = traffic_cost * miss[np.asarray(tasks)]
            best_move[client] = (rows - rows[:, racks[client]][:, None]).min(axis=0)

        for client in range(n):
            refresh(client)
        moved, rounds = True, 0
        while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
            moved = False
            rounds += 1
            for i in range(n - 1):
                start = i + 1
                while start < n:
                    others = np.arange(start, n)
                    # Cheapest change of one swap i <-> j: a lower bound over all standbys.
                    bound = (
                        best_move[i, racks[others]]
                        + best_move[others, racks[i]]
                        + 2 * non_overlap_cost
                    )
                    hits = np.flatnonzero((bound < 0) & (racks[others] != racks[i]))
                    if hits.size == 0:
                        break
                    j = int(others[hits[0]])
                    start = j + 1
                    if self._optimize_standby_pair(
                        state,
                        i,
                        j,
                        miss,
                        client_rack,
                        traffic_cost,
                        non_overlap_cost,
                        move_predicate,
                    ):
                        moved = True
                        refresh(i)
                        refresh(j)
        return self.standby_tasks_cost(standby_tasks, state, traffic_cost, non_overlap_cost)

    def _optimize_standby_pair(
        self,
        state: AssignmentState,
        i: int,
        j: int,
        miss: np.ndarray,
        client_rack: list[int],
        traffic_cost: int,
        non_overlap_cost: int,
        move_predicate: MoveStandbyTaskPredicate | None,
    ) -> bool:
        movable_i = _movable_standbys(state, i, j, move_predicate)
        movable_j = _movable_standbys(state, j, i, move_predicate)
        if not movable_i or not movable_j:
            return False
        task_list = sorted(movable_i + movable_j)
        holder_i = set(movable_i)
        current = np.asarray([0 if t in holder_i else 1 for t in task_list], dtype=np.int64)
        problem = _Problem(
            rows=miss[np.asarray(task_list)],
            current=current,
            clients=[i, j],
            client_rack=[client_rack[i], client_rack[j]],
            orig=[len(movable_i), len(movable_j)],
            traffic=traffic_cost,
            non_overlap=non_overlap_cost,
            local_clients=True,
        )
        new_owner = _solve_min_traffic(problem)
        moved = False
        pair = (i, j)
        for k, task in enumerate(task_list):
            old, new = pair[int(current[k])], pair[int(new_owner[k])]
            if old != new:
                state.unassign_standby(old, task)
                state.assign_standby(new, task)
                moved = True
        return moved


# -- graph problems ---------------------------------------------------------------------------
class _Problem:
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


def _solve_min_traffic(problem: _Problem) -> np.ndarray:
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
        flows = _solve_flow(
            num_nodes, tails, heads, np.ones(len(tails), dtype=np.int64), costs, supplies
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
    flows = _solve_flow(num_nodes, tails, heads, caps, costs, supplies)
    local = current.copy()
    via = flows[t_count : t_count + t_count * r_count].reshape(t_count, r_count)
    feed = flows[t_count + t_count * r_count :]
    rack_of_client = np.asarray([rack_pos[int(r)] for r in problem.client_rack], dtype=np.int64)
    _zip_via_rack(local, np.arange(t_count), via, feed_clients, feed, rack_of_client)
    return problem.to_caller(local)


def _solve_balance_subtopology(problem: _Problem, groups: list[list[int]]) -> np.ndarray:
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
    flows = _solve_flow(
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


def _solve_flow(
    num_nodes: int,
    tails: np.ndarray,
    heads: np.ndarray,
    caps: np.ndarray,
    costs: np.ndarray,
    supplies: np.ndarray,
    infeasible_message: str = "no feasible rack-aware assignment keeps the task counts",
) -> np.ndarray:
    """Min-cost flow meeting every node's supply; the flow on each arc.

    OR-Tools' ``SimpleMinCostFlow`` (cost-scaling push-relabel); networkx's network simplex
    when OR-Tools is not installed.

    Raises
    ------
    TaskAssignmentError
        When no flow meets the supplies (Kafka's "max flow ... doesn't match taskSize").
    StreamsAssignError
        When neither OR-Tools nor networkx is installed.
    """
    tails = np.asarray(tails, dtype=np.int64)
    heads = np.asarray(heads, dtype=np.int64)
    caps = np.asarray(caps, dtype=np.int64)
    costs = np.asarray(costs, dtype=np.int64)
    supplies = np.asarray(supplies, dtype=np.int64)
    try:
        from ortools.graph.python import min_cost_flow
    except ImportError:
        return _solve_flow_networkx(
            num_nodes, tails, heads, caps, costs, supplies, infeasible_message
        )
    solver = min_cost_flow.SimpleMinCostFlow()
    arcs = solver.add_arcs_with_capacity_and_unit_cost(tails, heads, caps, costs)
    solver.set_nodes_supplies(np.arange(num_nodes, dtype=np.int64), supplies)
    status = solver.solve()
    if status == solver.INFEASIBLE:
        raise TaskAssignmentError(infeasible_message)
    if status != solver.OPTIMAL:
        raise TaskAssignmentError(f"min-cost flow solver failed with status {status}")
    return np.asarray(solver.flows(arcs), dtype=np.int64)


def _solve_flow_networkx(
    num_nodes: int,
    tails: np.ndarray,
    heads: np.ndarray,
    caps: np.ndarray,
    costs: np.ndarray,
    supplies: np.ndarray,
    infeasible_message: str,
) -> np.ndarray:
    try:
        import networkx as nx
    except ImportError:
        raise StreamsAssignError(
            "rack-aware assignment needs OR-Tools or networkx: "
            "pip install 'streams-assign[optimal]'"
        ) from None
    # A MultiDiGraph would allow parallel arcs; the graphs here have none, so key by (u, v).
    graph = nx.DiGraph()
    for node in range(num_nodes):
        graph.add_node(node, demand=-int(supplies[node]))
    for u, v, cap, cost in zip(
        tails.tolist(), heads.tolist(), caps.tolist(), costs.tolist(), strict=True
    ):
        graph.add_edge(u, v, capacity=cap, weight=cost)
    try:
        flow = nx.min_cost_flow(graph)
    except nx.NetworkXUnfeasible:
        raise TaskAssignmentError(infeasible_message) from None
    return np.asarray(
        [flow[u][v] for u, v in zip(tails.tolist(), heads.tolist(), strict=True)], dtype=np.int64
    )


# -- helpers ----------------------------------------------------------------------------------
def _single_owners(
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


def _movable_standbys(
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


def _subtopology_groups(state: AssignmentState, task_list: Sequence[int]) -> list[list[int]]:
    """Positions in ``task_list`` grouped by sub-topology, in Kafka's ``Subtopology`` order.

    Kafka's ``tasksForTopicGroup`` holds every task of a sub-topology; the graph only keeps
    the ones being placed. ``Subtopology.compareTo`` orders by id, then topology name.
    """
    groups: dict[tuple[int, str], list[int]] = {}
    for position, t in enumerate(task_list):
        task = state.tasks[t]
        groups.setdefault((task.subtopology, task.topology_name or ""), []).append(position)
    return [groups[key] for key in sorted(groups)]


# -- input ------------------------------------------------------------------------------------
def _parse_task_partitions(
    raw: Any, path: str, known: set[TaskId]
) -> dict[TaskId, tuple[TopicPartition, ...]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidScenarioError(
            path, f"must be an object of task id to [topic, partition] pairs, got {raw!r}"
        )
    result: dict[TaskId, tuple[TopicPartition, ...]] = {}
    for text, pairs in raw.items():
        where = f"{path}.{text}"
        try:
            task = TaskId.parse(text)
        except InvalidScenarioError as exc:
            raise InvalidScenarioError(where, exc.reason) from None
        if not isinstance(pairs, list):
            raise InvalidScenarioError(
                where, f"must be a list of [topic, partition] pairs, got {pairs!r}"
            )
        partitions: list[TopicPartition] = []
        for k, pair in enumerate(pairs):
            partitions.append(_parse_topic_partition(pair, f"{where}[{k}]"))
        if task not in known:
            log.debug("%s: task %s is in neither task list; ignored", where, task)
            continue
        result[task] = tuple(dict.fromkeys(partitions))  # a Set<TopicPartition> in Kafka
    return result


def _parse_topic_partition(pair: Any, where: str) -> TopicPartition:
    if (
        not isinstance(pair, list)
        or len(pair) != 2
        or not isinstance(pair[0], str)
        or not pair[0]
        or isinstance(pair[1], bool)
        or not isinstance(pair[1], int)
        or pair[1] < 0
    ):
        raise InvalidScenarioError(where, f"must be a [topic, partition >= 0] pair, got {pair!r}")
    return (pair[0], pair[1])


def _parse_partition_racks(raw: Any) -> dict[TopicPartition, frozenset[str]]:
    path = "partition_racks"
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidScenarioError(
            path, f'must be an object of "topic:partition" to rack list, got {raw!r}'
        )
    result: dict[TopicPartition, frozenset[str]] = {}
    for key, racks in raw.items():
        where = f"{path}.{key}"
        topic, sep, number = key.rpartition(":")
        if not sep or not topic or not number.isdigit():
            raise InvalidScenarioError(where, f'key must be "<topic>:<partition>", got {key!r}')
        if not isinstance(racks, list) or not all(
            r is None or (isinstance(r, str) and r) for r in racks
        ):
            raise InvalidScenarioError(
                where, f"must be a list of rack names (null: a replica without rack), got {racks!r}"
            )
        # A replica on a broker without rack makes the partition unusable, as in Kafka.
        result[(topic, int(number))] = frozenset() if None in racks else frozenset(racks)
    return result


def _parse_client_racks(raw: Any) -> dict[str, str]:
    path = "client_racks"
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidScenarioError(path, f"must be an object of process id to rack, got {raw!r}")
    result: dict[str, str] = {}
    for key, rack in raw.items():
        where = f"{path}.{key}"
        try:
            process_id = str(uuid.UUID(key))
        except ValueError:
            raise InvalidScenarioError(where, f"not a UUID: {key!r}") from None
        if not isinstance(rack, str) or not rack:
            raise InvalidScenarioError(where, f"must be a rack name, got {rack!r}")
        result[process_id] = rack
    return result


__all__ = [
    "BALANCE_SUBTOPOLOGY",
    "MIN_TRAFFIC",
    "MoveStandbyTaskPredicate",
    "RackAwareTaskAssignor",
    "STANDBY_OPTIMIZER_MAX_ITERATION",
    "STATELESS_NON_OVERLAP_COST",
    "STATELESS_TRAFFIC_COST",
    "TopicPartition",
]
