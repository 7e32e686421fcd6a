"""Seeded synthetic cluster states for the optimality benchmark and tests.

A running application (previous assignment with running actives and standbys) that has just lost
one client and gained one, with restore positions spread the way a real cluster has them:
actives running, most standbys within a few thousand records, a few stale state directories,
and no state elsewhere.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.model import ClusterState


def synthetic_document(
    n_tasks: int,
    n_clients: int,
    seed: int = 0,
    num_standby_replicas: int = 1,
    stateless_fraction: float = 0.2,
    capacities: tuple[int, ...] = (1, 2, 4),
    acceptable_recovery_lag: int = 10_000,
) -> dict[str, Any]:
    """A cluster-state document (``scenario-format.md``) after a crash and a scale-out.

    Parameters
    ----------
    n_tasks:
        Tasks in total; ``stateless_fraction`` of them (rounded down) are stateless.
    n_clients:
        Clients now in the group (one of them new, and one previous client gone).
    seed:
        Seed of the generator: the same arguments give the same document.
    num_standby_replicas:
        ``num.standby.replicas`` of the configs.
    stateless_fraction:
        Share of stateless tasks.
    capacities:
        Stream-thread counts to draw from.
    acceptable_recovery_lag:
        ``acceptable.recovery.lag`` of the configs.

    Returns
    -------
    dict
        The document; tasks are ``<sub>_<part>`` with 8 partitions per subtopology.
    """
    rng = random.Random(seed)
    n_stateless = int(n_tasks * stateless_fraction)
    n_stateful = n_tasks - n_stateless
    tasks = [f"{i // 8}_{i % 8}" for i in range(n_tasks)]
    stateful = tasks[:n_stateful]
    stateless = tasks[n_stateful:]
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(n_clients + 1)]
    caps = [rng.choice(capacities) for _ in ids]
    # Previous assignment over clients 0..n (client n_clients is the one that crashed; client
    # n_clients - 1 is new and had nothing).
    old = list(range(n_clients - 1)) + [n_clients]
    prev_active: dict[int, list[str]] = {c: [] for c in range(n_clients + 1)}
    prev_standby: dict[int, list[str]] = {c: [] for c in range(n_clients + 1)}
    lags: dict[int, dict[str, int]] = {c: {} for c in range(n_clients + 1)}
    for i, task in enumerate(tasks):
        owner = old[i % len(old)]
        prev_active[owner].append(task)
        if task in stateless:
            continue
        lags[owner][task] = -2
        others = [c for c in old if c != owner]
        for c in rng.sample(others, min(num_standby_replicas, len(others))):
            prev_standby[c].append(task)
            lags[c][task] = rng.choice([0, rng.randrange(0, 5_000), rng.randrange(5_000, 40_000)])
        for c in rng.sample(range(n_clients + 1), 2):
            if task not in lags[c]:
                lags[c][task] = rng.randrange(40_000, 400_000)
    end_offsets = {task: rng.randrange(400_000, 1_000_000) for task in stateful}
    clients = [
        {
            "id": ids[c],
            "capacity": caps[c],
            "prev_active": prev_active[c],
            "prev_standby": prev_standby[c],
            "task_lags": lags[c],
        }
        for c in range(n_clients)
    ]
    return {
        "name": f"synthetic-{n_tasks}x{n_clients}-seed{seed}",
        "configs": {
            "acceptable_recovery_lag": acceptable_recovery_lag,
            "max_warmup_replicas": 2,
            "num_standby_replicas": num_standby_replicas,
        },
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
        "changelog_end_offset_sums": end_offsets,
        "clients": clients,
    }


def synthetic_cluster(n_tasks: int, n_clients: int, seed: int = 0, **options: Any) -> ClusterState:
    """:func:`synthetic_document`, validated into a :class:`ClusterState`."""
    return parse_cluster_state(synthetic_document(n_tasks, n_clients, seed, **options))


__all__ = [
    "synthetic_cluster",
    "synthetic_document",
]
