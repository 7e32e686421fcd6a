"""The generated fleet: what to draw (:class:`FleetSpec`), what was drawn (:class:`Fleet`).

:func:`build_fleet` draws processes, threads, tasks, changelog partitions and every replica's
role and offsets from one seed; :mod:`lag.fleet.generate` writes the fleet in the real input
formats and :mod:`lag.fleet.history` its offset histories.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "ROLE_ACTIVE",
    "ROLE_CAUGHT_UP",
    "ROLE_NAMES",
    "ROLE_RESTORING",
    "ROLE_STALE",
    "START_MS",
    "Fleet",
    "FleetSpec",
    "build_fleet",
]

#: 2026-01-01T00:00:00Z: the first snapshot of every generated history (epoch ms).
START_MS = 1_767_225_600_000

_STORE_NAMES = (
    "order-totals",
    "customer-profiles",
    "payment-window",
    "fraud-scores",
    "loyalty-points",
)
ROLE_ACTIVE, ROLE_CAUGHT_UP, ROLE_RESTORING, ROLE_STALE = 0, 1, 2, 3
ROLE_NAMES = ("active", "standby-caught-up", "standby-restoring", "stale")


@dataclass(frozen=True, slots=True)
class FleetSpec:
    """What to generate.

    Attributes
    ----------
    application_id:
        Kafka Streams ``application.id``.
    instances:
        Number of Kafka Streams processes (>= 1).
    tasks:
        About this many tasks in all: ``tasks // 3`` partitions (>= 1) for each of the three
        sub-topologies.
    stores:
        State stores (>= 1), dealt over sub-topologies 1 and 2.
    standbys:
        Standby replicas per stateful task (capped at ``instances - 1``).
    seed:
        Seed of every random choice.
    max_threads:
        Stream threads per process are drawn from 1..max_threads.
    new_instances:
        Extra processes that just joined the group: members with idle threads (``-``) and an
        empty state directory, as at a scale-out rebalance.
    """

    application_id: str = "orders-app"
    instances: int = 3
    tasks: int = 12
    stores: int = 2
    standbys: int = 1
    seed: int = 0
    max_threads: int = 3
    new_instances: int = 0

    def __post_init__(self) -> None:
        if (
            self.instances < 1
            or self.tasks < 1
            or self.stores < 1
            or self.standbys < 0
            or self.max_threads < 1
            or self.new_instances < 0
        ):
            raise ValueError(f"invalid fleet spec: {self}")


@dataclass
class Fleet:
    """A generated fleet: the application's shape and every replica's changelog offsets model.

    Offsets are a function of time ``t`` (seconds since :data:`START_MS`): a changelog partition
    ends at ``end0 + write_rate * t``; a replica-partition's offset depends on its role (see
    :meth:`offsets_at`).
    """

    spec: FleetSpec
    partitions: int
    stores: dict[int, list[str]]
    processes: list[str]
    threads: list[int]
    thread_tasks: dict[tuple[int, int], list[tuple[int, int]]]
    topics: list[str]
    # one entry per changelog partition
    cp_topic: np.ndarray
    cp_partition: np.ndarray
    cp_end0: np.ndarray
    cp_write_rate: np.ndarray
    # one entry per replica-partition (a process's copy of one changelog partition)
    rp_process: np.ndarray
    rp_cp: np.ndarray
    rp_role: np.ndarray
    rp_lag0: np.ndarray
    rp_rate: np.ndarray
    rp_unknown: np.ndarray
    replicas: list[dict[str, Any]] = field(default_factory=list)

    def source_topics(self) -> dict[int, str]:
        """Real source topic names per sub-topology (internal ones with the application prefix)."""
        app = self.spec.application_id
        return {0: "orders", 1: f"{app}-orders-by-customer-repartition", 2: "payments"}

    def changelog_topic(self, store: str) -> str:
        """``<application.id>-<store>-changelog``."""
        return f"{self.spec.application_id}-{store}-changelog"

    def end_offsets_at(self, t: float) -> np.ndarray:
        """End offset of every changelog partition at ``t`` seconds (records)."""
        return (self.cp_end0 + np.floor(self.cp_write_rate * t)).astype(np.int64)

    def offsets_at(self, t: np.ndarray | float) -> np.ndarray:
        """Checkpointed offset of every replica-partition at ``t`` seconds (records, or -4).

        Active and caught-up replicas trail the end by their ``lag0``; restoring ones start
        ``lag0`` behind and gain ``rate`` records/s until they trail by 100; stale ones stay
        where they were at ``t = 0``; a few entries are ``-4`` (unknown) throughout.
        """
        t = np.asarray(t, dtype=np.float64)
        end = self.cp_end0[self.rp_cp] + np.floor(self.cp_write_rate[self.rp_cp] * t)
        start = self.cp_end0[self.rp_cp] - self.rp_lag0
        trailing = end - self.rp_lag0
        restoring = np.minimum(end - 100, start + np.floor(self.rp_rate * t))
        offset = np.where(
            self.rp_role == ROLE_RESTORING,
            restoring,
            np.where(self.rp_role == ROLE_STALE, start, trailing),
        )
        offset = np.maximum(offset, 0).astype(np.int64)
        return np.where(self.rp_unknown, np.int64(-4), offset)


def build_fleet(spec: FleetSpec) -> Fleet:
    """Draw a fleet from ``spec`` (same spec, same fleet).

    Parameters
    ----------
    spec:
        Sizes and seed.

    Returns
    -------
    Fleet
    """
    rng = random.Random(spec.seed)
    nrng = np.random.default_rng(spec.seed)
    fleet = _deal_tasks(spec, rng)
    cp_of = _draw_changelog_partitions(fleet, nrng)
    replicas = _draw_replicas(fleet, rng)
    _draw_replica_offsets(fleet, replicas, cp_of, rng)
    return fleet


def _store_names(spec: FleetSpec) -> dict[int, list[str]]:
    """Store names per stateful sub-topology: dealt over sub-topologies 1 and 2."""
    stores: dict[int, list[str]] = {1: [], 2: []}
    for i in range(spec.stores):
        name = _STORE_NAMES[i] if i < len(_STORE_NAMES) else f"store-{i + 1}"
        stores[1 + i % 2].append(name)
    return {sub: names for sub, names in stores.items() if names}


def _deal_tasks(spec: FleetSpec, rng: random.Random) -> Fleet:
    """Processes, their threads and each thread's active tasks; the arrays left empty."""
    partitions = max(1, spec.tasks // 3)
    stores = _store_names(spec)
    total = spec.instances + spec.new_instances
    processes = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(total)]
    threads = [rng.randint(1, spec.max_threads) for _ in range(total)]

    all_tasks = [(sub, p) for sub in range(3) for p in range(partitions)]
    slots = [(i, n) for i in range(spec.instances) for n in range(1, threads[i] + 1)]
    rng.shuffle(slots)
    newcomers = [(i, n) for i in range(spec.instances, total) for n in range(1, threads[i] + 1)]
    thread_tasks: dict[tuple[int, int], list[tuple[int, int]]] = {
        slot: [] for slot in slots + newcomers
    }
    # Kafka spreads a sub-topology's tasks over threads; dealing round-robin does the same here.
    for k, task in enumerate(all_tasks):
        thread_tasks[slots[k % len(slots)]].append(task)
    fleet = Fleet(
        spec=spec,
        partitions=partitions,
        stores=stores,
        processes=processes,
        threads=threads,
        thread_tasks=thread_tasks,
        topics=[],
        cp_topic=np.zeros(0, np.int32),
        cp_partition=np.zeros(0, np.int32),
        cp_end0=np.zeros(0, np.int64),
        cp_write_rate=np.zeros(0, np.float64),
        rp_process=np.zeros(0, np.int32),
        rp_cp=np.zeros(0, np.int64),
        rp_role=np.zeros(0, np.int8),
        rp_lag0=np.zeros(0, np.int64),
        rp_rate=np.zeros(0, np.float64),
        rp_unknown=np.zeros(0, bool),
    )
    fleet.topics = [fleet.changelog_topic(s) for sub in sorted(stores) for s in stores[sub]]
    return fleet


