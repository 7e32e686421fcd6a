"""A lag-aware, sticky task assignor: Kafka's hard rules, fewer moves, less state to restore.

Kafka's ``HighAvailabilityTaskAssignor`` deals stateful actives round-robin and then balances
them, ignoring where state already is; every task that lands on a client without its state then
needs a warmup replica and a probing rebalance before it can move. This assignor starts from where
state is instead:

1. **Balance bounds** (:func:`balanced_count_bounds`): per client a lower and an upper count such
   that *any* choice between them keeps tasks per stream thread within one of each other, Kafka's
   balance criterion (``assertBalancedActiveAssignment``).
2. **Target actives** (:func:`assign_target_stateful_actives`): previous actives stay where they
   are caught up, up to the upper bound; the rest go to caught-up clients with room (previous
   standbys first), then to the client with the least to restore; clients under their lower bound
   take tasks from the most loaded clients.
3. **Immediate actives** (:func:`assign_immediate_stateful_actives`): a task whose target client is
   not caught up stays on a caught-up client (its previous owner when possible) and becomes a
   pending move, as KIP-441 requires (no task unavailable while its new owner restores).
4. **Standbys** (:func:`assign_standby_tasks`): ``min(num.standby.replicas, clients - 1)`` per
   stateful task, on the clients with the least to restore (a pending move's target first, so its
   standby is the warmup it needs), spread over client tags when ``rack.aware.assignment.tags``
   is set, within the stateful-load bounds when room allows; without tags an exchange pass then
   moves standbys to holders wherever that is no worse in records and in moved copies.
5. **Warmups** (:func:`assign_warmup_replicas`): a pending move whose target holds no standby gets a
   warmup replica while ``max.warmup.replicas`` lasts, a target that held the task first
   (:func:`warmup_priority`); any pending move asks for a probing rebalance.
6. **Stateless actives** (:func:`assign_stateless_tasks`): counts within the balance window
   of Kafka's least-loaded deal (every client's active load within one task per thread of that
   deal's least load, each subtopology within one of an even share or the deal's own range),
   chosen to keep as many tasks as possible on the client that ran them; each client gets its
   previous stateless tasks first.

Complexity: O((T + C) log C) for T tasks and C clients without client tags (heaps keyed by load
per thread), plus O(T * C) for the tag-aware standby choice and, for the stateless counts, a
breadth-first chain per returning task Kafka's deal does not keep.
``docs/improved-assignor.md`` gives the measurements against Kafka's assignor and the CP-SAT
optimum.

References: KIP-441 (warmup replicas, probing rebalances, the caught-up rule), KIP-708 (client
tags), Kafka's ``TaskAssignorConvergenceTest`` balance criteria.
"""

from __future__ import annotations

import gc
from operator import attrgetter

from streams_assign.assignors.lag_aware_sticky.actives import (
    assign_immediate_stateful_actives,
    assign_target_stateful_actives,
    spread_subtopologies,
)
from streams_assign.assignors.lag_aware_sticky.problem import (
    balanced_count_bounds,
    estimated_changelog_records,
    index_cluster,
)
from streams_assign.assignors.lag_aware_sticky.standbys import (
    assign_standby_tasks,
    assign_warmup_replicas,
    settle_standby_moves,
    warmup_priority,
)
from streams_assign.assignors.lag_aware_sticky.stateless import assign_stateless_tasks
from streams_assign.model import Assignment, ClientAssignment, ClusterState, TaskId

#: A sort key in TaskId order (``TaskId.sort_key``'s order for task ids that are all named or
#: all unnamed, as a validated input's are), built in C.
_TASK_ORDER = attrgetter("topology_name", "subtopology", "partition")

__all__ = [
    "LagAwareStickyTaskAssignor",
    "assign_immediate_stateful_actives",
    "assign_stateless_tasks",
    "assign_standby_tasks",
    "assign_target_stateful_actives",
    "assign_warmup_replicas",
    "balanced_count_bounds",
    "estimated_changelog_records",
    "settle_standby_moves",
    "spread_subtopologies",
    "warmup_priority",
]


