"""Kafka's real rebalance chain: membership change, immediate follow-ups, probing rebalances.

Under the classic group protocol with cooperative rebalancing, Kafka Streams' group leader
(``StreamsPartitionAssignor``) runs the task assignor, spreads each client's tasks over its
stream threads, and withholds every active task whose partitions another consumer still owns
(another client, or another thread of the same client): ``addClientAssignments`` puts it in
``activeTasksRemovedPendingRevokation``, logs "Requesting followup rebalance be scheduled
immediately ... due to tasks changing ownership" and encodes ``nextRebalanceTime = 0`` in that
consumer's ``AssignmentInfo``. The owner revokes the task (``onPartitionsRevoked``: the task is
closed and checkpointed) and the consumer rejoins at once, so the group rebalances again
within about one heartbeat: the assignor reruns on the inputs of that moment (the revoked
task's former owner now reports it at the checkpointed offset; warmups and standbys placed a
moment ago report how far they restored). Without a withheld task, a decision that asks for a
probing rebalance (``HighAvailabilityTaskAssignor``'s ``probingRebalanceNeeded``, KIP-441)
is followed by one ``probing.rebalance.interval.ms`` later.

:func:`plan_chain` follows that chain from a cluster state: each rebalance records its kind
(membership change, immediate follow-up, probing), its time, its input (lags), the assignor's
decision (what the leader logs in "Decided on assignment", before withholding), the active
moves, the tasks withheld, and the timing races of its input
(:mod:`streams_assign.simulation.races`: what a replica placed a moment earlier reports at an
immediate follow-up). Between rebalances replicas restore at :class:`RestoreRates`.

Model limits: changelogs do not grow; restoration is linear and starts at the decision; an
immediate follow-up happens ``follow_up_ms`` after the decision that asked for it (in a real
group: when the last member has noticed the rebalance, up to ``heartbeat.interval.ms``) and a
probing rebalance exactly one interval after its decision; every thread of a client reports
the client's task directories it does not run as the client's previous standbys, not as one
thread's (Kafka lets the thread that locks the directory first report it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from streams_assign.errors import StreamsAssignError
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
from streams_assign.simulation.probing import Move, RestoreRates
from streams_assign.simulation.races import (
    RACE_POLICIES,
    Race,
    RaceEvidence,
    Settle,
    new_to_quick_members,
    report,
    settler,
)
from streams_assign.simulation.replay import with_changelog_sizes

__all__ = [
    "FOLLOW_UP",
    "MEMBERSHIP_CHANGE",
    "PROBING",
    "RACE_POLICIES",
    "Chain",
    "ChainRebalance",
    "Race",
    "RaceEvidence",
    "plan_chain",
    "with_consumers",
]

_THREAD = re.compile(r"StreamThread-(\d+)-consumer")

MEMBERSHIP_CHANGE = "membership change"
FOLLOW_UP = "immediate follow-up"
PROBING = "probing"


@dataclass(frozen=True)
class ChainRebalance:
    """One rebalance of the chain.

    Attributes
    ----------
    number:
        1 for the first rebalance.
    time_ms:
        Milliseconds after the change.
    kind:
        :data:`MEMBERSHIP_CHANGE`, :data:`FOLLOW_UP` or :data:`PROBING`.
    decided:
        The task assignor's decision per process id (before withholding): what Kafka's
        leader logs as "Decided on assignment" (standbys include warmups).
    moves:
        Active tasks decided on another client than the one that ran them.
    withheld:
        ``(task, process id)`` of the actives withheld until their owner revoked them (their
        partitions were owned by another consumer, of another client or of the same one).
    probing_rebalance_needed:
        The assignor's probing flag.
    lags:
        The assignor's input: per process id, each stateful task's lag in records (-2 for a
        running active), what Kafka's leader logs as ``taskLagTotals`` in "Decided on
        assignment".
    races:
        The replicas whose report at this (follow-up) rebalance depends on timing
        (:class:`Race`); ``lags`` holds the value taken.
    unsettled:
        The races the evidence given to :func:`plan_chain` did not settle (its value is not
        one the race can produce): the model is wrong there.
    """

    number: int
    time_ms: int
    kind: str
    decided: Mapping[str, ClientAssignment]
    moves: tuple[Move, ...]
    withheld: tuple[tuple[TaskId, str], ...]
    probing_rebalance_needed: bool
    lags: Mapping[str, Mapping[TaskId, int]] = field(default_factory=dict)
    races: tuple[Race, ...] = ()
    unsettled: tuple[Race, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The rebalance as a JSON document (tasks as ``1_3``)."""
        return {
            "rebalance": self.number,
            "time_ms": self.time_ms,
            "kind": self.kind,
            "probing_rebalance_needed": self.probing_rebalance_needed,
            "moves": [{"task": str(m.task), "from": m.source, "to": m.target} for m in self.moves],
            "withheld": [{"task": str(t), "client": c} for t, c in self.withheld],
            "decided": {
                pid: {
                    "active": [str(t) for t in c.active],
                    "standby": [str(t) for t in c.standby],
                    "warmup": [str(t) for t in c.warmup],
                }
                for pid, c in self.decided.items()
            },
            "lags": {
                pid: {str(t): lag for t, lag in sorted(lags.items())}
                for pid, lags in self.lags.items()
            },
            "races": [r.to_json() for r in self.races],
            "unsettled": [r.to_json() for r in self.unsettled],
        }


