"""Seeded cluster-state documents for the tests, the benchmarks and the simulations.

Every generator is deterministic for its seed and returns a plain cluster-state document (a ``dict``
in the format of ``docs/scenario-format.md`` plus the extensions of ``docs/formats.md``), so what it
builds can be written to a file and replayed. All of them build their documents from the same
pieces: :func:`process_ids` (the one maker of process UUIDs), :func:`task_ids`, and one client and
one document shape.

- :func:`random_cluster_state`: the differential tests against Kafka's own assignors. One of the
  situations a rebalance meets (:data:`SITUATIONS`: fresh start, steady state, scale out, scale
  in, crash, rolling bounce, uneven capacities, stateless-heavy) after a previous generation's
  assignment, with lags around ``acceptable.recovery.lag`` and the ``-2`` / ``-3`` sentinels,
  process ids spread over the whole signed range of ``java.util.UUID.compareTo`` (some sharing
  their most significant half), and optionally client tags (zones), stream threads (consumers),
  owned partitions (cooperative revocation) and racks (KIP-925).
- :func:`random_scenario`: a random state exercising every branch of the HA assignor.
- :func:`scale_scenario`: the scale shape of the speed benchmarks.
- :func:`synthetic_document` / :func:`synthetic_cluster`: a running application just after a
  crash and a scale-out, for the optimality benchmark and tests.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from streams_assign import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    ClusterState,
    parse_cluster_state,
)

__all__ = [
    "SITUATIONS",
    "process_ids",
    "random_cluster_state",
    "random_scenario",
    "scale_scenario",
    "synthetic_cluster",
    "synthetic_document",
    "task_ids",
]

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
#: ``probing.rebalance.interval.ms`` of the generated configs (Kafka's default, 10 minutes).
PROBING_REBALANCE_INTERVAL_MS = 600_000


def process_ids(
    count: int,
    rng: random.Random | None = None,
    *,
    first: int = 0,
    version4: bool = True,
    distinct: bool = True,
    sort: bool = True,
    shared_high_half: float = 0.0,
) -> list[str]:
    """``count`` process ids (UUIDs as text): the one maker of every generator here.

    Parameters
    ----------
    count:
        How many ids.
    rng:
        The source of the 128 random bits of each id. ``None``: Kafka's test helper
        ``processIdForInt(n)``, the UUID ``(0, n)``, for ``n`` in ``first .. first + count - 1``
        (the other options do not apply).
    first:
        Without ``rng``: the first ``n``.
    version4:
        Stamp the version and variant bits of a random (version 4) UUID; without it the ids cover
        the whole signed range of ``java.util.UUID.compareTo``.
    distinct:
        Draw again when an id repeats.
    sort:
        Return the ids sorted as text rather than in the order drawn.
    shared_high_half:
        Chance that an id after the first takes the most significant half of an earlier one (so
        the order falls to the low half); ``0`` draws nothing for it.

    Returns
    -------
    list of str
    """
    if rng is None:
        return [str(uuid.UUID(int=n)) for n in range(first, first + count)]
    ids: list[str] = []
    seen: set[str] = set()
    while len(ids) < count:
        if shared_high_half and ids and rng.random() < shared_high_half:
            high = uuid.UUID(rng.choice(ids)).int >> 64
            value = (high << 64) | rng.getrandbits(64)
        else:
            value = rng.getrandbits(128)
        text = str(uuid.UUID(int=value, version=4) if version4 else uuid.UUID(int=value))
        if distinct:
            if text in seen:
                continue
            seen.add(text)
        ids.append(text)
    return sorted(ids) if sort else ids


def task_ids(subtopologies: int, partitions: int, first_subtopology: int = 0) -> list[str]:
    """Task ids ``<s>_<p>``: ``subtopologies`` subtopologies of ``partitions`` partitions each."""
    return [
        f"{s}_{p}"
        for s in range(first_subtopology, first_subtopology + subtopologies)
        for p in range(partitions)
    ]


def _client(
    pid: str,
    capacity: int,
    prev_active: list[str] | None = None,
    prev_standby: list[str] | None = None,
    task_lags: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One client of a document (empty previous tasks unless given)."""
    return {
        "id": pid,
        "capacity": capacity,
        "prev_active": [] if prev_active is None else prev_active,
        "prev_standby": [] if prev_standby is None else prev_standby,
        "task_lags": {} if task_lags is None else task_lags,
    }


