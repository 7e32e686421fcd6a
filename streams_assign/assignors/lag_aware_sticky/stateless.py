"""Stateless actives: Kafka's least-loaded deal, sticky within its counts."""

from __future__ import annotations

import heapq

from streams_assign.model import ClusterState, TaskId

__all__ = ["assign_stateless_tasks"]


def assign_stateless_tasks(cluster: ClusterState, active_counts: list[int]) -> list[list[TaskId]]:
    """Stateless tasks, one subtopology at a time, each to the least-loaded client.

    A task goes to the client with the fewest actives per thread (Kafka's
    ``assignStatelessActiveTasks`` rule), then the fewest tasks of its subtopology, then one that
    ran a task of that subtopology before and has not got it back yet, then the smaller process
    id. Within those
    counts each client gets back the tasks it ran before.

    Parameters
    ----------
    cluster:
        The rebalance input.
    active_counts:
        Per client (UUID order), its stateful actives.

    Returns
    -------
    list[list[TaskId]]
        Per client, its stateless actives.
    """
    clients = cluster.clients
    n_clients = len(clients)
    capacity = [client.capacity for client in clients]
    load = list(active_counts)
    by_sub: dict[tuple[str | None, int], list[TaskId]] = {}
    for task in cluster.stateless_tasks:
        by_sub.setdefault((task.topology_name, task.subtopology), []).append(task)
    previous: dict[TaskId, int] = {}
    for c, client in enumerate(clients):
        for task in client.prev_active:
            previous.setdefault(task, c)
    result: list[list[TaskId]] = [[] for _ in range(n_clients)]
    for tasks in by_sub.values():
        returning = [0] * n_clients
        for task in tasks:
            if task in previous:
                returning[previous[task]] += 1
        quota = [0] * n_clients
        heap = [(load[c] / capacity[c], 0, returning[c] == 0, c) for c in range(n_clients)]
        heapq.heapify(heap)
        for _ in tasks:
            _, _, _, c = heapq.heappop(heap)
            quota[c] += 1
            load[c] += 1
            returning[c] = max(0, returning[c] - 1)
            heapq.heappush(heap, (load[c] / capacity[c], quota[c], returning[c] == 0, c))
        rest = []
        for task in tasks:
            c = previous.get(task, -1)
            if c >= 0 and quota[c] > 0:
                result[c].append(task)
                quota[c] -= 1
            else:
                rest.append(task)
        slots = (c for c in range(n_clients) for _ in range(quota[c]))
        for task in rest:
            result[next(slots)].append(task)
    return result
