"""Settings and results of the timeline simulator (:mod:`streams_assign.protocol.simulator`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "PROTOCOLS",
    "REASONS",
    "EventReport",
    "ProtocolSettings",
    "SimulationResult",
]

REASONS = ("starting", "restoring", "revoked", "unowned", "paused")
PROTOCOLS = ("eager", "cooperative")


@dataclass(frozen=True)
class ProtocolSettings:
    """Client and broker settings of the simulated group (Kafka's defaults).

    Attributes
    ----------
    session_timeout_ms, rebalance_timeout_ms, heartbeat_interval_ms:
        ``session.timeout.ms``, ``max.poll.interval.ms`` (the rebalance timeout) and
        ``heartbeat.interval.ms``, milliseconds.
    initial_rebalance_delay_ms:
        ``group.initial.rebalance.delay.ms``, milliseconds.
    request_latency_ms:
        One-way client-broker latency, milliseconds.
    static_membership:
        Members set ``group.instance.id`` (KIP-345): no LeaveGroup on close, a restart within
        the session timeout keeps the generation.
    probing_rebalance_interval_ms:
        ``probing.rebalance.interval.ms``: when the Streams assignor asks for a probing
        rebalance, the leader rejoins after this delay, milliseconds.
    restore_records_per_sec:
        Changelog records a member restores per second, shared by its restoring tasks.
    state_records_per_task:
        Changelog size of a stateful task at start, records (0: tasks are stateless).
    changelog_growth_records_per_sec:
        Records appended to each stateful task's changelog per second.
    task_close_ms, task_open_ms:
        Time a member takes to close (commit, flush) one revoked task before it rejoins or
        leaves, and to initialise one new task before it runs, milliseconds; tasks are closed
        and opened one after the other.
    heartbeat_jitter:
        Members heartbeat at their own phase in the interval (seeded by ``seed``) instead of
        all at once.
    seed:
        Seed of the heartbeat phases.
    """

    session_timeout_ms: int = 45_000
    rebalance_timeout_ms: int = 300_000
    heartbeat_interval_ms: int = 3_000
    initial_rebalance_delay_ms: int = 3_000
    request_latency_ms: int = 5
    static_membership: bool = False
    probing_rebalance_interval_ms: int = 600_000
    restore_records_per_sec: float = 10_000.0
    state_records_per_task: int = 0
    changelog_growth_records_per_sec: float = 0.0
    task_close_ms: int = 0
    task_open_ms: int = 0
    heartbeat_jitter: bool = True
    seed: int = 0


@dataclass
class EventReport:
    """What one timeline event caused, until the next event (or the end).

    Attributes
    ----------
    index, t_ms, kind:
        The event's position, time (ms) and type.
    rebalances:
        Generations the group went through in the window.
    generation:
        The group's generation at the window's end.
    task_seconds_unavailable:
        Per reason, task-seconds stopped in the window.
    records_restored:
        Changelog records replayed in the window (actives and warmups).
    time_to_stable_ms:
        From the event until the group was Stable with every task running (and stayed so
        to the window's end); ``None`` if that never happened in the window.
    """

    index: int
    t_ms: int
    kind: str
    rebalances: int = 0
    generation: int = 0
    task_seconds_unavailable: dict[str, float] = field(default_factory=dict)
    time_to_stable_ms: int | None = None
    records_restored: int = 0


@dataclass
class SimulationResult:
    """The outcome of one simulated timeline under one protocol.

    Attributes
    ----------
    protocol:
        ``eager`` or ``cooperative``.
    events:
        One :class:`EventReport` per timeline event.
    series:
        ``(t_ms, running, starting, restoring, revoked, unowned, paused)`` after each change.
    group_states:
        ``(t_ms, state, generation)`` at every change of the coordinator's group state.
    rebalances, generation:
        Completed join phases and the final generation.
    task_seconds_unavailable:
        Per reason, over the whole run.
    records_restored:
        Changelog records replayed over the run.
    stop_the_world_ms:
        Time with tasks assigned before but none running (after the first assignment).
    final_status:
        Per task, ``running`` or the reason it is stopped, at the end.
    final_members:
        The members running at the end.
    violations:
        Broken invariants (a member handed an assignment of an older generation than the
        group's; a task owned by two members at once); empty when the protocol held.
    """

    protocol: str
    events: list[EventReport]
    series: list[tuple[int, ...]]
    group_states: list[tuple[int, str, int]]
    rebalances: int
    generation: int
    task_seconds_unavailable: dict[str, float]
    stop_the_world_ms: int
    records_restored: int
    final_status: dict[str, str]
    violations: list[str]
    duration_ms: int
    final_members: list[str] = field(default_factory=list)

    @property
    def total_task_seconds_unavailable(self) -> float:
        """Task-seconds stopped over the run, all reasons together."""
        return sum(self.task_seconds_unavailable.values())

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary (the series and states as lists)."""
        stopped: dict[str, int] = {}
        for status in self.final_status.values():
            stopped[status] = stopped.get(status, 0) + 1
        return {
            "protocol": self.protocol,
            "duration_ms": self.duration_ms,
            "rebalances": self.rebalances,
            "generation": self.generation,
            "task_seconds_unavailable": {
                k: round(v, 3) for k, v in self.task_seconds_unavailable.items()
            },
            "total_task_seconds_unavailable": round(self.total_task_seconds_unavailable, 3),
            "stop_the_world_ms": self.stop_the_world_ms,
            "records_restored": self.records_restored,
            "final_tasks": stopped,
            "final_members": list(self.final_members),
            "final_stopped": {t: s for t, s in sorted(self.final_status.items()) if s != "running"},
            "violations": list(self.violations),
            "events": [
                {
                    "i": e.index,
                    "t": e.t_ms,
                    "type": e.kind,
                    "rebalances": e.rebalances,
                    "generation": e.generation,
                    "task_seconds_unavailable": {
                        k: round(v, 3) for k, v in e.task_seconds_unavailable.items()
                    },
                    "time_to_stable_ms": e.time_to_stable_ms,
                    "records_restored": e.records_restored,
                }
                for e in self.events
            ],
            "group_states": [list(s) for s in self.group_states],
        }
