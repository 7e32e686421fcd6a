"""The assignors' working state: Kafka's ``ClientState`` assigned sets, indexed for speed.

Clients are numbered ``0..C-1`` in ``java.util.UUID`` order and tasks ``0..T-1`` in TaskId order
(stateful and stateless together), so "sorted" in Kafka (TreeMap, TreeSet) is "ascending int"
here, and ties broken on ProcessId or TaskId are ties broken on the index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from streams_assign.assignors.java_emulation import JavaEmulation, java_emulation
from streams_assign.assignors.priority_set import PrioritySet
from streams_assign.errors import TaskAssignmentError
from streams_assign.model import (
    Assignment,
    ClientAssignment,
    ClusterState,
    TaskId,
    is_caught_up,
)


class AssignmentState:
    """Mutable per-client assignment under construction, for one cluster state.

    Parameters
    ----------
    cluster:
        The validated rebalance input.
    literal:
        Verification mode: build the state with Kafka's data structures as written (Java
        priority queues read lazily, the all-pairs balancing loop) instead of the fast
        equivalents. Same answers, Kafka's running time; the tests compare the two. Passed to
        :func:`streams_assign.assignors.java_emulation.java_emulation`, the only place that
        tests it.

    Attributes
    ----------
    java:
        The structures the steps use where Kafka's answer comes from Java's collections
        (:class:`~streams_assign.assignors.java_emulation.JavaEmulation`).
    tasks:
        All tasks in TaskId order; a task's index is its position here.
    stateful:
        ``stateful[t]`` is True when task ``t`` has a changelog.
    client_ids, capacity:
        Per client index, the process id and the number of stream threads.
    active, standby:
        Per client index, the sets of task indices assigned in each role.
    task_load, active_load:
        Per client, ``(|active| + |standby|) / capacity`` and ``|active| / capacity`` as Java
        doubles (Kafka's ``assignedTaskLoad`` and ``activeTaskLoad``), kept current.

    Notes
    -----
    Mirrors the assigned half of Kafka's ``ClientState``: assigning a task a
    client already holds, in either role, raises, as ``assignActive``/``assignStandby`` do.
    """

    __slots__ = (
        "cluster",
        "tasks",
        "task_index",
        "stateful",
        "stateful_tasks",
        "stateless_tasks",
        "client_ids",
        "capacity",
        "active",
        "standby",
        "task_load",
        "active_load",
        "explicit_lags",
        "no_state_lag",
        "acceptable_recovery_lag",
        "_caught_up_cache",
        "_by_lag_cache",
        "_lags_by_task",
        "_min_lag_cache",
        "java",
    )

    def __init__(self, cluster: ClusterState, literal: bool = False) -> None:
        self.cluster = cluster
        self.java: JavaEmulation = java_emulation(
            literal=literal, client_ids=[c.id for c in cluster.clients]
        )
        self.tasks: list[TaskId] = list(cluster.all_tasks)
        self.task_index: dict[TaskId, int] = {task: i for i, task in enumerate(self.tasks)}
        stateful_set = set(cluster.stateful_tasks)
        self.stateful: list[bool] = [task in stateful_set for task in self.tasks]
        self.stateful_tasks: list[int] = [i for i, s in enumerate(self.stateful) if s]
        self.stateless_tasks: list[int] = [i for i, s in enumerate(self.stateful) if not s]
        self.client_ids: list[str] = [c.id for c in cluster.clients]
        self.capacity: list[int] = [c.capacity for c in cluster.clients]
        n = len(self.client_ids)
        self.active: list[set[int]] = [set() for _ in range(n)]
        self.standby: list[set[int]] = [set() for _ in range(n)]
        self.task_load: list[float] = [0.0] * n
        self.active_load: list[float] = [0.0] * n
        index = self.task_index
        self.explicit_lags: list[dict[int, int]] = [
            {index[task]: lag for task, lag in c.task_lags.items()} for c in cluster.clients
        ]
        self.no_state_lag: list[int] = [
            cluster.no_state_lag(task) if s else 0
            for task, s in zip(self.tasks, self.stateful, strict=True)
        ]
        self.acceptable_recovery_lag = cluster.configs.acceptable_recovery_lag
        self._caught_up_cache: list[list[int] | None] = [None] * len(self.tasks)
        self._by_lag_cache: dict[int, list[tuple[int, int]]] = {}
        self._lags_by_task: list[list[tuple[int, int]]] | None = None
        self._min_lag_cache: list[int | None] = [None] * len(self.tasks)

    def priority_set(
        self, weights: Sequence[float], constraint: Callable[[int, int], bool]
    ) -> PrioritySet:
        """A Kafka ``ConstrainedPrioritySet`` over this state's clients (from :attr:`java`)."""
        return self.java.priority_set(weights, constraint)

    # -- sizes -------------------------------------------------------------------------------
    @property
    def num_clients(self) -> int:
        """Number of clients C."""
        return len(self.client_ids)

    def assigned_count(self, client: int) -> int:
        """Kafka's ``assignedTaskCount``: actives plus standbys (warmups included)."""
        return len(self.active[client]) + len(self.standby[client])

    def has_assigned(self, client: int, task: int) -> bool:
        """Kafka's ``hasAssignedTask``: the client holds the task in either role."""
        return task in self.active[client] or task in self.standby[client]

    # -- mutation ----------------------------------------------------------------------------
    def assign_active(self, client: int, task: int) -> None:
        """Kafka's ``assignActive``; raises :class:`TaskAssignmentError` on a double assignment."""
        if self.has_assigned(client, task):
            raise TaskAssignmentError(
                f"task {self.tasks[task]} is already assigned to client {self.client_ids[client]}"
            )
        active = self.active[client]
        active.add(task)
        cap = self.capacity[client]
        self.task_load[client] = (len(active) + len(self.standby[client])) / cap
        self.active_load[client] = len(active) / cap

    def assign_standby(self, client: int, task: int) -> None:
        """Kafka's ``assignStandby``; raises :class:`TaskAssignmentError` on a double assignment."""
        if self.has_assigned(client, task):
            raise TaskAssignmentError(
                f"task {self.tasks[task]} is already assigned to client {self.client_ids[client]}"
            )
        standby = self.standby[client]
        standby.add(task)
        self.task_load[client] = (len(self.active[client]) + len(standby)) / self.capacity[client]

    def unassign_active(self, client: int, task: int) -> None:
        """Kafka's ``unassignActive``; raises when the client does not hold it as active."""
        if task not in self.active[client]:
            raise TaskAssignmentError(
                f"task {self.tasks[task]} is not active on client {self.client_ids[client]}"
            )
        active = self.active[client]
        active.remove(task)
        cap = self.capacity[client]
        self.task_load[client] = (len(active) + len(self.standby[client])) / cap
        self.active_load[client] = len(active) / cap

    def unassign_standby(self, client: int, task: int) -> None:
        """Kafka's ``unassignStandby``; raises when the client does not hold it as standby."""
        if task not in self.standby[client]:
            raise TaskAssignmentError(
                f"task {self.tasks[task]} is not a standby on client {self.client_ids[client]}"
            )
        standby = self.standby[client]
        standby.remove(task)
        self.task_load[client] = (len(self.active[client]) + len(standby)) / self.capacity[client]

    # -- lags --------------------------------------------------------------------------------
    def lag(self, client: int, task: int) -> int:
        """Kafka's ``lagFor``: the client's changelog lag for a stateful task, in records."""
        return self.explicit_lags[client].get(task, self.no_state_lag[task])

    def caught_up(self, client: int, task: int) -> bool:
        """Whether ``client`` is caught up on ``task`` (``tasksToCaughtUpClients``'s rule)."""
        return is_caught_up(self.lag(client, task), self.acceptable_recovery_lag)

    def _task_lags(self) -> list[list[tuple[int, int]]]:
        """Per task, ``(lag, client)`` of the clients with local state, in client order.

        The clients' sparse lags inverted once, O(total lag entries), so per-task lookups do
        not scan every client.
        """
        by_task = self._lags_by_task
        if by_task is None:
            by_task = [[] for _ in self.tasks]
            for client, lags in enumerate(self.explicit_lags):
                for task, lag in lags.items():
                    by_task[task].append((lag, client))
            self._lags_by_task = by_task
        return by_task

    def caught_up_clients(self, task: int) -> list[int]:
        """Kafka's ``tasksToCaughtUpClients[task]``: caught-up clients, ascending.

        Only clients with local state can be caught up unless the whole-changelog lag itself is
        acceptable, so the set is built from the sparse lags in O(k), not O(C).
        """
        cached = self._caught_up_cache[task]
        if cached is not None:
            return cached
        acceptable = self.acceptable_recovery_lag
        if is_caught_up(self.no_state_lag[task], acceptable):
            result = [c for c in range(self.num_clients) if self.caught_up(c, task)]
        else:
            result = [c for lag, c in self._task_lags()[task] if is_caught_up(lag, acceptable)]
        self._caught_up_cache[task] = result
        return result

    def _by_lag(self, task: int) -> list[tuple[int, int]]:
        """``(lag, client)`` of the clients with local state for ``task``, ascending."""
        cached = self._by_lag_cache.get(task)
        if cached is None:
            cached = self._by_lag_cache[task] = sorted(self._task_lags()[task])
        return cached

    def clients_by_lag(self, task: int) -> Iterator[int]:
        """Kafka's ``tasksToClientByLag[task]``: every client by ``(lag, ProcessId)``, lazily.

        Clients with local state come from the sorted sparse lags; the others all share the
        whole-changelog lag and follow in index order, merged in at their lag.
        """
        explicit = self._by_lag(task)
        shared = self.no_state_lag[task]
        with_state = {c for _, c in explicit}
        others = (c for c in range(self.num_clients) if c not in with_state)
        pending_other = next(others, None)
        for lag, client in explicit:
            while pending_other is not None and (shared, pending_other) < (lag, client):
                yield pending_other
                pending_other = next(others, None)
            yield client
        while pending_other is not None:
            yield pending_other
            pending_other = next(others, None)

    def most_caught_up_lag(self, task: int) -> int:
        """The lag of the first client of :meth:`clients_by_lag`: the smallest of any client."""
        cached = self._min_lag_cache[task]
        if cached is None:
            explicit = self._by_lag(task)
            cached = explicit[0][0] if explicit else self.no_state_lag[task]
            if len(explicit) < self.num_clients:  # a client has no local state
                cached = min(cached, self.no_state_lag[task])
            self._min_lag_cache[task] = cached
        return cached

    # -- output ------------------------------------------------------------------------------
    def to_assignment(
        self,
        probing_rebalance_needed: bool,
        warmups: dict[int, set[int]] | None = None,
        assignor: str = "high_availability",
    ) -> Assignment:
        """Freeze the working state into an :class:`Assignment` (tasks sorted, clients in order)."""
        tasks = self.tasks
        clients = {}
        for c, process_id in enumerate(self.client_ids):
            warm = (warmups or {}).get(c, set()) & self.standby[c]
            clients[process_id] = ClientAssignment(
                active=tuple(tasks[t] for t in sorted(self.active[c])),
                standby=tuple(tasks[t] for t in sorted(self.standby[c])),
                warmup=tuple(tasks[t] for t in sorted(warm)),
            )
        return Assignment(
            clients=clients, probing_rebalance_needed=probing_rebalance_needed, assignor=assignor
        )


__all__ = [
    "AssignmentState",
]
