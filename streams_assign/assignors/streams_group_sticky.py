"""Kafka 4.4's broker-side ``StickyTaskAssignor`` for streams groups (KIP-1071), step for step.

In a streams group (``group.protocol=streams``) the group coordinator computes the target
assignment with ``org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor``
(modules ``group-coordinator`` and ``group-coordinator-api``). Its unit is the member (one
stream thread), grouped into processes by process id; it balances load per process
(``ProcessState.load`` = tasks / members) and keeps tasks where they were:

1. ``initialize``: the previous owner of each active task (the last member in ``memberIds()``
   order listing it wins); ``collectStandbyCandidates`` / ``rankStandbyCandidates``: per task,
   the members holding it as a standby task (rank 0) and those that only report a changelog
   offset sum for it (rank 1, own active tasks included), stable-sorted by rank then by offset
   sum, highest first; the quotas ``activeTasksPerMember`` and ``totalTasksPerMember``.
2. ``assignActive``: keep each active task on its previous owner below the quota; else give it
   to the standby candidate found by ``findPrevMemberWithLeastLoad`` below the quota; else to
   the least-loaded process (``PriorityQueue`` by load) and its least-loaded member.
3. ``assignStandby``: each replica of a stateful task goes to the previous active owner, else
   to the best standby candidate, on a process that lacks the task and below the total quota;
   otherwise the remaining replicas are deferred and placed on the least-loaded processes
   (``assignStandbyToMemberWithLeastLoad``).

Java's iteration orders decide ties, so the twin replays them: ``processIdToState`` is a
``HashMap`` sized for the member count, each process's ``memberToTaskCounts`` a default
``HashMap`` (see :class:`streams_assign.java.hash_order.JavaHashMap`), and both heaps are OpenJDK
``PriorityQueue`` binary heaps (:class:`streams_assign.java.priority_queue.KeyedJavaPriorityQueue`).
The facts come from Kafka 4.4.0's ``kafka-group-coordinator`` jar; the data format is
``kafka-streams-group/FORMAT.md``.

The data are plain lists indexed by integers: tasks are numbered in Kafka's task order, members
by their place in the input, processes by first appearance (:class:`_LocalState`). The members
are read in one pass (:func:`_read_members`); a task's owners are recorded per task, so each
placement is a few list stores, and the first active loop runs at once where no quota can refuse
a previous owner (:func:`_keep_previous_owners`). A member given exactly the tasks it owned gets
its own task map back (:func:`_build_group_assignment`).
"""

from __future__ import annotations

import logging
import operator
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import chain, compress, repeat
from operator import attrgetter, is_, not_

from streams_assign.errors import TaskAssignorException
from streams_assign.java.hash_order import (
    JavaHashMap,
    java_int_div,
    java_string_hash_code,
    java_string_hash_unsigned,
    spread,
    table_size_for,
)
from streams_assign.java.priority_queue import KeyedJavaPriorityQueue
from streams_assign.model import (
    Assignment,
    ClientAssignment,
    ClusterState,
    TaskId,
    process_id_sort_key,
    sorted_tasks,
)
from streams_assign.streams_group import (
    StreamsGroupAssignment,
    StreamsGroupMember,
    StreamsGroupMemberAssignment,
    StreamsGroupState,
    TaskOffsets,
    TaskSet,
    from_cluster_state,
    java_string_order,
)

__all__ = ["StreamsGroupStickyTaskAssignor", "assign_streams_group"]

log = logging.getLogger(__name__)


#: ``Double.MAX_VALUE``: the starting "best" load and count of ``findPrevMemberWithLeastLoad``.
_JAVA_DOUBLE_MAX = 1.7976931348623157e308

#: A task, numbered in (subtopology in Java ``String`` order, partition) order: see
#: :class:`_TaskNumbering`. Integers hash and compare faster than (subtopology, partition) pairs.
Task = int

#: The replica slot of an active placement (standby replicas use slots 0, 1, ...).
_ACTIVE = -1


