"""What each placement of a task on a client costs: restore records and moves.

The scorer (:mod:`~streams_assign.optimal.metrics`), the CP-SAT model
(:mod:`~streams_assign.optimal.model`) and the min-cost-flow bound
(:mod:`~streams_assign.optimal.bounds`) all read one :class:`PlacementCosts`, so the three agree
on what a placement costs by construction.

Units
-----
- *Restore records*: changelog records a client must replay before a copy of a stateful task is
  current there. A placement on a caught-up client (Kafka's rule, reference 4.4) costs 0; any
  other placement costs the client's lag for the task.
- *Moves*: task instances (one active or one standby copy) placed on a client that did not hold
  the task before in a role that keeps it warm (see :meth:`PlacementCosts.active_move`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from streams_assign.model import (
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    ClusterState,
    TaskId,
    is_caught_up,
)


@dataclass(frozen=True, slots=True)
class PlacementCosts:
    """Per (client, task) costs of one cluster state, indexed by position.

    Attributes
    ----------
    cluster:
        The cluster state the table was built from.
    client_ids:
        Process ids in the cluster's (``java.util.UUID``) order; a client's index is its position.
    capacities:
        Stream threads per client.
    tasks:
        All tasks in TaskId order; a task's index is its position.
    stateful:
        ``stateful[t]`` is True when task ``t`` has a changelog.
    caught_up:
        ``caught_up[c][t]``: client ``c`` may take stateful task ``t`` as active without a warmup
        (always True for stateless tasks).
    restore:
        ``restore[c][t]``: restore records of placing stateful task ``t`` on client ``c`` (0 when
        caught up; 0 for stateless tasks).
    no_state_records:
        Per task, the records charged for a client with no usable local state (see Notes).
    prev_active, prev_holders:
        Per task, the client indices that ran it as active before, and that held it before in
        either role.
    num_standbys:
        ``min(num.standby.replicas, clients - 1)``: standbys every stateful task should have.

    Notes
    -----
    A client with no local state for a task (or with Kafka's ``UNKNOWN_OFFSET_SUM`` lag -3, or a
    lag pinned at ``Long.MAX_VALUE``) has to restore the task's whole changelog. Its size is the
    task's ``changelog_end_offset_sums`` entry when the input gives one. Otherwise this module
    charges a *stand-in*: the largest lag any client reports for the task, since a lag is the end
    offset sum minus a checkpoint and so never exceeds the changelog's length; when no client
    reports a finite lag for the task, the largest finite lag reported for any task of the
    cluster; and never less than ``acceptable.recovery.lag + 1``, because such a client is not
    caught up. The stand-in is therefore a lower estimate of the true cost, the same for every
    client without state, and finite, so the solver never sees ``Long.MAX_VALUE``.
    """

    cluster: ClusterState
    client_ids: tuple[str, ...]
    capacities: tuple[int, ...]
    tasks: tuple[TaskId, ...]
    stateful: tuple[bool, ...]
    caught_up: tuple[tuple[bool, ...], ...]
    restore: tuple[tuple[int, ...], ...]
    no_state_records: tuple[int, ...]
    prev_active: tuple[frozenset[int], ...]
    prev_holders: tuple[frozenset[int], ...]
    num_standbys: int

    @classmethod
    def of(cls, cluster: ClusterState) -> PlacementCosts:
        """Build the cost table of a validated cluster state.

        Parameters
        ----------
        cluster:
            The rebalance input, validated by :mod:`streams_assign.formats.cluster_state`.

        Returns
        -------
        PlacementCosts
        """
        tasks = cluster.all_tasks
        index = {task: i for i, task in enumerate(tasks)}
        stateful_set = set(cluster.stateful_tasks)
        stateful = tuple(task in stateful_set for task in tasks)
        stand_in = _no_state_records(cluster, tasks, stateful)
        # Most cells are "no local state": start every row from that default and patch in the
        # lags the client reported, instead of asking the cluster cell by cell.
        default_up: list[bool] = []
        default_cost: list[int] = []
        for t, task in enumerate(tasks):
            if not stateful[t]:
                default_up.append(True)
                default_cost.append(0)
                continue
            lag = cluster.no_state_lag(task)
            up = is_caught_up(lag, cluster.configs.acceptable_recovery_lag)
            default_up.append(up)
            default_cost.append(0 if up else _lag_records(lag, stand_in[t]))
        caught_up: list[tuple[bool, ...]] = []
        restore: list[tuple[int, ...]] = []
        for client in cluster.clients:
            row_up = list(default_up)
            row_cost = list(default_cost)
            for task, lag in client.task_lags.items():
                t = index.get(task, -1)
                if t < 0 or not stateful[t]:
                    continue
                up = is_caught_up(lag, cluster.configs.acceptable_recovery_lag)
                row_up[t] = up
                row_cost[t] = 0 if up else _lag_records(lag, stand_in[t])
            caught_up.append(tuple(row_up))
            restore.append(tuple(row_cost))
        prev_active: list[set[int]] = [set() for _ in tasks]
        prev_holders: list[set[int]] = [set() for _ in tasks]
        for c, client in enumerate(cluster.clients):
            for task in client.prev_active:
                if task in index:
                    prev_active[index[task]].add(c)
                    prev_holders[index[task]].add(c)
            for task in client.prev_standby:
                if task in index:
                    prev_holders[index[task]].add(c)
        return cls(
            cluster=cluster,
            client_ids=tuple(c.id for c in cluster.clients),
            capacities=tuple(c.capacity for c in cluster.clients),
            tasks=tasks,
            stateful=stateful,
            caught_up=tuple(caught_up),
            restore=tuple(restore),
            no_state_records=tuple(stand_in),
            prev_active=tuple(frozenset(s) for s in prev_active),
            prev_holders=tuple(frozenset(s) for s in prev_holders),
            num_standbys=min(cluster.configs.num_standby_replicas, len(cluster.clients) - 1),
        )

    @property
    def num_clients(self) -> int:
        """Number of clients."""
        return len(self.client_ids)

    @property
    def stateful_indices(self) -> tuple[int, ...]:
        """Indices of the stateful tasks."""
        return tuple(t for t, s in enumerate(self.stateful) if s)

    @property
    def stateless_indices(self) -> tuple[int, ...]:
        """Indices of the stateless tasks."""
        return tuple(t for t, s in enumerate(self.stateful) if not s)

    def active_move(self, client: int, task: int) -> int:
        """1 when an active of ``task`` on ``client`` is a move, else 0.

        An active moves when the task ran as active before and not on this client. A task
        nobody ran before (a new task, a fresh application) starts wherever it goes: no move.
        """
        before = self.prev_active[task]
        return int(bool(before) and client not in before)

    def standby_move(self, client: int, task: int) -> int:
        """1 when a standby (or warmup) of ``task`` on ``client`` is a move, else 0.

        A standby moves when some client held the task before (as active or standby) and this
        client did not.
        """
        before = self.prev_holders[task]
        return int(bool(before) and client not in before)

    def caught_up_clients(self, task: int) -> tuple[int, ...]:
        """Clients that are caught up for ``task`` (all clients for a stateless task)."""
        return tuple(c for c in range(self.num_clients) if self.caught_up[c][task])


def _lag_records(lag: int, stand_in: int) -> int:
    """Records to restore for a client that is not caught up and reports ``lag``."""
    if lag == UNKNOWN_OFFSET_SUM or lag < 0 or lag >= LONG_MAX_VALUE:
        return stand_in
    return lag


def _no_state_records(
    cluster: ClusterState, tasks: Sequence[TaskId], stateful: Sequence[bool]
) -> list[int]:
    """The per-task stand-in for a whole changelog (see :class:`PlacementCosts` Notes)."""
    configs = cluster.configs
    floor = 0 if configs.unbounded_recovery_lag else configs.acceptable_recovery_lag + 1
    known: dict[TaskId, int] = {}
    for client in cluster.clients:
        for task, lag in client.task_lags.items():
            if 0 <= lag < LONG_MAX_VALUE:
                known[task] = max(known.get(task, 0), lag)
    cluster_max = max(known.values(), default=0)
    ends = cluster.changelog_end_offset_sums or {}
    result = []
    for task, is_stateful in zip(tasks, stateful, strict=True):
        if not is_stateful:
            result.append(0)
            continue
        end = ends.get(task)
        if end is not None and 0 <= end < LONG_MAX_VALUE:
            result.append(end)
        else:
            result.append(max(known.get(task, cluster_max), floor))
    return result


__all__ = [
    "PlacementCosts",
]
