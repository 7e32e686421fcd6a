"""Client-tag-aware standby placement (KIP-708): Kafka's ``ClientTagAwareStandbyTaskAssignor``.

With ``rack_aware_assignment_tags`` configured (for example ``["zone", "cluster"]``), each
standby of a stateful task goes to the least-loaded client whose tag values differ from those
of the clients already holding a copy, as long as unused values remain for a tag key. When no
such client exists the remaining copies go to the least-loaded clients regardless of tags, in
the iteration order of Kafka's ``HashMap`` of pending tasks (emulated by
:mod:`streams_assign.javacompat`, because that order decides which task gets the lightest
client first).

Source: ``ClientTagAwareStandbyTaskAssignor`` and ``StandbyTaskAssignmentUtils`` (package
``org.apache.kafka.streams.processor.internals.assignment``) at Kafka 4.0.0-SNAPSHOT (commit
1eb7644349cb); reference 4.3.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping, Sequence, Set

from streams_assign._java.hash_order import JavaHashMap, task_hash_map
from streams_assign._java.priority import PrioritySet
from streams_assign.assignors.standby_utils import assign_standbys_to_least_loaded_clients
from streams_assign.assignors.state import AssignmentState
from streams_assign.model import TaskId

log = logging.getLogger(__name__)

#: A (tag key, tag value) pair: Kafka's ``ClientTagAwareStandbyTaskAssignor.TagEntry``.
TagEntry = tuple[str, str]


def fill_clients_tag_statistics(
    client_tags: list[Mapping[str, str]],
) -> tuple[dict[str, set[str]], dict[TagEntry, set[int]]]:
    """Index every client's tags (Kafka's ``fillClientsTagStatistics``).

    Parameters
    ----------
    client_tags:
        Per client index, its ``client.tag.*`` map (all keys, configured or not).

    Returns
    -------
    tuple
        ``tag_key_to_values`` (key -> the distinct values seen) and ``tag_entry_to_clients``
        ((key, value) -> the clients carrying it).
    """
    tag_key_to_values: dict[str, set[str]] = {}
    tag_entry_to_clients: dict[TagEntry, set[int]] = {}
    for client, tags in enumerate(client_tags):
        for key, value in tags.items():
            tag_key_to_values.setdefault(key, set()).add(value)
            tag_entry_to_clients.setdefault((key, value), set()).add(client)
    return tag_key_to_values, tag_entry_to_clients


def compute_tasks_to_remaining_standbys(
    num_standby_replicas: int, stateful_tasks: Sequence[TaskId]
) -> JavaHashMap[TaskId, int]:
    """Kafka's ``computeTasksToRemainingStandbys``: every task mapped to ``num_standby_replicas``.

    The result is a ``HashMap`` filled in the given order (``Collectors.toMap`` over the stateful
    task set: sorted when the HA assignor calls); its iteration order drives the pending fill.
    """
    remaining: JavaHashMap[TaskId, int] = task_hash_map()
    for task in stateful_tasks:
        remaining.put(task, num_standby_replicas)
    return remaining


def _update_clients_on_already_used_tag_entries(
    used_client: int,
    count_of_used_clients: int,
    configured_tags: Set[str],
    client_tags: list[Mapping[str, str]],
    tag_key_to_values: Mapping[str, set[str]],
    tag_entry_to_clients: Mapping[TagEntry, set[int]],
    tag_entry_to_used_clients: MutableMapping[TagEntry, set[int]],
) -> None:
    """Exclude the clients sharing a tag value with ``used_client`` (Kafka's
    ``updateClientsOnAlreadyUsedTagEntries``).

    For each configured tag key of the client: once as many clients hold a copy as the key has
    distinct values, every value is allowed again (the key stops constraining); otherwise all
    clients carrying the client's value for that key are excluded. Unconfigured keys are
    ignored.
    """
    for key, value in client_tags[used_client].items():
        if key not in configured_tags:
            log.debug("client tag %r is not in rack.aware.assignment.tags; ignored", key)
            continue
        all_values = tag_key_to_values[key]
        if len(all_values) <= count_of_used_clients:
            for other in all_values:
                tag_entry_to_used_clients.pop((key, other), None)
        else:
            tag_entry_to_used_clients[(key, value)] = tag_entry_to_clients[(key, value)]


def assign_standby_tasks_to_clients_with_different_tags(
    state: AssignmentState,
    candidates: PrioritySet,
    task: int,
    active_client: int,
    configured_tags: Set[str],
    tag_key_to_values: Mapping[str, set[str]],
    tag_entry_to_clients: Mapping[TagEntry, set[int]],
    tasks_to_remaining_standbys: JavaHashMap[TaskId, int],
    pending_standby_tasks_to_client: MutableMapping[int, int],
) -> None:
    """Place one task's standbys on clients with unused tag values (Kafka's
    ``assignStandbyTasksToClientsWithDifferentTags``).

    Parameters
    ----------
    state:
        The assignment under construction; standbys are added in place.
    candidates:
        The least-loaded set constrained to clients not holding the task; every client is
        (re)offered first. A client that receives the standby is *not* offered back, so it
        cannot take a second copy in this loop (nor could it: it now holds the task).
    task, active_client:
        The task (index) and the client running it as active.
    configured_tags:
        ``rack.aware.assignment.tags``.
    tag_key_to_values, tag_entry_to_clients:
        From :func:`fill_clients_tag_statistics`.
    tasks_to_remaining_standbys:
        Copies still to place per task; the task is removed when all are placed, otherwise
        updated with what is left.
    pending_standby_tasks_to_client:
        Filled with ``task -> active_client`` when some copies could not be placed.

    Notes
    -----
    Kafka's loop is a ``do``/``while``: it places one copy before testing the remaining count.
    """
    n = state.num_clients
    candidates.offer_all(range(n))
    client_tags = [client.tags for client in state.cluster.clients]
    task_id = state.tasks[task]
    count_of_used_clients = 1  # the active's client counts as used
    remaining = tasks_to_remaining_standbys[task_id]
    used: dict[TagEntry, set[int]] = {}

    def on_unused_tag_values(client: int) -> bool:
        return not any(client in clients for clients in used.values())

    last_used = active_client
    while True:
        _update_clients_on_already_used_tag_entries(
            last_used,
            count_of_used_clients,
            configured_tags,
            client_tags,
            tag_key_to_values,
            tag_entry_to_clients,
            used,
        )
        client = candidates.poll(task, on_unused_tag_values)
        if client is None:
            break
        count_of_used_clients += 1
        remaining -= 1
        state.assign_standby(client, task)
        last_used = client
        if remaining <= 0:
            break

    if remaining > 0:
        pending_standby_tasks_to_client[task] = active_client
        tasks_to_remaining_standbys.put(task_id, remaining)
        log.warning(
            "Rack aware standby task assignment was not able to assign %d of %d standby tasks for "
            "the active task [%s] with the rack aware assignment tags %s; falling back to the "
            "least loaded clients",
            remaining,
            state.cluster.configs.num_standby_replicas,
            task_id,
            sorted(configured_tags),
        )
    else:
        tasks_to_remaining_standbys.remove(task_id)


def _assign_pending_standby_tasks_to_least_loaded_clients(
    state: AssignmentState,
    candidates: PrioritySet,
    tasks_to_remaining_standbys: JavaHashMap[TaskId, int],
) -> None:
    """Kafka's ``assignPendingStandbyTasksToLeastLoadedClients``: Default-style fill of what is
    left, task by task in ``HashMap`` iteration order."""
    candidates.offer_all(range(state.num_clients))
    for task_id, remaining in tasks_to_remaining_standbys.items():
        left = assign_standbys_to_least_loaded_clients(
            state, candidates, state.task_index[task_id], remaining
        )
        tasks_to_remaining_standbys.put(task_id, left)


def tags_match(source_tags: Mapping[str, str], destination_tags: Mapping[str, str]) -> bool:
    """Whether every tag of the source has the same value on the destination.

    The 2-argument ``isAllowedTaskMovement`` of Kafka: it compares all of the source's tags
    (configured or not); extra tags of the destination do not matter.
    """
    return all(destination_tags.get(key) == value for key, value in source_tags.items())


def distinct_tags_kept(state: AssignmentState, source: int, destination: int, task: int) -> bool:
    """Whether moving ``task``'s copy from ``source`` to ``destination`` keeps tag diversity.

    The 4-argument ``isAllowedTaskMovement`` of Kafka: collect the (key, value) tag pairs of
    every *other* client holding the task (either role), plus the source's in one set and the
    destination's in the other; allow the move iff the destination set is at least as large.
    """
    clients = state.cluster.clients
    with_source: set[TagEntry] = set()
    with_destination: set[TagEntry] = set()
    for client in range(state.num_clients):
        if client in (source, destination) or not state.has_assigned(client, task):
            continue
        pairs = clients[client].tags.items()
        with_source.update(pairs)
        with_destination.update(pairs)
    with_source.update(clients[source].tags.items())
    with_destination.update(clients[destination].tags.items())
    return len(with_destination) >= len(with_source)


class ClientTagAwareStandbyTaskAssignor:
    """Standbys spread over distinct client tag values (KIP-708).

    Examples
    --------
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
    >>> from streams_assign.assignors.state import AssignmentState
    >>> ids = [f"00000000-0000-0000-0000-00000000000{n}" for n in (1, 2, 3)]
    >>> cluster = parse_cluster_state({
    ...     "configs": {"num_standby_replicas": 1, "rack_aware_assignment_tags": ["zone"]},
    ...     "stateful_tasks": ["0_0"],
    ...     "clients": [{"id": i, "capacity": 1, "tags": {"zone": z}}
    ...                 for i, z in zip(ids, "aab")]})
    >>> state = AssignmentState(cluster)
    >>> state.assign_active(0, 0)
    >>> ClientTagAwareStandbyTaskAssignor().assign(state)
    >>> state.standby
    [set(), set(), {0}]

    Notes
    -----
    Source: ``ClientTagAwareStandbyTaskAssignor`` (Kafka 4.0.0-SNAPSHOT, commit 1eb7644349cb),
    reference 4.3:

    1. Index the tag values of all clients (:func:`fill_clients_tag_statistics`).
    2. For each stateful task in TaskId order, from its active client, repeatedly take the
       least-loaded client (``(assignedTaskLoad, ProcessId)``) that does not hold the task and
       shares no "used" tag value; each placed copy adds its values to the used ones, and a tag
       key with no unused value left stops constraining
       (:func:`assign_standby_tasks_to_clients_with_different_tags`).
    3. Copies that found no such client go to the least-loaded clients, task by task in the
       ``HashMap`` order of ``tasksToRemainingStandbys``.

    The balancing predicate (:meth:`is_allowed_task_movement`) only lets a standby move between
    clients with identical tags. The instance remembers the state it last assigned, which that
    2-argument predicate reads (the HA assignor calls it right after :meth:`assign`).

    With ``num_standby_replicas == 0`` nothing is placed (the HA assignor never calls a standby
    assignor then; Kafka's ``do``/``while`` would place one copy per task).
    """

    def __init__(self) -> None:
        self._state: AssignmentState | None = None
        #: After :meth:`assign`: tasks whose copies could not all go to distinct tag values,
        #: mapped to their active client (Kafka's ``pendingStandbyTasksToClientId``).
        self.pending_standby_tasks_to_client: dict[int, int] = {}

    def assign(self, state: AssignmentState, task_order: Sequence[int] | None = None) -> None:
        """Place ``num_standby_replicas`` standbys of every stateful task, in place.

        Parameters
        ----------
        state:
            The assignment under construction, with the actives placed.
        task_order:
            The stateful tasks (indices) in the order Kafka's caller iterates them; default
            TaskId order, as the HA assignor passes a ``TreeSet``. (Kafka's unit tests pass a
            ``HashSet``: :func:`streams_assign.javacompat.task_hash_set` gives that order.)
        """
        self._state = state
        self.pending_standby_tasks_to_client = {}
        configs = state.cluster.configs
        replicas = configs.num_standby_replicas
        if replicas == 0:
            return
        configured_tags = frozenset(configs.rack_aware_assignment_tags)
        client_tags = [client.tags for client in state.cluster.clients]
        tag_key_to_values, tag_entry_to_clients = fill_clients_tag_statistics(client_tags)
        tasks = list(state.stateful_tasks if task_order is None else task_order)
        remaining = compute_tasks_to_remaining_standbys(replicas, [state.tasks[t] for t in tasks])
        candidates = state.priority_set(
            state.task_load, lambda client, task: not state.has_assigned(client, task)
        )
        pending = self.pending_standby_tasks_to_client
        for task in tasks:
            for client in range(state.num_clients):
                if task in state.active[client]:
                    assign_standby_tasks_to_clients_with_different_tags(
                        state,
                        candidates,
                        task,
                        client,
                        configured_tags,
                        tag_key_to_values,
                        tag_entry_to_clients,
                        remaining,
                        pending,
                    )
        if len(remaining):
            _assign_pending_standby_tasks_to_least_loaded_clients(state, candidates, remaining)

    def is_allowed_task_movement(self, source: int, destination: int, task: int) -> bool:
        """Kafka's 2-argument ``isAllowedTaskMovement``: the clients' tags are identical.

        Every tag of ``source`` must have the same value on ``destination`` (``task`` is
        ignored). Used by standby balancing, after :meth:`assign` bound the state.

        Raises
        ------
        RuntimeError
            When called before :meth:`assign`.
        """
        if self._state is None:
            raise RuntimeError("is_allowed_task_movement needs a prior assign(state)")
        clients = self._state.cluster.clients
        return tags_match(clients[source].tags, clients[destination].tags)

    def is_allowed_task_movement_with_state(
        self, state: AssignmentState, source: int, destination: int, task: int
    ) -> bool:
        """Kafka's 4-argument ``isAllowedTaskMovement`` (used by the rack-aware standby optimiser).

        True iff moving ``task`` from ``source`` to ``destination`` does not shrink the number
        of distinct (key, value) tag pairs among the clients holding the task; see
        :func:`distinct_tags_kept`.
        """
        return distinct_tags_kept(state, source, destination, task)


__all__ = [
    "ClientTagAwareStandbyTaskAssignor",
    "TagEntry",
    "assign_standby_tasks_to_clients_with_different_tags",
    "compute_tasks_to_remaining_standbys",
    "distinct_tags_kept",
    "fill_clients_tag_statistics",
    "tags_match",
]
