"""Value types of the assignment problem: task ids, process ids, configs, clients, assignments.

Everything here is immutable and validated on construction. The shapes follow Kafka Streams'
``org.apache.kafka.streams.processor.TaskId``, ``ProcessId`` (``java.util.UUID``),
``AssignmentConfigs`` and ``ClientState``, and ``StreamsConfig``'s validators. Each value the
package shares is defined here once: Java's ``Long.MAX_VALUE``, the task-id text, Kafka's
``TopicPartition`` and a sub-topology's topics (:class:`Subtopology`). The documents these values
are read from live in :mod:`streams_assign.formats`.
"""

from __future__ import annotations

import re
import uuid as _uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import total_ordering
from typing import Any

from streams_assign.errors import InvalidScenarioError, InvalidTaskIdError

#: Java's ``Long.MAX_VALUE``: an overflowed offset sum, an unknown changelog size, or an
#: unbounded ``acceptable.recovery.lag``.
LONG_MAX_VALUE = 9_223_372_036_854_775_807
#: Kafka's ``Task.LATEST_OFFSET``: the lag (and offset sum) of a task running as active.
LATEST_OFFSET = -2
#: Kafka's ``SubscriptionInfo.UNKNOWN_OFFSET_SUM``: the client could not tell its offset sum.
UNKNOWN_OFFSET_SUM = -3

#: A task id as text, Kafka's ``TaskId.parse``: the topology name ends at the first ``__``; both
#: numbers are plain ints. (The JSON Schema of the format derives its task pattern from this.)
TASK_ID_RE = re.compile(r"(?:(?P<name>(?:(?!__).)+)__)?(?P<sub>[0-9]+)_(?P<part>[0-9]+)", re.DOTALL)
_INT_MAX = 2**31 - 1

#: A Kafka ``TopicPartition``: ``(topic, partition)``.
TopicPartition = tuple[str, int]


@total_ordering
@dataclass(frozen=True, slots=True)
class TaskId:
    """A task: one partition of one subtopology, optionally of a named topology.

    Written ``"1_3"`` (subtopology 1, partition 3) or ``"name__1_3"``. Ordered as Kafka's
    ``TaskId.compareTo``: topology name first (both must have one, or neither), then subtopology,
    then partition, numerically (``0_2 < 0_10``).

    Raises
    ------
    InvalidTaskIdError
        From :meth:`parse`, for text that is not a task id.
    TypeError
        When a named and an unnamed task are compared (Kafka throws IllegalStateException).

    Examples
    --------
    >>> TaskId.parse("0_10") > TaskId.parse("0_2")
    True
    >>> str(TaskId.parse("orders__1_3"))
    'orders__1_3'
    """

    subtopology: int
    partition: int
    topology_name: str | None = None
    # The hash, computed once: task ids are dict keys everywhere (lags, assignments), and the
    # generated dataclass __hash__ builds a tuple on every call. Same value as that __hash__, so
    # set and dict iteration orders do not change.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_hash", hash((self.subtopology, self.partition, self.topology_name))
        )

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[TaskId], tuple[int, int, str | None]]:
        # Pickle the fields, never the cached hash: hash(None) and string hashes differ from
        # one process to another, so a copied hash would make an equal TaskId miss in a dict.
        return type(self), (self.subtopology, self.partition, self.topology_name)

    @classmethod
    def parse(cls, text: str) -> TaskId:
        """Parse ``"<sub>_<part>"`` or ``"<name>__<sub>_<part>"`` (Kafka's ``TaskId.parse``)."""
        if not isinstance(text, str):
            raise InvalidTaskIdError("", f"task id must be a string, got {text!r}")
        match = TASK_ID_RE.fullmatch(text)
        if match is None:
            raise InvalidTaskIdError(
                "", f"malformed task id {text!r} (expected '<subtopology>_<partition>')"
            )
        sub, part = int(match["sub"]), int(match["part"])
        if sub > _INT_MAX or part > _INT_MAX:
            raise InvalidTaskIdError("", f"task id {text!r} exceeds Java's int range")
        return cls(sub, part, match["name"] or None)

    def __str__(self) -> str:
        base = f"{self.subtopology}_{self.partition}"
        return f"{self.topology_name}__{base}" if self.topology_name else base

    def __repr__(self) -> str:
        return f"TaskId({str(self)!r})"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, TaskId):
            return NotImplemented
        if (self.topology_name is None) != (other.topology_name is None):
            raise TypeError(f"cannot order named and unnamed tasks: {self} and {other}")
        return self.sort_key < other.sort_key

    @property
    def sort_key(self) -> tuple[str, int, int]:
        """A tuple that sorts as ``compareTo`` does (callers ensure names are all set or unset)."""
        return (self.topology_name or "", self.subtopology, self.partition)


