"""Kafka Streams' ``HighAvailabilityTaskAssignor`` (KIP-441), decision for decision.

Reference sections 4.1-4.8. The steps keep Kafka's names in snake_case so the two can be read
side by side: :func:`assign_active_stateful_tasks`, :func:`assign_standby_replica_tasks`,
:func:`~streams_assign.assignors.movements.assign_active_task_movements`,
:func:`~streams_assign.assignors.movements.assign_standby_task_movements`,
:func:`assign_stateless_active_tasks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streams_assign.assignors.balance import balance_tasks_over_threads
from streams_assign.assignors.movements import (
    WarmupBudget,
    assign_active_task_movements,
    assign_standby_task_movements,
)
from streams_assign.assignors.standby_factory import create_standby_task_assignor
from streams_assign.assignors.state import AssignmentState
from streams_assign.model import Assignment, ClusterState

if TYPE_CHECKING:
    from streams_assign.assignors.rack_aware import RackAwareTaskAssignor

#: Kafka's ``DEFAULT_HIGH_AVAILABILITY_TRAFFIC_COST`` / ``..._NON_OVERLAP_COST`` (reference 6.7).
DEFAULT_HIGH_AVAILABILITY_TRAFFIC_COST = 10
DEFAULT_HIGH_AVAILABILITY_NON_OVERLAP_COST = 1


def assign_active_stateful_tasks(
    state: AssignmentState, rack: RackAwareTaskAssignor | None = None
) -> None:
    """Deal stateful actives round-robin over clients in ProcessId order, then balance.

    Round-robin ignores capacity, lags and previous owners (task ``i`` goes to client
    ``i mod C``); :func:`balance_tasks_over_threads` then evens the load per thread. With rack
    awareness enabled, the rack-aware optimiser then moves actives to cut cross-rack traffic.
    Source: ``HighAvailabilityTaskAssignor.assignActiveStatefulTasks`` (reference 4.1).
    """
    n = state.num_clients
    for i, task in enumerate(state.stateful_tasks):
        state.assign_active(i % n, task)
    balance_tasks_over_threads(state, standby=False)
    if rack is not None and rack.can_enable_rack_aware_assignor():
        traffic, non_overlap = _rack_aware_costs(state)
        rack.optimize_active_tasks(state.stateful_tasks, state, traffic, non_overlap)


def _rack_aware_costs(state: AssignmentState) -> tuple[int, int]:
    """The configured rack-aware costs, or the HA assignor's defaults (10 / 1)."""
    configs = state.cluster.configs
    traffic = configs.rack_aware_assignment_traffic_cost
    non_overlap = configs.rack_aware_assignment_non_overlap_cost
    return (
        DEFAULT_HIGH_AVAILABILITY_TRAFFIC_COST if traffic is None else traffic,
        DEFAULT_HIGH_AVAILABILITY_NON_OVERLAP_COST if non_overlap is None else non_overlap,
    )


def assign_standby_replica_tasks(
    state: AssignmentState, rack: RackAwareTaskAssignor | None = None
) -> None:
    """Place standbys with the configured standby assignor, then balance them.

    Source: ``HighAvailabilityTaskAssignor.assignStandbyReplicaTasks`` (reference 4.3); balancing
    moves only standbys and asks the standby assignor whether each move is allowed. With rack
    awareness enabled, the rack-aware optimiser then swaps standbys between clients, each move
    allowed by the standby assignor's 4-argument ``isAllowedTaskMovement``.
    """
    if state.cluster.configs.num_standby_replicas == 0:
        return
    standby_assignor = create_standby_task_assignor(state)
    standby_assignor.assign(state)
    balance_tasks_over_threads(
        state, standby=True, predicate=standby_assignor.is_allowed_task_movement
    )
    if rack is not None and rack.can_enable_rack_aware_assignor():
        traffic, non_overlap = _rack_aware_costs(state)
        predicate = getattr(standby_assignor, "is_allowed_task_movement_with_state", None)
        rack.optimize_standby_tasks(state, traffic, non_overlap, predicate)


