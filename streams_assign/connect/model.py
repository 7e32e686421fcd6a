"""Value types of a Kafka Connect cluster as Connect's assignors see it, round by round.

A :class:`ConnectSequence` is a series of rebalance rounds of one Connect group; each
:class:`ConnectRound` lists the members (workers) that joined, with the connectors and tasks
each reports it runs, and the connector configuration the leader holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from streams_assign.java.hash_order import int32, java_string_hash_code

__all__ = [
    "CONNECT_ASSIGNORS",
    "ConnectRound",
    "ConnectSequence",
    "ConnectorTaskId",
    "DEFAULT_MAX_DELAY_MS",
    "PROTOCOL_VERSIONS",
    "WorkerMember",
]

CONNECT_ASSIGNORS = ("eager", "incremental")
"""``connect.protocol`` families: ``eager`` (``EagerAssignor``) and ``incremental``
(``IncrementalCooperativeAssignor``)."""

PROTOCOL_VERSIONS = {"compatible": 1, "sessioned": 2}
"""Connect protocol name -> ``ExtendedAssignment`` version (``CONNECT_PROTOCOL_V1``/``V2``)."""

DEFAULT_MAX_DELAY_MS = 300_000
"""Default ``scheduled.rebalance.max.delay.ms`` (milliseconds)."""


class ConnectorTaskId(NamedTuple):
    """Connect's ``ConnectorTaskId``: a connector name and a task number (>= 0).

    Tuples order by connector then task, as ``ConnectorTaskId.compareTo`` does.
    """

    connector: str
    task: int

    def java_hash_code(self) -> int:
        """``ConnectorTaskId.hashCode()``: ``31 * connector.hashCode() + task``.

        Examples
        --------
        >>> ConnectorTaskId("ct1", 0).java_hash_code()
        3062304
        """
        return int32(31 * java_string_hash_code(self.connector) + self.task)


@dataclass(frozen=True)
class WorkerMember:
    """One worker's JoinGroup metadata (``ExtendedWorkerState``).

    Attributes
    ----------
    worker_id:
        The group member id of the worker.
    url:
        The worker's REST URL (the leader's is copied into every assignment).
    owned_connectors, owned_tasks:
        What the worker reports it runs (its current assignment).
    """

    worker_id: str
    url: str
    owned_connectors: tuple[str, ...] = ()
    owned_tasks: tuple[ConnectorTaskId, ...] = ()


@dataclass(frozen=True)
class ConnectRound:
    """One rebalance: the members that joined and what the leader knows.

    Attributes
    ----------
    time_ms:
        Wall-clock time of the rebalance (milliseconds; non-decreasing over a sequence).
    leader:
        Member id of the group leader (runs the assignor).
    connectors:
        Connector -> configured task count in force from this round on.
    config_offset:
        Offset of the config topic the leader (and every member) has read.
    generation, last_completed_generation:
        The group generation of this rebalance and the last one the leader completed.
    members:
        The members in JoinGroup order.
    note:
        Free text, ignored.
    """

    time_ms: int
    leader: str
    connectors: dict[str, int]
    config_offset: int
    generation: int
    last_completed_generation: int
    members: tuple[WorkerMember, ...]
    note: str = ""


@dataclass(frozen=True)
class ConnectSequence:
    """A series of rebalances of one Connect group under one assignor.

    Attributes
    ----------
    assignor:
        ``eager`` or ``incremental``.
    protocol:
        ``sessioned`` or ``compatible`` (incremental only; decides ``version``).
    scheduled_rebalance_max_delay_ms:
        ``scheduled.rebalance.max.delay.ms`` (milliseconds).
    rounds:
        The rebalances in order.
    """

    assignor: str
    protocol: str
    scheduled_rebalance_max_delay_ms: int
    rounds: tuple[ConnectRound, ...]