def _draw_changelog_partitions(
    fleet: Fleet, nrng: np.random.Generator
) -> dict[tuple[int, int], list[int]]:
    """Each changelog partition's start and write rate; returns its indices per task."""
    stores, partitions = fleet.stores, fleet.partitions
    topic_index = {t: i for i, t in enumerate(fleet.topics)}
    cps = [
        (topic_index[fleet.changelog_topic(s)], p, sub)
        for sub in sorted(stores)
        for s in stores[sub]
        for p in range(partitions)
    ]
    fleet.cp_topic = np.array([c[0] for c in cps], np.int32)
    fleet.cp_partition = np.array([c[1] for c in cps], np.int32)
    fleet.cp_end0 = nrng.integers(50_000, 5_000_000, len(cps)).astype(np.int64)
    fleet.cp_write_rate = nrng.uniform(5.0, 50.0, len(cps))
    cp_of: dict[tuple[int, int], list[int]] = {(c[2], c[1]): [] for c in cps}
    for k, c in enumerate(cps):
        cp_of[(c[2], c[1])].append(k)
    return cp_of


def _draw_replicas(fleet: Fleet, rng: random.Random) -> list[tuple[int, int, int, int]]:
    """Every stateful task's replicas as (process, sub-topology, partition, role)."""
    spec = fleet.spec
    active_of = {task: proc for (proc, _n), tasks in fleet.thread_tasks.items() for task in tasks}
    replicas: list[tuple[int, int, int, int]] = []
    standbys = min(spec.standbys, spec.instances - 1)
    for sub in sorted(fleet.stores):
        for p in range(fleet.partitions):
            owner = active_of[(sub, p)]
            replicas.append((owner, sub, p, ROLE_ACTIVE))
            others = [i for i in range(spec.instances) if i != owner]
            rng.shuffle(others)
            for i in others[:standbys]:
                replicas.append(
                    (i, sub, p, ROLE_CAUGHT_UP if rng.random() < 0.6 else ROLE_RESTORING)
                )
            if len(others) > standbys and rng.random() < 0.15:
                replicas.append((others[standbys], sub, p, ROLE_STALE))
    fleet.replicas = [
        {"process_id": fleet.processes[proc], "task_id": f"{sub}_{p}", "role": ROLE_NAMES[role]}
        for proc, sub, p, role in replicas
    ]
    return replicas


