"""The public entry point: ``streams_assign.assign(cluster_state)``.

Accepts a :class:`~streams_assign.model.ClusterState`, a parsed cluster-state document (dict),
or a path to a JSON file, runs the chosen assignor, and, for clients that list their stream
threads (``consumers``), spreads each client's tasks over its threads as Kafka's
``StreamsPartitionAssignor.assignTasksToThreads`` does.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from streams_assign.assignors.fallback import select_assignor
from streams_assign.errors import UnknownAssignorError
from streams_assign.model import Assignment, ClusterState
from streams_assign.scenario import load_cluster_state, parse_cluster_state

__all__ = [
    "ASSIGNORS",
    "TaskAssignor",
    "UnknownAssignorError",
    "as_cluster_state",
    "assign",
    "get_assignor",
]


class TaskAssignor(Protocol):
    """An assignor: one decision per rebalance (Kafka's ``LegacyTaskAssignor``)."""

    name: str

    def assign(self, cluster: ClusterState) -> Assignment:
        """Decide actives, standbys and warmups for the rebalance described by ``cluster``."""


#: Assignor name -> "module:Class". Names follow Kafka's classes in snake_case.
ASSIGNORS: dict[str, str] = {
    "high_availability": "streams_assign.assignors.high_availability:HighAvailabilityTaskAssignor",
    "sticky": "streams_assign.assignors.sticky:LegacyStickyTaskAssignor",
    "fallback_prior": "streams_assign.assignors.fallback:FallbackPriorTaskAssignor",
}


def get_assignor(name: str) -> TaskAssignor:
    """Instantiate the assignor registered under ``name``.

    Raises
    ------
    UnknownAssignorError
        For a name that is not in :data:`ASSIGNORS`.
    """
    target = ASSIGNORS.get(name)
    if target is None:
        raise UnknownAssignorError(
            f"unknown assignor {name!r}; choose one of {', '.join(ASSIGNORS)}"
        )
    module_name, class_name = target.split(":")
    module = importlib.import_module(module_name)
    assignor: TaskAssignor = getattr(module, class_name)()
    return assignor


def as_cluster_state(source: ClusterState | Mapping[str, Any] | str | Path) -> ClusterState:
    """Coerce a cluster state, a parsed document or a file path into a validated ClusterState."""
    if isinstance(source, ClusterState):
        return source
    if isinstance(source, Mapping):
        return parse_cluster_state(dict(source))
    return load_cluster_state(source)


def assign(
    source: ClusterState | Mapping[str, Any] | str | Path,
    assignor: str = "high_availability",
) -> Assignment:
    """Decide the next rebalance's assignment.

    Parameters
    ----------
    source:
        The cluster state (object, parsed JSON document, or file path).
    assignor:
        One of :data:`ASSIGNORS`; default Kafka's ``HighAvailabilityTaskAssignor``. As Kafka's
        leader does, ``fallback_prior`` runs instead when the lag computation failed (every
        stateful lag is -3, ``UNKNOWN_OFFSET_SUM``), unless ``sticky`` is asked for.

    Returns
    -------
    Assignment
        Per client: active, standby (warmups included) and warmup tasks, plus per-consumer
        tasks when the input lists consumers; and whether a probing rebalance follows.

    Raises
    ------
    InvalidScenarioError
        For invalid input, naming the JSON path and the value.
    UnknownAssignorError
        For an unknown assignor name.

    Examples
    --------
    >>> import streams_assign
    >>> result = streams_assign.assign({
    ...     "stateful_tasks": ["0_0"], "stateless_tasks": ["1_0"],
    ...     "clients": [{"id": "00000000-0000-0000-0000-000000000001", "capacity": 1}]})
    >>> [str(t) for t in result.clients["00000000-0000-0000-0000-000000000001"].active]
    ['0_0', '1_0']
    """
    cluster = as_cluster_state(source)
    # Kafka's leader runs the fallback when changelog end offsets could not be fetched.
    assignor = select_assignor(cluster, assignor)
    result = get_assignor(assignor).assign(cluster)
    if any(client.consumers is not None for client in cluster.clients):
        from streams_assign.assignors.threads import assign_tasks_to_consumers

        result = assign_tasks_to_consumers(cluster, result)
    return result
