"""Standby placement: Kafka's ``DefaultStandbyTaskAssignor`` and the assignor factory.

The client-tag-aware assignor (KIP-708) lives in :mod:`streams_assign.assignors.tag_aware`; the
factory picks it when ``rack_aware_assignment_tags`` is configured.
"""

from __future__ import annotations

import logging
from typing import Protocol

from streams_assign.assignors.priority import PrioritySet
from streams_assign.assignors.state import AssignmentState

log = logging.getLogger(__name__)


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


def assign_standbys_to_least_loaded_clients(
    state: AssignmentState, candidates: PrioritySet, task: int, count: int
) -> int:
    """Place up to ``count`` standbys of ``task``, each on the least-loaded client without it.

    The loop of Kafka's ``DefaultStandbyTaskAssignor`` (and of the tag-aware assignor's pending
    fill): poll, assign, offer the client back with its new load. Logs Kafka's warning when the
    clients run out.

    Returns
    -------
    int
        How many copies could not be placed.
    """
    remaining = count
    while remaining > 0:
        client = candidates.poll(task)
        if client is None:
            break
        state.assign_standby(client, task)
        remaining -= 1
        candidates.offer(client)
    if remaining > 0:
        log.warning(
            "Unable to assign %d of %d standby tasks for task [%s]: not enough clients",
            remaining,
            state.cluster.configs.num_standby_replicas,
            state.tasks[task],
        )
    return remaining


def create_standby_task_assignor(state: AssignmentState) -> StandbyTaskAssignor:
    """Kafka's ``StandbyTaskAssignorFactory.create`` as the HA assignor calls it.

    Client tags configured (``rack_aware_assignment_tags``) select the client-tag-aware assignor;
    otherwise the default one. (The HA assignor passes no rack-aware assignor, so Kafka's
    ``client.rack`` fallback does not apply here.)
    """
    if state.cluster.configs.rack_aware_assignment_tags:
        from streams_assign.assignors.tag_aware import ClientTagAwareStandbyTaskAssignor

        return ClientTagAwareStandbyTaskAssignor()
    return DefaultStandbyTaskAssignor()


__all__ = [
    "DefaultStandbyTaskAssignor",
    "StandbyTaskAssignor",
    "assign_standbys_to_least_loaded_clients",
    "create_standby_task_assignor",
]