def compute_tasks_per_member(num_tasks: int, num_members: int) -> int:
    """``computeTasksPerMember``: ``ceil(tasks / members)`` in Java ``int`` arithmetic.

    Parameters
    ----------
    num_tasks:
        Tasks still to share (may turn negative after members overshoot the quota).
    num_members:
        Members still below the quota (may turn negative likewise).

    Returns
    -------
    int
        The quota in tasks per member; 0 when ``num_members`` is 0. Java's truncating ``/``
        and ``%`` are followed for negative operands.

    Examples
    --------
    >>> [compute_tasks_per_member(t, m) for t, m in ((10, 4), (-3, 2), (5, 0))]
    [3, -1, 0]
    """
    if num_members == 0:
        return 0
    if num_tasks >= 0 and num_members > 0:
        return -(-num_tasks // num_members)
    q = java_int_div(num_tasks, num_members)
    if num_tasks - q * num_members > 0:
        q += 1
    return q


class _ProcessIdToState:
    """``new HashMap<String, ProcessState>(n)`` filled by ``computeIfAbsent``, in Java's order.

    ``HashMap.computeIfAbsent`` differs from ``put`` in two ways that decide the iteration
    order: a new key goes to the **head** of its bucket, and a due resize happens at the start
    of the **next** call (any call, also one for a present key), not right after the insertion.
    A bucket that already holds 7 keys makes a table smaller than 64 grow (``treeifyBin``).

    Kafka calls ``computeIfAbsent`` once per member; only the calls that insert a key and
    whether any call follows the last insertion change the table, so the map is replayed from
    the process ids in first-appearance order (:func:`_process_order`), and only when a process
    heap needs its order.
    """

    __slots__ = ("table", "size", "threshold", "treeified")

    def __init__(self, initial_capacity: int) -> None:
        # Buckets are created by their first key (None until then): a table sized for 1000
        # members holds 1024 buckets, most of them empty. Entries are (spread hash, process).
        self.table: list[list[tuple[int, int]] | None] = []
        self.size = 0
        self.threshold = table_size_for(initial_capacity)
        self.treeified = False

    def _resize(self) -> None:
        old = self.table
        old_cap = len(old)
        new_cap = old_cap << 1 if old_cap else self.threshold
        self.threshold = int(new_cap * 0.75)
        table: list[list[tuple[int, int]] | None] = [None] * new_cap
        for j, bucket in enumerate(old):
            if bucket:
                for entry in bucket:
                    k = j + old_cap if entry[0] & old_cap else j
                    moved = table[k]
                    if moved is None:
                        table[k] = [entry]
                    else:
                        moved.append(entry)
        self.table = table

    def touch(self) -> None:
        """The start of any ``computeIfAbsent`` call: a resize due since the last insertion."""
        if self.size > self.threshold or not self.table:
            self._resize()

    def insert(self, process_id: str, process: int) -> None:
        """``computeIfAbsent(processId, ProcessState::new)`` for an absent key."""
        self.touch()
        h = spread(java_string_hash_unsigned(process_id))
        i = h & (len(self.table) - 1)
        bucket = self.table[i]
        if bucket is None:
            bin_count = 0
            self.table[i] = [(h, process)]
        else:
            bin_count = len(bucket)
            bucket.insert(0, (h, process))
        if bin_count >= 7:
            if len(self.table) < 64:
                self._resize()
            else:
                self.treeified = True
        self.size += 1

    def values(self) -> list[int]:
        """``values()`` in iteration order (process numbers)."""
        return [process for bucket in self.table if bucket for _, process in bucket]


def _process_order(process_ids: list[str], members: int, trailing_call: bool) -> list[int]:
    """Process numbers in ``processIdToState``'s iteration order.

    Parameters
    ----------
    process_ids:
        The process ids in first-appearance order (process ``i`` is ``process_ids[i]``).
    members:
        The member count (``new HashMap<>(members)``).
    trailing_call:
        Whether a member after the one that added the last process calls ``computeIfAbsent``
        (its call makes a due resize happen).
    """
    table = _ProcessIdToState(members)
    for process, process_id in enumerate(process_ids):
        table.insert(process_id, process)
    if trailing_call:
        table.touch()
    return table.values()


@dataclass(frozen=True, slots=True)
class StreamsGroupStickyTaskAssignor:
    """Kafka 4.4's ``StickyTaskAssignor`` for streams groups (name ``streams_group_sticky``).

    :meth:`assign_group` decides for a streams-group state (members); :meth:`assign` takes a
    classic cluster state, forms the streams group the same processes would form under
    ``group.protocol=streams`` (:func:`~streams_assign.streams_group.from_cluster_state`) and
    answers per client, so the broker's decision sits beside the classic assignors' (in
    ``streams-assign assign --assignor streams_group_sticky`` and ``streams-assign compare``).

    Examples
    --------
    >>> from streams_assign.formats.streams_group import parse_streams_group
    >>> state = parse_streams_group({
    ...     "configs": {"num.standby.replicas": 1},
    ...     "topology": {"0": {"partitions": 2, "stateful": True}},
    ...     "members": [{"member_id": "a", "process_id": "p1", "active_tasks": {"0": [1]}},
    ...                 {"member_id": "b", "process_id": "p2"}]})
    >>> StreamsGroupStickyTaskAssignor().assign_group(state).to_json()["members"]["a"]
    {'active': {'0': [1]}, 'standby': {'0': [0]}, 'warmup': {}}
    """

    name: str = "streams_group_sticky"
    #: The broker decides per member: no classic-leader fallback or thread step.
    decided_by_broker: bool = True

    def assign_group(self, state: StreamsGroupState) -> StreamsGroupAssignment:
        """Compute the target assignment of a streams group; see :func:`assign_streams_group`."""
        return assign_streams_group(state)

    def assign(self, cluster: ClusterState) -> Assignment:
        """The broker's decision for the streams group a classic cluster state would form.

        Parameters
        ----------
        cluster:
            A classic cluster state; each client is a process, each stream thread a member.

        Returns
        -------
        Assignment
            Per client (process id order): the union of its members' active and standby tasks,
            no warm-ups, and per member (``consumers``) when the input lists consumers.
            ``probing_rebalance_needed`` is False: a streams group has no probing rebalances.

        Raises
        ------
        InvalidStreamsGroupError
            For named-topology tasks.
        TaskAssignorException
            When Kafka's assignor throws (no members but tasks).
        """
        group = from_cluster_state(cluster)
        decision = assign_streams_group(group)
        process_of = {m.member_id: m.process_id for m in group.members}
        per_client: dict[str, list[tuple[str, StreamsGroupMemberAssignment]]] = {}
        for member_id, member in decision.members.items():
            per_client.setdefault(process_of[member_id], []).append((member_id, member))
        clients = {}
        for client in sorted(cluster.clients, key=lambda c: process_id_sort_key(c.id)):
            members = per_client.get(client.id, [])
            active = sorted_tasks(t for _, m in members for t in _task_ids_of(m.active))
            standby = sorted_tasks(t for _, m in members for t in _task_ids_of(m.standby))
            consumers = None
            if client.consumers is not None:
                consumers = {
                    member_id: {
                        "active": sorted_tasks(_task_ids_of(m.active)),
                        "standby": sorted_tasks(_task_ids_of(m.standby)),
                    }
                    for member_id, m in members
                }
            clients[client.id] = ClientAssignment(
                active=active, standby=standby, warmup=(), consumers=consumers
            )
        return Assignment(clients=clients, probing_rebalance_needed=False, assignor=self.name)


def _task_ids_of(tasks: TaskSet) -> list[TaskId]:
    return [TaskId(int(sub), p) for sub, parts in tasks.items() for p in parts]


class _LocalState:
    """Kafka's ``StickyTaskAssignor.LocalState`` with its ``ProcessState``s, as lists.

    Members are numbered by their place in the input, processes by first appearance, tasks as
    :class:`_TaskNumbering` numbers them.

    Attributes
    ----------
    counts:
        Per member: active plus standby tasks assigned so far (``memberToTaskCounts``).
    won, active_counts:
        ``counts`` after the first loop of ``assignActive`` and after ``assignActive``.
    listed_active, listed_standby:
        Per member: the active and standby tasks its own maps list.
    unusable_active, unusable_standby:
        Members whose maps are not in the output's form (see :func:`_read_members`).
    standby_dirty:
        Members given a standby task other than as the single candidate of a task they list
        as standby (so maybe one they do not list).
    process_of:
        Per member: its process.
    process_ids, trailing_call, process_order:
        The process ids in first-appearance order, whether a member after the one that added
        the last process calls ``computeIfAbsent``, and the processes in ``processIdToState``'s
        order (see :func:`_process_order`; built with the first process heap).
    capacity:
        Per process: its members (``ProcessState.capacity``).
    task_count, task_count_stale:
        Per process: tasks held (``ProcessState.taskCount``; ``load`` is ``task_count /
        capacity``, computed where it is read), and whether it lags the member counts. The
        loops that read no load (the first of ``assignActive``; ``assignStandby``'s when no
        task has ranked candidates) count per member only; :meth:`sync_task_counts` sums the
        processes' counts before a load is next read.
    members_of, member_order, member_heap, heap_mark:
        Per process: its members in ``addMember`` order (built on first need), in
        ``memberToTaskCounts`` order (built with the first member heap), the lazily built
        member heap (``membersByLoad``), and the ``task_count`` when that heap was last in step
        with the member counts. Kafka drops the heap on each direct ``addTask``; a direct
        placement here only raises ``task_count``, so a heap whose mark differs is the dropped one.
    prev_active, active_owner:
        Per task: the previous active owner (``activeTaskToPrevMember``) and the member given
        the active task; -1 for none.
    standby_owners:
        One list per replica slot: per task, the member given that standby replica, or -1.
    standby_candidate, standby_candidates:
        Per task: the single standby candidate, -1 for none or -2 for several, which
        ``standby_candidates`` ranks (``standbyTaskToPrevMember``).
    """

    __slots__ = (
        "num_standby_replicas",
        "total_active_tasks",
        "total_tasks",
        "total_members_with_active_task_capacity",
        "total_members_with_task_capacity",
        "active_tasks_per_member",
        "total_tasks_per_member",
        "members",
        "counts",
        "won",
        "active_counts",
        "listed_active",
        "listed_standby",
        "unusable_active",
        "unusable_standby",
        "standby_dirty",
        "process_of",
        "process_ids",
        "trailing_call",
        "process_order",
        "capacity",
        "task_count",
        "task_count_stale",
        "members_of",
        "member_order",
        "member_heap",
        "heap_mark",
        "prev_active",
        "active_owner",
        "standby_owners",
        "standby_candidate",
        "standby_candidates",
    )

    def __init__(self) -> None:
        self.num_standby_replicas = 0
        self.total_active_tasks = 0
        self.total_tasks = 0
        self.total_members_with_active_task_capacity = 0
        self.total_members_with_task_capacity = 0
        self.active_tasks_per_member = 0
        self.total_tasks_per_member = 0
        self.members: Sequence[StreamsGroupMember] = ()
        self.counts: list[int] = []
        self.won: list[int] = []
        self.active_counts: list[int] = []
        self.listed_active: list[int] = []
        self.listed_standby: list[int] = []
        self.unusable_active: set[int] = set()
        self.unusable_standby: set[int] = set()
        self.standby_dirty: set[int] = set()
        self.process_of: list[int] = []
        self.process_ids: list[str] = []
        self.trailing_call = False
        self.process_order: list[int] | None = None
        self.capacity: list[int] = []
        self.task_count: list[int] = []
        self.task_count_stale = True
        self.members_of: list[list[int]] | None = None
        self.member_order: list[list[int] | None] = []
        self.member_heap: list[KeyedJavaPriorityQueue[int] | None] = []
        self.heap_mark: list[int] = []
        self.prev_active: list[int] = []
        self.active_owner: list[int] = []
        self.standby_owners: list[list[int]] = []
        self.standby_candidate: list[int] = []
        self.standby_candidates: dict[Task, list[int]] = {}

    def sync_task_counts(self) -> None:
        """Every process's ``task_count`` summed from its members' counts, if it lags them.

        Counts only grow, so a process whose member heap was built before the lag has a
        ``heap_mark`` that differs afterwards exactly when it was given a task meanwhile.
        """
        if self.task_count_stale:
            task_count = [0] * len(self.capacity)
            for process, count in zip(self.process_of, self.counts, strict=True):
                task_count[process] += count
            self.task_count = task_count
            self.task_count_stale = False

    def holders(self, task: Task) -> list[int]:
        """The processes holding ``task`` once every active task is placed (``hasTask``)."""
        process_of = self.process_of
        held = [process_of[self.active_owner[task]]]
        for owners in self.standby_owners:
            member = owners[task]
            if member >= 0:
                held.append(process_of[member])
        return held

    # --- ProcessState.addTask / addTaskToLeastLoadedMember (per-member state lives here) --------

    def add_task(self, member: int, task: Task, slot: int) -> int:
        """``ProcessState.addTask``: ``task`` to ``member`` as active (``slot`` -1) or as the
        standby replica ``slot``; returns the member's new count."""
        self.task_count[self.process_of[member]] += 1
        count = self.counts[member] + 1
        self.counts[member] = count
        if slot == _ACTIVE:
            self.active_owner[task] = member
        else:
            self.standby_owners[slot][task] = member
        return count

    def add_task_to_least_loaded_member(self, process: int, task: Task, slot: int) -> int:
        """``ProcessState.addTaskToLeastLoadedMember``: the member heap's head takes the task."""
        members = self.member_order[process]
        if members is None:
            # memberToTaskCounts' iteration order, needed only by the first heap of the process.
            members_of = self.members_of or self.process_members()
            members = self.member_order[process] = _member_to_task_counts_order(
                members_of[process], self.members
            )
        if not members:
            return -1
        if len(members) == 1:
            return self.add_task(members[0], task, slot)
        heap = self.member_heap[process]
        task_count = self.task_count
        if heap is None or self.heap_mark[process] != task_count[process]:
            heap = KeyedJavaPriorityQueue()
            counts = self.counts
            for member in members:
                heap.offer(counts[member], member)
            self.member_heap[process] = heap
        head = heap.poll()
        if head is None:
            raise TaskAssignorException(f"No members available to assign task {task}")
        # addTask inlined: the process is known.
        task_count[process] += 1
        count = self.counts[head] + 1
        self.counts[head] = count
        if slot == _ACTIVE:
            self.active_owner[task] = head
        else:
            self.standby_owners[slot][task] = head
        heap.offer(count, head)
        self.heap_mark[process] = task_count[process]
        return count

    def process_members(self) -> list[list[int]]:
        """Per process, its members in ``addMember`` (input) order."""
        members_of: list[list[int]] = [[] for _ in self.capacity]
        for member, process in enumerate(self.process_of):
            members_of[process].append(member)
        self.members_of = members_of
        return members_of

    # --- quotas ---------------------------------------------------------------------------------

    def maybe_update_active_tasks_per_member(self, active_tasks_no: int) -> None:
        """``maybeUpdateActiveTasksPerMember``: a member reaching the quota leaves the average."""
        if active_tasks_no == self.active_tasks_per_member:
            self.total_members_with_active_task_capacity -= 1
            self.total_active_tasks -= active_tasks_no
            self.active_tasks_per_member = compute_tasks_per_member(
                self.total_active_tasks, self.total_members_with_active_task_capacity
            )

    def maybe_update_total_tasks_per_member(self, tasks_no: int) -> None:
        """``maybeUpdateTotalTasksPerMember``: the same for active plus standby tasks."""
        if tasks_no == self.total_tasks_per_member:
            self.total_members_with_task_capacity -= 1
            self.total_tasks -= tasks_no
            self.total_tasks_per_member = compute_tasks_per_member(
                self.total_tasks, self.total_members_with_task_capacity
            )

    def process_heap(self) -> KeyedJavaPriorityQueue[int]:
        """``new PriorityQueue<>(comparingDouble(ProcessState::load))`` + ``addAll(values())``."""
        if self.process_order is None:
            self.process_order = _process_order(
                self.process_ids, len(self.counts), self.trailing_call
            )
        heap: KeyedJavaPriorityQueue[int] = KeyedJavaPriorityQueue()
        task_count, capacity = self.task_count, self.capacity
        for process in self.process_order:
            heap.offer(task_count[process] / capacity[process], process)
        return heap


class _TaskNumbering:
    """The topology's tasks as integers ``0..n-1`` in (subtopology, partition) order.

    Subtopologies are in Java ``String`` order (``TopologyMetadata`` lists them sorted), so the
    natural order of the numbers is Kafka's (subtopology, partition) task order.

    Attributes
    ----------
    count:
        The number of tasks.
    subtopologies:
        Subtopology id -> (its first task number, its partition count).
    task_numbers:
        Subtopology id -> its task numbers by partition.
    by_partition:
        Every task in (partition, subtopology) order: ``assignActive``'s order.
    stateful_by_partition_desc:
        The stateful tasks in descending (partition, subtopology) order: ``assignStandby``'s.
    """

    __slots__ = (
        "count",
        "subtopologies",
        "task_numbers",
        "by_partition",
        "stateful_by_partition_desc",
        "_names",
        "_singles",
    )

    def __init__(self, state: StreamsGroupState) -> None:
        topology = state.topology
        self.subtopologies: dict[str, tuple[int, int]] = {}
        self.task_numbers: dict[str, list[Task]] = {}
        self._names: tuple[list[str], list[int]] | None = None
        self._singles: list[tuple[int]] | None = None
        stateful: list[str] = []
        first = 0
        for sub in sorted(topology, key=java_string_order):
            spec = topology[sub]
            count = spec.partitions
            self.subtopologies[sub] = (first, count)
            self.task_numbers[sub] = list(range(first, first + count))
            first += count
            if spec.stateful:
                stateful.append(sub)
        self.count = first
        numbers = list(self.task_numbers.values())
        stateful_numbers = [self.task_numbers[sub] for sub in stateful]
        if len({len(tasks) for tasks in numbers}) <= 1:
            # Equal partition counts (the common shape): interleaving the subtopologies' task
            # lists is the (partition, subtopology) order, built without a Python-level loop.
            self.by_partition = list(chain.from_iterable(zip(*numbers, strict=True)))
            stateful_numbers.reverse()
            self.stateful_by_partition_desc = list(
                chain.from_iterable(
                    zip(*(reversed(tasks) for tasks in stateful_numbers), strict=True)
                )
            )
        else:
            widest = max(len(tasks) for tasks in numbers)
            self.by_partition = [
                tasks[p] for p in range(widest) for tasks in numbers if p < len(tasks)
            ]
            stateful_numbers.reverse()
            self.stateful_by_partition_desc = [
                tasks[p]
                for p in range(widest - 1, -1, -1)
                for tasks in stateful_numbers
                if p < len(tasks)
            ]

    def names(self) -> tuple[list[str], list[int]]:
        """Per task number, its subtopology id and its partition (built on first use)."""
        if self._names is None:
            sub_of: list[str] = []
            part_of: list[int] = []
            for sub, (_, count) in self.subtopologies.items():
                sub_of.extend([sub] * count)
                part_of.extend(range(count))
            self._names = (sub_of, part_of)
        return self._names

    def singles(self) -> list[tuple[int]]:
        """Per task number, the one-partition tuple ``(partition,)``, built once and shared
        by every map that holds it (tuples are immutable)."""
        if self._singles is None:
            self._singles = list(zip(self.names()[1]))
        return self._singles

    def show(self, task: Task) -> str:
        """Kafka's ``TaskId.toString()``: ``<subtopology>_<partition>``."""
        sub_of, part_of = self.names()
        return f"{sub_of[task]}_{part_of[task]}"


def assign_streams_group(state: StreamsGroupState) -> StreamsGroupAssignment:
    """Kafka 4.4's ``StickyTaskAssignor.assign(GroupSpec, TopologyDescriber)``.

    Parameters
    ----------
    state:
        The group: members (stream threads) in ``GroupSpec.memberIds()`` order, the topology and
        ``num.standby.replicas``.

    Returns
    -------
    StreamsGroupAssignment
        One entry per member, in input order: active and standby tasks (warm-ups always empty),
        subtopologies in Java ``String`` order and partitions ascending. A member given exactly
        the tasks it owns, listed in that form (a ``dict`` of tuples), gets its own map object
        back: value objects are shared, not copied.

    Raises
    ------
    TaskAssignorException
        When an active task finds no process or member (a group without members but with tasks),
        as Kafka throws it.

    Notes
    -----
    Warm-up tasks, racks, client tags and end offsets are not read, as in Kafka 4.4.0. The
    ``HashMap`` emulation does not model tree bins (a bucket of >= 9 keys in a table of >= 64),
    which random ids never come near. Partitions are taken to be >= 0, as
    :mod:`streams_assign.formats.streams_group` ensures.
    """
    numbering = _TaskNumbering(state)
    local = _initialize(state, numbering)
    _assign_active(local, numbering)
    if local.num_standby_replicas > 0:
        _assign_standby(local, numbering)
    return _build_group_assignment(local, state, numbering)


def _initialize(state: StreamsGroupState, numbering: _TaskNumbering) -> _LocalState:
    """``initialize``: quotas, processes, previous owners and ranked standby candidates.

    Tasks a member names that the topology does not have (an unknown subtopology or a partition
    beyond its count) are left out: Kafka keeps them in its maps but never looks them up.
    :func:`_read_members` reads the members unchecked and fails on such a task; the members are
    then read again with those tasks removed (:func:`_topology_tasks_only`). Partitions given in
    another sequence than a tuple make it fail too; they are then read as tuples.
    """
    try:
        local, several = _read_or_filter(state, state.members, numbering)
    except TypeError:
        local, several = _read_or_filter(state, _as_tuples(state.members), numbering)
    _add_processes(local)
    for entries in several.values():
        # Each member adds at most one entry per task, in member order, so sorting the whole
        # (rank, -offset, member index) tuples is Java's stable sort by (rank, -offset).
        entries.sort()
    local.standby_candidates = {t: [e[2] for e in entries] for t, entries in several.items()}
    return local


def _read_or_filter(
    state: StreamsGroupState, members: Sequence[StreamsGroupMember], numbering: _TaskNumbering
) -> tuple[_LocalState, dict[Task, list[tuple[int, int, int]]]]:
    """:func:`_read_members` of ``members``, or of them without the tasks outside the topology
    when it fails on one."""
    local = _with_quotas(state, members, numbering.count)
    try:
        return local, _read_members(local, numbering)
    except (KeyError, IndexError):
        local = _with_quotas(state, _topology_tasks_only(members, numbering), numbering.count)
        return local, _read_members(local, numbering)


def _read_members(
    local: _LocalState, numbering: _TaskNumbering
) -> dict[Task, list[tuple[int, int, int]]]:
    """Each member's process, its previous actives and the standby candidates it makes.

    ``collectStandbyCandidates`` inlined: a member is a candidate of its standby tasks (rank 0)
    and of the tasks it only reports an offset sum for (rank 1). A task whose one candidate is
    of rank 0 keeps it in ``local.standby_candidate`` without its sort key, which is rebuilt
    from that member's data only when another candidate arrives; a rank-1 candidate always
    joins the ranked entries, so a single candidate names a member listing the standby task.
    Per member it also counts the tasks listed and finds maps not in the output's form
    (tasks not rising in task-number order, which is that form's order, or an empty list).

    Returns
    -------
    dict
        Per task with ranked candidates, their sort keys ``(rank, -offset sum, member index)``
        in member order.

    Raises
    ------
    KeyError, IndexError
        For a task of an unknown subtopology or a partition beyond its count (unchecked here:
        :func:`_initialize` then reads the members without them).
    TypeError
        For partitions given in another sequence than a tuple.
    """
    numbers = numbering.task_numbers
    prev_active, single = local.prev_active, local.standby_candidate
    several: dict[Task, list[tuple[int, int, int]]] = {}
    number: dict[str, int] = {}
    known = number.get
    members = len(local.members)
    process_of = local.process_of = [0] * members
    listed_active = local.listed_active = [0] * members
    listed_standby = local.listed_standby = [0] * members
    odd_active, odd_standby = local.unusable_active, local.unusable_standby
    last_new = -1
    for index, member in enumerate(local.members):
        process = known(member.process_id)
        if process is None:
            process = number[member.process_id] = len(number)
            last_new = index
        process_of[index] = process
        listed = 0
        last = -1
        for sub, partitions in member.active_tasks.items():
            tasks = numbers[sub]
            if not partitions > ():  # empty (and a TypeError if not a tuple)
                odd_active.add(index)
            listed += len(partitions)
            for p in partitions:
                task = tasks[p]
                if task <= last:
                    odd_active.add(index)
                last = task
                prev_active[task] = index  # the last member listing the task wins
        listed_active[index] = listed
        standby_tasks = member.standby_tasks
        listed = 0
        last = -1
        for sub, partitions in standby_tasks.items():
            tasks = numbers[sub]
            if not partitions > ():
                odd_standby.add(index)
            listed += len(partitions)
            for p in partitions:
                task = tasks[p]
                if task <= last:
                    odd_standby.add(index)
                last = task
                if single[task] == -1:
                    single[task] = index
                else:
                    offset = member.task_offsets.get(sub, _NO_OFFSETS).get(p, 0)
                    _add_candidate(local, several, task, sub, p, (0, -offset, index))
        listed_standby[index] = listed
        for sub, offsets in member.task_offsets.items():
            own = standby_tasks.get(sub, ())
            for p in offsets:
                if p not in own:
                    entry = (1, -offsets[p], index)
                    _add_candidate(local, several, numbers[sub][p], sub, p, entry)
    local.process_ids = list(number)
    local.trailing_call = last_new < members - 1
    return several


def _add_candidate(
    local: _LocalState,
    several: dict[Task, list[tuple[int, int, int]]],
    task: Task,
    sub: str,
    partition: int,
    entry: tuple[int, int, int],
) -> None:
    """A ranked standby candidate of ``task``; a single rank-0 candidate's key is rebuilt."""
    single = local.standby_candidate
    first = single[task]
    if first == -2:
        several[task].append(entry)
        return
    if first == -1:
        several[task] = [entry]
    else:
        several[task] = [_candidate(local.members, first, sub, partition), entry]
    single[task] = -2


#: A member's offsets of a subtopology it reported nothing for.
_NO_OFFSETS: dict[int, int] = {}


def _candidate(
    members: Sequence[StreamsGroupMember], index: int, sub: str, partition: int
) -> tuple[int, int, int]:
    """The sort key ``(0, -offset sum, member index)`` of a member listing the standby task
    (offset sum 0 if it reported none)."""
    return (0, -members[index].task_offsets.get(sub, _NO_OFFSETS).get(partition, 0), index)


def _add_processes(local: _LocalState) -> None:
    """The per-process lists: capacity (``addMember`` per member) and empty member heaps."""
    count = len(local.process_ids)
    members = Counter(local.process_of)
    local.capacity = list(map(members.__getitem__, range(count)))
    local.member_order = [None] * count
    local.member_heap = [None] * count
    local.heap_mark = [-1] * count


def _as_tuples(members: Sequence[StreamsGroupMember]) -> tuple[StreamsGroupMember, ...]:
    """The members with their active and standby partitions as tuples."""
    return tuple(
        replace(
            m,
            active_tasks={s: tuple(ps) for s, ps in m.active_tasks.items()},
            standby_tasks={s: tuple(ps) for s, ps in m.standby_tasks.items()},
        )
        for m in members
    )


def _topology_tasks_only(
    members: Sequence[StreamsGroupMember], numbering: _TaskNumbering
) -> tuple[StreamsGroupMember, ...]:
    """The members with only the tasks and offset sums of the topology's tasks."""
    known = numbering.subtopologies

    def tasks(task_set: TaskSet) -> dict[str, tuple[int, ...]]:
        kept = {
            s: tuple(p for p in ps if p < known[s][1]) for s, ps in task_set.items() if s in known
        }
        return {s: ps for s, ps in kept.items() if ps}

    def offsets(task_offsets: TaskOffsets) -> dict[str, dict[int, int]]:
        kept = {
            s: {p: o for p, o in os.items() if p < known[s][1]}
            for s, os in task_offsets.items()
            if s in known
        }
        return {s: os for s, os in kept.items() if os}

    return tuple(
        replace(
            m,
            active_tasks=tasks(m.active_tasks),
            standby_tasks=tasks(m.standby_tasks),
            task_offsets=offsets(m.task_offsets),
        )
        for m in members
    )


def _with_quotas(
    state: StreamsGroupState, members: Sequence[StreamsGroupMember], num_tasks: int
) -> _LocalState:
    """A ``LocalState`` with the task totals, the quotas per member and no task placed."""
    local = _LocalState()
    local.num_standby_replicas = standbys = state.configs.num_standby_replicas
    for spec in state.topology.values():
        local.total_tasks += spec.partitions
        local.total_active_tasks += spec.partitions
        if spec.stateful:
            local.total_tasks += spec.partitions * standbys
    num_members = len(state.members)
    local.total_members_with_active_task_capacity = num_members
    local.total_members_with_task_capacity = num_members
    local.active_tasks_per_member = compute_tasks_per_member(local.total_active_tasks, num_members)
    local.total_tasks_per_member = compute_tasks_per_member(local.total_tasks, num_members)
    local.members = members
    local.counts = [0] * num_members
    local.prev_active = [-1] * num_tasks
    local.standby_candidate = [-1] * num_tasks
    local.standby_owners = [[-1] * num_tasks for _ in range(standbys)]
    return local


def _find_prev_member_with_least_load(
    local: _LocalState, prev_members: Sequence[int], held: Sequence[int]
) -> int:
    """``findPrevMemberWithLeastLoad``: the first candidate, replaced only by one that is
    strictly lower in both process load and member task count; candidates on a process in
    ``held`` (the processes already holding the task) are skipped. -1 when none is left."""
    best = -1
    best_load = _JAVA_DOUBLE_MAX
    best_count = _JAVA_DOUBLE_MAX
    process_of, task_count, capacity = local.process_of, local.task_count, local.capacity
    counts = local.counts
    for member in prev_members:
        process = process_of[member]
        if process in held:
            continue
        load = task_count[process] / capacity[process]
        count = counts[member]
        if best == -1 or (load < best_load and count < best_count):
            best, best_load, best_count = member, load, count
    return best


def _keep_previous_owners(local: _LocalState, tasks: list[Task]) -> list[Task] | None:
    """:func:`_assign_to_previous_active_owners` all at once where no quota can refuse a task,
    or None.

    Let ``c`` be the most tasks one member previously owned and ``q`` the initial active quota
    (``ceil(A / M)``). If ``c < q``, no member reaches the quota, which stays ``q``; if ``c ==
    q`` and ``A == q * M``, a member reaching ``q`` leaves the average at ``q`` (``(A - k q) /
    (M - k) = q``) until every member has, and every task is then placed. Either way each task
    goes to its previous owner and the quota changes only with the members reaching it, in any
    order. The total quota is treated the same way.
    """
    members = len(local.counts)
    owned = Counter(local.prev_active)
    counts = list(map(owned.get, range(members), repeat(0)))
    most = max(counts, default=0)
    active_quota, total_quota = local.active_tasks_per_member, local.total_tasks_per_member
    if not (
        (
            most < active_quota
            or (most == active_quota and local.total_active_tasks == most * members)
        )
        and (most < total_quota or (most == total_quota and local.total_tasks == most * members))
    ):
        return None
    local.counts = counts
    if most > 0:
        if most == active_quota:
            reached = counts.count(most)
            local.total_members_with_active_task_capacity -= reached
            local.total_active_tasks -= most * reached
            local.active_tasks_per_member = compute_tasks_per_member(
                local.total_active_tasks, local.total_members_with_active_task_capacity
            )
        if most == total_quota:
            reached = counts.count(most)
            local.total_members_with_task_capacity -= reached
            local.total_tasks -= most * reached
            local.total_tasks_per_member = compute_tasks_per_member(
                local.total_tasks, local.total_members_with_task_capacity
            )
    if -1 not in owned:
        return []
    prev_active = local.prev_active
    return [task for task in tasks if prev_active[task] < 0]


def _assign_to_previous_active_owners(local: _LocalState, tasks: list[Task]) -> list[Task]:
    """``assignActive``'s first loop: each task to its previous active owner while that member
    has an unfulfilled active quota; returns the tasks left, in order.

    The owner of a task kept here is its previous owner (``active_owner`` starts as a copy of
    ``prev_active``), so a placement only counts; the quotas are held in locals and written
    back at the end, and process task counts are summed afterwards.
    """
    prev_active, counts = local.prev_active, local.counts
    active_quota = local.active_tasks_per_member
    total_quota = local.total_tasks_per_member
    active_left = local.total_active_tasks
    active_members = local.total_members_with_active_task_capacity
    total_left, total_members = local.total_tasks, local.total_members_with_task_capacity
    remaining = []
    for task, prev in zip(tasks, map(prev_active.__getitem__, tasks), strict=True):
        if prev < 0 or counts[prev] >= active_quota:  # hasUnfulfilledActiveTaskQuota
            remaining.append(task)
            continue
        count = counts[prev] + 1
        counts[prev] = count
        if count == active_quota:  # maybeUpdateActiveTasksPerMember
            active_members -= 1
            active_left -= count
            active_quota = compute_tasks_per_member(active_left, active_members)
        if count == total_quota:  # maybeUpdateTotalTasksPerMember
            total_members -= 1
            total_left -= count
            total_quota = compute_tasks_per_member(total_left, total_members)
    local.active_tasks_per_member = active_quota
    local.total_tasks_per_member = total_quota
    local.total_active_tasks = active_left
    local.total_members_with_active_task_capacity = active_members
    local.total_tasks = total_left
    local.total_members_with_task_capacity = total_members
    return remaining


def _assign_active(local: _LocalState, numbering: _TaskNumbering) -> None:
    """``assignActive``: previous owner, then standby candidates, then the least-loaded process."""
    local.active_owner = local.prev_active[:]
    remaining = _keep_previous_owners(local, numbering.by_partition)
    if remaining is None:
        remaining = _assign_to_previous_active_owners(local, numbering.by_partition)
    local.won = local.active_counts = local.counts[:]
    if not remaining:
        return
    local.sync_task_counts()
    counts = local.counts
    single = local.standby_candidate
    left = []
    for task in remaining:
        member = single[task]
        if member == -2:
            member = _find_prev_member_with_least_load(local, local.standby_candidates[task], ())
        if member >= 0 and counts[member] < local.active_tasks_per_member:
            count = local.add_task(member, task, _ACTIVE)
            local.maybe_update_active_tasks_per_member(count)
            local.maybe_update_total_tasks_per_member(count)
        else:
            left.append(task)

    if left:
        left.sort()
        heap = local.process_heap()
        task_count, capacity = local.task_count, local.capacity
        for task in left:
            process = heap.poll()
            if process is None:
                raise TaskAssignorException(
                    f"No process available to assign active task {numbering.show(task)}."
                )
            count = local.add_task_to_least_loaded_member(process, task, _ACTIVE)
            if count == -1:
                raise TaskAssignorException(
                    f"No member available to assign active task {numbering.show(task)}."
                )
            local.maybe_update_active_tasks_per_member(count)
            local.maybe_update_total_tasks_per_member(count)
            heap.offer(task_count[process] / capacity[process], process)
    local.active_counts = local.counts[:]


def _assign_standby(local: _LocalState, numbering: _TaskNumbering) -> None:
    """``assignStandby``: previous active owner, then standby candidates; the rest deferred to
    the least-loaded processes."""
    if local.num_standby_replicas == 1:
        deferred = _assign_one_standby_replica(local, numbering)
    else:
        deferred = _assign_standby_replicas(local, numbering)
    if not deferred:
        return  # the process heap below is only read
    replicas = local.num_standby_replicas
    deferred.sort(reverse=True)
    local.sync_task_counts()
    heap = local.process_heap()
    for task, remaining in deferred:
        for i in range(remaining):
            slot = replicas - remaining + i
            if not _assign_standby_to_member_with_least_load(local, heap, task, slot):
                log.warning(
                    "Unable to assign %d of %d standby tasks for task [%s]. There is not enough "
                    "available capacity. You should increase the number of threads and/or "
                    "application instances to maintain the requested number of standby replicas.",
                    replicas - i,
                    replicas,
                    numbering.show(task),
                )
                break


def _assign_one_standby_replica(
    local: _LocalState, numbering: _TaskNumbering
) -> list[tuple[Task, int]]:
    """``assignStandby``'s first loop for ``num.standby.replicas`` 1; returns the deferred
    (task, replicas left).

    A process holds a stateful task here only as its active task, so ``hasTask`` is a
    comparison with the active owner's process. The placements (``addTask``) are inlined with
    the total quota in locals, written back at the end.
    """
    prev_active, owner = local.prev_active, local.active_owner
    single, process_of = local.standby_candidate, local.process_of
    # Loads are read only for tasks with ranked candidates; without any, only members count.
    counting = bool(local.standby_candidates)
    if counting:
        local.sync_task_counts()
    else:
        local.task_count_stale = True
    counts, task_count = local.counts, local.task_count
    replica = local.standby_owners[0]
    total_quota = local.total_tasks_per_member
    total_left, total_members = local.total_tasks, local.total_members_with_task_capacity
    dirty = local.standby_dirty
    deferred: list[tuple[Task, int]] = []
    for task in numbering.stateful_by_partition_desc:
        active = owner[task]
        member = prev_active[task]
        if (
            member == active  # the previous owner kept the task: its process holds it
            or member < 0
            or process_of[member] == process_of[active]
            or counts[member] >= total_quota
        ):
            held = process_of[active]
            member = single[task]  # findPrevMemberWithLeastLoad
            if member >= 0:
                if process_of[member] == held:
                    member = -1
            elif member == -2:
                member = _find_prev_member_with_least_load(
                    local, local.standby_candidates[task], (held,)
                )
                if member >= 0:
                    dirty.add(member)
            if member < 0 or counts[member] >= total_quota:  # hasUnfulfilledTaskQuota
                deferred.append((task, 1))
                continue
        else:
            dirty.add(member)
        if counting:
            task_count[process_of[member]] += 1
        count = counts[member] + 1
        counts[member] = count
        replica[task] = member
        if count == total_quota:  # maybeUpdateTotalTasksPerMember
            total_members -= 1
            total_left -= count
            total_quota = compute_tasks_per_member(total_left, total_members)
    local.total_tasks_per_member = total_quota
    local.total_tasks, local.total_members_with_task_capacity = total_left, total_members
    return deferred


def _assign_standby_replicas(
    local: _LocalState, numbering: _TaskNumbering
) -> list[tuple[Task, int]]:
    """``assignStandby``'s first loop for two or more replicas; returns the deferred (task,
    replicas left). The processes holding the task are its active owner's and those given a
    replica so far."""
    replicas = local.num_standby_replicas
    prev_active, owner = local.prev_active, local.active_owner
    single, process_of, counts = local.standby_candidate, local.process_of, local.counts
    local.sync_task_counts()
    deferred: list[tuple[Task, int]] = []
    for task in numbering.stateful_by_partition_desc:
        held = [process_of[owner[task]]]
        for slot in range(replicas):
            member = prev_active[task]
            if (
                member < 0
                or process_of[member] in held
                or counts[member] >= (local.total_tasks_per_member)
            ):
                member = single[task]  # findPrevMemberWithLeastLoad
                if member >= 0:
                    if process_of[member] in held:
                        member = -1
                elif member == -2:
                    member = _find_prev_member_with_least_load(
                        local, local.standby_candidates[task], held
                    )
                    if member >= 0:
                        local.standby_dirty.add(member)
                if member < 0 or counts[member] >= local.total_tasks_per_member:
                    deferred.append((task, replicas - slot))
                    break
            else:
                local.standby_dirty.add(member)
            local.maybe_update_total_tasks_per_member(local.add_task(member, task, slot))
            held.append(process_of[member])
    return deferred


def _assign_standby_to_member_with_least_load(
    local: _LocalState, heap: KeyedJavaPriorityQueue[int], task: Task, slot: int
) -> bool:
    """``assignStandbyToMemberWithLeastLoad``: poll processes until one lacks the task, give it
    to that process's least-loaded member, then offer the polled processes back, last first
    (Kafka recurses)."""
    held = local.holders(task)
    polled = []
    assigned = False
    while True:
        process = heap.poll()
        if process is None:
            break
        polled.append(process)
        if process not in held:
            count = local.add_task_to_least_loaded_member(process, task, slot)
            if count != -1:
                assigned = True
                local.standby_dirty.add(local.standby_owners[slot][task])
                local.maybe_update_total_tasks_per_member(count)
            break
        if not len(heap):
            break
    task_count, capacity = local.task_count, local.capacity
    for process in reversed(polled):
        heap.offer(task_count[process] / capacity[process], process)
    return assigned


def _build_group_assignment(
    local: _LocalState, state: StreamsGroupState, numbering: _TaskNumbering
) -> StreamsGroupAssignment:
    """``buildGroupAssignment``: one ``MemberAssignment`` per member, by subtopology
    (subtopologies in Java ``String`` order, partitions ascending).

    A member given exactly the tasks its own map lists, when that map is already in this form,
    gets the map itself; the other maps are built from the per-task owners.
    """
    active_maps = list(map(_ACTIVE_TASKS, local.members))
    standby_maps = list(map(_STANDBY_TASKS, local.members))
    # Every active task a member keeps in the first loop is one it listed, so it got exactly
    # its listed tasks when it kept as many as it listed and was given no other.
    same_active = _same(
        (local.won, local.active_counts, local.listed_active),
        local.unusable_active | _not_dicts(active_maps),
    )
    # A standby task given as the single candidate of a task is one the member lists.
    given = list(map(operator.sub, local.counts, local.active_counts))
    same_standby = _same(
        (given, local.listed_standby),
        local.unusable_standby | local.standby_dirty | _not_dicts(standby_maps),
    )
    empty: dict[str, tuple[int, ...]] = {}
    if not all(same_active):
        _rebuild(active_maps, same_active, [local.active_owner], numbering, empty)
    if not all(same_standby):
        _rebuild(standby_maps, same_standby, local.standby_owners, numbering, empty)
    # tuple.__new__ builds the named tuples without their Python-level __new__.
    targets = map(
        tuple.__new__,
        repeat(StreamsGroupMemberAssignment),
        zip(active_maps, standby_maps, repeat(empty)),
    )
    return StreamsGroupAssignment(
        members=dict(zip(map(_MEMBER_ID, state.members), targets, strict=True))
    )


_ACTIVE_TASKS = attrgetter("active_tasks")
_STANDBY_TASKS = attrgetter("standby_tasks")
_MEMBER_ID = attrgetter("member_id")


def _same(counts: tuple[list[int], ...], unusable: set[int]) -> list[bool]:
    """Per member: all ``counts`` lists agree on it and it is not ``unusable``."""
    first, *others = counts
    same = [True] * len(first)
    for other in others:
        if other != first:
            same = list(map(operator.and_, same, map(operator.eq, first, other)))
    for member in unusable:
        same[member] = False
    return same


def _not_dicts(maps: list[TaskSet]) -> set[int]:
    """The members whose map is not a plain ``dict`` (never handed back as a target)."""
    if all(map(is_, map(type, maps), repeat(dict))):
        return set()
    return {m for m, tasks in enumerate(maps) if type(tasks) is not dict}


def _rebuild(
    maps: list[TaskSet],
    same: list[bool],
    owner_lists: list[list[int]],
    numbering: _TaskNumbering,
    empty: dict[str, tuple[int, ...]],
) -> None:
    """The compacted task map of each member not ``same``, from per-task owner lists (-1 for
    none), in place of its entry of ``maps``."""
    rebuilt = list(compress(range(len(same)), map(not_, same)))
    tasks_of: list[list[Task]] = [[] for _ in same]
    sub_of, part_of = numbering.names()
    single: Sequence[tuple[int]] | dict[Task, tuple[int]]
    if len(rebuilt) * 8 > len(same):
        tasks_of.append([])  # an owner of -1 reads the last entry, which is left unread
        for owners in owner_lists:
            for task, member in enumerate(owners):
                tasks_of[member].append(task)
        single = numbering.singles()
    else:
        # A few members: only their tasks are visited, and only their tuples built.
        wanted = list(map(not_, same))
        wanted.append(False)
        single = {}
        for owners in owner_lists:
            for task in compress(range(len(owners)), map(wanted.__getitem__, owners)):
                tasks_of[owners[task]].append(task)
                single[task] = (part_of[task],)
    for member in rebuilt:
        tasks = tasks_of[member]
        maps[member] = _compact(tasks, sub_of, part_of, single) if tasks else empty


def _member_to_task_counts_order(
    member_ids: list[int], members: Sequence[StreamsGroupMember]
) -> list[int]:
    """Members in the iteration order of ``memberToTaskCounts`` (``new HashMap<>()`` + ``put``).

    With ``put`` and no removal, Java's order is the bucket index under the final capacity (16,
    doubled while the size exceeds 3/4 of it), ties in insertion order. A bucket can only reach
    the 9 keys that make ``treeifyBin`` grow a small table when 9 or more members share the
    process; those take the full emulation.
    """
    if len(member_ids) == 1:
        return [member_ids[0]]
    if len(member_ids) >= 9:
        table: JavaHashMap[str, int] = JavaHashMap(java_string_hash_code)
        for index in member_ids:
            table.put(members[index].member_id, index)
        return [table[m] for m in table]
    mask = 15
    keyed = [
        (spread(java_string_hash_unsigned(members[index].member_id)) & mask, i)
        for i, index in enumerate(member_ids)
    ]
    keyed.sort()
    return [member_ids[i] for _, i in keyed]


def _compact(
    tasks: list[Task],
    sub_of: list[str],
    part_of: list[int],
    single: Sequence[tuple[int]] | dict[Task, tuple[int]],
) -> dict[str, tuple[int, ...]]:
    """``toCompactedTaskIds``: subtopology -> sorted partitions (task numbers sort that way).

    Up to three tasks of distinct subtopologies (most members of a large group) are written as
    one dict display of the tasks' shared one-partition tuples.
    """
    size = len(tasks)
    if size == 1:
        task = tasks[0]
        return {sub_of[task]: single[task]}
    if size == 2:
        first, second = tasks
        if second < first:
            first, second = second, first
        sub, other = sub_of[first], sub_of[second]
        if sub == other:
            return {sub: (part_of[first], part_of[second])}
        return {sub: single[first], other: single[second]}
    tasks.sort()
    if size == 3:
        first, second, third = tasks
        three: dict[str, tuple[int, ...]] = {
            sub_of[first]: single[first],
            sub_of[second]: single[second],
        }
        three[sub_of[third]] = single[third]
        if len(three) == 3:
            return three
    if size <= _SHORT_TASK_LIST:
        # Few tasks, mostly one per subtopology: grow tuples in place (no list per group).
        short: dict[str, tuple[int, ...]] = {}
        last = None
        for task in tasks:
            sub = sub_of[task]
            if sub == last:
                short[sub] += (part_of[task],)
            else:
                short[sub] = single[task]
                last = sub
        return short
    grouped: dict[str, list[int]] = {}
    for task in tasks:
        sub = sub_of[task]
        found = grouped.get(sub)
        if found is None:
            grouped[sub] = [part_of[task]]
        else:
            found.append(part_of[task])
    return {s: tuple(ps) for s, ps in grouped.items()}


#: Up to this many tasks a member's compacted ids are built by growing tuples (the common case
#: in large groups); longer lists group into lists first (growing tuples would be quadratic).
_SHORT_TASK_LIST = 16