@dataclass(frozen=True, slots=True)
class Subtopology:
    """One sub-topology: its id, source topics and its stores' changelog topics.

    As in Kafka Streams (``InternalTopologyBuilder.TopicsInfo``), partition ``p`` of every
    source topic forms task ``<id>_<p>`` (the source topics are co-partitioned), and partition
    ``p`` of each changelog topic belongs to the same task.

    Attributes
    ----------
    id:
        The sub-topology number (the ``1`` of task ``1_3``), >= 0.
    source_topics:
        Co-partitioned input topics; at least one.
    changelog_topics:
        The changelog topics of its state stores (``<application.id>-<store>-changelog``);
        empty for a stateless sub-topology.
    """

    id: int
    source_topics: tuple[str, ...]
    changelog_topics: tuple[str, ...] = ()

    @property
    def stateful(self) -> bool:
        """Whether the sub-topology has logged state stores."""
        return bool(self.changelog_topics)


def process_id_sort_key(process_id: str) -> tuple[int, int]:
    """Sort key of a process id (a UUID string) in ``java.util.UUID.compareTo`` order.

    Java compares the most significant 64 bits, then the least significant 64 bits, each as a
    *signed* long, so ids starting ``8``-``f`` sort before ids starting ``0``-``7``.

    Raises
    ------
    ValueError
        When ``process_id`` is not a UUID.

    Examples
    --------
    >>> a, b = "80000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001"
    >>> sorted([b, a], key=process_id_sort_key) == [a, b]
    True
    """
    value = _uuid.UUID(process_id).int
    return _signed64(value >> 64), _signed64(value & 0xFFFF_FFFF_FFFF_FFFF)


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


