"""A classic cluster state as the streams group it would form (``group.protocol=streams``).

Import :func:`from_cluster_state` from :mod:`streams_assign.streams_group`.
"""

from __future__ import annotations

from collections.abc import Mapping

from streams_assign.model import ClusterState, TaskId
from streams_assign.streams_group.model import (
    StreamsGroupConfigs,
    StreamsGroupMember,
    StreamsGroupState,
    Subtopology,
    _error,
    java_string_order,
)

__all__ = [
    "from_cluster_state",
]


def from_cluster_state(cluster: ClusterState) -> StreamsGroupState:
    """The streams group a classic cluster state would form under ``group.protocol=streams``.

    For operators migrating an application to KIP-1071 groups: the same processes, tasks and
    prior ownership, as the broker-side assignor would see them.

    - Each client becomes a process; each of its stream threads a member. With ``consumers``
      listed, a member per consumer keeps that consumer's id and previous tasks; otherwise the
      client gets ``capacity`` members ``<client id>-<i>`` and its previous active and standby
      tasks are dealt to them round-robin in task order.
    - Subtopology ``s`` has as many partitions as the highest partition of ``s`` plus one;
      it is stateful when its tasks are stateful tasks of the cluster state.
    - Each member reports the client's non-negative ``task_offset_sums`` (sentinels dropped),
      leaving out its own active tasks, as a 4.4 Streams client does.
    - Members are listed in the iteration order of Kafka's ``HashMap`` keyed by member id
      (``TargetAssignmentBuilder``), filled client by client.

    Parameters
    ----------
    cluster:
        A classic cluster state (see :mod:`streams_assign.scenario`).

    Returns
    -------
    StreamsGroupState

    Raises
    ------
    InvalidStreamsGroupError
        For named topologies (``name__1_3``), which streams groups do not have.
    """
    from streams_assign.java.hash_order import JavaHashMap, java_string_hash_code

    partitions: dict[str, int] = {}
    stateful: dict[str, bool] = {}
    for task in cluster.all_tasks:
        if task.topology_name is not None:
            raise _error(
                None, "stateful_tasks", f"named topology task {task} has no streams-group form"
            )
        sub = str(task.subtopology)
        partitions[sub] = max(partitions.get(sub, 0), task.partition + 1)
        stateful.setdefault(sub, False)
    for task in cluster.stateful_tasks:
        stateful[str(task.subtopology)] = True
    topology = {
        s: Subtopology(partitions=partitions[s], stateful=stateful[s])
        for s in sorted(partitions, key=java_string_order)
    }
    ordered: JavaHashMap[str, StreamsGroupMember] = JavaHashMap(java_string_hash_code)
    for client in cluster.clients:
        offsets = {
            t: o
            for t, o in (client.task_offset_sums or {}).items()
            if o >= 0 and t.topology_name is None
        }
        if client.consumers is not None:
            owned = [
                (c.member_id, list(c.prev_active), list(c.prev_standby)) for c in client.consumers
            ]
        else:
            owned = [(f"{client.id}-{i}", [], []) for i in range(client.capacity)]
            for i, task in enumerate(sorted(client.prev_active)):
                owned[i % len(owned)][1].append(task)
            for i, task in enumerate(sorted(client.prev_standby)):
                owned[i % len(owned)][2].append(task)
        for member_id, active, standby in owned:
            own = set(active)
            ordered.put(
                member_id,
                StreamsGroupMember(
                    member_id=member_id,
                    process_id=client.id,
                    rack_id=client.rack,
                    client_tags=dict(client.tags),
                    active_tasks=_grouped(active),
                    standby_tasks=_grouped(standby),
                    task_offsets=_grouped_offsets(
                        {t: o for t, o in offsets.items() if t not in own}
                    ),
                ),
            )
    return StreamsGroupState(
        configs=StreamsGroupConfigs(
            num_standby_replicas=cluster.configs.num_standby_replicas,
            rack_aware_assignment_tags=tuple(cluster.configs.rack_aware_assignment_tags),
        ),
        topology=topology,
        members=tuple(ordered[m] for m in ordered),
        meta={"kind": "from_cluster_state", "name": cluster.name},
    )


def _grouped(tasks: list[TaskId]) -> dict[str, tuple[int, ...]]:
    grouped: dict[str, list[int]] = {}
    for task in tasks:
        grouped.setdefault(str(task.subtopology), []).append(task.partition)
    return {s: tuple(sorted(ps)) for s, ps in grouped.items()}


def _grouped_offsets(offsets: Mapping[TaskId, int]) -> dict[str, dict[int, int]]:
    grouped: dict[str, dict[int, int]] = {}
    for task in sorted(offsets):
        grouped.setdefault(str(task.subtopology), {})[task.partition] = offsets[task]
    return grouped
