"""Time Kafka's rack-aware optimisation (KIP-925) inside the HA assignor at 100 and 1000 clients.

Usage::

    .venv/bin/python benchmarks/rack_aware_benchmark.py            # 100 and 1000 clients
    .venv/bin/python benchmarks/rack_aware_benchmark.py --clients 100 --repeat 3
    .venv/bin/python benchmarks/rack_aware_benchmark.py --write-case N SEED OUT.json

The cluster follows Kafka's ``HighAvailabilityTaskAssignorTest.shouldAssignRandomInput``
(``AssignmentTestUtils.getRandomCluster`` and friends): 50 brokers, each on its own rack; task
``i_j`` reads ``topic{i}-j`` and ``topic{i+1}-j``, each partition with two replicas; changelog
replicas on a second shuffle of the brokers; every client on a random broker rack; half the
tasks (at random) stateful with lag 0 everywhere. Tasks scale with clients (3.6 per client, as
180 tasks over 50 clients in Kafka's test).

Printed per size and strategy: the whole HA assignment, and the time spent in the rack-aware
optimiser's ``optimize_active_tasks`` (stateful and stateless) and ``optimize_standby_tasks``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

NODE_SIZE = 50
TOPIC_COUNT = 60


def uuid_for_int(n: int) -> str:
    """Kafka's ``processIdForInt(n)``: ``new UUID(0, n)``."""
    return f"00000000-0000-0000-0000-{n:012x}"


def kafka_random_cluster(
    seed: int,
    client_size: int,
    partition_size: int,
    strategy: str = "min_traffic",
    num_standby: int = 3,
    node_size: int = NODE_SIZE,
    tp_size: int = TOPIC_COUNT,
    max_capacity: int = 3,
    traffic_cost: int | None = None,
    non_overlap_cost: int | None = None,
    acceptable_recovery_lag: int = 100,
    max_warmup_replicas: int = 2,
) -> dict[str, Any]:
    """A cluster-state document shaped like Kafka's random rack-aware test input.

    Parameters
    ----------
    seed:
        Seeds every random draw (Kafka's tests use the wall clock).
    client_size, partition_size, node_size, tp_size, max_capacity:
        Kafka's ``clientSize``, ``partitionSize``, ``nodeSize``, ``tpSize``, ``maxCapacity``.
    strategy, num_standby, traffic_cost, non_overlap_cost, acceptable_recovery_lag,
    max_warmup_replicas:
        The assignment configs.

    Returns
    -------
    dict
        A document for :func:`streams_assign.formats.cluster_state.parse_cluster_state`, with the
        ``task_partitions``, ``task_changelog_partitions``, ``partition_racks`` and
        ``client_racks`` extensions.
    """
    rng = random.Random(seed)
    racks = [f"rack{i}" for i in range(node_size)]

    def shuffled_nodes() -> list[str]:
        nodes = list(racks)
        rng.shuffle(nodes)
        return nodes

    def replicas(nodes: list[str], i: int, j: int) -> list[str]:
        # Kafka's getRandomReplica: nodes (i * j) and (i * j + 1), modulo the node count.
        return [nodes[(i * j) % len(nodes)], nodes[(i * j + 1) % len(nodes)]]

    source_nodes = shuffled_nodes()
    changelog_nodes = shuffled_nodes()
    partition_racks: dict[str, list[str]] = {}
    for i in range(tp_size):
        for j in range(partition_size):
            partition_racks[f"topic{i}:{j}"] = sorted(set(replicas(source_nodes, i, j)))
            partition_racks[f"changelog-topic{i}:{j}"] = sorted(
                set(replicas(changelog_nodes, i, j))
            )
    tasks = [f"{i}_{j}" for i in range(tp_size) for j in range(partition_size)]
    task_partitions = {
        f"{i}_{j}": [[f"topic{i}", j], [f"topic{(i + 1) % tp_size}", j]]
        for i in range(tp_size)
        for j in range(partition_size)
    }
    task_changelogs = {
        f"{i}_{j}": [[f"changelog-topic{i}", j], [f"changelog-topic{(i + 1) % tp_size}", j]]
        for i in range(tp_size)
        for j in range(partition_size)
    }
    shuffled = list(tasks)
    rng.shuffle(shuffled)
    cut = rng.randint(1, len(shuffled))  # getRandomSubset(taskIds, 2)
    stateful = sorted(shuffled[:cut], key=_task_key)
    stateless = sorted(shuffled[cut:], key=_task_key)
    client_rack_order = shuffled_nodes()
    clients = []
    client_racks = {}
    for n in range(1, client_size + 1):
        pid = uuid_for_int(n)
        clients.append(
            {
                "id": pid,
                "capacity": rng.randint(1, max_capacity),
                "task_lags": {task: 0 for task in stateful},
            }
        )
        client_racks[pid] = client_rack_order[n % node_size]
    configs: dict[str, Any] = {
        "acceptable_recovery_lag": acceptable_recovery_lag,
        "max_warmup_replicas": max_warmup_replicas,
        "num_standby_replicas": num_standby,
        "rack_aware_assignment_strategy": strategy,
    }
    if traffic_cost is not None:
        configs["rack_aware_assignment_traffic_cost"] = traffic_cost
    if non_overlap_cost is not None:
        configs["rack_aware_assignment_non_overlap_cost"] = non_overlap_cost
    return {
        "name": f"kafka-random-rack-{client_size}-seed{seed}",
        "configs": configs,
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
        "clients": clients,
        "client_racks": client_racks,
        "task_partitions": task_partitions,
        "task_changelog_partitions": task_changelogs,
        "partition_racks": partition_racks,
    }


