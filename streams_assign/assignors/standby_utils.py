"""Helpers shared by the standby assignors (Kafka's ``StandbyTaskAssignmentUtils``)."""

from __future__ import annotations

import logging

from streams_assign.assignors.priority_set import PrioritySet
from streams_assign.assignors.state import AssignmentState

__all__ = ["assign_standbys_to_least_loaded_clients"]

log = logging.getLogger("streams_assign.assignors.standby")


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
