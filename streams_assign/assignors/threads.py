"""Tasks to stream threads within each client, and cooperative revocation.

After the task assignor has decided what each client (process) runs, Kafka's group leader
spreads every client's tasks over that client's consumers (one per stream thread) in
``StreamsPartitionAssignor.computeNewAssignment``:

1. :func:`assign_tasks_to_threads` three times per client, with a shared per-thread load:
   stateful actives, then standbys, then stateless actives. Stateful tasks go back to the
   thread that reported them (by lag) while that keeps the threads balanced; the rest are
   dealt round-robin in TaskId order; a remainder is dealt in ``java.util.PriorityQueue``
   array order (reference 5.2).
2. ``addClientAssignments`` (reference 5.3): under the COOPERATIVE protocol a task whose
   partition another consumer still owns is withheld ("revoking") until the owner has
   released it in a follow-up rebalance, which is requested immediately; if the client had a
   standby of the task, the consumer keeps it as a temporary standby meanwhile. A probing
   rebalance deadline is encoded on one consumer of the leader's client.

Step 2 runs only when the input lists ``owned_partitions`` for some consumer (it then needs
the top-level ``task_partitions``, and ``leader``/``now_ms`` for the probing deadline).

Source: ``org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor`` and
``ClientState`` at Kafka 4.0.0-SNAPSHOT (commit 1eb7644349cb).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from streams_assign._java.hash_order import task_hash_set
from streams_assign._java.priority import JavaPriorityQueue
from streams_assign.errors import InvalidScenarioError, TaskAssignmentError
from streams_assign.model import (
    LATEST_OFFSET,
    Assignment,
    ClientAssignment,
    ClientState,
    ClusterState,
    ConsumerState,
    TaskId,
    TopicPartition,
)

log = logging.getLogger(__name__)


def java_string_key(text: str) -> bytes:
    """Sort key ordering strings as ``java.lang.String.compareTo`` does (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def _task_key(task: TaskId) -> tuple[str, int, int]:
    return task.sort_key


class _TaskQueue(JavaPriorityQueue[TaskId]):
    """``new PriorityQueue<TaskId>(collection)``: the collection's array, then ``heapify``."""

    def __init__(self, tasks: Iterable[TaskId]) -> None:
        super().__init__(key=_task_key)
        self._queue = list(tasks)
        for k in range((len(self._queue) >> 1) - 1, -1, -1):
            self._sift_down(k, self._queue[k])


def assign_tasks_to_threads(
    tasks_to_assign: Sequence[TaskId],
    is_stateful: bool,
    consumers: Sequence[str],
    prev_tasks_by_lag: Callable[[str], Iterable[TaskId]],
    thread_load: dict[str, int],
) -> dict[str, list[TaskId]]:
    """Spread one group of a client's tasks over its consumers (Kafka's ``assignTasksToThreads``).

    Parameters
    ----------
    tasks_to_assign:
        The tasks, in the iteration order of the Java collection Kafka passes (it fixes the
        initial heap layout of the ``PriorityQueue``, which the last loop iterates).
    is_stateful:
        Whether previous owners are honoured (stateful actives and standbys) or not (stateless).
    consumers:
        The client's member ids in ``String`` order.
    prev_tasks_by_lag:
        Per consumer, its previously reported stateful tasks by ``(lag, TaskId)``
        (``ClientState.prevTasksByLag``).
    thread_load:
        Tasks already given to each consumer by earlier calls; updated in place.

    Returns
    -------
    dict
        Per consumer, its tasks in the order assigned.

    Raises
    ------
    TaskAssignmentError
        Where Kafka throws (ran out of tasks while filling, or no consumer left for the
        remainder).

    Notes
    -----
    Reference 5.2. Every consumer is first filled to ``floor(total / consumers)`` tasks
    (counting ``thread_load``), from its own previous tasks when stateful, then round-robin with
    the smallest unassigned TaskId. The remainder goes to consumers still at the minimum:
    first to a previous owner that was skipped for being full, then in the heap's array order.
    """
    assignment: dict[str, list[TaskId]] = {consumer: [] for consumer in consumers}
    total = len(tasks_to_assign) + sum(thread_load.values())
    min_per_thread = total // len(consumers)
    unassigned = _TaskQueue(tasks_to_assign)
    to_fill: deque[str] = deque()
    skipped_previous_owner: dict[TaskId, str] = {}  # Kafka: a TreeMap, iterated sorted

    if unassigned:
        for consumer in consumers:
            mine = assignment[consumer]
            target = min_per_thread - thread_load.get(consumer, 0)
            if is_stateful:
                for task in prev_tasks_by_lag(consumer):
                    if task in unassigned:
                        if len(mine) < target:
                            mine.append(task)
                            unassigned.remove(task)
                        else:
                            skipped_previous_owner[task] = consumer
            if len(mine) < target:
                to_fill.append(consumer)

        while to_fill:
            polled = unassigned.poll()
            if polled is None:
                raise TaskAssignmentError(
                    "Ran out of unassigned stateful tasks but some members were not at capacity"
                )
            consumer = to_fill.popleft()
            assignment[consumer].append(polled)
            if len(assignment[consumer]) + thread_load.get(consumer, 0) < min_per_thread:
                to_fill.append(consumer)

        if unassigned:
            for consumer in consumers:
                if len(assignment[consumer]) + thread_load.get(consumer, 0) == min_per_thread:
                    to_fill.append(consumer)
            for task in sorted(skipped_previous_owner):
                consumer = skipped_previous_owner[task]
                if consumer in to_fill and task in unassigned:
                    assignment[consumer].append(task)
                    unassigned.remove(task)
                    to_fill.remove(consumer)
            for task in unassigned.array_order():  # Java iterates the heap array, not sorted
                if not to_fill:
                    raise TaskAssignmentError(
                        f"no consumer left at the minimum load for task {task}"
                    )
                assignment[to_fill.popleft()].append(task)

    for consumer, tasks in assignment.items():
        thread_load[consumer] = thread_load.get(consumer, 0) + len(tasks)
    return assignment


@dataclass(frozen=True)
class ConsumerAssignment:
    """What one consumer (stream thread) gets, before encoding.

    Attributes
    ----------
    active, standby:
        Sorted in TaskId order; ``standby`` includes temporary standbys of revoked tasks.
    revoking:
        Tasks withheld until their partitions are released by their current owner.
    next_rebalance_ms:
        Kafka's ``AssignmentInfo.nextRebalanceMs`` when set: 0 for an immediate follow-up,
        or the probing deadline; ``None`` when the consumer gets no follow-up request.
    """

    active: tuple[TaskId, ...]
    standby: tuple[TaskId, ...]
    revoking: tuple[TaskId, ...] = ()
    next_rebalance_ms: int | None = None


@dataclass(frozen=True)
class RevocationInput:
    """The extension fields cooperative revocation needs, validated.

    Attributes
    ----------
    task_partitions:
        Source partitions per task (top-level ``task_partitions``).
    all_owned_partitions:
        Every partition some consumer of the group still owns.
    leader_client:
        The process id of the group leader's client (``leader``), or ``None``.
    now_ms:
        The leader's clock (``now_ms``), or ``None``.
    """

    task_partitions: Mapping[TaskId, tuple[TopicPartition, ...]]
    all_owned_partitions: frozenset[TopicPartition]
    leader_client: str | None
    now_ms: int | None


def parse_revocation_input(cluster: ClusterState) -> RevocationInput | None:
    """Gather ``task_partitions``, ``leader`` and ``now_ms`` (parsed by ``formats.cluster_state``).

    Returns ``None`` when no consumer lists ``owned_partitions`` (no revocation step).

    Raises
    ------
    InvalidScenarioError
        For a missing ``task_partitions`` (the other rules are checked when the state is
        parsed, see ``streams_assign.formats.cluster_state_extensions``).
    """
    owned: set[TopicPartition] = set()
    for client in cluster.clients:
        for consumer in client.consumers or ():
            owned.update(consumer.owned_partitions)
    if not owned:
        return None
    if cluster.task_partitions is None:
        raise InvalidScenarioError(
            "task_partitions",
            "an object of task id to [[topic, partition], ...] is required when consumers "
            "list owned_partitions, got None",
        )
    task_partitions = cluster.task_partitions
    leader_client = cluster.leader
    now_ms = cluster.now_ms
    return RevocationInput(task_partitions, frozenset(owned), leader_client, now_ms)


def _partitions_of(revocation: RevocationInput, task: TaskId) -> tuple[TopicPartition, ...]:
    partitions = revocation.task_partitions.get(task)
    if partitions is None:
        raise InvalidScenarioError(
            f"task_partitions.{task}",
            "missing: every assigned active task needs its source partitions",
        )
    return partitions


def add_client_assignments(
    client: ClientState,
    consumers: Sequence[str],
    active: Mapping[str, Sequence[TaskId]],
    standby: Mapping[str, Sequence[TaskId]],
    stateful: frozenset[TaskId],
    revocation: RevocationInput,
    followup_deadline_ms: int | None,
) -> dict[str, ConsumerAssignment]:
    """Withhold tasks still owned elsewhere, schedule follow-ups (Kafka's ``addClientAssignments``).

    Parameters
    ----------
    client:
        The client (its consumers' ``owned_partitions`` and its ``prev_standby``).
    consumers:
        Its member ids in ``String`` order.
    active, standby:
        Per consumer, the tasks from :func:`assign_tasks_to_threads`.
    stateful:
        The stateful tasks.
    revocation:
        From :func:`parse_revocation_input`.
    followup_deadline_ms:
        The client's probing deadline (leader's client only), or ``None``.

    Returns
    -------
    dict
        Per consumer, its :class:`ConsumerAssignment`.

    Notes
    -----
    Reference 5.3. A task is withheld from a consumer when one of its partitions is owned by
    someone else (another consumer of this client, or any consumer of another client); the
    whole task is withheld, never part of it. A withheld stateful task the client had as a
    standby stays on the consumer as a temporary standby. A consumer with withheld tasks gets
    ``next_rebalance_ms = 0`` and the probing deadline is then not encoded for this client;
    otherwise the first consumer (in order) encodes the deadline.
    """
    previous_owner: dict[TopicPartition, str] = {}
    for member in client.consumers or ():
        for partition in member.owned_partitions:
            previous_owner[partition] = member.member_id
    # Kafka's previouslyOwnedStandby reads ClientState's previous standbys, which
    # initializePrevTasks also fills from the reported offset sums (any lag but -2).
    prev_active = set(client.prev_active)
    prev_active.update(t for t, lag in client.task_lags.items() if lag == LATEST_OFFSET)
    prev_standby = (set(client.prev_standby) | set(client.task_lags)) - prev_active
    encode_deadline = followup_deadline_ms is not None
    result: dict[str, ConsumerAssignment] = {}
    for consumer in consumers:
        removed: set[TaskId] = set()
        for task in active[consumer]:
            for partition in _partitions_of(revocation, task):
                owner = previous_owner.get(partition)
                if owner != consumer and partition in revocation.all_owned_partitions:
                    removed.add(task)
                    break
        kept = sorted(t for t in active[consumer] if t not in removed)
        temporary = [t for t in sorted(removed) if t in prev_standby and t in stateful]
        standbys = sorted(set(standby[consumer]) | set(temporary))
        next_rebalance_ms = None
        if removed:
            next_rebalance_ms = 0
            encode_deadline = False
        elif encode_deadline:
            next_rebalance_ms = followup_deadline_ms
            encode_deadline = False
        result[consumer] = ConsumerAssignment(
            tuple(kept), tuple(standbys), tuple(sorted(removed)), next_rebalance_ms
        )
    return result


def _prev_tasks_by_lag(
    cluster: ClusterState, client: ClientState, stateful: frozenset[TaskId]
) -> Callable[[str], list[TaskId]]:
    by_member: dict[str, ConsumerState] = {c.member_id: c for c in client.consumers or ()}

    def prev_tasks_by_lag(member: str) -> list[TaskId]:
        consumer = by_member[member]
        reported = {t for t in (*consumer.prev_active, *consumer.prev_standby) if t in stateful}
        return sorted(reported, key=lambda t: (cluster.lag(client, t), t.sort_key))

    return prev_tasks_by_lag


def assign_client_tasks_to_threads(
    cluster: ClusterState, client: ClientState, decided: ClientAssignment
) -> tuple[list[str], dict[str, list[TaskId]], dict[str, list[TaskId]]]:
    """Kafka's three ``assignTasksToThreads`` calls for one client (reference 5.1).

    Returns
    -------
    tuple
        The consumers in ``String`` order, then per consumer its actives (stateful then
        stateless) and its standbys.
    """
    stateful = frozenset(cluster.stateful_tasks)
    consumers = sorted((c.member_id for c in client.consumers or ()), key=java_string_key)
    prev_by_lag = _prev_tasks_by_lag(cluster, client, stateful)
    thread_load: dict[str, int] = {}
    # ClientState.statefulActiveTasks()/statelessActiveTasks() are Collectors.toSet() HashSets
    # filled from the sorted active set; standbyTasks() is the sorted set itself.
    stateful_active = list(task_hash_set(t for t in decided.active if t in stateful))
    stateless_active = list(task_hash_set(t for t in decided.active if t not in stateful))
    active = assign_tasks_to_threads(stateful_active, True, consumers, prev_by_lag, thread_load)
    standby = assign_tasks_to_threads(
        list(decided.standby), True, consumers, prev_by_lag, thread_load
    )
    stateless = assign_tasks_to_threads(
        stateless_active, False, consumers, prev_by_lag, thread_load
    )
    for consumer in consumers:
        active[consumer].extend(stateless[consumer])
    return consumers, active, standby


def assign_tasks_to_consumers(cluster: ClusterState, assignment: Assignment) -> Assignment:
    """Fill ``ClientAssignment.consumers`` for every client that lists its consumers.

    Parameters
    ----------
    cluster:
        The rebalance input (clients with ``consumers``; for revocation also
        ``consumers[].owned_partitions`` and the top-level ``task_partitions``, ``leader``,
        ``now_ms``).
    assignment:
        The task assignor's per-client decision.

    Returns
    -------
    Assignment
        The same decision with, per client that lists consumers, ``consumers`` =
        ``{member_id: {"active": (...), "standby": (...)}}``. When some consumer lists owned
        partitions, each consumer entry also has ``"revoking"``, the client's ``active`` and
        ``standby`` drop withheld tasks and add temporary standbys (as Kafka's ``ClientState``
        ends up), and ``extras["next_rebalance_ms"]`` maps member ids to their follow-up time.

    Raises
    ------
    InvalidScenarioError
        For invalid revocation extensions (see :func:`parse_revocation_input`).
    TaskAssignmentError
        Where Kafka's thread assignment throws.

    Examples
    --------
    >>> from streams_assign import assign
    >>> result = assign({
    ...     "stateful_tasks": ["0_0", "0_1", "0_2"],
    ...     "clients": [{"id": "00000000-0000-0000-0000-000000000001",
    ...                  "consumers": [{"member_id": "c1"}, {"member_id": "c2"}]}]})
    >>> {m: [str(t) for t in r["active"]] for m, r in
    ...  result.clients["00000000-0000-0000-0000-000000000001"].consumers.items()}
    {'c1': ['0_0', '0_2'], 'c2': ['0_1']}

    Notes
    -----
    Source: ``StreamsPartitionAssignor.computeNewAssignment``, ``assignTasksToThreads`` and
    ``addClientAssignments`` (Kafka 4.0.0-SNAPSHOT, commit 1eb7644349cb); reference 5.
    """
    revocation = parse_revocation_input(cluster)
    stateful = frozenset(cluster.stateful_tasks)
    clients: dict[str, ClientAssignment] = dict(assignment.clients)
    next_rebalance: dict[str, int] = {}
    for client in cluster.clients:
        if client.consumers is None:
            continue
        decided = clients[client.id]
        consumers, active, standby = assign_client_tasks_to_threads(cluster, client, decided)
        if revocation is None:
            per_consumer = {
                c: {"active": tuple(sorted(active[c])), "standby": tuple(sorted(standby[c]))}
                for c in consumers
            }
            clients[client.id] = replace(decided, consumers=per_consumer)
            continue
        deadline = None
        if assignment.probing_rebalance_needed and revocation.leader_client == client.id:
            if revocation.now_ms is None:
                raise InvalidScenarioError(
                    "now_ms", "required (the leader's clock) when a probing rebalance is scheduled"
                )
            deadline = revocation.now_ms + cluster.configs.probing_rebalance_interval_ms
        final = add_client_assignments(
            client, consumers, active, standby, stateful, revocation, deadline
        )
        per_consumer_roles = {
            c: {"active": a.active, "standby": a.standby, "revoking": a.revoking}
            for c, a in final.items()
        }
        revoked = {t for a in final.values() for t in a.revoking}
        temporary = {t for a in final.values() for t in a.standby} - set(decided.standby)
        clients[client.id] = replace(
            decided,
            active=tuple(t for t in decided.active if t not in revoked),
            standby=tuple(sorted(set(decided.standby) | temporary)),
            consumers=per_consumer_roles,
        )
        for member, a in final.items():
            if a.next_rebalance_ms is not None:
                next_rebalance[member] = a.next_rebalance_ms
    extras = dict(assignment.extras)
    if revocation is not None:
        extras["next_rebalance_ms"] = next_rebalance
    return replace(assignment, clients=clients, extras=extras)


__all__ = [
    "ConsumerAssignment",
    "RevocationInput",
    "add_client_assignments",
    "assign_client_tasks_to_threads",
    "assign_tasks_to_consumers",
    "assign_tasks_to_threads",
    "java_string_key",
    "parse_revocation_input",
]
