"""Seeded generators of cluster-state documents for benchmarks, simulations and tests.

Every generator is deterministic for its seed and returns a plain cluster-state document (a
``dict`` in the format of ``scenario-format.md``), so what it builds can be written to a file
and replayed.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from streams_assign.model import LONG_MAX_VALUE


def process_ids(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct random version-4 UUIDs drawn from ``rng``, sorted as strings."""
    ids: set[str] = set()
    while len(ids) < count:
        ids.add(str(uuid.UUID(int=rng.getrandbits(128), version=4)))
    return sorted(ids)


def task_ids(subtopologies: int, partitions: int, first_subtopology: int = 0) -> list[str]:
    """Task ids ``<s>_<p>``: ``subtopologies`` subtopologies of ``partitions`` partitions each."""
    return [
        f"{s}_{p}"
        for s in range(first_subtopology, first_subtopology + subtopologies)
        for p in range(partitions)
    ]


def scale_scenario(
    num_clients: int,
    capacity: int = 4,
    stateful_tasks: int = 2000,
    stateless_tasks: int = 1000,
    num_standby_replicas: int = 1,
    acceptable_recovery_lag: int = 10_000,
    caught_up_standby_fraction: float = 0.5,
    seed: int = 0,
) -> dict[str, Any]:
    """The scale scenario of the speed benchmark (issue: "Speed").

    Each stateful task ran as active on one client (lag -2 there) and as standby on
    ``num_standby_replicas`` others; about ``caught_up_standby_fraction`` of those standbys are
    within ``acceptable_recovery_lag`` (lag uniform in [0, acceptable]), the others behind it
    (uniform in (acceptable, 100 * acceptable]). Stateless tasks ran on random clients. Tasks come
    in subtopologies of 100 partitions.

    Parameters
    ----------
    num_clients:
        Number of Kafka Streams processes.
    capacity:
        Stream threads per process.
    stateful_tasks, stateless_tasks:
        Task counts (rounded up to whole subtopologies of 100 partitions).
    seed:
        Seed of the generator.

    Returns
    -------
    dict
        A cluster-state document.
    """
    rng = random.Random(seed)
    ids = process_ids(num_clients, rng)
    per_sub = 100
    stateful = task_ids(-(-stateful_tasks // per_sub), per_sub)[:stateful_tasks]
    first_stateless = -(-stateful_tasks // per_sub)
    stateless = task_ids(-(-stateless_tasks // per_sub), per_sub, first_stateless)[:stateless_tasks]
    clients: list[dict[str, Any]] = [
        {"id": pid, "capacity": capacity, "prev_active": [], "prev_standby": [], "task_lags": {}}
        for pid in ids
    ]
    for task in stateful:
        holders = rng.sample(range(num_clients), min(num_clients, 1 + num_standby_replicas))
        active, standbys = holders[0], holders[1:]
        clients[active]["prev_active"].append(task)
        clients[active]["task_lags"][task] = -2
        for client in standbys:
            clients[client]["prev_standby"].append(task)
            if rng.random() < caught_up_standby_fraction:
                lag = rng.randint(0, acceptable_recovery_lag)
            else:
                lag = rng.randint(acceptable_recovery_lag + 1, 100 * acceptable_recovery_lag)
            clients[client]["task_lags"][task] = lag
    for task in stateless:
        clients[rng.randrange(num_clients)]["prev_active"].append(task)
    return {
        "name": f"scale-{num_clients}x{capacity}",
        "configs": {
            "acceptable_recovery_lag": acceptable_recovery_lag,
            "max_warmup_replicas": 2,
            "num_standby_replicas": num_standby_replicas,
            "probing_rebalance_interval_ms": 600_000,
        },
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
        "clients": clients,
    }


def random_scenario(
    rng: random.Random, max_clients: int = 12, max_tasks: int = 30
) -> dict[str, Any]:
    """A random cluster state exercising every branch of the HA assignor.

    Uneven capacities, a mix of stateful and stateless tasks, previous actives (lag -2) and
    standbys, lags around ``acceptable_recovery_lag`` (caught up or not), occasional unknown
    (-3) lags and no-state clients, small warmup budgets (so the budget runs out mid-rebalance)
    and 0-3 standby replicas.
    """
    num_clients = rng.randint(1, max_clients)
    ids = process_ids(num_clients, rng)
    num_subtopologies = rng.randint(1, 4)
    tasks = [
        f"{s}_{p}"
        for s in range(num_subtopologies)
        for p in range(rng.randint(1, max(1, max_tasks // num_subtopologies)))
    ]
    stateful = [t for t in tasks if rng.random() < 0.7]
    stateless = [t for t in tasks if t not in set(stateful)]
    acceptable = rng.choice([0, 100, 1000, 10_000, LONG_MAX_VALUE])
    clients: list[dict[str, Any]] = []
    for pid in ids:
        clients.append(
            {
                "id": pid,
                "capacity": rng.choice([1, 1, 2, 3, 4, 8]),
                "prev_active": [],
                "prev_standby": [],
                "task_lags": {},
            }
        )
    for task in stateful:
        holders = rng.sample(range(num_clients), rng.randint(0, num_clients))
        for rank, client in enumerate(holders):
            roll = rng.random()
            if rank == 0 and roll < 0.6:
                clients[client]["prev_active"].append(task)
                clients[client]["task_lags"][task] = -2
                continue
            clients[client]["prev_standby"].append(task)
            if roll < 0.05:
                lag = -3
            elif roll < 0.5:
                lag = rng.randint(0, 100)
            else:
                lag = rng.randint(0, 20_000)
            clients[client]["task_lags"][task] = lag
    for task in stateless:
        if rng.random() < 0.5:
            clients[rng.randrange(num_clients)]["prev_active"].append(task)
    return {
        "configs": {
            "acceptable_recovery_lag": acceptable,
            "max_warmup_replicas": rng.choice([1, 1, 2, 3, 100]),
            "num_standby_replicas": rng.choice([0, 1, 1, 2, 3]),
            "probing_rebalance_interval_ms": 600_000,
        },
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
        "clients": clients,
    }


__all__ = [
    "process_ids",
    "random_scenario",
    "scale_scenario",
    "task_ids",
]