@dataclass(frozen=True)
class Chain:
    """Every rebalance from a change until the group stops rebalancing.

    Attributes
    ----------
    assignor:
        The assignor's name.
    rebalances:
        In order.
    converged:
        False when ``max_rebalances`` cut the chain short or it repeats itself.
    stable_ms:
        Milliseconds from the change until the last decision's actives all serve.
    threads_known:
        Whether the input listed each client's stream threads with what they own; when not,
        the first rebalance spreads each client's previous tasks over its threads as Kafka's
        thread assignment would from scratch.
    races:
        The race policy the chain was planned with (:data:`RACE_POLICIES`).
    if_late:
        When the chain has races and was planned with the model's assumption: the same chain
        with every racing replica late (not initialised by its follow-up).
    """

    assignor: str
    rebalances: tuple[ChainRebalance, ...]
    converged: bool
    stable_ms: int
    threads_known: bool
    races: str = "model"
    if_late: Chain | None = None

    @property
    def racing_rebalances(self) -> tuple[int, ...]:
        """Numbers of the rebalances whose input depends on a race."""
        return tuple(r.number for r in self.rebalances if r.races)

    def count(self, kind: str) -> int:
        """Rebalances of one kind."""
        return sum(r.kind == kind for r in self.rebalances)

    @property
    def moves(self) -> int:
        """Active moves over the chain."""
        return sum(len(r.moves) for r in self.rebalances)

    @property
    def final(self) -> Mapping[str, ClientAssignment]:
        """The last decision."""
        return self.rebalances[-1].decided

    def to_json(self) -> dict[str, Any]:
        """The chain as a JSON document."""
        return {
            "assignor": self.assignor,
            "converged": self.converged,
            "threads_known": self.threads_known,
            "rebalances": len(self.rebalances),
            "follow_ups": self.count(FOLLOW_UP),
            "probing_rebalances": self.count(PROBING),
            "moves": self.moves,
            "stable_ms": self.stable_ms,
            "races": self.races,
            "racing_rebalances": list(self.racing_rebalances),
            "if_late": None if self.if_late is None else self.if_late.summary(self.final),
            "chain": [r.to_json() for r in self.rebalances],
        }

    def summary(self, final: Mapping[str, ClientAssignment]) -> dict[str, Any]:
        """Counts, time to stable, and the actives placed otherwise than in ``final``."""
        return {
            "rebalances": len(self.rebalances),
            "follow_ups": self.count(FOLLOW_UP),
            "probing_rebalances": self.count(PROBING),
            "moves": self.moves,
            "stable_ms": self.stable_ms,
            "actives_placed_otherwise": _placed_otherwise(self.final, final),
        }


def _partitions(state: ClusterState) -> Mapping[TaskId, tuple[TopicPartition, ...]]:
    """Each task's source partitions; a stand-in partition per task when the input has none
    (only who owns a task matters for withholding, and Kafka withholds whole tasks)."""
    if state.task_partitions is not None:
        return state.task_partitions
    return {t: ((f"__subtopology-{t.subtopology}", t.partition),) for t in state.all_tasks}


