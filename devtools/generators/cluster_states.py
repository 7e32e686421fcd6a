"""Seeded random cluster states for the differential tests against Kafka's own assignors.

:func:`random_cluster_state` draws one cluster-state document (``scenario-format.md`` plus the
extensions of ``docs/formats.md``) from a :class:`random.Random`: a previous generation's
assignment, then one of the situations a rebalance meets (fresh start, steady state, scale out,
scale in, crash, rolling bounce, uneven capacities, stateless-heavy), with lags around
``acceptable.recovery.lag`` and the ``-2`` / ``-3`` sentinels, process ids spread over the whole
signed range of ``java.util.UUID.compareTo`` (and some sharing their most significant half), and
optionally client tags (zones), stream threads (consumers), owned partitions (cooperative
revocation) and racks (KIP-925). The same seed always gives the same document.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

__all__ = ["SITUATIONS", "random_cluster_state"]

#: The situations :func:`random_cluster_state` draws from.
SITUATIONS = (
    "fresh",
    "steady",
    "scale_out",
    "scale_in",
    "crash",
    "bounce",
    "uneven",
    "stateless_heavy",
)
LONG_MAX = 9_223_372_036_854_775_807
LATEST_OFFSET = -2
UNKNOWN_OFFSET_SUM = -3


def _process_ids(count: int, rng: random.Random) -> list[str]:
    ids: list[str] = []
    seen: set[str] = set()
    while len(ids) < count:
        if ids and rng.random() < 0.15:
            # Same most significant half as an earlier id: the order falls to the low half.
            high = uuid.UUID(rng.choice(ids)).int >> 64
            value = (high << 64) | rng.getrandbits(64)
        else:
            value = rng.getrandbits(128)
        text = str(uuid.UUID(int=value))
        if text not in seen:
            seen.add(text)
            ids.append(text)
    return ids


def _standby_lag(rng: random.Random, acceptable: int) -> int:
    roll = rng.random()
    if roll < 0.05:
        return UNKNOWN_OFFSET_SUM
    if acceptable == LONG_MAX:
        return rng.choice([0, 1, rng.randint(0, 10**12)])
    near = [acceptable, acceptable + 1, max(0, acceptable - 1), 0]
    if roll < 0.35:
        return rng.choice(near)
    if roll < 0.7:
        return rng.randint(0, acceptable)
    return rng.randint(acceptable + 1, 10 * acceptable + 10)


def random_cluster_state(
    rng: random.Random,
    *,
    max_clients: int = 10,
    max_tasks: int = 40,
    tags: bool = False,
    threads: bool = False,
    revocation: bool = False,
    racks: str | None = None,
) -> dict[str, Any]:
    """One random cluster state.

    Parameters
    ----------
    rng:
        The source of randomness (seed it to replay).
    max_clients:
        Most Kafka Streams processes in the current generation (at least 1).
    max_tasks:
        Most tasks (stateful and stateless together).
    tags:
        Give clients ``zone`` / ``cluster`` tags and set ``rack_aware_assignment_tags`` (KIP-708).
    threads:
        List each client's stream threads (``consumers``) with their previous tasks.
    revocation:
        With ``threads``: consumers list ``owned_partitions`` and the document gives
        ``task_partitions``, ``leader`` and ``now_ms`` (COOPERATIVE withholding).
    racks:
        ``"min_traffic"`` or ``"balance_subtopology"``: racks for clients and partitions
        (``task_partitions``, ``task_changelog_partitions``, ``partition_racks``) and that
        ``rack_aware_assignment_strategy`` (KIP-925).

    Returns
    -------
    dict
        A cluster-state document; ``description`` names the situation drawn.
    """
    situation = rng.choice(SITUATIONS)
    acceptable = rng.choice([0, 100, 10_000, 10_000, LONG_MAX])
    num_subtopologies = rng.randint(1, 4)
    per_sub = rng.randint(1, max(1, max_tasks // num_subtopologies))
    tasks = [f"{s}_{p}" for s in range(num_subtopologies) for p in range(per_sub)]
    stateful_share = 0.15 if situation == "stateless_heavy" else rng.choice([0.5, 0.8, 1.0])
    stateful = [t for t in tasks if rng.random() < stateful_share]
    stateless = [t for t in tasks if t not in set(stateful)]
    num_standbys = rng.choice([0, 1, 1, 2, 3])

    previous = _process_ids(rng.randint(1, max_clients), rng)
    if situation == "scale_out":
        current = previous + _process_ids(rng.randint(1, 3), rng)
    elif situation in ("scale_in", "crash") and len(previous) > 1:
        gone = set(rng.sample(previous, rng.randint(1, len(previous) - 1)))
        current = [p for p in previous if p not in gone]
    else:
        current = list(previous)
    rng.shuffle(current)
    current = current[:max_clients] or previous[:1]
    uneven = situation == "uneven"
    clients: dict[str, dict[str, Any]] = {}
    for pid in current:
        capacity = rng.choice([1, 1, 2, 3, 4, 8]) if uneven else rng.choice([1, 2, 2, 4])
        clients[pid] = {
            "id": pid,
            "capacity": capacity,
            "prev_active": [],
            "prev_standby": [],
            "task_lags": {},
        }
    bounced = rng.choice(current) if situation == "bounce" else None

    if situation != "fresh":
        for task in stateful:
            holders = rng.sample(previous, min(len(previous), 1 + num_standbys))
            for rank, pid in enumerate(holders):
                client = clients.get(pid)
                if client is None:
                    continue  # crashed or scaled in: its copy is gone
                if rank == 0 and pid != bounced:
                    client["prev_active"].append(task)
                    client["task_lags"][task] = LATEST_OFFSET
                else:
                    client["prev_standby"].append(task)
                    client["task_lags"][task] = _standby_lag(rng, acceptable)
            if rng.random() < 0.1:
                stale = clients[rng.choice(current)]
                if task not in stale["task_lags"]:
                    stale["task_lags"][task] = _standby_lag(rng, acceptable)
        for task in stateless:
            pid = rng.choice(previous)
            if pid in clients and pid != bounced:
                clients[pid]["prev_active"].append(task)
    elif rng.random() < 0.3:
        for task in stateful:
            if rng.random() < 0.3:
                clients[rng.choice(current)]["task_lags"][task] = _standby_lag(rng, acceptable)

    document: dict[str, Any] = {
        "description": f"random {situation}",
        "configs": {
            "acceptable_recovery_lag": acceptable,
            "max_warmup_replicas": rng.choice([1, 1, 2, 3, 100]),
            "num_standby_replicas": num_standbys,
            "probing_rebalance_interval_ms": 600_000,
        },
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
        "clients": list(clients.values()),
    }
    if tags:
        _add_tags(rng, document)
    if threads:
        _add_threads(rng, document, revocation)
    if racks is not None:
        _add_racks(rng, document, racks)
    return document


def _add_tags(rng: random.Random, document: dict[str, Any]) -> None:
    keys = rng.choice([["zone"], ["zone", "cluster"], ["cluster", "zone"]])
    zones = [f"eu-1{c}" for c in "abcd"[: rng.randint(1, 4)]]
    clusters = [f"k8s-{i}" for i in range(1, rng.randint(1, 3) + 1)]
    document["configs"]["rack_aware_assignment_tags"] = keys
    for client in document["clients"]:
        client["tags"] = {"zone": rng.choice(zones), "cluster": rng.choice(clusters)}
        if rng.random() < 0.2:
            client["tags"]["team"] = rng.choice(["a", "b"])


def _member_id(rng: random.Random, pid: str, thread: int) -> str:
    return f"app-{pid}-StreamThread-{thread}-consumer-{rng.getrandbits(32):08x}"


def _partitions(task: str) -> list[list[Any]]:
    sub, part = task.split("_")
    return [[f"topic-{sub}", int(part)]]


def _add_threads(rng: random.Random, document: dict[str, Any], revocation: bool) -> None:
    for client in document["clients"]:
        consumers: list[dict[str, Any]] = [
            {
                "member_id": _member_id(rng, client["id"], i + 1),
                "prev_active": [],
                "prev_standby": [],
            }
            for i in range(client["capacity"])
        ]
        for role in ("prev_active", "prev_standby"):
            for task in client[role]:
                rng.choice(consumers)[role].append(task)
        for consumer in consumers:
            if revocation:
                consumer["owned_partitions"] = [
                    p for t in consumer["prev_active"] for p in _partitions(t)
                ]
        client["consumers"] = consumers
        if rng.random() < 0.5:
            del client["prev_active"], client["prev_standby"]
    if revocation:
        tasks = document["stateful_tasks"] + document["stateless_tasks"]
        document["task_partitions"] = {t: _partitions(t) for t in tasks}
        document["leader"] = rng.choice(document["clients"])["id"]
        document["now_ms"] = 1_700_000_000_000 + rng.randint(0, 10**9)


def _add_racks(rng: random.Random, document: dict[str, Any], strategy: str) -> None:
    racks = [f"rack-{i}" for i in range(rng.randint(2, 4))]
    document["configs"]["rack_aware_assignment_strategy"] = strategy
    tasks = document["stateful_tasks"] + document["stateless_tasks"]
    document["task_partitions"] = {t: _partitions(t) for t in tasks}
    document["task_changelog_partitions"] = {
        t: [[f"app-store-{t.split('_')[0]}-changelog", int(t.split("_")[1])]]
        for t in document["stateful_tasks"]
    }
    partition_racks: dict[str, list[str]] = {}
    for parts in (
        *document["task_partitions"].values(),
        *document["task_changelog_partitions"].values(),
    ):
        for topic, partition in parts:
            partition_racks[f"{topic}:{partition}"] = rng.sample(racks, rng.randint(1, len(racks)))
    document["partition_racks"] = partition_racks
    document["client_racks"] = {c["id"]: rng.choice(racks) for c in document["clients"]}
