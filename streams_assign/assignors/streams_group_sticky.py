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
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import chain

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
    """

    __slots__ = ("table", "size", "threshold", "index", "treeified")

    def __init__(self, initial_capacity: int) -> None:
        # Buckets are created by their first key (None until then): a table sized for 1000
        # members holds 1024 buckets, most of them empty.
        self.table: list[list[tuple[int, str]] | None] = []
        self.size = 0
        self.threshold = table_size_for(initial_capacity)
        self.index: dict[str, ProcessState] = {}
        self.treeified = False

    def _resize(self) -> None:
        old = self.table
        old_cap = len(old)
        new_cap = old_cap << 1 if old_cap else self.threshold
        self.threshold = int(new_cap * 0.75)
        table: list[list[tuple[int, str]] | None] = [None] * new_cap
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

    def compute_if_absent(self, process_id: str) -> ProcessState:
        """``computeIfAbsent(processId, ProcessState::new)``."""
        if self.size > self.threshold or not self.table:
            self._resize()
        process = self.index.get(process_id)
        if process is not None:
            return process
        process = ProcessState(process_id)
        h = spread(java_string_hash_unsigned(process_id))
        i = h & (len(self.table) - 1)
        bucket = self.table[i]
        if bucket is None:
            bin_count = 0
            self.table[i] = [(h, process_id)]
        else:
            bin_count = len(bucket)
            bucket.insert(0, (h, process_id))
        self.index[process_id] = process
        if bin_count >= 7:
            if len(self.table) < 64:
                self._resize()
            else:
                self.treeified = True
        self.size += 1
        return process

    def values(self) -> list[ProcessState]:
        """``values()`` in iteration order."""
        index = self.index
        return [index[key] for bucket in self.table if bucket for _, key in bucket]


class ProcessState:
    """Kafka's ``ProcessState``: one Streams process (its members) and what it was given.

    Its ``load`` (``task_count / capacity`` as a Java ``double``) is computed where it is read,
    not stored on every placement.

    Attributes
    ----------
    process_id:
        The process id.
    member_ids:
        Member indexes in ``addMember`` order.
    members:
        Member indexes in ``memberToTaskCounts`` (``HashMap``) iteration order; computed when
        the process's member heap is first built (empty until then).
    capacity:
        Number of members (stream threads); set once every member is added.
    task_count:
        Active plus standby tasks assigned so far.
    tasks:
        Task numbers the process holds, active or standby (``hasTask``).
    members_by_load:
        Kafka's lazily built member heap, or None.
    heap_count:
        ``task_count`` when ``members_by_load`` was last in step with the member counts. Kafka
        drops the heap on each direct ``addTask``; a direct placement here only raises
        ``task_count``, so a heap whose ``heap_count`` differs is the dropped one.
    """

    __slots__ = (
        "process_id",
        "member_ids",
        "members",
        "capacity",
        "task_count",
        "tasks",
        "members_by_load",
        "heap_count",
    )

    def __init__(self, process_id: str) -> None:
        self.process_id = process_id
        self.member_ids: list[int] = []
        self.members: Sequence[int] = ()
        self.capacity = 0
        self.task_count = 0
        self.tasks: set[Task] = set()
        self.members_by_load: KeyedJavaPriorityQueue[int] | None = None
        self.heap_count = -1


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
    """Kafka's ``StickyTaskAssignor.LocalState``: the quotas and per-member counts.

    Per-task maps are lists indexed by task number: ``active_task_to_prev_member`` holds the
    previous owner's member index or -1; ``standby_candidate`` the single standby candidate's
    member index, -1 for none, or -2 when the task has several, ranked in
    ``standby_candidates``.
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
        "process_of",
        "counts",
        "active",
        "standby",
        "active_task_to_prev_member",
        "standby_candidate",
        "standby_candidates",
        "process_id_to_state",
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
        self.process_of: list[ProcessState] = []
        self.counts: list[int] = []
        self.active: list[list[Task]] = []
        self.standby: list[list[Task]] = []
        self.active_task_to_prev_member: list[int] = []
        self.standby_candidate: list[int] = []
        self.standby_candidates: dict[Task, list[int]] = {}
        self.process_id_to_state = _ProcessIdToState(0)

    def standby_candidates_of(self, task: Task) -> list[int]:
        """``standbyTaskToPrevMember.get(task)``: the ranked candidates (maybe none)."""
        single = self.standby_candidate[task]
        if single >= 0:
            return [single]
        return self.standby_candidates[task] if single == -2 else []

    # --- ProcessState.addTask / addTaskToLeastLoadedMember (per-member state lives here) --------

    def _add_task_internal(
        self, process: ProcessState, member: int, task: Task, active: bool
    ) -> int:
        process.task_count += 1
        process.tasks.add(task)
        (self.active if active else self.standby)[member].append(task)
        count = self.counts[member] + 1
        self.counts[member] = count
        return count

    def place(self, member: int, task: Task, active: bool) -> None:
        """A direct placement (``addTask``) followed by the quota updates Kafka makes after it.

        For an active task ``maybeUpdateActiveTasksPerMember`` then
        ``maybeUpdateTotalTasksPerMember``; for a standby task only the latter.
        """
        process = self.process_of[member]
        process.task_count += 1
        process.tasks.add(task)
        count = self.counts[member] + 1
        self.counts[member] = count
        if active:
            self.active[member].append(task)
            self.maybe_update_active_tasks_per_member(count)
        else:
            self.standby[member].append(task)
        self.maybe_update_total_tasks_per_member(count)

    def add_task_to_least_loaded_member(
        self, process: ProcessState, task: Task, active: bool
    ) -> int:
        """``ProcessState.addTaskToLeastLoadedMember``: the member heap's head takes the task."""
        members = process.members
        if not members:
            if not process.member_ids:
                return -1
            # memberToTaskCounts' iteration order, needed only by the first heap of the process.
            members = process.members = _member_to_task_counts_order(
                process.member_ids, self.members
            )
        if len(members) == 1:
            return self._add_task_internal(process, members[0], task, active)
        heap = process.members_by_load
        if heap is None or process.heap_count != process.task_count:
            heap = KeyedJavaPriorityQueue()
            counts = self.counts
            for member in members:
                heap.offer(counts[member], member)
            process.members_by_load = heap
        head = heap.poll()
        if head is None:
            raise TaskAssignorException(f"No members available to assign task {task}")
        count = self._add_task_internal(process, head, task, active)
        heap.offer(count, head)
        process.heap_count = process.task_count
        return count

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

    def process_heap(self) -> KeyedJavaPriorityQueue[ProcessState]:
        """``new PriorityQueue<>(comparingDouble(ProcessState::load))`` + ``addAll(values())``."""
        heap: KeyedJavaPriorityQueue[ProcessState] = KeyedJavaPriorityQueue()
        for process in self.process_id_to_state.values():
            heap.offer(process.task_count / process.capacity, process)
        return heap