def assign_stateless_active_tasks(
    state: AssignmentState, rack: RackAwareTaskAssignor | None = None
) -> None:
    """Deal stateless tasks, in TaskId order, each to the client with the fewest actives per thread.

    Ties go to the smaller ProcessId; standbys and warmups are not counted, and previous owners
    are ignored. With rack awareness enabled, the rack-aware optimiser then moves them with the
    stateless costs (1 / 0). Source: ``HighAvailabilityTaskAssignor.assignStatelessActiveTasks``
    (4.7).
    """
    _deal_stateless_active_tasks(state)
    if rack is not None and rack.can_enable_rack_aware_assignor():
        from streams_assign.assignors.rack_aware import (
            STATELESS_NON_OVERLAP_COST,
            STATELESS_TRAFFIC_COST,
        )

        rack.optimize_active_tasks(
            state.stateless_tasks, state, STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST
        )


def _deal_stateless_active_tasks(state: AssignmentState) -> None:
    # Kafka's ConstrainedPrioritySet over actives per thread, no constraint: only the polled
    # client's weight changes, and it is offered back at once.
    candidates = state.priority_set(state.active_load, lambda client, task: True)
    candidates.offer_all(range(state.num_clients))
    for task in state.stateless_tasks:
        client = candidates.poll(task)
        assert client is not None
        state.assign_active(client, task)
        candidates.offer(client)


def assign_with_state(state: AssignmentState) -> tuple[bool, dict[int, set[int]]]:
    """Run the whole HA algorithm on a prepared state; return (probing needed, warmups).

    With ``rack_aware_assignment_strategy`` other than ``none``, Kafka's rack-aware optimiser
    (:mod:`streams_assign.assignors.rack_aware`) runs at its three points; with ``none`` nothing
    of it is loaded.
    """
    rack = None
    if state.cluster.configs.rack_aware_assignment_strategy != "none":
        from streams_assign.assignors.rack_aware import RackAwareTaskAssignor

        rack = RackAwareTaskAssignor(state.cluster)
    assign_active_stateful_tasks(state, rack)
    assign_standby_replica_tasks(state, rack)
    budget = WarmupBudget(state.cluster.configs.max_warmup_replicas)
    warmups: dict[int, set[int]] = {}
    needed_active = assign_active_task_movements(state, warmups, budget)
    needed_standby = assign_standby_task_movements(state, warmups, budget)
    assign_stateless_active_tasks(state, rack)
    return needed_active + needed_standby > 0, warmups


class HighAvailabilityTaskAssignor:
    """Kafka Streams 4.0's default task assignor, rack-aware (KIP-925) when configured.

    Examples
    --------
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
    >>> cluster = parse_cluster_state({
    ...     "configs": {"num_standby_replicas": 1},
    ...     "stateful_tasks": ["0_0", "0_1"],
    ...     "clients": [
    ...         {"id": "00000000-0000-0000-0000-000000000001", "capacity": 1,
    ...          "task_lags": {"0_0": -2, "0_1": 0}},
    ...         {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1,
    ...          "task_lags": {"0_0": 0, "0_1": -2}}]})
    >>> result = HighAvailabilityTaskAssignor().assign(cluster)
    >>> [str(t) for t in result.clients["00000000-0000-0000-0000-000000000001"].active]
    ['0_0']
    >>> result.probing_rebalance_needed
    False

    Notes
    -----
    Source: ``org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor``
    at Kafka 4.0.0-SNAPSHOT (commit 1eb7644349cb); reference sections 4.1-4.8, and 6.1 for
    where rack awareness hooks in.
    """

    name = "high_availability"

    def __init__(self, literal: bool = False) -> None:
        self.literal = literal

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
            probing rebalance follows.

        Raises
        ------
        TaskAssignmentError
            Where Kafka throws IllegalStateException (an inconsistent input it cannot place).
        """
        state = AssignmentState(cluster, literal=self.literal)
        probing, warmups = assign_with_state(state)
        return state.to_assignment(probing, warmups, assignor=self.name)


__all__ = [
    "DEFAULT_HIGH_AVAILABILITY_NON_OVERLAP_COST",
    "DEFAULT_HIGH_AVAILABILITY_TRAFFIC_COST",
    "HighAvailabilityTaskAssignor",
    "assign_active_stateful_tasks",
    "assign_standby_replica_tasks",
    "assign_stateless_active_tasks",
    "assign_with_state",
]
