"""What the HA assignor needs of a standby assignor (Kafka's ``StandbyTaskAssignor``)."""

from __future__ import annotations

from typing import Protocol

from streams_assign.assignors.state import AssignmentState

__all__ = ["StandbyTaskAssignor"]


class StandbyTaskAssignor(Protocol):
    """What the HA assignor needs of a standby assignor (Kafka's ``StandbyTaskAssignor``)."""

    def assign(self, state: AssignmentState) -> None:
        """Place ``num_standby_replicas`` standbys of every stateful task, in place."""

    def is_allowed_task_movement(self, source: int, destination: int, task: int) -> bool:
        """Whether balancing may move a standby from ``source`` to ``destination``."""

    def is_allowed_task_movement_with_state(
        self, state: AssignmentState, source: int, destination: int, task: int
    ) -> bool:
        """Whether the rack-aware optimiser may move ``task``'s standby (Kafka's 4-arg form)."""
