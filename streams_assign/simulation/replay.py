"""Replay probing rebalances from a cluster state, with state restoration over time.

Starting from a real cluster state, each round runs the assignor, lets every client restore the
tasks it was given for one ``probing.rebalance.interval.ms`` at a fixed restore rate, and builds
the next round's cluster state from what happened: a task that ran as active stays running (lag
-2), a standby or warmup restores ``rate * interval`` records, a task a client no longer holds
keeps its state on disk at the lag it had. Rounds continue while the assignor asks for a probing
rebalance. This answers "how long until a scale-out settles, and how much is restored on the
way".

Model limits (documented, not hidden): the changelog does not grow between rounds, restoration
is linear, and an active on a client that is not caught up serves only after it has restored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from streams_assign.assignors import assign
from streams_assign.model import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    Assignment,
    ClientState,
    ClusterState,
    TaskId,
)


@dataclass(frozen=True)
class RoundReport:
    """What one rebalance decided and what it costs.

    Attributes
    ----------
    round:
        1 for the first rebalance.
    time_ms:
        When the rebalance happens, in milliseconds after the first one.
    moved_actives:
        Actives (stateless included) not on their previous active client.
    warmups:
        Warmup replicas placed.
    unavailable_actives:
        Stateful actives placed on a client that is not caught up (they restore before serving).
    restore_records:
        Records still to restore over all placed actives and standbys that are not caught up.
    probing_rebalance_needed:
        Whether another round follows.
    """

    round: int
    time_ms: int
    moved_actives: int
    warmups: int
    unavailable_actives: int
    restore_records: int
    probing_rebalance_needed: bool


def _restore_cost(cluster: ClusterState, client: ClientState, task: TaskId) -> int:
    lag = cluster.lag(client, task)
    if cluster.is_caught_up(client, task) or lag in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
        return 0
    return lag


def report_round(
    cluster: ClusterState, result: Assignment, number: int, time_ms: int
) -> RoundReport:
    """Measure one round's decision against the state it was made in."""
    stateful = set(cluster.stateful_tasks)
    moved = warmups = unavailable = restore = 0
    for client in cluster.clients:
        decided = result.clients[client.id]
        previous = set(client.prev_active)
        warmups += len(decided.warmup)
        for task in decided.active:
            moved += task not in previous
            if task in stateful and not cluster.is_caught_up(client, task):
                unavailable += 1
                restore += _restore_cost(cluster, client, task)
        for task in decided.standby:
            restore += _restore_cost(cluster, client, task)
    return RoundReport(
        number,
        time_ms,
        moved,
        warmups,
        unavailable,
        min(restore, LONG_MAX_VALUE),
        result.probing_rebalance_needed,
    )


def next_cluster_state(
    cluster: ClusterState,
    result: Assignment,
    restored_records: int | Callable[[str, TaskId], int],
) -> ClusterState:
    """The cluster state one probing interval later, after restoring ``restored_records`` per task.

    Running actives report -2; every other task a client has state for loses up to
    ``restored_records`` of lag if the client held it in this round, and keeps its lag otherwise.
    An active that finishes restoring within the interval is running at the next rebalance.
    ``restored_records`` is one figure for every task, or a function of (process id, task) giving
    each replica's own (records restored in one interval).
    """
    stateful = set(cluster.stateful_tasks)
    clients = []
    for client in cluster.clients:
        decided = result.clients[client.id]
        active, standby = set(decided.active), set(decided.standby)
        lags: dict[TaskId, int] = {}
        for task in stateful:
            lag = cluster.lag(client, task)
            if callable(restored_records):
                restored = restored_records(client.id, task)
            else:
                restored = restored_records
            has_state = task in client.task_lags
            if task in active:
                remaining = max(0, lag - restored) if lag >= 0 else 0
                lags[task] = LATEST_OFFSET if remaining == 0 else remaining
            elif task in standby:
                lags[task] = max(0, lag - restored) if lag >= 0 else 0
            elif has_state:
                lags[task] = 0 if lag == LATEST_OFFSET else lag
        clients.append(
            replace(
                client,
                prev_active=tuple(sorted(active)),
                prev_standby=tuple(sorted(standby)),
                task_lags=lags,
                task_offset_sums=None,
                consumers=None,
            )
        )
    return replace(cluster, clients=tuple(clients))


