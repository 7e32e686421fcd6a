"""The whole convergence of one assignor: every rebalance's decision and what it costs.

:func:`plan_convergence` runs the assignor on a cluster state, then once per
``probing.rebalance.interval.ms`` while it asks for a probing rebalance, as Kafka Streams does
(``HighAvailabilityTaskAssignor`` returns ``probingRebalanceNeeded``; the leader schedules the
next rebalance after the interval, KIP-441). Between rebalances every replica that is not running
restores at its own rate (:class:`RestoreRates`), as
:func:`streams_assign.simulation.replay.next_cluster_state` models it. Each round records what
moved, the warmup replicas, the probing flag, the records restored, and the task-milliseconds
during which an active task served nobody (placed on a client that must restore it first, or
owned by a crashed client that the group has not dropped yet).

Model limits, as the replay's: changelogs do not grow during the convergence, restoration is
linear at the given rate, the rebalance itself takes no time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streams_assign.assignors import assign
from streams_assign.errors import StreamsAssignError
from streams_assign.model import LATEST_OFFSET, Assignment, ClusterState, TaskId
from streams_assign.simulation.replay import next_cluster_state, with_changelog_sizes

__all__ = [
    "Convergence",
    "Move",
    "PlannedRound",
    "RestoreRates",
    "plan_convergence",
]


@dataclass(frozen=True)
class RestoreRates:
    """Records per second one client restores for one task.

    Attributes
    ----------
    default:
        The rate of a (client, task) pair with no measurement, records/s (> 0).
    measured:
        Per ``(process id, task)``: the rate a ``streams-lag`` restore table measured
        (``restore_rate`` column), records/s; only positive figures are kept.
    per_task:
        Per task: the median of its measured rates over all clients, used for a client that
        has no measurement of its own for the task (a new placement).

    Raises
    ------
    ValueError
        When ``default`` is not positive.
    """

    default: float
    measured: Mapping[tuple[str, TaskId], float] = field(default_factory=dict)
    per_task: Mapping[TaskId, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.default > 0:
            raise ValueError(f"restore rate must be > 0 records/s, got {self.default}")

    def rate(self, process_id: str, task: TaskId) -> float:
        """The rate of one replica, records/s: measured, else the task's median, else default."""
        got = self.measured.get((process_id, task))
        if got is not None:
            return got
        return self.per_task.get(task, self.default)

    def restored_in(self, process_id: str, task: TaskId, interval_ms: int) -> int:
        """Records one replica restores in ``interval_ms`` milliseconds (rounded down)."""
        return int(self.rate(process_id, task) * interval_ms / 1000)


@dataclass(frozen=True)
class Move:
    """An active task that changes client at a rebalance.

    Attributes
    ----------
    task:
        The task, ``1_3``.
    source:
        The process id that ran it as active before, or ``None`` when no member of the group
        runs it any more (its client crashed or shut down) or it is new.
    target:
        The process id that runs it now.
    """

    task: TaskId
    source: str | None
    target: str


@dataclass(frozen=True)
class PlannedRound:
    """One rebalance of a convergence.

    Attributes
    ----------
    round:
        1 for the first rebalance.
    time_ms:
        When it happens, milliseconds after the change (the first one after the crashed
        members are dropped).
    probing_rebalance_needed:
        Whether the assignor asked for another rebalance.
    moves:
        The actives not on the client that ran them before (stateless ones included).
    warmups:
        ``(task, process id)`` of every warmup replica placed.
    tasks_per_client:
        Per process id: ``(active tasks, standby tasks)`` counts, warmups among the standbys.
    records_to_restore:
        Records the placed replicas that are not running are behind at the rebalance.
    records_restored:
        Records restored until the next rebalance (all of them after the last one).
    unavailable_task_ms:
        Sum over active tasks of the milliseconds they serve nobody until the next rebalance
        (until restored, after the last one).
    """

    round: int
    time_ms: int
    probing_rebalance_needed: bool
    moves: tuple[Move, ...]
    warmups: tuple[tuple[TaskId, str], ...]
    tasks_per_client: Mapping[str, tuple[int, int]]
    records_to_restore: int
    records_restored: int
    unavailable_task_ms: int