class LagAwareStickyTaskAssignor:
    """Kafka's hard rules with fewer moves and less state to restore than Kafka's HA assignor.

    Same input and output as :class:`~streams_assign.assignors.high_availability.
    HighAvailabilityTaskAssignor`: every task active exactly once,
    ``min(num.standby.replicas, clients - 1)`` standbys per stateful task, never an active and a
    standby of one task on one client, at most ``max.warmup.replicas`` warmups, and a probing
    rebalance while a stateful task still has to move.

    Examples
    --------
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
    >>> cluster = parse_cluster_state({
    ...     "configs": {"num_standby_replicas": 1},
    ...     "stateful_tasks": ["0_0", "0_1"],
    ...     "clients": [
    ...         {"id": "00000000-0000-0000-0000-000000000001", "capacity": 1,
    ...          "prev_active": ["0_1"], "task_lags": {"0_0": 0, "0_1": -2}},
    ...         {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1,
    ...          "prev_active": ["0_0"], "task_lags": {"0_0": -2, "0_1": 0}}]})
    >>> result = LagAwareStickyTaskAssignor().assign(cluster)
    >>> [str(t) for t in result.clients["00000000-0000-0000-0000-000000000001"].active]
    ['0_1']
    >>> result.probing_rebalance_needed
    False

    Notes
    -----
    See the module docstring for the steps and ``docs/improved-assignor.md`` for the measured
    comparison with Kafka's assignor and the optimum.
    """

    name = "lag_aware_sticky"

    def assign(self, cluster: ClusterState) -> Assignment:
        """Decide actives, standbys and warmups for one rebalance.

        Parameters
        ----------
        cluster:
            The validated rebalance input.

        Returns
        -------
        Assignment
            Per client its actives, standbys (warmups included) and warmups, and whether a
            probing rebalance follows (some stateful task still has to move).

        Notes
        -----
        Python's cyclic garbage collector is paused while the assignment runs (and resumed
        after, if it was on): the steps allocate tens of thousands of short-lived lists,
        dicts and tuples, all freed by reference counting, and each allocation burst would
        otherwise start collections that traverse the caller's whole heap (about 4 % of the
        time at 1000 clients in this process, more in a larger one). The few cycles the steps
        make (closures) are collected at the next collection after it.
        """
        paused = gc.isenabled()
        gc.disable()
        try:
            return self._assign(cluster)
        finally:
            if paused:
                gc.enable()

    def _assign(self, cluster: ClusterState) -> Assignment:
        """:meth:`assign`'s steps (the collector paused by the caller)."""
        problem = index_cluster(cluster)
        target = assign_target_stateful_actives(problem)
        active, moving = assign_immediate_stateful_actives(problem, target)
        # Within max.warmup.replicas, some moves restore now: as a standby slot the old owner
        # gives up, or as a warmup replica. First the moves whose target held a copy of the
        # task before (it keeps that copy instead of dropping it and taking it back later), then
        # the cheapest.
        budget = cluster.configs.max_warmup_replicas
        early = set(sorted(moving, key=lambda t: warmup_priority(problem, t, target[t]))[:budget])
        standbys = assign_standby_tasks(problem, active, target, early)
        standby_moves = settle_standby_moves(problem, active, standbys, target, early)
        swapped = sum(1 for t in early if target[t] in standbys[t])
        warmups = assign_warmup_replicas(
            problem, moving, target, standbys, standby_moves, budget - swapped
        )
        n_clients = problem.num_clients
        act: list[list[TaskId]] = [[] for _ in range(n_clients)]
        stby: list[list[TaskId]] = [[] for _ in range(n_clients)]
        warm: list[list[TaskId]] = [[] for _ in range(n_clients)]
        for t, c in enumerate(active):
            act[c].append(problem.tasks[t])
        for t, holders in enumerate(standbys):
            for c in holders:
                stby[c].append(problem.tasks[t])
        for t, c in warmups:
            stby[c].append(problem.tasks[t])
            warm[c].append(problem.tasks[t])
        stateless = assign_stateless_tasks(cluster, [len(a) for a in act])
        # Stateful tasks are indexed in TaskId order, so act[c] and stby[c] are sorted already
        # unless stateless tasks or warmups joined them: then sorted, as Kafka lists them, by
        # _TASK_ORDER (TaskId order, compared in C rather than through TaskId.__lt__).
        decided = {
            client.id: ClientAssignment(
                active=tuple(
                    sorted(act[c] + stateless[c], key=_TASK_ORDER) if stateless[c] else act[c]
                ),
                standby=tuple(sorted(stby[c], key=_TASK_ORDER) if warm[c] else stby[c]),
                warmup=tuple(sorted(warm[c], key=_TASK_ORDER)),
            )
            for c, client in enumerate(cluster.clients)
        }
        return Assignment(
            clients=decided,
            probing_rebalance_needed=bool(moving or standby_moves),
            assignor=self.name,
        )
