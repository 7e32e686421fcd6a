"""Kafka's ``RackAwareTaskAssignor``: enablement, costs and the optimisation steps (KIP-925).

The graphs it solves are built in :mod:`.graphs` (Kafka's ``MinTrafficGraphConstructor`` and
``BalanceSubtopologyGraphConstructor``) and solved by the min-cost-flow solver it is given
(:mod:`.flow`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

import numpy as np

from streams_assign.assignors.rack_aware.flow import MinCostFlowSolver
from streams_assign.assignors.rack_aware.graphs import (
    GraphProblem,
    MoveStandbyTaskPredicate,
    movable_standbys,
    single_owners,
    solve_balance_subtopology,
    solve_min_traffic,
    subtopology_groups,
)
from streams_assign.assignors.rack_aware.kafka_graphs import (
    kafka_balance_subtopology,
    kafka_min_traffic,
)
from streams_assign.assignors.state import AssignmentState
from streams_assign.errors import TaskAssignmentError
from streams_assign.model import ClusterState, TaskId, TopicPartition

__all__ = [
    "BALANCE_SUBTOPOLOGY",
    "MIN_TRAFFIC",
    "STANDBY_OPTIMIZER_MAX_ITERATION",
    "STATELESS_NON_OVERLAP_COST",
    "STATELESS_TRAFFIC_COST",
    "MoveStandbyTaskPredicate",
    "RackAwareTaskAssignor",
]

log = logging.getLogger("streams_assign.assignors.rack_aware")

#: Kafka's ``RackAwareTaskAssignor.STATELESS_TRAFFIC_COST`` / ``STATELESS_NON_OVERLAP_COST``.
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0
#: ``STANDBY_OPTIMIZER_MAX_ITERATION``: rounds of the pairwise standby optimiser.
STANDBY_OPTIMIZER_MAX_ITERATION = 4

MIN_TRAFFIC = "min_traffic"
BALANCE_SUBTOPOLOGY = "balance_subtopology"


class RackAwareTaskAssignor:
    """Kafka's ``RackAwareTaskAssignor`` for one cluster state.

    Parameters
    ----------
    cluster:
        The rebalance input; racks and partitions come from its typed extension fields
        (``task_partitions``, ``partition_racks``, ``client_racks``, ...).
    solver:
        ``None`` (the default): :attr:`default_solver`, which is ``None`` unless set: Kafka's
        own graphs and algorithm (:mod:`.kafka_graphs`, cycle
        cancelling as in Kafka's ``Graph.java``), so that among equally cheap placements the
        one Kafka picks is picked. A :class:`.MinCostFlowSolver` (:mod:`.flow`, e.g.
        :func:`.flow.ortools_min_cost_flow`): the rack-compressed graphs of :mod:`.graphs`
        solved by that library, same optimal cost, much faster on large clusters, ties broken
        towards the fewest moves instead of Kafka's way.

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
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
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
    4.0.0-SNAPSHOT (commit 1eb7644349cb).

    References
    ----------
    KIP-925: Rack aware task assignment in Kafka Streams.
    """

    #: The solver of instances given none: ``None``, Kafka's own algorithm (the twin's answer).
    #: Set to a library solver (e.g. :func:`.flow.ortools_min_cost_flow`) to make every
    #: assignor that builds a ``RackAwareTaskAssignor`` (HA, sticky) use the fast path: same
    #: optimal cost, ties broken towards the fewest moves instead of Kafka's way.
    default_solver: ClassVar[MinCostFlowSolver | None] = None

    def __init__(self, cluster: ClusterState, solver: MinCostFlowSolver | None = None) -> None:
        self.cluster = cluster
        self._solver = solver if solver is not None else RackAwareTaskAssignor.default_solver
        self.configs = cluster.configs
        self.partitions_for_task: Mapping[TaskId, tuple[TopicPartition, ...]] = (
            cluster.task_partitions or {}
        )
        self.changelog_partitions_for_task: Mapping[TaskId, tuple[TopicPartition, ...]] = (
            cluster.task_changelog_partitions or {}
        )
        self._partition_racks_input = cluster.partition_racks or {}
        self.racks_for_process: dict[str, str] = {}
        self.racks_for_partition: dict[TopicPartition, frozenset[str]] = {}
        self._valid_client_rack = self._validate_client_rack(cluster.client_racks or {})
        self._can_enable: bool | None = None
        self._miss_cache: dict[tuple[bool, int], tuple[np.ndarray, list[str]]] = {}

    @property
    def solver(self) -> MinCostFlowSolver | None:
        """The library min-cost-flow solver, or ``None`` for Kafka's cycle cancelling."""
        return self._solver

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
        owners = single_owners(state, task_list, state.active)
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
        strategy (``MinTrafficGraphConstructor``, ``BalanceSubtopologyGraphConstructor``);
        Kafka's reassignment rule (``assignTaskFromMinCostFlow``): each task whose
        optimal client differs from its current one is unassigned there and assigned there.
        """
        task_list = sorted(tasks)
        if not task_list:
            return 0
        owners = single_owners(state, task_list, state.active)
        miss, client_rack = self._checked_miss(state, task_list, False)
        clients = list(range(state.num_clients))
        orig = [0] * state.num_clients
        for c in owners:
            orig[c] += 1
        problem = GraphProblem(
            rows=miss[np.asarray(task_list)],
            current=np.asarray(owners, dtype=np.int64),
            clients=clients,
            client_rack=[client_rack[c] for c in clients],
            orig=orig,
            traffic=traffic_cost,
            non_overlap=non_overlap_cost,
        )
        if self.configs.rack_aware_assignment_strategy == BALANCE_SUBTOPOLOGY:
            groups = subtopology_groups(state, task_list)
            if self._solver is None:
                new_owner = kafka_balance_subtopology(problem, groups)
            else:
                new_owner = solve_balance_subtopology(problem, groups, self._solver)
            order = [i for group in groups for i in group]
        else:
            if self._solver is None:
                new_owner = kafka_min_traffic(problem)
            else:
                new_owner = solve_min_traffic(problem, self._solver)
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
        Source: ``RackAwareTaskAssignor.optimizeStandbyTasks``. A pair can only
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
        movable_i = movable_standbys(state, i, j, move_predicate)
        movable_j = movable_standbys(state, j, i, move_predicate)
        if not movable_i or not movable_j:
            return False
        task_list = sorted(movable_i + movable_j)
        holder_i = set(movable_i)
        current = np.asarray([0 if t in holder_i else 1 for t in task_list], dtype=np.int64)
        problem = GraphProblem(
            rows=miss[np.asarray(task_list)],
            current=current,
            clients=[i, j],
            client_rack=[client_rack[i], client_rack[j]],
            orig=[len(movable_i), len(movable_j)],
            traffic=traffic_cost,
            non_overlap=non_overlap_cost,
            local_clients=True,
        )
        if self._solver is None:
            new_owner = kafka_min_traffic(problem)
        else:
            new_owner = solve_min_traffic(problem, self._solver)
        moved = False
        pair = (i, j)
        for k, task in enumerate(task_list):
            old, new = pair[int(current[k])], pair[int(new_owner[k])]
            if old != new:
                state.unassign_standby(old, task)
                state.assign_standby(new, task)
                moved = True
        return moved