def _member_ids(client: ClientState) -> list[str]:
    # Kafka names them <client.id>-StreamThread-<n>-consumer-<suffix>: one client's members sort
    # by thread number (up to 9 threads).
    return [f"{client.id}-StreamThread-{n}-consumer" for n in range(1, client.capacity + 1)]


def with_consumers(state: ClusterState) -> tuple[ClusterState, bool]:
    """``state`` with every client's stream threads, each owning its previous actives.

    A client given without ``consumers`` gets ``capacity`` members; its previous tasks are
    spread over them by Kafka's thread assignment (``assignTasksToThreads``) as if decided now.

    Returns
    -------
    (ClusterState, bool)
        The state (with ``task_partitions``) and whether every client listed its threads.
    """
    from streams_assign.assignors.threads import assign_client_tasks_to_threads

    partitions = _partitions(state)
    known = True
    clients = []
    for client in state.clients:
        if client.consumers is not None:
            clients.append(
                replace(
                    client,
                    consumers=tuple(
                        c
                        if c.owned_partitions
                        else replace(
                            c,
                            owned_partitions=tuple(p for t in c.prev_active for p in partitions[t]),
                        )
                        for c in client.consumers
                    ),
                )
            )
            continue
        known = known and not client.prev_active
        bare = replace(client, consumers=tuple(ConsumerState(m) for m in _member_ids(client)))
        previous = ClientAssignment(active=client.prev_active, standby=client.prev_standby)
        members, active, standby = assign_client_tasks_to_threads(state, bare, previous)
        consumers = tuple(
            ConsumerState(
                member,
                prev_active=tuple(sorted(active[member])),
                prev_standby=tuple(sorted(standby[member])),
                owned_partitions=tuple(p for t in sorted(active[member]) for p in partitions[t]),
            )
            for member in members
        )
        clients.append(replace(client, consumers=consumers))
    return replace(state, clients=tuple(clients), task_partitions=partitions), known


def _decide(state: ClusterState, assignor: str) -> tuple[Assignment, Assignment]:
    """The task assignor's decision and the leader's final one (threads, withholding)."""
    from streams_assign.assignors import ASSIGNORS, get_assignor
    from streams_assign.assignors.fallback import select_assignor
    from streams_assign.assignors.threads import assign_tasks_to_consumers

    name = select_assignor(state, assignor)
    if name in ASSIGNORS and getattr(get_assignor(name), "decided_by_broker", False):
        raise StreamsAssignError(f"{assignor}: decided by the broker, not a classic group leader")
    decided = get_assignor(name).assign(state)
    # The probing deadline needs the leader's clock; the chain keeps time itself.
    clocked = replace(state, leader=None, now_ms=0)
    return decided, assign_tasks_to_consumers(clocked, decided)


def _moves(decided: Assignment, owner: dict[TaskId, str]) -> tuple[Move, ...]:
    """Actives decided on another client than the last decision (or the input) put them on;
    a withheld task assigned again after its revocation is not a second move."""
    moves = [
        Move(task, owner.get(task), pid)
        for pid, client in decided.clients.items()
        for task in client.active
        if owner.get(task) != pid
    ]
    return tuple(sorted(moves, key=lambda m: (m.task, m.target)))