@dataclass(frozen=True)
class Convergence:
    """Every rebalance of one assignor from a cluster state until it stops probing.

    Attributes
    ----------
    assignor:
        The assignor's name (``streams_assign.assignors.ASSIGNORS``).
    rounds:
        The rebalances, in order.
    converged:
        False when ``max_rounds`` cut the convergence short, or when the assignor keeps asking
        for probing rebalances that change nothing (then the rounds stop at the first repeat).
    detection_ms:
        Milliseconds from the change to the first rebalance (``session.timeout.ms`` after a
        crash, else 0).
    detection_unavailable_task_ms:
        Task-milliseconds of the crashed clients' actives before the first rebalance.
    stable_ms:
        Milliseconds from the change until the last rebalance's actives all serve.
    repeating:
        True when the rounds stopped because a probing rebalance changed nothing.
    """

    assignor: str
    rounds: tuple[PlannedRound, ...]
    converged: bool
    detection_ms: int
    detection_unavailable_task_ms: int
    stable_ms: int
    repeating: bool = False

    @property
    def rebalances(self) -> int:
        """Number of rebalances, the first included."""
        return len(self.rounds)

    @property
    def probing_rebalances(self) -> int:
        """Probing rebalances after the first one."""
        return len(self.rounds) - 1

    @property
    def records_restored(self) -> int:
        """Records restored over the whole convergence."""
        return sum(r.records_restored for r in self.rounds)

    @property
    def moves(self) -> int:
        """Active-task moves over the whole convergence."""
        return sum(len(r.moves) for r in self.rounds)

    @property
    def warmups(self) -> int:
        """Warmup replicas placed over the whole convergence (one per rebalance they are in)."""
        return sum(len(r.warmups) for r in self.rounds)

    @property
    def unavailable_task_ms(self) -> int:
        """Task-milliseconds of unavailability, the crash detection included."""
        return self.detection_unavailable_task_ms + sum(r.unavailable_task_ms for r in self.rounds)

    def to_json(self) -> dict[str, Any]:
        """The convergence as a JSON document (process ids whole, tasks as ``1_3``)."""
        return {
            "assignor": self.assignor,
            "converged": self.converged,
            "repeating": self.repeating,
            "rebalances": self.rebalances,
            "probing_rebalances": self.probing_rebalances,
            "stable_ms": self.stable_ms,
            "detection_ms": self.detection_ms,
            "records_restored": self.records_restored,
            "unavailable_task_minutes": round(self.unavailable_task_ms / 60000, 3),
            "moves": self.moves,
            "warmups": self.warmups,
            "rounds": [
                {
                    "round": r.round,
                    "time_ms": r.time_ms,
                    "probing_rebalance_needed": r.probing_rebalance_needed,
                    "moves": [
                        {"task": str(m.task), "from": m.source, "to": m.target} for m in r.moves
                    ],
                    "warmups": [{"task": str(t), "client": c} for t, c in r.warmups],
                    "tasks_per_client": {
                        c: {"active": a, "standby": s} for c, (a, s) in r.tasks_per_client.items()
                    },
                    "records_to_restore": r.records_to_restore,
                    "records_restored": r.records_restored,
                    "unavailable_task_ms": r.unavailable_task_ms,
                }
                for r in self.rounds
            ],
        }


def _moves(cluster: ClusterState, result: Assignment) -> tuple[Move, ...]:
    owner = {task: client.id for client in cluster.clients for task in client.prev_active}
    moves = []
    for client in cluster.clients:
        for task in result.clients[client.id].active:
            if owner.get(task) != client.id:
                moves.append(Move(task, owner.get(task), client.id))
    return tuple(sorted(moves, key=lambda m: (m.task, m.target)))


def _behind(cluster: ClusterState, process_id: str, task: TaskId) -> int:
    """Records a replica must restore: 0 when running (-2) or unknown (-3)."""
    lag = cluster.lag(cluster.client(process_id), task)
    return lag if lag > 0 and lag != LATEST_OFFSET else 0