def _document(
    stateful: list[str],
    stateless: list[str],
    clients: list[dict[str, Any]],
    *,
    acceptable_recovery_lag: int,
    max_warmup_replicas: int,
    num_standby_replicas: int,
    probing: bool = True,
    label: tuple[str, str] | None = None,
    changelog_end_offset_sums: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A cluster-state document; ``label`` is its ``("name" | "description", text)``."""
    configs: dict[str, Any] = {
        "acceptable_recovery_lag": acceptable_recovery_lag,
        "max_warmup_replicas": max_warmup_replicas,
        "num_standby_replicas": num_standby_replicas,
    }
    if probing:
        configs["probing_rebalance_interval_ms"] = PROBING_REBALANCE_INTERVAL_MS
    document: dict[str, Any] = {} if label is None else {label[0]: label[1]}
    document["configs"] = configs
    document["stateful_tasks"] = stateful
    document["stateless_tasks"] = stateless
    if changelog_end_offset_sums is not None:
        document["changelog_end_offset_sums"] = changelog_end_offset_sums
    document["clients"] = clients
    return document


def _spread_process_ids(count: int, rng: random.Random) -> list[str]:
    """Ids over the whole signed range, in the order drawn, some sharing a high half."""
    return process_ids(count, rng, version4=False, sort=False, shared_high_half=0.15)


def _standby_lag(rng: random.Random, acceptable: int) -> int:
    roll = rng.random()
    if roll < 0.05:
        return UNKNOWN_OFFSET_SUM
    if acceptable == LONG_MAX_VALUE:
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
    acceptable = rng.choice([0, 100, 10_000, 10_000, LONG_MAX_VALUE])
    num_subtopologies = rng.randint(1, 4)
    per_sub = rng.randint(1, max(1, max_tasks // num_subtopologies))
    tasks = task_ids(num_subtopologies, per_sub)
    stateful_share = 0.15 if situation == "stateless_heavy" else rng.choice([0.5, 0.8, 1.0])
    stateful = [t for t in tasks if rng.random() < stateful_share]
    stateless = [t for t in tasks if t not in set(stateful)]
    num_standbys = rng.choice([0, 1, 1, 2, 3])

    previous = _spread_process_ids(rng.randint(1, max_clients), rng)
    if situation == "scale_out":
        current = previous + _spread_process_ids(rng.randint(1, 3), rng)
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
        clients[pid] = _client(pid, capacity)
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

    document = _document(
        stateful,
        stateless,
        list(clients.values()),
        acceptable_recovery_lag=acceptable,
        max_warmup_replicas=rng.choice([1, 1, 2, 3, 100]),
        num_standby_replicas=num_standbys,
        label=("description", f"random {situation}"),
    )
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
    clients = [_client(pid, rng.choice([1, 1, 2, 3, 4, 8])) for pid in ids]
    for task in stateful:
        holders = rng.sample(range(num_clients), rng.randint(0, num_clients))
        for rank, client in enumerate(holders):
            roll = rng.random()
            if rank == 0 and roll < 0.6:
                clients[client]["prev_active"].append(task)
                clients[client]["task_lags"][task] = LATEST_OFFSET
                continue
            clients[client]["prev_standby"].append(task)
            if roll < 0.05:
                lag = UNKNOWN_OFFSET_SUM
            elif roll < 0.5:
                lag = rng.randint(0, 100)
            else:
                lag = rng.randint(0, 20_000)
            clients[client]["task_lags"][task] = lag
    for task in stateless:
        if rng.random() < 0.5:
            clients[rng.randrange(num_clients)]["prev_active"].append(task)
    return _document(
        stateful,
        stateless,
        clients,
        acceptable_recovery_lag=acceptable,
        max_warmup_replicas=rng.choice([1, 1, 2, 3, 100]),
        num_standby_replicas=rng.choice([0, 1, 1, 2, 3]),
    )


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
    """The scale scenario of the speed benchmarks.

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
    clients = [_client(pid, capacity) for pid in ids]
    for task in stateful:
        holders = rng.sample(range(num_clients), min(num_clients, 1 + num_standby_replicas))
        active, standbys = holders[0], holders[1:]
        clients[active]["prev_active"].append(task)
        clients[active]["task_lags"][task] = LATEST_OFFSET
        for client in standbys:
            clients[client]["prev_standby"].append(task)
            if rng.random() < caught_up_standby_fraction:
                lag = rng.randint(0, acceptable_recovery_lag)
            else:
                lag = rng.randint(acceptable_recovery_lag + 1, 100 * acceptable_recovery_lag)
            clients[client]["task_lags"][task] = lag
    for task in stateless:
        clients[rng.randrange(num_clients)]["prev_active"].append(task)
    return _document(
        stateful,
        stateless,
        clients,
        acceptable_recovery_lag=acceptable_recovery_lag,
        max_warmup_replicas=2,
        num_standby_replicas=num_standby_replicas,
        label=("name", f"scale-{num_clients}x{capacity}"),
    )


def synthetic_document(
    n_tasks: int,
    n_clients: int,
    seed: int = 0,
    num_standby_replicas: int = 1,
    stateless_fraction: float = 0.2,
    capacities: tuple[int, ...] = (1, 2, 4),
    acceptable_recovery_lag: int = 10_000,
) -> dict[str, Any]:
    """A running application just after a crash and a scale-out.

    The previous assignment has running actives and standbys over the clients of the previous
    generation; one of them is gone and one new client had nothing. Restore positions are spread
    the way a real cluster has them: actives running, most standbys within a few thousand
    records, a few stale state directories, and no state elsewhere.

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
    tasks = task_ids(-(-n_tasks // 8), 8)[:n_tasks]
    stateful = tasks[:n_stateful]
    stateless = tasks[n_stateful:]
    ids = process_ids(n_clients + 1, rng, distinct=False, sort=False)
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
        lags[owner][task] = LATEST_OFFSET
        others = [c for c in old if c != owner]
        for c in rng.sample(others, min(num_standby_replicas, len(others))):
            prev_standby[c].append(task)
            lags[c][task] = rng.choice([0, rng.randrange(0, 5_000), rng.randrange(5_000, 40_000)])
        for c in rng.sample(range(n_clients + 1), 2):
            if task not in lags[c]:
                lags[c][task] = rng.randrange(40_000, 400_000)
    end_offsets = {task: rng.randrange(400_000, 1_000_000) for task in stateful}
    clients = [
        _client(ids[c], caps[c], prev_active[c], prev_standby[c], lags[c]) for c in range(n_clients)
    ]
    return _document(
        stateful,
        stateless,
        clients,
        acceptable_recovery_lag=acceptable_recovery_lag,
        max_warmup_replicas=2,
        num_standby_replicas=num_standby_replicas,
        probing=False,
        label=("name", f"synthetic-{n_tasks}x{n_clients}-seed{seed}"),
        changelog_end_offset_sums=end_offsets,
    )


def synthetic_cluster(n_tasks: int, n_clients: int, seed: int = 0, **options: Any) -> ClusterState:
    """:func:`synthetic_document`, validated into a :class:`~streams_assign.ClusterState`."""
    return parse_cluster_state(synthetic_document(n_tasks, n_clients, seed, **options))
