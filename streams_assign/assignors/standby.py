"""Standby placement: Kafka's ``StandbyTaskAssignor``, its default, and the helper they share.

- :class:`StandbyTaskAssignor`: what the HA assignor needs of a standby assignor (Kafka's
  interface ``StandbyTaskAssignor``);
- :class:`DefaultStandbyTaskAssignor`: least-loaded placement (Kafka's
  ``DefaultStandbyTaskAssignor``);
- :func:`assign_standbys_to_least_loaded_clients`: the loop both standby assignors run (Kafka's
  ``StandbyTaskAssignmentUtils``).

The client-tag-aware assignor (KIP-708) is :mod:`streams_assign.assignors.tag_aware`, and
:mod:`streams_assign.assignors.standby_factory` (Kafka's ``StandbyTaskAssignorFactory``) picks
between the two; the factory stays a module of its own because it imports the tag-aware
assignor, which imports this module.

Source: package ``org.apache.kafka.streams.processor.internals.assignment`` at Kafka 4.0.
"""

from __future__ import annotations

import logging
from typing import Protocol

from streams_assign.assignors.priority_set import PrioritySet
from streams_assign.assignors.state import AssignmentState

__all__ = [
    "DefaultStandbyTaskAssignor",
    "StandbyTaskAssignor",
    "assign_standbys_to_least_loaded_clients",
]

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

    Notes
    -----
    Source: ``StandbyTaskAssignmentUtils.pollClientAndMaybeAssignAndUpdateRemainingStandbyTasks``.
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


class DefaultStandbyTaskAssignor:
    """Least-loaded standby placement (Kafka's ``DefaultStandbyTaskAssignor``).

    For each stateful task in TaskId order, each of its ``num_standby_replicas`` copies goes to
    the client with the smallest ``(assignedTaskLoad, ProcessId)`` that does not hold the task
    yet. When too few clients remain, the missing copies are logged and skipped, as in Kafka.
    Previous standby owners are not consulted (stickiness comes from the movements step).
    """

    def assign(self, state: AssignmentState) -> None:
        """Place the standbys in ``state`` (Kafka's ``DefaultStandbyTaskAssignor.assign``)."""
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