class _TaskNumbering:
    """The topology's tasks as integers ``0..n-1`` in (subtopology, partition) order.

    Subtopologies are in Java ``String`` order (``TopologyMetadata`` lists them sorted), so the
    natural order of the numbers is Kafka's (subtopology, partition) task order.

    Attributes
    ----------
    subtopologies:
        Subtopology id -> (its first task number, its partition count).
    task_numbers:
        Subtopology id -> its task numbers by partition.
    sub_of, part_of:
        Per task number, its subtopology id and partition.
    by_partition:
        Every task in (partition, subtopology) order: ``assignActive``'s order.
    stateful_by_partition_desc:
        The stateful tasks in descending (partition, subtopology) order: ``assignStandby``'s.
    """

    __slots__ = (
        "subtopologies",
        "task_numbers",
        "sub_of",
        "part_of",
        "by_partition",
        "stateful_by_partition_desc",
    )

    def __init__(self, state: StreamsGroupState) -> None:
        topology = state.topology
        self.subtopologies: dict[str, tuple[int, int]] = {}
        self.task_numbers: dict[str, list[Task]] = {}
        self.sub_of: list[str] = []
        self.part_of: list[int] = []
        stateful: list[str] = []
        for sub in sorted(topology, key=java_string_order):
            spec = topology[sub]
            count = spec.partitions
            first = len(self.sub_of)
            self.subtopologies[sub] = (first, count)
            self.task_numbers[sub] = list(range(first, first + count))
            self.sub_of.extend([sub] * count)
            self.part_of.extend(range(count))
            if spec.stateful:
                stateful.append(sub)
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

    def show(self, task: Task) -> str:
        """Kafka's ``TaskId.toString()``: ``<subtopology>_<partition>``."""
        return f"{self.sub_of[task]}_{self.part_of[task]}"


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
        One entry per member, in input order: active and standby tasks (warm-ups always empty).

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
    :func:`_add_members` reads the members unchecked and fails on such a task; the members are
    then read again with those tasks removed (:func:`_topology_tasks_only`).
    """
    local = _with_quotas(state, state.members, len(numbering.sub_of))
    try:
        several = _add_members(local, numbering)
    except (KeyError, IndexError):
        local = _with_quotas(state, _topology_tasks_only(state, numbering), len(numbering.sub_of))
        several = _add_members(local, numbering)
    for process in local.process_id_to_state.index.values():
        process.capacity = len(process.member_ids)
    for entries in several.values():
        # Each member adds at most one entry per task, in member order, so sorting the whole
        # (rank, -offset, member index) tuples is Java's stable sort by (rank, -offset).
        entries.sort()
    local.standby_candidates = {t: [e[2] for e in entries] for t, entries in several.items()}
    return local


def _topology_tasks_only(
    state: StreamsGroupState, numbering: _TaskNumbering
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
        for m in state.members
    )


def _with_quotas(
    state: StreamsGroupState, members: Sequence[StreamsGroupMember], num_tasks: int
) -> _LocalState:
    """A ``LocalState`` with the task totals, the quotas per member and empty member lists."""
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
    local.process_id_to_state = _ProcessIdToState(num_members)
    local.members = members
    local.counts = [0] * num_members
    local.active = [[] for _ in range(num_members)]
    local.standby = [[] for _ in range(num_members)]
    local.active_task_to_prev_member = [-1] * num_tasks
    local.standby_candidate = [-1] * num_tasks
    return local


def _add_members(
    local: _LocalState, numbering: _TaskNumbering
) -> dict[Task, list[tuple[int, int, int]]]:
    """Each member's process, its previous actives and the standby candidates it makes.

    ``collectStandbyCandidates`` and ``rankStandbyCandidates`` inlined: a task's candidates are
    ranked by (previous standby first, highest offset sum), stably in member order. Most tasks
    have one, kept in ``local.standby_candidate`` without its sort key, which is rebuilt from
    that member's data only when a second candidate arrives.

    Returns
    -------
    dict
        Per task with several standby candidates, their sort keys ``(rank, -offset sum, member
        index)`` in member order.

    Raises
    ------
    KeyError, IndexError
        For a task of an unknown subtopology or a partition beyond its count (unchecked here:
        :func:`_initialize` then reads the members without them).
    """
    processes = local.process_id_to_state
    known = processes.index
    prev_active = local.active_task_to_prev_member
    single = local.standby_candidate
    add_process = local.process_of.append
    several: dict[Task, list[tuple[int, int, int]]] = {}
    numbers = numbering.task_numbers
    resize_due = True
    for index, member in enumerate(local.members):
        # computeIfAbsent; the call is skipped only when it would neither resize nor insert.
        process_id = member.process_id
        if resize_due or process_id not in known:
            process = processes.compute_if_absent(process_id)
            resize_due = processes.size > processes.threshold
        else:
            process = known[process_id]
        process.member_ids.append(index)  # addMember (the load stays 0.0 until a task is placed)
        add_process(process)
        for sub, partitions in member.active_tasks.items():
            tasks = numbers[sub]
            for p in partitions:
                prev_active[tasks[p]] = index
        standby_tasks = member.standby_tasks
        for sub, partitions in standby_tasks.items():
            tasks = numbers[sub]
            for p in partitions:
                task = tasks[p]
                if single[task] == -1:
                    single[task] = index
                else:
                    offset = member.task_offsets.get(sub, _NO_OFFSETS).get(p, 0)
                    _add_candidate(local, several, task, sub, p, (0, -offset, index))
        for sub, offsets in member.task_offsets.items():
            tasks = numbers[sub]
            own = standby_tasks.get(sub, ())
            for p in offsets:
                if p not in own:
                    task = tasks[p]
                    if single[task] == -1:
                        single[task] = index
                    else:
                        _add_candidate(local, several, task, sub, p, (1, -offsets[p], index))
    return several


def _add_candidate(
    local: _LocalState,
    several: dict[Task, list[tuple[int, int, int]]],
    task: Task,
    sub: str,
    partition: int,
    entry: tuple[int, int, int],
) -> None:
    """A second or later standby candidate of ``task``: the first one's sort key is rebuilt."""
    single = local.standby_candidate
    first = single[task]
    if first >= 0:
        several[task] = [_candidate(local.members, first, sub, partition), entry]
        single[task] = -2
    else:
        several[task].append(entry)