def with_changelog_sizes(cluster: ClusterState) -> ClusterState:
    """Give every stateful task a finite changelog size when the input has none.

    Without ``changelog_end_offset_sums`` a client with no local state has lag
    ``Long.MAX_VALUE``, which no restore rate can work off. The stand-in size of a task is one
    more than the largest finite lag any client reports for it, and more than
    ``acceptable.recovery.lag``: every known lag stays smaller, no-state clients stay not caught
    up and still sort after every client with state, so the first rebalance decides exactly what
    it decides on the original input. Explicit ``Long.MAX_VALUE`` lags become the stand-in too.
    """
    if cluster.changelog_end_offset_sums is not None or cluster.configs.unbounded_recovery_lag:
        return cluster
    floor = cluster.configs.acceptable_recovery_lag + 1
    sizes = {}
    for task in cluster.stateful_tasks:
        finite = [
            lag
            for client in cluster.clients
            if 0 <= (lag := client.task_lags.get(task, -1)) < LONG_MAX_VALUE
        ]
        sizes[task] = max(floor, max(finite, default=0) + 1)
    clients = tuple(
        replace(
            client,
            task_lags={
                task: (sizes[task] if lag == LONG_MAX_VALUE else lag)
                for task, lag in client.task_lags.items()
            },
        )
        for client in cluster.clients
    )
    return replace(cluster, clients=clients, changelog_end_offset_sums=sizes)


def replay(
    cluster: ClusterState,
    restore_rate: float,
    assignor: str = "high_availability",
    max_rounds: int = 50,
) -> list[RoundReport]:
    """Run rebalances every probing interval until the assignor stops probing.

    Parameters
    ----------
    cluster:
        The starting cluster state.
    restore_rate:
        Records per second one client restores for one task (standby, warmup or restoring
        active). Changelog sizes come from ``changelog_end_offset_sums``, or from the stand-in
        of :func:`with_changelog_sizes`.
    assignor:
        The assignor's name.
    max_rounds:
        Stop after this many rebalances even if the assignor still probes.

    Returns
    -------
    list of RoundReport
        One per rebalance, the last with ``probing_rebalance_needed`` False unless
        ``max_rounds`` cut the replay short.

    Raises
    ------
    ValueError
        When ``restore_rate`` is not positive or ``max_rounds`` < 1.
    """
    if restore_rate <= 0:
        raise ValueError(f"restore_rate must be > 0 records/s, got {restore_rate}")
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
    interval_ms = cluster.configs.probing_rebalance_interval_ms
    restored = int(restore_rate * interval_ms / 1000)
    return [
        report_round(state, result, number, (number - 1) * interval_ms)
        for number, state, result in rebalances(
            with_changelog_sizes(cluster), restored, assignor, max_rounds
        )
    ]


def rebalances(
    cluster: ClusterState, restored: int, assignor: str, max_rounds: int
) -> Iterator[tuple[int, ClusterState, Assignment]]:
    """The rebalances of a replay, one per probing interval, until the assignor stops probing.

    Parameters
    ----------
    cluster:
        The first round's cluster state, used as given (changelog sizes included, see
        :func:`with_changelog_sizes`).
    restored:
        Records each restoring copy restores between two rounds (:func:`next_cluster_state`).
    assignor:
        The assignor's name.
    max_rounds:
        At most this many rebalances.

    Yields
    ------
    tuple of (int, ClusterState, Assignment)
        The round's number (from 1), its cluster state and the assignor's result; the last
        one's ``probing_rebalance_needed`` is False unless ``max_rounds`` cut the replay short.
    """
    state = cluster
    for number in range(1, max_rounds + 1):
        result = assign(state, assignor=assignor)
        yield number, state, result
        if not result.probing_rebalance_needed:
            return
        state = next_cluster_state(state, result, restored)


__all__ = [
    "RoundReport",
    "next_cluster_state",
    "rebalances",
    "replay",
    "report_round",
    "with_changelog_sizes",
]