def _draw_replica_offsets(
    fleet: Fleet,
    replicas: list[tuple[int, int, int, int]],
    cp_of: dict[tuple[int, int], list[int]],
    rng: random.Random,
) -> None:
    """Each replica-partition's lag at ``t = 0``, restore rate and unknown flag, by role."""
    rows: list[tuple[int, int, int, int, float, bool]] = []
    for proc, sub, p, role in replicas:
        for k in cp_of[(sub, p)]:
            if role == ROLE_ACTIVE:
                lag0, rate = rng.randint(0, 200), 0.0
            elif role == ROLE_CAUGHT_UP:
                lag0, rate = rng.randint(0, 4_000), 0.0
            elif role == ROLE_RESTORING:
                lag0, rate = rng.randint(20_000, 2_000_000), rng.uniform(500.0, 5_000.0)
            else:
                lag0, rate = rng.randint(10_000, 1_000_000), 0.0
            unknown = role != ROLE_ACTIVE and rng.random() < 0.02
            rows.append((proc, k, role, lag0, rate, unknown))
    fleet.rp_process = np.array([r[0] for r in rows], np.int32)
    fleet.rp_cp = np.array([r[1] for r in rows], np.int64)
    fleet.rp_role = np.array([r[2] for r in rows], np.int8)
    fleet.rp_lag0 = np.array([r[3] for r in rows], np.int64)
    fleet.rp_rate = np.array([r[4] for r in rows], np.float64)
    fleet.rp_unknown = np.array([r[5] for r in rows], bool)
