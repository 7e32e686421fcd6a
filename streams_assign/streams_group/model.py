"""The streams-group state and decision as typed values (KIP-1071's ``GroupSpec`` and
``GroupAssignment``), and Java's ``String`` order of subtopology ids.

Read and written by :mod:`streams_assign.streams_group.format`; built from a classic cluster
state by :mod:`streams_assign.streams_group.convert`. Import these names from
:mod:`streams_assign.streams_group`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from streams_assign.errors import InvalidScenarioError

__all__ = [
    "InvalidStreamsGroupError",
    "StreamsGroupAssignment",
    "StreamsGroupConfigs",
    "StreamsGroupMember",
    "StreamsGroupMemberAssignment",
    "StreamsGroupState",
    "Subtopology",
    "TaskOffsets",
    "TaskSet",
    "java_string_order",
]

#: Largest value of a Java ``long`` (offset sums are ``long`` in Kafka).
_JAVA_LONG_MAX = (1 << 63) - 1
#: Largest value of a Java ``int`` (partition numbers and counts are ``int`` in Kafka).
_JAVA_INT_MAX = (1 << 31) - 1

#: Tasks of one member: subtopology id -> partitions (sorted, no duplicates).
TaskSet = Mapping[str, tuple[int, ...]]
#: Offset sums of one member: subtopology id -> partition -> offset sum (records).
TaskOffsets = Mapping[str, Mapping[int, int]]


class InvalidStreamsGroupError(InvalidScenarioError):
    """A streams-group state document breaks the format's rules.

    The message names the file (when read from one), the JSON path and the offending value,
    for example ``sg.json: members[2].task_offsets.0.5: must be an integer >= 0, got -1``.
    """


@dataclass(frozen=True, slots=True)
class Subtopology:
    """One subtopology as ``TopologyDescriber`` describes it.

    Attributes
    ----------
    partitions:
        ``maxNumInputPartitions``: the number of tasks of the subtopology (>= 1).
    stateful:
        ``isStateful``: the subtopology has state changelog topics, so its tasks get standby
        tasks.
    """

    partitions: int
    stateful: bool


@dataclass(frozen=True, slots=True)
class StreamsGroupConfigs:
    """The group's ``AssignmentConfigs`` (``AssignmentConfigsImpl``).

    Attributes
    ----------
    num_standby_replicas:
        ``num.standby.replicas`` (>= 0): standby tasks wanted per stateful task.
    rack_aware_assignment_tags:
        ``rack.aware.assignment.tags``: client-tag keys (not read by Kafka 4.4's
        ``StickyTaskAssignor``).
    """

    num_standby_replicas: int = 0
    rack_aware_assignment_tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StreamsGroupMember:
    """One member: a stream thread (``MemberAssignmentMetadata`` and ``MemberAssignmentState``).

    Attributes
    ----------
    member_id:
        The member id (unique in the group).
    process_id:
        The Streams instance's process id; members sharing it are threads of one process.
    instance_id, rack_id, client_tags:
        ``group.instance.id``, rack and client tags (not read by Kafka 4.4's assignor).
    active_tasks, standby_tasks, warmup_tasks:
        Tasks the member currently owns: subtopology id -> partitions.
    task_offsets:
        Changelog offset sums the member last reported (records), per subtopology and partition.
    task_end_offsets:
        End-offset sums (records), same shape (not read by the assignor).
    """

    member_id: str
    process_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    active_tasks: TaskSet = field(default_factory=dict)
    standby_tasks: TaskSet = field(default_factory=dict)
    warmup_tasks: TaskSet = field(default_factory=dict)
    task_offsets: TaskOffsets = field(default_factory=dict)
    task_end_offsets: TaskOffsets = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StreamsGroupState:
    """What a streams group's coordinator hands its ``TaskAssignor``.

    Attributes
    ----------
    configs:
        The group's assignment configs.
    topology:
        Subtopology id -> :class:`Subtopology`, in the order of the document.
    members:
        The members in the order Kafka iterates ``GroupSpec.memberIds()`` (the document's order).
    meta:
        Free-form information about the state; ignored by every assignor.
    """

    configs: StreamsGroupConfigs
    topology: Mapping[str, Subtopology]
    members: tuple[StreamsGroupMember, ...]
    meta: Mapping[str, Any] | None = None


class StreamsGroupMemberAssignment(NamedTuple):
    """One member's target assignment (``MemberAssignment``): subtopology -> sorted partitions.

    ``warmup`` is always empty for Kafka 4.4's ``StickyTaskAssignor``. (A named tuple: immutable
    and cheap to build for thousands of members.)
    """

    active: TaskSet
    standby: TaskSet
    warmup: TaskSet = {}

    def to_json(self) -> dict[str, Any]:
        """The member's entry of the output format (subtopologies in Java ``String`` order)."""
        return {
            "active": _task_set_json(self.active),
            "standby": _task_set_json(self.standby),
            "warmup": _task_set_json(self.warmup),
        }


@dataclass(frozen=True, slots=True)
class StreamsGroupAssignment:
    """A streams group's target assignment (``GroupAssignment``): one entry per member.

    Attributes
    ----------
    members:
        Member id -> :class:`StreamsGroupMemberAssignment`, in the input's member order.
    """

    members: Mapping[str, StreamsGroupMemberAssignment]

    def to_json(self) -> dict[str, Any]:
        """The output document: ``{"members": {id: {"active", "standby", "warmup"}}}``."""
        return {"members": {m: a.to_json() for m, a in self.members.items()}}


def java_string_order(text: str) -> bytes:
    """A sort key that orders strings as ``java.lang.String.compareTo`` (UTF-16 code units).

    Parameters
    ----------
    text:
        A subtopology id (any string).

    Returns
    -------
    bytes
        Its UTF-16BE encoding; byte order equals code-unit order, so ``"10" < "2"`` as in Java.
    """
    return text.encode("utf-16-be", "surrogatepass")


def _task_set_json(tasks: TaskSet) -> dict[str, list[int]]:
    return {s: sorted(tasks[s]) for s in sorted(tasks, key=java_string_order) if tasks[s]}


def _error(source: str | None, path: str, message: str) -> InvalidStreamsGroupError:
    error = InvalidStreamsGroupError(path, message)
    if source:
        error.args = (f"{source}: {error.args[0]}",)
    return error