#: A member's offsets of a subtopology it reported nothing for.
_NO_OFFSETS: dict[int, int] = {}


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


def _candidate(
    members: Sequence[StreamsGroupMember], index: int, sub: str, partition: int
) -> tuple[int, int, int]:
    """A standby candidate's sort key ``(rank, -offset sum, member index)``: rank 0 for a
    previous standby (offset sum 0 if it reported none), 1 for a member that only reported an
    offset sum."""
    member = members[index]
    rank = 0 if partition in member.standby_tasks.get(sub, ()) else 1
    return (rank, -member.task_offsets.get(sub, _NO_OFFSETS).get(partition, 0), index)


def _find_prev_member_with_least_load(
    local: _LocalState, prev_members: Sequence[int], task: Task | None
) -> int:
    """``findPrevMemberWithLeastLoad``: the first candidate, replaced only by one that is
    strictly lower in both process load and member task count; with ``task``, candidates on a
    process already holding it are skipped. -1 when none is left."""
    best = -1
    best_load = _JAVA_DOUBLE_MAX
    best_count = _JAVA_DOUBLE_MAX
    process_of = local.process_of
    counts = local.counts
    for member in prev_members:
        process = process_of[member]
        if task is not None and task in process.tasks:
            continue
        load = process.task_count / process.capacity
        count = counts[member]
        if best == -1 or (load < best_load and count < best_count):
            best, best_load, best_count = member, load, count
    return best


