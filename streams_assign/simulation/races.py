"""Timing races of Kafka's rebalance chain: the inputs of an immediate follow-up that depend
on how fast each stream thread initialises and restores what it was just given.

:func:`~streams_assign.simulation.chain.plan_chain` asks :func:`report` what each client
reports for each task after a decision; where that depends on timing it gets a :class:`Race`,
settled by a policy (:data:`RACE_POLICIES`) or by :class:`RaceEvidence`, the inputs Kafka's
leader logged in a real chain (:mod:`streams_assign.simulation.leader_log`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from streams_assign.model import (
    LATEST_OFFSET,
    Assignment,
    ClientAssignment,
    ClientState,
    ClusterState,
    TaskId,
    TopicPartition,
)

__all__ = [
    "RACE_POLICIES",
    "Race",
    "RaceEvidence",
    "Settle",
    "new_to_quick_members",
    "report",
    "restored",
    "settler",
]

#: Race policies of :func:`plan_chain`: the model's own guess (members that rejoin at once are
#: late, the others ready), every racing replica ready, every one late.
RACE_POLICIES = ("model", "ready", "late")


@dataclass(frozen=True)
class Race:
    """A replica whose report at an immediate follow-up depends on timing Kafka does not fix.

    After a decision, each stream thread creates the tasks it was given (``CREATED``),
    initialises them (directory lock, stores opened) and hands them to the state updater, which
    restores them. Its next subscription (``TaskManager.taskOffsetSums``) reports an initialised
    task's in-memory position, a ``CREATED`` one only from its checkpoint file (nothing when
    there is none), and a running active as ``-2``. When the thread rejoins for the follow-up
    (at once after a withheld or revoked task, else when its heartbeat learns of the rebalance,
    up to ``heartbeat.interval.ms``) is a race with that initialisation and restoration.

    Attributes
    ----------
    process_id, task:
        The replica.
    ready:
        The lag reported if the task was initialised and restored at its rate until the
        follow-up (``-2`` for an active that finished restoring).
    late:
        The lag reported if the thread rejoined before initialising it: the checkpointed lag
        the client had, or ``None`` when it had no state (not reported).
    assumed:
        The value the model takes (``ready`` for a thread that rejoins with the heartbeat,
        ``late`` for one that rejoins at once).
    whole:
        The task's whole changelog (the lag of a client with no state), records.
    unreported:
        Whether the replica may also go unreported although the client has its state: it
        moved to another thread of the client, which cannot lock the task directory before
        the old thread has closed it, while the old one no longer reports it
        (``TaskManager.tryToLockAllNonEmptyTaskDirectories``; seen on Kafka 4.2.1, as was the
        checkpoint being reported).
    """

    process_id: str
    task: TaskId
    ready: int | None
    late: int | None
    assumed: int | None
    whole: int
    unreported: bool = False

    def allows(self, lag: int | None) -> bool:
        """Whether a reported lag (``None``: not reported) is one the race can produce: not
        reported only if the client had no state; ``-2`` only if the rate lets the active
        finish restoring; otherwise any lag from what the rate allows to the whole changelog
        (a restoration in progress, or a checkpoint file)."""
        if lag is None:
            return self.late is None or self.unreported
        if lag == LATEST_OFFSET:
            return self.ready == LATEST_OFFSET
        low = 0 if self.ready is None or self.ready < 0 else self.ready
        return low <= lag <= self.whole

    def to_json(self) -> dict[str, Any]:
        """The race as a JSON document."""
        return {
            "client": self.process_id,
            "task": str(self.task),
            "ready": self.ready,
            "late": self.late,
            "assumed": self.assumed,
        }


@dataclass(frozen=True)
class RaceEvidence:
    """What the group leader reported at each rebalance, to settle the chain's races.

    Attributes
    ----------
    reported:
        Per rebalance (index 0 is rebalance 1), per process id, per stateful task the client
        reported (Kafka's ``prevActiveTasks`` and ``prevStandbyTasks``), its lag in records.
        A task a client did not report is absent.
    threads:
        Per rebalance, per process id, per stream thread number, the tasks that thread
        reported (the leader's "Client ... per-consumer assignment": prev owned active and
        standby), when the log has them: which thread reports a task directory no thread of
        the client runs is a race too (the first to lock it, ``TaskManager``).
    """

    reported: tuple[Mapping[str, Mapping[TaskId, int]], ...]
    threads: tuple[Mapping[str, Mapping[int, frozenset[TaskId]]], ...] = ()

    def reporting_threads(self, number: int, process_id: str) -> Mapping[int, frozenset[TaskId]]:
        """Per thread number, what each thread of the client reported at rebalance ``number``
        (empty when the log does not say)."""
        if number > len(self.threads):
            return {}
        return self.threads[number - 1].get(process_id, {})

    def settle(self, number: int, race: Race) -> int | None | Race:
        """The lag the leader saw for ``race`` at rebalance ``number``; the race itself when the
        evidence has no such rebalance or client, or when the value is one the race cannot
        produce (the model is wrong there, and the chain keeps its assumption)."""
        if number > len(self.reported) or race.process_id not in self.reported[number - 1]:
            return race
        lag = self.reported[number - 1][race.process_id].get(race.task)
        return lag if race.allows(lag) else race


#: How one race is settled: the lag taken (``None``: not reported), or the race itself to
#: leave it to the model's assumption.
Settle = Callable[[Race], int | None | Race]


def restored(lag: int, records: int) -> int:
    """The lag left after restoring ``records`` (a lag below 0 counts as nothing to restore)."""
    return max(0, lag - records) if lag >= 0 else 0


def new_to_quick_members(
    state: ClusterState,
    final: Assignment,
    pid: str,
    partitions: Mapping[TaskId, tuple[TopicPartition, ...]],
) -> set[TaskId]:
    """Tasks of client ``pid`` that its members which rejoin as soon as they get the decision
    ``final`` have just been given. Those members are the ones with withheld tasks
    (``nextRebalanceTime = 0``) and those that must revoke partitions (``ConsumerCoordinator``
    rejoins after ``onPartitionsRevoked`` under cooperative rebalancing): their subscription
    goes out before they initialise a task they did not have (``CREATED``), while the tasks
    they kept go on restoring in the state updater."""
    before = {c.member_id: c for c in state.client(pid).consumers or ()}
    new: set[TaskId] = set()
    for member, roles in (final.clients[pid].consumers or {}).items():
        previous = before.get(member)
        owned = set(previous.owned_partitions) if previous else set()
        kept = {p for t in roles["active"] for p in partitions[t]}
        if roles.get("revoking") or owned - kept:
            had = set(previous.prev_active) | set(previous.prev_standby) if previous else set()
            new.update(t for t in (*roles["active"], *roles["standby"]) if t not in had)
    return new


def report(
    state: ClusterState,
    client: ClientState,
    task: TaskId,
    held: ClientAssignment,
    records: int,
    at_once: bool,
) -> tuple[int | None, Race | None]:
    """What ``client`` reports for a stateful ``task`` after the decision ``held`` (``None``:
    not reported), or the :class:`Race` when that depends on timing.

    ``records`` is what the replica can restore until the follow-up at its rate; ``at_once``
    says the task is new to a thread that rejoins at once (the model then assumes it late). A
    replica that moves to another thread of the client may also go unreported
    (:attr:`Race.unreported`)."""
    lag = state.lag(client, task)
    had_state = task in client.task_lags or lag == LATEST_OFFSET
    before = {
        c.member_id for c in client.consumers or () if task in (*c.prev_active, *c.prev_standby)
    }
    now = {m for m, r in (held.consumers or {}).items() if task in (*r["active"], *r["standby"])}
    moved = bool(before and now and not before & now)
    if task in held.active:
        if lag == LATEST_OFFSET:  # kept running on the same thread (moves are withheld)
            return LATEST_OFFSET, None
        left = restored(lag, records)
        ready: int | None = LATEST_OFFSET if left == 0 else left
    elif task in held.standby:
        if lag == LATEST_OFFSET:  # a revoked or demoted active: closed and checkpointed
            return 0, None
        ready = restored(lag, records)
    elif lag == LATEST_OFFSET:  # a revoked active: closed and checkpointed
        return 0, None
    elif any(task in (*c.prev_active, *c.prev_standby) for c in client.consumers or ()):
        # A replica the decision dropped restores until its thread closes it (checkpointed).
        at_once, ready = True, restored(lag, records)
    elif not had_state:
        return None, None
    else:  # a directory no thread runs: its checkpoint
        return lag, None
    late = lag if had_state else None
    if ready == late and not (moved and had_state):
        return ready, None
    assumed = late if at_once else ready
    race = Race(client.id, task, ready, late, assumed, state.no_state_lag(task), moved)
    return None, race


def settler(number: int, policy: str, evidence: RaceEvidence | None) -> Settle:
    """How the races of rebalance ``number`` are settled: by the evidence, else the policy."""
    if evidence is not None:
        return lambda race: evidence.settle(number, race)
    if policy == "ready":
        return lambda race: race.ready
    if policy == "late":
        return lambda race: race.late
    return lambda race: race.assumed