@dataclass(frozen=True, slots=True)
class AssignmentConfigs:
    """Kafka Streams' assignment configs, with Kafka's defaults and valid ranges.

    Attributes
    ----------
    acceptable_recovery_lag:
        ``acceptable.recovery.lag`` in records (>= 0; ``LONG_MAX_VALUE`` means unbounded: every
        client counts as caught up and no warmups are made). Default 10000.
    max_warmup_replicas:
        ``max.warmup.replicas``, the warmup budget of one rebalance (>= 1). Default 2.
    num_standby_replicas:
        ``num.standby.replicas`` (>= 0). Default 0.
    probing_rebalance_interval_ms:
        ``probing.rebalance.interval.ms`` in milliseconds (>= 60000). Default 600000.
    rack_aware_assignment_tags:
        ``rack.aware.assignment.tags`` (at most 5 keys): switches standby placement to the
        client-tag-aware assignor (KIP-708).
    rack_aware_assignment_strategy:
        ``rack.aware.assignment.strategy``: ``none``, ``min_traffic`` or ``balance_subtopology``
        (KIP-925).
    rack_aware_assignment_traffic_cost, rack_aware_assignment_non_overlap_cost:
        ``rack.aware.assignment.traffic_cost`` / ``non_overlap_cost``; ``None`` takes the
        assignor's default.

    Raises
    ------
    InvalidScenarioError
        For a value out of Kafka's range, naming ``configs.<key>`` and the value.

    Notes
    -----
    Source: ``StreamsConfig`` validators and ``AssignmentConfigs``.
    """

    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    num_standby_replicas: int = 0
    probing_rebalance_interval_ms: int = 600_000
    rack_aware_assignment_tags: tuple[str, ...] = ()
    rack_aware_assignment_strategy: str = "none"
    rack_aware_assignment_traffic_cost: int | None = None
    rack_aware_assignment_non_overlap_cost: int | None = None

    def __post_init__(self) -> None:
        _check_range("acceptable_recovery_lag", self.acceptable_recovery_lag, 0, LONG_MAX_VALUE)
        _check_range("max_warmup_replicas", self.max_warmup_replicas, 1, _INT_MAX)
        _check_range("num_standby_replicas", self.num_standby_replicas, 0, _INT_MAX)
        _check_range(
            "probing_rebalance_interval_ms",
            self.probing_rebalance_interval_ms,
            60_000,
            LONG_MAX_VALUE,
        )
        if len(self.rack_aware_assignment_tags) > 5:
            raise InvalidScenarioError(
                "configs.rack_aware_assignment_tags",
                f"at most 5 tags are allowed, got {len(self.rack_aware_assignment_tags)}",
            )
        if self.rack_aware_assignment_strategy not in RACK_AWARE_STRATEGIES:
            raise InvalidScenarioError(
                "configs.rack_aware_assignment_strategy",
                f"must be one of {', '.join(RACK_AWARE_STRATEGIES)}, got "
                f"{self.rack_aware_assignment_strategy!r}",
            )
        for name in (
            "rack_aware_assignment_traffic_cost",
            "rack_aware_assignment_non_overlap_cost",
        ):
            value = getattr(self, name)
            if value is not None:
                _check_range(name, value, -(2**31), _INT_MAX)

    @property
    def unbounded_recovery_lag(self) -> bool:
        """True when ``acceptable.recovery.lag`` is ``Long.MAX_VALUE`` (everyone is caught up)."""
        return self.acceptable_recovery_lag == LONG_MAX_VALUE


RACK_AWARE_STRATEGIES = ("none", "min_traffic", "balance_subtopology")


