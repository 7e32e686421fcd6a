"""Least-loaded standby placement: Kafka's ``DefaultStandbyTaskAssignor``."""

from __future__ import annotations

from streams_assign.assignors.standby_utils import assign_standbys_to_least_loaded_clients
from streams_assign.assignors.state import AssignmentState

__all__ = ["DefaultStandbyTaskAssignor"]


class DefaultStandbyTaskAssignor:
    """Least-loaded standby placement (Kafka's ``DefaultStandbyTaskAssignor``).

    For each stateful task in TaskId order, each of its ``num_standby_replicas`` copies goes to
    the client with the smallest ``(assignedTaskLoad, ProcessId)`` that does not hold the task
    yet. When too few clients remain, the missing copies are logged and skipped, as in Kafka.
    Previous standby owners are not consulted (stickiness comes from the movements step).
    """

    def assign(self, state: AssignmentState) -> None:
        """Place the standbys in ``state`` (reference 4.3)."""
        replicas = state.cluster.configs.num_standby_replicas
        if replicas == 0:
            return
        candidates = state.priority_set(
            state.task_load, lambda client, task: not state.has_assigned(client, task)
        )
        candidates.offer_all(range(state.num_clients))
        for task in state.stateful_tasks:
            assign_standbys_to_least_loaded_clients(state, candidates, task, replicas)

    def is_allowed_task_movement(self, source: int, destination: int, task: int) -> bool:
        """Every balancing move is allowed."""
        return True

    def is_allowed_task_movement_with_state(
        self, state: AssignmentState, source: int, destination: int, task: int
    ) -> bool:
        """Every optimiser move is allowed (Kafka's 4-argument default returns true)."""
        return True
