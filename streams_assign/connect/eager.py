"""Connect's ``EagerAssignor``: stop the world, then deal connectors and tasks round robin."""

from __future__ import annotations

from streams_assign.connect.model import ConnectorTaskId, ConnectRound
from streams_assign.connect.result import RoundResult, WorkerAssignment

__all__ = ["eager_assign"]


def eager_assign(round_: ConnectRound) -> RoundResult:
    """One eager rebalance: every worker has stopped everything; all work is dealt anew.

    Connectors (sorted by name) and then their tasks (sorted) go round robin over the members
    sorted by member id, the position carrying over from connectors to tasks. Reported
    ownership is ignored.

    Parameters
    ----------
    round_:
        The members, the configuration and the config offset every member has read.

    Returns
    -------
    RoundResult
        Each member's whole assignment (``version`` 0, nothing revoked, no delay).

    References
    ----------
    ``org.apache.kafka.connect.runtime.distributed.EagerAssignor`` (Kafka 4.x), KIP-415
    (which it predates: the eager protocol ``connect.protocol=eager``).
    """
    members = sorted(m.worker_id for m in round_.members)
    connectors: dict[str, list[str]] = {m: [] for m in members}
    tasks: dict[str, list[ConnectorTaskId]] = {m: [] for m in members}
    position = 0
    ordered = sorted(round_.connectors)
    for connector in ordered:
        connectors[members[position % len(members)]].append(connector)
        position += 1
    for connector in ordered:
        for task in range(round_.connectors[connector]):
            tasks[members[position % len(members)]].append(ConnectorTaskId(connector, task))
            position += 1
    workers = {
        m.worker_id: WorkerAssignment(
            tuple(connectors[m.worker_id]),
            tuple(tasks[m.worker_id]),
            config_offset=round_.config_offset,
        )
        for m in round_.members
    }
    return RoundResult(
        round_.leader, round_.generation, round_.config_offset, round_.time_ms, workers
    )
