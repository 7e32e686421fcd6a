"""What the leader sends each worker after a rebalance, and the round's record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streams_assign.connect.model import ConnectorTaskId

__all__ = ["RoundResult", "WorkerAssignment", "rounds_to_json"]


@dataclass(frozen=True)
class WorkerAssignment:
    """One worker's ``ExtendedAssignment`` (``ConnectProtocol.Assignment`` for eager).

    Attributes
    ----------
    assigned_connectors, assigned_tasks:
        Incremental: what the worker starts now (the increment). Eager: its whole assignment.
    revoked_connectors, revoked_tasks:
        Incremental: what the worker stops before the follow-up rebalance. Eager: empty (every
        worker already stopped everything when it rejoined).
    delay_ms:
        ``scheduled.rebalance.max.delay.ms`` countdown until the next planned rebalance
        (milliseconds; 0 = none).
    error:
        ``Assignment.NO_ERROR`` (0) or ``CONFIG_MISMATCH`` (1).
    version:
        0 eager, 1 compatible, 2 sessioned.
    config_offset:
        The config-topic offset the assignment was computed at.
    """

    assigned_connectors: tuple[str, ...]
    assigned_tasks: tuple[ConnectorTaskId, ...]
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[ConnectorTaskId, ...] = ()
    delay_ms: int = 0
    error: int = 0
    version: int = 0
    config_offset: int = 0

    def to_json(self) -> dict[str, Any]:
        """The expected-file form: every list sorted."""
        return {
            "assigned_connectors": sorted(self.assigned_connectors),
            "assigned_tasks": [[t.connector, t.task] for t in sorted(self.assigned_tasks)],
            "revoked_connectors": sorted(self.revoked_connectors),
            "revoked_tasks": [[t.connector, t.task] for t in sorted(self.revoked_tasks)],
            "delay_ms": self.delay_ms,
            "error": self.error,
            "version": self.version,
            "config_offset": self.config_offset,
        }


@dataclass(frozen=True)
class RoundResult:
    """The leader's decision in one rebalance round.

    Attributes
    ----------
    leader, generation, config_offset, time_ms:
        As in the round's input (``time_ms`` in milliseconds).
    workers:
        Member id -> its assignment, in JoinGroup order.
    debug:
        Diagnostics (not part of the contract): for incremental, each member's ``reported``
        ownership in the order the assignor read it, and the ``assignor_state`` after the
        round; ``{}`` for eager.
    """

    leader: str
    generation: int
    config_offset: int
    time_ms: int
    workers: dict[str, WorkerAssignment]
    debug: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The expected-file form of the round."""
        return {
            "leader": self.leader,
            "generation": self.generation,
            "config_offset": self.config_offset,
            "time_ms": self.time_ms,
            "workers": {w: a.to_json() for w, a in self.workers.items()},
            "debug": self.debug,
        }


def rounds_to_json(rounds: list[RoundResult]) -> dict[str, Any]:
    """The expected-file document of a sequence: ``{"rounds": [...]}``."""
    return {"rounds": [r.to_json() for r in rounds]}