def _assign_to_previous_active_owners(local: _LocalState, tasks: list[Task]) -> list[Task]:
    """``assignActive``'s first loop: each task to its previous active owner while that member
    has an unfulfilled active quota; returns the tasks left, in order.

    :meth:`_LocalState.place` inlined with the quotas held in locals (the loop that places most
    tasks in a steady group), written back at the end.
    """
    prev_active = local.active_task_to_prev_member
    counts, process_of, active = local.counts, local.process_of, local.active
    active_quota = local.active_tasks_per_member
    total_quota = local.total_tasks_per_member
    active_left = local.total_active_tasks
    active_members = local.total_members_with_active_task_capacity
    total_left, total_members = local.total_tasks, local.total_members_with_task_capacity
    remaining = []
    for task in tasks:
        prev = prev_active[task]
        if prev < 0 or counts[prev] >= active_quota:  # hasUnfulfilledActiveTaskQuota
            remaining.append(task)
            continue
        process = process_of[prev]
        process.task_count += 1
        process.tasks.add(task)
        count = counts[prev] + 1
        counts[prev] = count
        active[prev].append(task)
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
    remaining = _assign_to_previous_active_owners(local, numbering.by_partition)
    counts = local.counts
    single = local.standby_candidate
    left = []
    for task in remaining:
        member = single[task]
        if member == -2:
            member = _find_prev_member_with_least_load(local, local.standby_candidates[task], None)
        if member >= 0 and counts[member] < local.active_tasks_per_member:
            local.place(member, task, True)
        else:
            left.append(task)

    if not left:
        return  # the process heap below is only read
    left.sort()
    heap = local.process_heap()
    for task in left:
        process = heap.poll()
        if process is None:
            raise TaskAssignorException(
                f"No process available to assign active task {numbering.show(task)}."
            )
        count = local.add_task_to_least_loaded_member(process, task, True)
        if count == -1:
            raise TaskAssignorException(
                f"No member available to assign active task {numbering.show(task)}."
            )
        local.maybe_update_active_tasks_per_member(count)
        local.maybe_update_total_tasks_per_member(count)
        heap.offer(process.task_count / process.capacity, process)