def _check_range(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidScenarioError(f"configs.{name}", f"must be an integer, got {value!r}")
    if value < low:
        raise InvalidScenarioError(f"configs.{name}", f"must be >= {low}, got {value}")
    if value > high:
        raise InvalidScenarioError(f"configs.{name}", f"must be <= {high}, got {value}")


@dataclass(frozen=True, slots=True)
class ConsumerState:
    """One stream thread (group member) of a client, with what it owned before.

    Attributes
    ----------
    member_id:
        The group member id (``<client.id>-StreamThread-<n>-consumer-<suffix>``).
    prev_active, prev_standby:
        Tasks this consumer ran before, sorted in TaskId order.
    owned_partitions:
        ``(topic, partition)`` pairs the consumer still owns under cooperative rebalancing
        (Kafka's ``ownedPartitions``); empty when unknown.
    rack:
        The consumer's ``client.rack``, or ``None``.
    """

    member_id: str
    prev_active: tuple[TaskId, ...] = ()
    prev_standby: tuple[TaskId, ...] = ()
    owned_partitions: tuple[tuple[str, int], ...] = ()
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class ClientState:
    """What the group leader knows of one Kafka Streams process (client) at a rebalance.

    Attributes
    ----------
    id:
        The process id, a canonical lower-case UUID string.
    capacity:
        Number of stream threads (consumers), >= 1.
    prev_active, prev_standby:
        The previous assignment, sorted in TaskId order.
    task_lags:
        Changelog lag in records per stateful task the client has local state for;
        ``LATEST_OFFSET`` (-2) for a running active, ``UNKNOWN_OFFSET_SUM`` (-3) when unknown.
        A stateful task absent here has no local state (see :meth:`ClusterState.lag`).
    task_offset_sums:
        The offset sums the client reported, when the input gave them (Kafka-native input).
    tags:
        ``client.tag.*`` values (KIP-708), for tag-aware standbys.
    rack:
        The client's ``client.rack`` (KIP-925), for rack-aware assignment; ``None`` when unknown.
    consumers:
        The client's stream threads, when the input lists them.

    Notes
    -----
    The input half of Kafka's ``ClientState``; the assigned sets live in the
    assignors' working state.
    """

    id: str
    capacity: int
    prev_active: tuple[TaskId, ...] = ()
    prev_standby: tuple[TaskId, ...] = ()
    task_lags: Mapping[TaskId, int] = field(default_factory=dict)
    task_offset_sums: Mapping[TaskId, int] | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    consumers: tuple[ConsumerState, ...] | None = None
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class ClusterState:
    """One rebalance's input: configs, tasks and clients (the cluster-state JSON document).

    Attributes
    ----------
    configs:
        The assignment configs.
    stateful_tasks, stateless_tasks:
        Disjoint, each sorted in TaskId order.
    clients:
        Sorted in ``java.util.UUID`` order of their ids (the order Kafka iterates them).
    changelog_end_offset_sums:
        Per stateful task, the sum of its changelog end offsets in records, when known. A
        client without local state for a task then has that lag; otherwise ``LONG_MAX_VALUE``.
    name, description:
        Free text from the input.
    extensions:
        The format extensions' top-level fields as given (written back by
        ``cluster_state_to_json``); the assignors read the typed fields below.
    warnings:
        What validation ignored (for example lags of unknown tasks), one sentence each.
    task_partitions, task_changelog_partitions:
        Per task, its source / changelog partitions ``(topic, partition)`` (KIP-925 rack-aware
        assignment, cooperative revocation); ``None`` when the input does not give them.
    partition_racks:
        Per partition, the racks of its replicas (empty: a replica without rack).
    client_racks:
        Process id -> ``client.rack`` for clients given without their threads.
    leader:
        Process id of the group leader's client; ``None`` when not given.
    now_ms:
        The leader's clock in milliseconds since the epoch; ``None`` when not given.
    """

    configs: AssignmentConfigs
    stateful_tasks: tuple[TaskId, ...]
    stateless_tasks: tuple[TaskId, ...]
    clients: tuple[ClientState, ...]
    changelog_end_offset_sums: Mapping[TaskId, int] | None = None
    name: str | None = None
    description: str | None = None
    extensions: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    task_partitions: Mapping[TaskId, tuple[TopicPartition, ...]] | None = None
    task_changelog_partitions: Mapping[TaskId, tuple[TopicPartition, ...]] | None = None
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None
    client_racks: Mapping[str, str] | None = None
    leader: str | None = None
    now_ms: int | None = None

    @property
    def all_tasks(self) -> tuple[TaskId, ...]:
        """Stateful and stateless tasks together, in TaskId order."""
        return tuple(sorted(self.stateful_tasks + self.stateless_tasks))

    def client(self, process_id: str) -> ClientState:
        """The client with this process id; raises ``KeyError`` when there is none."""
        for client in self.clients:
            if client.id == process_id:
                return client
        raise KeyError(process_id)

    def no_state_lag(self, task: TaskId) -> int:
        """Lag in records of a client with no local state for ``task``: the whole changelog."""
        if self.changelog_end_offset_sums is not None:
            return self.changelog_end_offset_sums.get(task, LONG_MAX_VALUE)
        return LONG_MAX_VALUE

    def lag(self, client: ClientState, task: TaskId) -> int:
        """Kafka's ``ClientState.lagFor``: the client's lag for a stateful task, in records."""
        value = client.task_lags.get(task)
        return self.no_state_lag(task) if value is None else value

    def is_caught_up(self, client: ClientState, task: TaskId) -> bool:
        """Kafka's caught-up rule (``tasksToCaughtUpClients``) for a stateful task on a client."""
        return is_caught_up(self.lag(client, task), self.configs.acceptable_recovery_lag)


def is_caught_up(lag: int, acceptable_recovery_lag: int) -> bool:
    """Whether a client with this lag may take an active task without a warmup.

    True for a running active (lag -2), for any lag when ``acceptable_recovery_lag`` is
    ``Long.MAX_VALUE``, and for ``0 <= lag <= acceptable_recovery_lag``. An unknown lag (-3) is
    not caught up. Source: ``HighAvailabilityTaskAssignor`` caught-up predicate (PR #8716).
    """
    return (
        lag == LATEST_OFFSET
        or acceptable_recovery_lag == LONG_MAX_VALUE
        or 0 <= lag <= acceptable_recovery_lag
    )


def compute_task_lag(offset_sum: int, end_offset_sum: int) -> int:
    """Kafka's ``ClientState.computeTaskLags`` rule for one task, in records.

    ``-2`` stays ``-2`` (running active), ``-3`` stays ``-3`` (unknown); an offset sum beyond the
    end (a corrupted or truncated changelog) gives the end offset sum; otherwise the difference.
    """
    if offset_sum in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
        return offset_sum
    if end_offset_sum < offset_sum:
        return end_offset_sum
    return end_offset_sum - offset_sum


@dataclass(frozen=True, slots=True)
class ClientAssignment:
    """What one client runs after the rebalance.

    Attributes
    ----------
    active, standby:
        Sorted in TaskId order; ``standby`` includes the warmups, as Kafka counts them.
    warmup:
        The standbys that are warmup replicas (extra copies placed to catch up before an
        active task may move).
    consumers:
        Per stream thread (member id), its ``active`` and ``standby`` tasks, when computed.
    """

    active: tuple[TaskId, ...] = ()
    standby: tuple[TaskId, ...] = ()
    warmup: tuple[TaskId, ...] = ()
    consumers: Mapping[str, Mapping[str, tuple[TaskId, ...]]] | None = None


@dataclass(frozen=True, slots=True)
class Assignment:
    """The assignor's decision for a rebalance.

    Attributes
    ----------
    clients:
        Per process id, in UUID order, what it runs.
    probing_rebalance_needed:
        Whether the leader schedules a probing rebalance after
        ``probing.rebalance.interval.ms`` (some stateful task still has to move).
    assignor:
        Name of the assignor that decided (``high_availability``, ...).
    extras:
        Assignor-specific output (for example per-consumer rebalance deadlines).
    """

    clients: Mapping[str, ClientAssignment]
    probing_rebalance_needed: bool
    assignor: str = "high_availability"
    extras: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The output document of ``docs/scenario-format.md``."""
        clients: dict[str, Any] = {}
        for process_id, client in self.clients.items():
            entry: dict[str, Any] = {
                "active": [str(t) for t in client.active],
                "standby": [str(t) for t in client.standby],
                "warmup": [str(t) for t in client.warmup],
            }
            if client.consumers is not None:
                entry["consumers"] = {
                    member: {role: [str(t) for t in tasks] for role, tasks in roles.items()}
                    for member, roles in client.consumers.items()
                }
            clients[process_id] = entry
        document: dict[str, Any] = {
            "probing_rebalance_needed": self.probing_rebalance_needed,
            "clients": clients,
        }
        document.update(self.extras)
        return document


def sorted_tasks(tasks: Iterable[TaskId]) -> tuple[TaskId, ...]:
    """Tasks in Kafka's TaskId order, as a tuple."""
    return tuple(sorted(tasks))


__all__ = [
    "Assignment",
    "AssignmentConfigs",
    "ClientAssignment",
    "ClientState",
    "ClusterState",
    "ConsumerState",
    "LATEST_OFFSET",
    "LONG_MAX_VALUE",
    "RACK_AWARE_STRATEGIES",
    "Subtopology",
    "TASK_ID_RE",
    "TaskId",
    "TopicPartition",
    "UNKNOWN_OFFSET_SUM",
    "compute_task_lag",
    "is_caught_up",
    "process_id_sort_key",
    "sorted_tasks",
]