def _task_key(task: str) -> tuple[int, int]:
    sub, part = task.split("_")
    return int(sub), int(part)


def time_assignment(document: dict[str, Any], solver: str = "ortools") -> dict[str, float]:
    """Run the HA assignor once; seconds in total and in each rack-aware optimisation.

    ``solver``: ``"kafka"`` (the default of ``RackAwareTaskAssignor``: Kafka's cycle
    cancelling, Kafka's placement) or ``"ortools"`` (the fast path, same optimal cost).
    """
    from streams_assign.assignors import rack_aware
    from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor
    from streams_assign.formats.cluster_state import parse_cluster_state

    cluster = parse_cluster_state(document)
    spent = {"active": 0.0, "standby": 0.0}
    cls = rack_aware.RackAwareTaskAssignor
    previous_solver = cls.default_solver
    cls.default_solver = rack_aware.ortools_min_cost_flow if solver == "ortools" else None
    original_active, original_standby = cls.optimize_active_tasks, cls.optimize_standby_tasks

    def timed_active(self: Any, *args: Any, **kwargs: Any) -> int:
        start = time.perf_counter()
        try:
            return original_active(self, *args, **kwargs)
        finally:
            spent["active"] += time.perf_counter() - start

    def timed_standby(self: Any, *args: Any, **kwargs: Any) -> int:
        start = time.perf_counter()
        try:
            return original_standby(self, *args, **kwargs)
        finally:
            spent["standby"] += time.perf_counter() - start

    cls.optimize_active_tasks = timed_active  # type: ignore[method-assign]
    cls.optimize_standby_tasks = timed_standby  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        HighAvailabilityTaskAssignor().assign(cluster)
        total = time.perf_counter() - start
    finally:
        cls.optimize_active_tasks = original_active  # type: ignore[method-assign]
        cls.optimize_standby_tasks = original_standby  # type: ignore[method-assign]
        cls.default_solver = previous_solver
    return {"total": total, **spent}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="*", default=[100, 1000])
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (best is shown)")
    parser.add_argument("--seed", type=int, default=925)
    parser.add_argument("--standbys", type=int, default=1)
    parser.add_argument(
        "--solvers",
        default="ortools,kafka",
        help="rack solvers to time: ortools (fast path), kafka (Kafka's cycle cancelling)",
    )
    parser.add_argument(
        "--kafka-max-clients",
        type=int,
        default=100,
        help="time Kafka's cycle cancelling only up to this many clients (it grows like V*E)",
    )
    parser.add_argument(
        "--write-case",
        nargs=3,
        metavar=("CLIENTS", "SEED", "OUT"),
        help="write one generated cluster state (min_traffic) to OUT and exit",
    )
    args = parser.parse_args(argv)
    if args.write_case:
        clients, seed, out = int(args.write_case[0]), int(args.write_case[1]), args.write_case[2]
        doc = kafka_random_cluster(seed, clients, _partitions_for(clients))
        Path(out).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        return 0
    header = f"{'clients':>7} {'tasks':>6} {'strategy':<20} {'solver':<8} {'HA total s':>10} "
    header += f"{'rack active s':>13} {'rack standby s':>14}"
    print(header)
    for clients in args.clients:
        partitions = _partitions_for(clients)
        for strategy in ("none", "min_traffic", "balance_subtopology"):
            doc = kafka_random_cluster(
                args.seed, clients, partitions, strategy=strategy, num_standby=args.standbys
            )
            for solver in args.solvers.split(","):
                if strategy == "none" and solver != "ortools":
                    continue  # no rack solver runs
                if solver == "kafka" and clients > args.kafka_max_clients:
                    continue
                runs = [time_assignment(doc, solver) for _ in range(args.repeat)]
                best = min(runs, key=lambda r: r["total"])
                tasks = len(doc["stateful_tasks"]) + len(doc["stateless_tasks"])
                print(
                    f"{clients:>7} {tasks:>6} {strategy:<20} {solver:<8} {best['total']:>10.3f} "
                    f"{best['active']:>13.3f} {best['standby']:>14.3f}",
                    flush=True,
                )
    return 0


def _partitions_for(clients: int) -> int:
    # 60 sub-topologies; 3.6 tasks per client as in Kafka's 50-client test (60 x 3 = 180).
    return max(1, round(clients * 3.6 / TOPIC_COUNT))


if __name__ == "__main__":
    sys.exit(main())