def _measure(
    state: ClusterState,
    result: Assignment,
    number: int,
    time_ms: int,
    rates: RestoreRates,
    last: bool,
) -> PlannedRound:
    interval = state.configs.probing_rebalance_interval_ms
    stateful = set(state.stateful_tasks)
    to_restore = restored = unavailable = 0
    warmups: list[tuple[TaskId, str]] = []
    per_client: dict[str, tuple[int, int]] = {}
    for client in state.clients:
        decided = result.clients[client.id]
        per_client[client.id] = (len(decided.active), len(decided.standby))
        warmups.extend((task, client.id) for task in decided.warmup)
        active = set(decided.active)
        for task in sorted((active | set(decided.standby)) & stateful):
            behind = _behind(state, client.id, task)
            if behind == 0:
                continue
            rate = rates.rate(client.id, task)
            to_restore += behind
            restored += (
                behind if last else min(behind, rates.restored_in(client.id, task, interval))
            )
            if task in active:
                needed_ms = math.ceil(behind * 1000 / rate)
                unavailable += needed_ms if last else min(needed_ms, interval)
    return PlannedRound(
        round=number,
        time_ms=time_ms,
        probing_rebalance_needed=result.probing_rebalance_needed,
        moves=_moves(state, result),
        warmups=tuple(sorted(warmups)),
        tasks_per_client=per_client,
        records_to_restore=to_restore,
        records_restored=restored,
        unavailable_task_ms=unavailable,
    )


def _final_restore_ms(state: ClusterState, result: Assignment, rates: RestoreRates) -> int:
    stateful = set(state.stateful_tasks)
    longest = 0
    for client in state.clients:
        for task in set(result.clients[client.id].active) & stateful:
            behind = _behind(state, client.id, task)
            if behind:
                longest = max(longest, math.ceil(behind * 1000 / rates.rate(client.id, task)))
    return longest


def plan_convergence(
    cluster: ClusterState,
    assignor: str,
    rates: RestoreRates,
    max_rounds: int = 50,
    detection_ms: int = 0,
    orphaned_actives: int = 0,
) -> Convergence:
    """Rebalance every probing interval until ``assignor`` stops asking for a probing rebalance.

    Parameters
    ----------
    cluster:
        The first rebalance's input (for a what-if, the output of
        :func:`~streams_assign.simulation.whatif.apply_changes`).
    assignor:
        A name of :data:`streams_assign.assignors.ASSIGNORS`.
    rates:
        Restore rates per (client, task), records/s.
    max_rounds:
        Rebalances at most (>= 1).
    detection_ms:
        Milliseconds before the first rebalance (``session.timeout.ms`` after a crash).
    orphaned_actives:
        Active tasks nobody serves during ``detection_ms`` (the crashed clients' actives).

    Returns
    -------
    Convergence

    Raises
    ------
    ValueError
        For ``max_rounds`` < 1 or a negative ``detection_ms`` / ``orphaned_actives``.
    StreamsAssignError
        When the assignor refuses the state (Kafka's ``IllegalStateException``) or the name is
        not registered.
    """
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
    if detection_ms < 0 or orphaned_actives < 0:
        raise ValueError(
            f"detection_ms and orphaned_actives must be >= 0, got {detection_ms}, "
            f"{orphaned_actives}"
        )
    interval = cluster.configs.probing_rebalance_interval_ms
    state = with_changelog_sizes(cluster)
    rounds: list[PlannedRound] = []
    result: Assignment | None = None
    previous: Assignment | None = None
    repeating = False
    for number in range(1, max_rounds + 1):
        result = assign(state, assignor=assignor)
        last = not result.probing_rebalance_needed or number == max_rounds
        time_ms = detection_ms + (number - 1) * interval
        rounds.append(_measure(state, result, number, time_ms, rates, last))
        if last:
            break
        following = next_cluster_state(
            state, result, lambda pid, task: rates.restored_in(pid, task, interval)
        )
        if following == state and previous == result:
            # Nothing restores and nothing moves: every further rebalance is this one again
            # (FallbackPriorTaskAssignor always probes, to retry the failed lag fetch).
            repeating = True
            break
        state, previous = following, result
    if result is None:  # pragma: no cover - max_rounds >= 1 runs the loop
        raise StreamsAssignError("no rebalance ran")
    return Convergence(
        assignor=assignor,
        rounds=tuple(rounds),
        converged=not result.probing_rebalance_needed,
        detection_ms=detection_ms,
        detection_unavailable_task_ms=detection_ms * orphaned_actives,
        stable_ms=rounds[-1].time_ms + _final_restore_ms(state, result, rates),
        repeating=repeating,
    )