def _assign_standby(local: _LocalState, numbering: _TaskNumbering) -> None:
    """``assignStandby``: previous active owner, then standby candidates; the rest deferred to
    the least-loaded processes."""
    replicas = local.num_standby_replicas
    prev_active = local.active_task_to_prev_member
    single = local.standby_candidate
    process_of = local.process_of
    counts = local.counts
    standby = local.standby
    # The placements (LocalState.place for a standby) are inlined with the total quota in
    # locals, written back before the deferred tasks are dealt.
    total_quota = local.total_tasks_per_member
    total_left, total_members = local.total_tasks, local.total_members_with_task_capacity
    deferred: list[tuple[Task, int]] = []
    for task in numbering.stateful_by_partition_desc:
        i = 0  # the replica (a while loop: most groups have one, and a range costs more)
        while i < replicas:
            member = prev_active[task]
            if (
                member < 0
                or task in process_of[member].tasks
                or counts[member] >= total_quota  # hasUnfulfilledTaskQuota
            ):
                member = single[task]  # findPrevMemberWithLeastLoad
                if member >= 0:
                    if task in process_of[member].tasks:
                        member = -1
                elif member == -2:
                    member = _find_prev_member_with_least_load(
                        local, local.standby_candidates[task], task
                    )
                if member < 0 or counts[member] >= total_quota:
                    deferred.append((task, replicas - i))
                    break
            process = process_of[member]
            process.task_count += 1
            process.tasks.add(task)
            count = counts[member] + 1
            counts[member] = count
            standby[member].append(task)
            if count == total_quota:  # maybeUpdateTotalTasksPerMember
                total_members -= 1
                total_left -= count
                total_quota = compute_tasks_per_member(total_left, total_members)
            i += 1
    local.total_tasks_per_member = total_quota
    local.total_tasks, local.total_members_with_task_capacity = total_left, total_members

    if not deferred:
        return  # the process heap below is only read
    deferred.sort(reverse=True)
    heap = local.process_heap()
    for task, remaining in deferred:
        for i in range(remaining):
            if not _assign_standby_to_member_with_least_load(local, heap, task):
                log.warning(
                    "Unable to assign %d of %d standby tasks for task [%s]. There is not enough "
                    "available capacity. You should increase the number of threads and/or "
                    "application instances to maintain the requested number of standby replicas.",
                    replicas - i,
                    replicas,
                    numbering.show(task),
                )
                break


def _assign_standby_to_member_with_least_load(
    local: _LocalState, heap: KeyedJavaPriorityQueue[ProcessState], task: Task
) -> bool:
    """``assignStandbyToMemberWithLeastLoad``: poll processes until one lacks the task, give it
    to that process's least-loaded member, then offer the polled processes back, last first
    (Kafka recurses)."""
    polled = []
    assigned = False
    while True:
        process = heap.poll()
        if process is None:
            break
        polled.append(process)
        if task not in process.tasks:
            count = local.add_task_to_least_loaded_member(process, task, False)
            if count != -1:
                assigned = True
                local.maybe_update_total_tasks_per_member(count)
            break
        if not len(heap):
            break
    for process in reversed(polled):
        heap.offer(process.task_count / process.capacity, process)
    return assigned


def _build_group_assignment(
    local: _LocalState, state: StreamsGroupState, numbering: _TaskNumbering
) -> StreamsGroupAssignment:
    """``buildGroupAssignment``: one ``MemberAssignment`` per member, by subtopology
    (subtopologies in Java ``String`` order, partitions ascending)."""
    members = {}
    empty: dict[str, tuple[int, ...]] = {}
    sub_of, part_of = numbering.sub_of, numbering.part_of
    # Each task's one-partition tuple, built once and shared (tuples are immutable).
    single = list(zip(part_of))
    # tuple.__new__ builds the named tuple without its Python-level __new__ (one per member).
    new, kind = tuple.__new__, StreamsGroupMemberAssignment
    for member, active, standby in zip(state.members, local.active, local.standby, strict=True):
        members[member.member_id] = new(
            kind,
            (
                _compact(active, sub_of, part_of, single) if active else empty,
                _compact(standby, sub_of, part_of, single) if standby else empty,
                empty,
            ),
        )
    return StreamsGroupAssignment(members=members)


def _compact(
    tasks: list[Task], sub_of: list[str], part_of: list[int], single: list[tuple[int]]
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