def _after(
    state: ClusterState,
    final: Assignment,
    elapsed_ms: int,
    rates: RestoreRates,
    follow_up: bool,
    settle: Settle,
    reporting: Callable[[str], Mapping[int, frozenset[TaskId]]] = lambda pid: {},
) -> tuple[ClusterState, tuple[Race, ...], tuple[Race, ...]]:
    """What each client reports ``elapsed_ms`` after the decision ``final`` (withheld tasks
    revoked by their owners, checkpointed on close), the races of an immediate follow-up
    (``follow_up``), and those ``settle`` left to the model's assumption.

    Before a probing rebalance every replica restores ``elapsed_ms`` at its rate. Before an
    immediate follow-up, each replica still restoring is a :class:`Race` between having
    restored at its rate and having restored nothing (not even initialised when new), its value
    taken from ``settle``; the model assumes nothing for a task new to a member that rejoins at
    once, the rate otherwise."""
    partitions = _partitions(state)
    stateful = set(state.stateful_tasks)
    clients = []
    races: list[Race] = []
    unsettled: list[Race] = []
    for client in state.clients:
        held = final.clients[client.id]
        roles = held.consumers or {}
        quick = new_to_quick_members(state, final, client.id, partitions) if follow_up else set()
        lags: dict[TaskId, int] = {}
        for task in sorted(stateful):
            records = rates.restored_in(client.id, task, elapsed_ms)
            value, race = report(state, client, task, held, records, task in quick)
            if race is not None and not follow_up:
                kept = task in held.active or task in held.standby
                value, race = race.ready if kept else race.late, None
            if race is not None:
                races.append(race)
                settled = settle(race)
                if isinstance(settled, Race):
                    unsettled.append(race)
                    settled = race.assumed
                value = settled
            if value is not None:
                lags[task] = value
        active = set(held.active)
        unrun = set(lags) - {t for r in roles.values() for t in (*r["active"], *r["standby"])}
        logged = reporting(client.id)
        consumers = tuple(
            ConsumerState(
                member,
                prev_active=tuple(sorted(r["active"])),
                prev_standby=tuple(
                    sorted({*r["standby"], *(unrun & logged.get(_thread_number(member), set()))})
                ),
                owned_partitions=tuple(p for t in sorted(r["active"]) for p in partitions[t]),
            )
            for member, r in roles.items()
        )
        clients.append(
            replace(
                client,
                prev_active=tuple(sorted(active)),
                prev_standby=tuple(sorted(set(lags) - active)),
                task_lags=lags,
                task_offset_sums=None,
                consumers=consumers,
            )
        )
    return replace(state, clients=tuple(clients)), tuple(races), tuple(unsettled)


def _restore_ms(state: ClusterState, final: Assignment, rates: RestoreRates) -> int:
    longest = 0
    for client in state.clients:
        for task in set(final.clients[client.id].active) & set(state.stateful_tasks):
            lag = state.lag(client, task)
            if lag > 0 and lag != LATEST_OFFSET:
                longest = max(longest, math.ceil(lag * 1000 / rates.rate(client.id, task)))
    return longest


