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
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from lag.fleet.history import write_history_parquet
from lag.fleet.spec import START_MS, Fleet, FleetSpec, build_fleet
from lag.sources.checkpoint_file import CHECKPOINT_FILE
from lag.sources.checkpoints import PROCESS_METADATA_FILE

__all__ = [
    "end_offsets_text",
    "generate",
    "members_text",
    "topology_text",
    "write_state_dirs",
]


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
