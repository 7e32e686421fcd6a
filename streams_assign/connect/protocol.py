"""What the leader reads from a worker's JoinGroup metadata, in the order it reads it.

``ConnectProtocol.Assignment#asMap()`` serializes a worker's connectors through a ``HashSet``
and then appends its tasks per connector (a ``LinkedHashMap`` keyed by connector);
``ExtendedAssignment.fromStruct`` reads connectors and tasks back in that order. The assignor
revokes the *first* connectors/tasks of a worker in that order, so it is replayed exactly.
"""

from __future__ import annotations

from streams_assign.connect.model import ConnectorTaskId, WorkerMember
from streams_assign.java.hash_order import JavaHashSet, java_string_hash_code

__all__ = ["java_hash_set_capacity", "reported_ownership"]


def java_hash_set_capacity(size: int) -> int:
    """Initial capacity of ``new HashSet<>(collection)``: ``max(size / .75f + 1, 16)``."""
    return max(int(size / 0.75) + 1, 16)


def reported_ownership(member: WorkerMember) -> tuple[list[str], list[ConnectorTaskId]]:
    """The worker's connectors and tasks as the leader deserializes them.

    Returns
    -------
    tuple[list[str], list[ConnectorTaskId]]
        Connectors in ``HashSet`` order; tasks grouped by connector, the worker's own
        connectors first (in that ``HashSet`` order), then other connectors in order of first
        appearance, each connector's tasks in the worker's order.
    """
    connectors = list(
        JavaHashSet(
            java_string_hash_code,
            member.owned_connectors,
            java_hash_set_capacity(len(member.owned_connectors)),
        )
    )
    by_connector: dict[str, list[int]] = {c: [] for c in connectors}
    for task in member.owned_tasks:
        by_connector.setdefault(task.connector, []).append(task.task)
    tasks = [ConnectorTaskId(c, t) for c, numbers in by_connector.items() for t in numbers]
    return connectors, tasks
