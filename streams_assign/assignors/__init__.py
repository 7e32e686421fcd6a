"""The assignors, one module each, and their registry: ``streams_assign.assign(cluster_state)``.

:func:`assign` accepts a :class:`~streams_assign.model.ClusterState`, a parsed cluster-state
document (dict), or a path to a JSON file, runs the chosen assignor of :data:`ASSIGNORS`, and,
for clients that list their stream threads (``consumers``), spreads each client's tasks over its
threads as Kafka's ``StreamsPartitionAssignor.assignTasksToThreads`` does.

A new assignor is a module here with a class that has a ``name`` and an ``assign(cluster)``
method (:class:`TaskAssignor`), one line in :data:`ASSIGNORS`, and its name in the command
line's ``ASSIGNOR_CHOICES`` (a test checks both agree).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from streams_assign.errors import UnknownAssignorError
from streams_assign.model import Assignment, ClusterState

if TYPE_CHECKING:
    from streams_assign.streams_group import StreamsGroupAssignment, StreamsGroupState

__all__ = [
    "ASSIGNORS",
    "ASSIGNOR_ALIASES",
    "AssignorRegistry",
    "GROUP_ASSIGNORS",
    "TaskAssignor",
    "as_cluster_state",
    "assign",
    "assign_group",
    "get_assignor",
]


class TaskAssignor(Protocol):
    """An assignor: one decision per rebalance (Kafka's ``LegacyTaskAssignor``).

    An assignor class whose attribute ``decided_by_broker`` is True (the KIP-1071 streams-group
    assignor) decides per member as the broker does: :func:`assign` then runs it without the
    classic leader's fallback and thread steps.
    """

    name: str

    def assign(self, cluster: ClusterState) -> Assignment:
        """Decide actives, standbys and warmups for the rebalance described by ``cluster``."""
        ...


class AssignorRegistry(Mapping[str, str]):
    """Assignor name -> ``"module:Class"``; old names are accepted as aliases.

    Iterating gives each assignor once, under its name; looking up (``in``, ``[]``,
    :meth:`canonical`) also accepts an alias.

    Parameters
    ----------
    targets:
        Name -> ``"module:Class"``.
    aliases:
        Old name -> name.
    """

    def __init__(self, targets: Mapping[str, str], aliases: Mapping[str, str]) -> None:
        self._targets = dict(targets)
        self.aliases = dict(aliases)

    def canonical(self, name: str) -> str:
        """The name an alias stands for (a name stands for itself)."""
        return self.aliases.get(name, name)

    def __getitem__(self, name: str) -> str:
        return self._targets[self.canonical(name)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._targets)

    def __len__(self) -> int:
        return len(self._targets)

    def __repr__(self) -> str:
        return f"AssignorRegistry({self._targets!r}, aliases={self.aliases!r})"


#: Old assignor name -> its name: ``sticky`` is Kafka's ``LegacyStickyTaskAssignor``.
ASSIGNOR_ALIASES: dict[str, str] = {"sticky": "legacy_sticky"}

#: Assignor name -> "module:Class". Names follow Kafka's classes in snake_case.
ASSIGNORS = AssignorRegistry(
    {
        "high_availability": (
            "streams_assign.assignors.high_availability:HighAvailabilityTaskAssignor"
        ),
        "legacy_sticky": "streams_assign.assignors.legacy_sticky:LegacyStickyTaskAssignor",
        "fallback_prior": "streams_assign.assignors.fallback:FallbackPriorTaskAssignor",
        # KIP-1071 streams groups: the group coordinator's StickyTaskAssignor (Kafka 4.4).
        "streams_group_sticky": (
            "streams_assign.assignors.streams_group_sticky:StreamsGroupStickyTaskAssignor"
        ),
        "lag_aware_sticky": (
            "streams_assign.assignors.lag_aware_sticky:LagAwareStickyTaskAssignor"
        ),
    },
    ASSIGNOR_ALIASES,
)


#: Streams-group (KIP-1071) assignor name -> "module:function" deciding per member: the group
#: coordinator's sticky assignor (the default) and lag_aware_sticky's broker form (KIP-1357).
GROUP_ASSIGNORS: dict[str, str] = {
    "streams_group_sticky": "streams_assign.assignors.streams_group_sticky:assign_streams_group",
    "lag_aware_sticky": (
        "streams_assign.assignors.lag_aware_sticky.streams_group:assign_lag_aware_streams_group"
    ),
}


def _assignor_class(name: str) -> type[TaskAssignor]:
    """The class registered under ``name`` (or an alias of it)."""
    target = ASSIGNORS.get(name)
    if target is None:
        choices = ", ".join([*ASSIGNORS, *ASSIGNOR_ALIASES])
        raise UnknownAssignorError(f"unknown assignor {name!r}; choose one of {choices}")
    module_name, class_name = target.split(":")
    assignor_class: type[TaskAssignor] = getattr(importlib.import_module(module_name), class_name)
    return assignor_class


def get_assignor(name: str) -> TaskAssignor:
    """Instantiate the assignor registered under ``name`` (or an alias of it).

    Raises
    ------
    UnknownAssignorError
        For a name that is not in :data:`ASSIGNORS`.

    Notes
    -----
    An assignor asked for by an alias keeps that name, so its decisions carry the name the
    caller used (``Assignment.assignor``).
    """
    assignor = _assignor_class(name)()
    if name in ASSIGNOR_ALIASES:
        assignor.name = name
    return assignor


def as_cluster_state(source: ClusterState | Mapping[str, Any] | str | Path) -> ClusterState:
    """Coerce a cluster state, a parsed document or a file path into a validated ClusterState."""
    from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state

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
        stateful lag is -3, ``UNKNOWN_OFFSET_SUM``), unless ``legacy_sticky`` is asked for.

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
    from streams_assign.assignors.fallback import select_assignor

    cluster = as_cluster_state(source)
    if assignor in ASSIGNORS and getattr(_assignor_class(assignor), "decided_by_broker", False):
        # The broker decides per member: no fallback and no thread step of the classic leader.
        return get_assignor(assignor).assign(cluster)
    # Kafka's leader runs the fallback when changelog end offsets could not be fetched.
    result = get_assignor(select_assignor(cluster, assignor)).assign(cluster)
    if any(client.consumers is not None for client in cluster.clients):
        from streams_assign.assignors.threads import assign_tasks_to_consumers

        result = assign_tasks_to_consumers(cluster, result)
    return result


def assign_group(
    source: StreamsGroupState | Mapping[str, Any] | str | Path,
    assignor: str = "streams_group_sticky",
) -> StreamsGroupAssignment:
    """Decide a streams group's target assignment (KIP-1071, ``streams_group_sticky``).

    Parameters
    ----------
    source:
        A streams-group state (object, parsed JSON document, or file path) in the format of
        ``kafka-streams-group/FORMAT.md``; see
        :func:`streams_assign.formats.document.load_document` to accept either format.
    assignor:
        One of :data:`GROUP_ASSIGNORS`: Kafka 4.4's ``StickyTaskAssignor`` (the default) or
        ``lag_aware_sticky`` (the broker plug-in's decision).

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
    UnknownAssignorError
        For a name that is not in :data:`GROUP_ASSIGNORS`.
    """
    from streams_assign.formats.streams_group import load_streams_group, parse_streams_group
    from streams_assign.streams_group import StreamsGroupState

    if isinstance(source, StreamsGroupState):
        state = source
    elif isinstance(source, Mapping):
        state = parse_streams_group(dict(source))
    else:
        state = load_streams_group(source)
    target = GROUP_ASSIGNORS.get(assignor)
    if target is None:
        choices = ", ".join(GROUP_ASSIGNORS)
        raise UnknownAssignorError(f"unknown streams-group assignor {assignor!r}; choose {choices}")
    module_name, function_name = target.split(":")
    decide = getattr(importlib.import_module(module_name), function_name)
    result: StreamsGroupAssignment = decide(state)
    return result
