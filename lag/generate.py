"""Generate a synthetic Kafka Streams fleet in the real input formats (deterministic per seed).

The application reads ``orders`` and ``payments``: sub-topology 0 (stateless) filters and
re-keys ``orders`` into an internal repartition topic; sub-topology 1 aggregates it into state
stores; sub-topology 2 joins ``payments`` with stores of its own. Stores are dealt over the two
stateful sub-topologies; with ``stores == 1`` only sub-topology 1 is stateful.

Written files (see docs/lag.md):

- ``topology.txt``: ``Topology#describe()`` (multi-line printing);
- ``members.txt``: ``kafka-consumer-groups.sh --describe --members --verbose`` (every thread,
  idle ones with ``-``);
- ``end-offsets.txt``: ``kafka-get-offsets.sh`` lines of the changelog and source topics at the
  latest moment;
- ``state/instance-NN/<application.id>/``: one state directory per instance with
  ``kafka-streams-process-metadata`` and ``<task>/.checkpoint`` files (``layout="dirs"``); or
- ``offsets.parquet/`` (offset rows) and, with a history, ``end-offsets.parquet/`` (end-offset
  rows), each row with ``snapshot_time`` (``layout="parquet"``);
- ``fleet.json``: the generator's parameters and per-replica roles (for tests).

Replicas: every stateful task has one active (its checkpoint a little behind the log end),
``standbys`` standbys on other processes (caught up, or restoring at a few thousand records/s),
and now and then stale state left on another process (not updated, its lag grows).
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lag.collect import CHECKPOINT_FILE, PROCESS_METADATA_FILE
from lag.generate_history import (
    START_MS,
    end_history,
    history_batches,
    snapshots_for_rows,
    write_history_parquet,
)

__all__ = [
    "ROLE_NAMES",
    "START_MS",
    "Fleet",
    "FleetSpec",
    "build_fleet",
    "end_history",
    "end_offsets_text",
    "generate",
    "history_batches",
    "members_text",
    "snapshots_for_rows",
    "topology_text",
    "write_history_parquet",
    "write_state_dirs",
]

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
    partitions = max(1, spec.tasks // 3)
    stores: dict[int, list[str]] = {1: [], 2: []}
    for i in range(spec.stores):
        name = _STORE_NAMES[i] if i < len(_STORE_NAMES) else f"store-{i + 1}"
        stores[1 + i % 2].append(name)
    stores = {sub: names for sub, names in stores.items() if names}
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
    active_of = {task: proc for (proc, _n), tasks in thread_tasks.items() for task in tasks}

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
    cp_of: dict[tuple[Any, Any], list[int]] = {(c[2], c[1]): [] for c in cps}
    for k, c in enumerate(cps):
        cp_of[(c[2], c[1])].append(k)

    replicas: list[tuple[int, int, int, int]] = []  # process, sub, partition, role
    standbys = min(spec.standbys, spec.instances - 1)
    for sub in sorted(stores):
        for p in range(partitions):
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
    fleet.replicas = [
        {"process_id": processes[proc], "task_id": f"{sub}_{p}", "role": ROLE_NAMES[role]}
        for proc, sub, p, role in replicas
    ]
    return fleet


def topology_text(fleet: Fleet) -> str:
    """``Topology#describe()`` of the generated application, multi-line printing.

    Parameters
    ----------
    fleet:
        The fleet (its stores per sub-topology).

    Returns
    -------
    str
    """
    stores = fleet.stores
    lines = ["Topologies:"]
    lines += [
        "   Sub-topology: 0",
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [orders])",
        "      --> KSTREAM-FILTER-0000000001",
        "    Processor: KSTREAM-FILTER-0000000001 (stores: [])",
        "      --> KSTREAM-KEY-SELECT-0000000002",
        "      <-- KSTREAM-SOURCE-0000000000",
        "    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])",
        "      --> KSTREAM-SINK-0000000004",
        "      <-- KSTREAM-FILTER-0000000001",
        "    Sink: KSTREAM-SINK-0000000004 (topic: orders-by-customer-repartition)",
        "      <-- KSTREAM-KEY-SELECT-0000000002",
        "",
        "  Sub-topology: 1",
        "    Source: KSTREAM-SOURCE-0000000005 (topics: [orders-by-customer-repartition])",
        "      --> KSTREAM-AGGREGATE-0000000003",
        f"    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [{', '.join(stores.get(1, []))}])",
        "      --> KTABLE-TOSTREAM-0000000006",
        "      <-- KSTREAM-SOURCE-0000000005",
        "    Processor: KTABLE-TOSTREAM-0000000006 (stores: [])",
        "      --> KSTREAM-SINK-0000000007",
        "      <-- KSTREAM-AGGREGATE-0000000003",
        "    Sink: KSTREAM-SINK-0000000007 (topic: customer-totals)",
        "      <-- KTABLE-TOSTREAM-0000000006",
        "",
        "  Sub-topology: 2",
        "    Source: KSTREAM-SOURCE-0000000008 (topics: [payments])",
        "      --> KSTREAM-TRANSFORMVALUES-0000000009",
        "    Processor: KSTREAM-TRANSFORMVALUES-0000000009 "
        f"(stores: [{', '.join(stores.get(2, []))}])",
        "      --> KSTREAM-SINK-0000000010",
        "      <-- KSTREAM-SOURCE-0000000008",
        "    Sink: KSTREAM-SINK-0000000010 (topic: scored-payments)",
        "      <-- KSTREAM-TRANSFORMVALUES-0000000009",
        "",
    ]
    return "\n".join(lines) + "\n"


def members_text(fleet: Fleet) -> str:
    """``kafka-consumer-groups.sh --describe --members --verbose`` of the fleet's group.

    Parameters
    ----------
    fleet:
        The fleet (threads and the tasks each one owns).

    Returns
    -------
    str
        Header and one padded line per stream thread, idle ones with ``-``.
    """
    app = fleet.spec.application_id
    rng = random.Random(fleet.spec.seed + 1)
    sources = fleet.source_topics()
    header = ("CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT")
    rows = []
    for (proc, thread), tasks in sorted(fleet.thread_tasks.items()):
        client_id = f"{app}-{fleet.processes[proc]}-StreamThread-{thread}-consumer"
        member_id = f"{client_id}-{uuid.UUID(int=rng.getrandbits(128), version=4)}"
        by_topic: dict[str, list[int]] = {}
        for sub, p in sorted(tasks):
            by_topic.setdefault(sources[sub], []).append(p)
        assignment = (
            ", ".join(f"{t}({','.join(map(str, ps))})" for t, ps in sorted(by_topic.items())) or "-"
        )
        host = f"/10.0.{proc // 250}.{proc % 250 + 1}"
        rows.append((member_id, host, client_id, str(len(tasks)), assignment))
    widths = [max(len(r[i]) for r in [*rows, header]) for i in range(4)]

    def fmt(r: tuple[str, ...]) -> str:
        return " ".join(r[i].ljust(widths[i]) for i in range(4)) + " " + r[4]

    return "\n".join([fmt(header), *(fmt(r) for r in rows)]) + "\n"


def end_offsets_text(fleet: Fleet, t: float) -> str:
    """``kafka-get-offsets.sh`` output: changelog and source partitions.

    Parameters
    ----------
    fleet:
        The fleet.
    t:
        Seconds since :data:`START_MS`.

    Returns
    -------
    str
        ``topic:partition:offset`` lines, sorted.
    """
    ends = fleet.end_offsets_at(t)
    lines = [
        f"{fleet.topics[tp]}:{p}:{e}"
        for tp, p, e in zip(fleet.cp_topic, fleet.cp_partition, ends, strict=True)
    ]
    rng = np.random.default_rng(fleet.spec.seed + 2)
    for topic in fleet.source_topics().values():
        for p in range(fleet.partitions):
            lines.append(f"{topic}:{p}:{int(rng.integers(1_000_000, 90_000_000) + 100 * t)}")
    return "\n".join(sorted(lines)) + "\n"


def write_state_dirs(fleet: Fleet, out: Path, t: float) -> None:
    """One state directory per instance with checkpoint files.

    Parameters
    ----------
    fleet:
        The fleet.
    out:
        Folder receiving ``instance-NN/<application.id>/``.
    t:
        Seconds since :data:`START_MS` of the checkpointed offsets.
    """
    app = fleet.spec.application_id
    offsets = fleet.offsets_at(t)
    sub_of = {
        fleet.changelog_topic(name): sub for sub, names in fleet.stores.items() for name in names
    }
    by_task: dict[tuple[int, str], list[tuple[str, int, int]]] = {}
    for k in range(len(fleet.rp_process)):
        cp = int(fleet.rp_cp[k])
        topic = fleet.topics[int(fleet.cp_topic[cp])]
        partition = int(fleet.cp_partition[cp])
        sub = sub_of[topic]
        key = (int(fleet.rp_process[k]), f"{sub}_{partition}")
        by_task.setdefault(key, []).append((topic, partition, int(offsets[k])))
    for i, process_id in enumerate(fleet.processes):
        app_dir = out / f"instance-{i + 1:02d}" / app
        app_dir.mkdir(parents=True, exist_ok=True)
        (app_dir / PROCESS_METADATA_FILE).write_text(
            json.dumps({"processId": process_id}, separators=(",", ":"))
        )
    for (proc, task), entries in sorted(by_task.items()):
        task_dir = out / f"instance-{proc + 1:02d}" / app / task
        task_dir.mkdir(parents=True, exist_ok=True)
        body = "".join(f"{t} {p} {o}\n" for t, p, o in sorted(entries))
        (task_dir / CHECKPOINT_FILE).write_text(f"0\n{len(entries)}\n{body}")


def generate(
    spec: FleetSpec,
    out: str | Path,
    snapshots: int = 1,
    layout: str = "dirs",
    interval_ms: int = 10_000,
    end_interval_ms: int = 30_000,
) -> dict[str, Any]:
    """Write a whole fleet under ``out`` (see the module docstring for the files).

    Parameters
    ----------
    spec:
        Fleet parameters and seed.
    out:
        Destination folder (created).
    snapshots:
        1 = one moment; more = a history of offsets collected every ``interval_ms`` and end
        offsets every ``end_interval_ms`` (needs ``layout="parquet"``).
    layout:
        ``dirs`` (state directories with checkpoint files) or ``parquet`` (offset rows).
    interval_ms, end_interval_ms:
        Collection periods, in ms.

    Returns
    -------
    dict
        The manifest also written to ``fleet.json``.

    Raises
    ------
    ValueError
        For an unknown layout, or a history requested with ``layout="dirs"``.
    """
    if layout not in ("dirs", "parquet"):
        raise ValueError(f"layout must be 'dirs' or 'parquet', got {layout!r}")
    if snapshots > 1 and layout == "dirs":
        raise ValueError(
            "a history (snapshots > 1) is written as offset rows: use layout='parquet'"
        )
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    fleet = build_fleet(spec)
    now_s = ((snapshots - 1) * interval_ms + interval_ms // 2) / 1000.0 if snapshots > 1 else 0.0
    (target / "topology.txt").write_text(topology_text(fleet))
    (target / "members.txt").write_text(members_text(fleet))
    (target / "end-offsets.txt").write_text(end_offsets_text(fleet, now_s))
    manifest: dict[str, Any] = {
        "spec": asdict(spec),
        "layout": layout,
        "snapshots": snapshots,
        "interval_ms": interval_ms,
        "end_interval_ms": end_interval_ms,
        "start_ms": START_MS,
        "processes": fleet.processes,
        "threads": fleet.threads,
        "partitions": fleet.partitions,
        "stores": {str(k): v for k, v in fleet.stores.items()},
        "replicas": fleet.replicas,
    }
    if layout == "dirs":
        write_state_dirs(fleet, target / "state", now_s)
    else:
        rows, end_rows = write_history_parquet(
            fleet, target, snapshots, interval_ms, end_interval_ms
        )
        manifest.update(offset_rows=rows, end_offset_rows=end_rows)
    (target / "fleet.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