def plan_chain(
    cluster: ClusterState,
    assignor: str,
    rates: RestoreRates,
    *,
    first_ms: int = 0,
    follow_up_ms: int = 1000,
    max_rebalances: int = 100,
    races: str = "model",
    evidence: RaceEvidence | None = None,
) -> Chain:
    """Follow the rebalances after a change until the group is stable.

    Parameters
    ----------
    cluster:
        The first rebalance's input (:func:`~streams_assign.simulation.whatif.apply_changes`).
    assignor:
        A classic (leader-side) assignor of :data:`streams_assign.assignors.ASSIGNORS`.
    rates:
        Restore rates, records/s.
    first_ms:
        When the first rebalance happens (``session.timeout.ms`` after a crash), ms.
    follow_up_ms:
        Milliseconds from a decision with withheld tasks to the follow-up rebalance (>= 0).
    max_rebalances:
        Rebalances at most (>= 1).
    races:
        How the timing races of immediate follow-ups (:class:`Race`) are settled, one of
        :data:`RACE_POLICIES`: ``"model"`` (a thread that rejoins at once has initialised
        nothing, one that rejoins with its heartbeat has restored at its rate), ``"ready"``
        or ``"late"`` (every racing replica so). With ``"model"`` and races, the chain also
        carries the one where every racing replica is late (``Chain.if_late``).
    evidence:
        What the leader reported at each rebalance of a real chain: settles each race with the
        value the leader saw, when the race can produce it (else the policy decides and the
        rebalance lists the race as ``unsettled``).

    Returns
    -------
    Chain

    Raises
    ------
    ValueError
        For a negative ``first_ms`` / ``follow_up_ms``, ``max_rebalances`` < 1 or an unknown
        ``races``.
    StreamsAssignError
        When the assignor refuses the state or is decided by the broker (streams groups).
    """
    if races not in RACE_POLICIES:
        raise ValueError(f"races must be one of {', '.join(RACE_POLICIES)}, got {races!r}")
    policy = races
    if first_ms < 0 or follow_up_ms < 0 or max_rebalances < 1:
        raise ValueError(
            f"first_ms, follow_up_ms must be >= 0 and max_rebalances >= 1, got {first_ms}, "
            f"{follow_up_ms}, {max_rebalances}"
        )
    interval = cluster.configs.probing_rebalance_interval_ms
    state, known = with_consumers(with_changelog_sizes(cluster))
    rebalances: list[ChainRebalance] = []
    time_ms, kind = first_ms, MEMBERSHIP_CHANGE
    seen: set[Any] = set()
    owner = {task: c.id for c in state.clients for task in c.prev_active}
    converged = False
    final: Assignment | None = None
    pending: tuple[Race, ...] = ()
    unsettled: tuple[Race, ...] = ()
    for number in range(1, max_rebalances + 1):
        decided, final = _decide(state, assignor)
        withheld = tuple(
            sorted(
                (task, pid)
                for pid, c in final.clients.items()
                for roles in (c.consumers or {}).values()
                for task in roles.get("revoking", ())
            )
        )
        rebalances.append(
            ChainRebalance(
                number,
                time_ms,
                kind,
                dict(decided.clients),
                _moves(decided, owner),
                withheld,
                decided.probing_rebalance_needed,
                _lags(state),
                pending,
                unsettled,
            )
        )
        owner = {t: pid for pid, c in decided.clients.items() for t in c.active}
        if withheld:
            elapsed, kind = follow_up_ms, FOLLOW_UP
        elif decided.probing_rebalance_needed:
            elapsed, kind = interval, PROBING
        else:
            converged = True
            break
        key = (kind, _fingerprint(state), _fingerprint_decision(decided))
        if key in seen:  # the same inputs again: every further rebalance repeats this one
            break
        seen.add(key)
        state, pending, unsettled = _after(
            state,
            final,
            elapsed,
            rates,
            kind == FOLLOW_UP,
            settler(number + 1, policy, evidence),
            _reporting(number + 1, evidence),
        )
        time_ms += elapsed
    if final is None:  # pragma: no cover - max_rebalances >= 1 runs the loop
        raise StreamsAssignError("no rebalance ran")
    chain = Chain(
        assignor=assignor,
        rebalances=tuple(rebalances),
        converged=converged,
        stable_ms=time_ms + _restore_ms(state, final, rates),
        threads_known=known,
        races=policy,
    )
    if policy == "model" and evidence is None and any(r.races for r in rebalances):
        late = plan_chain(
            cluster,
            assignor,
            rates,
            first_ms=first_ms,
            follow_up_ms=follow_up_ms,
            max_rebalances=max_rebalances,
            races="late",
        )
        chain = replace(chain, if_late=late)
    return chain


def _thread_number(member_id: str) -> int:
    """The stream thread number in a member id (``...-StreamThread-<n>-consumer...``), 0 when
    it has none."""
    match = _THREAD.search(member_id)
    return int(match[1]) if match else 0


def _reporting(
    number: int, evidence: RaceEvidence | None
) -> Callable[[str], Mapping[int, frozenset[TaskId]]]:
    """Which thread of a client reported which tasks at rebalance ``number``, from the
    evidence (nothing without it: the plan then gives no thread a directory none of its
    threads runs)."""
    if evidence is None:
        return lambda pid: {}
    return lambda pid: evidence.reporting_threads(number, pid)


def _placed_otherwise(
    one: Mapping[str, ClientAssignment], other: Mapping[str, ClientAssignment]
) -> int:
    """Active tasks on another client in ``one`` than in ``other``."""
    where = {t: pid for pid, c in other.items() for t in c.active}
    return sum(where.get(t) != pid for pid, c in one.items() for t in c.active)


def _lags(state: ClusterState) -> dict[str, dict[TaskId, int]]:
    """Each client's lag per stateful task, as the leader computes it."""
    tasks = sorted(state.stateful_tasks)
    return {c.id: {t: state.lag(c, t) for t in tasks} for c in state.clients}


def _fingerprint(state: ClusterState) -> Any:
    return tuple((c.id, c.prev_active, tuple(sorted(c.task_lags.items()))) for c in state.clients)


def _fingerprint_decision(decision: Assignment) -> Any:
    return tuple((pid, c.active, c.standby) for pid, c in decision.clients.items())
