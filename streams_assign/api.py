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
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state
from streams_assign.model import Assignment, ClusterState
from streams_assign.streams_group import StreamsGroupAssignment, StreamsGroupState

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
    # KIP-1071 streams groups: the group coordinator's StickyTaskAssignor (Kafka 4.4).
    "streams_group_sticky": (
        "streams_assign.assignors.streams_group_sticky:StreamsGroupStickyTaskAssignor"
    ),
    "lag_aware_sticky": "streams_assign.assignors.lag_aware_sticky:LagAwareStickyTaskAssignor",
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
    if assignor == "streams_group_sticky":
        # The broker decides per member: no fallback and no thread step of the classic leader.
        return get_assignor(assignor).assign(cluster)
    # Kafka's leader runs the fallback when changelog end offsets could not be fetched.
    assignor = select_assignor(cluster, assignor)
    result = get_assignor(assignor).assign(cluster)
    if any(client.consumers is not None for client in cluster.clients):
        from streams_assign.assignors.threads import assign_tasks_to_consumers

        result = assign_tasks_to_consumers(cluster, result)
    return result


def assign_group(
    source: StreamsGroupState | Mapping[str, Any] | str | Path,
) -> StreamsGroupAssignment:
    """Decide a streams group's target assignment (KIP-1071, ``streams_group_sticky``).

    Parameters
    ----------
    source:
        A streams-group state (object, parsed JSON document, or file path) in the format of
        ``kafka-streams-group/FORMAT.md``; see :func:`load_document` to accept either format.

    Returns
    -------
    StreamsGroupAssignment
        Per member, active and standby tasks, as Kafka 4.4's ``StickyTaskAssignor`` decides.

    Raises
    ------
    InvalidStreamsGroupError
        For invalid input, naming the file, the JSON path and the value.
    TaskAssignorException
        When Kafka's assignor throws (a group without members but with tasks).
    """
    from streams_assign.assignors.streams_group_sticky import assign_streams_group
    from streams_assign.formats.streams_group import load_streams_group, parse_streams_group

    if isinstance(source, StreamsGroupState):
        state = source
    elif isinstance(source, Mapping):
        state = parse_streams_group(dict(source))
    else:
        state = load_streams_group(source)
    return assign_streams_group(state)


def load_document(path: str | Path) -> ClusterState | StreamsGroupState:
    """Read either input format, told apart by its fields.

    A document with ``members`` and ``topology`` is a streams-group state
    (:mod:`streams_assign.streams_group`); anything else is read as a classic cluster state.

    Raises
    ------
    InvalidScenarioError
        For invalid input (``InvalidStreamsGroupError`` for streams-group states).
    OSError
        When the file cannot be read.
    """
    import json

    from streams_assign.formats.streams_group import is_streams_group_document, loads_streams_group

    text = Path(path).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        document = None
    if is_streams_group_document(document):
        # Like load_cluster_state, the message starts at the JSON path; callers name the file.
        return loads_streams_group(text)
    return load_cluster_state(path)
