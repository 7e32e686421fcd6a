"""Offset histories of a generated fleet: the rows ``streams-lag collect`` would gather over time.

Every process checkpoints its tasks' offsets at fixed intervals with a phase of its own, and the
changelogs' end offsets are sampled on their own interval, both written as Parquet in the row
shapes of docs/lag.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from lag.fleet.spec import START_MS, Fleet

__all__ = [
    "end_history",
    "history_batches",
    "snapshots_for_rows",
    "write_history_parquet",
]


def history_batches(
    fleet: Fleet, snapshots: int, interval_ms: int, batch_rows: int = 2_000_000
) -> Iterator[dict[str, np.ndarray]]:
    """Offset rows of ``snapshots`` periodic collections, in batches of about ``batch_rows``.

    Process ``i`` collects at ``START_MS + k * interval_ms + phase_i`` with a fixed phase in
    ``[0, interval_ms / 2)``, so processes' snapshots do not line up with each other or with
    the end-offset snapshots.

    Parameters
    ----------
    fleet:
        The fleet.
    snapshots:
        Collections per process.
    interval_ms:
        Collection period, ms.
    batch_rows:
        About this many rows per batch.

    Yields
    ------
    dict
        Column arrays ``process`` (index into ``fleet.processes``), ``topic`` (index into
        ``fleet.topics``), ``partition``, ``offset``, ``snapshot_time``.
    """
    phases = np.random.default_rng(fleet.spec.seed + 3).integers(
        0, max(1, interval_ms // 2), len(fleet.processes)
    )
    per = len(fleet.rp_process)
    step = max(1, batch_rows // max(per, 1))
    for first in range(0, snapshots, step):
        ks = np.arange(first, min(snapshots, first + step))
        times_ms = ks[:, None] * interval_ms + phases[fleet.rp_process][None, :]
        offsets = fleet.offsets_at(times_ms / 1000.0)
        n = len(ks)
        yield {
            "process": np.tile(fleet.rp_process, n),
            "topic": np.tile(fleet.cp_topic[fleet.rp_cp], n),
            "partition": np.tile(fleet.cp_partition[fleet.rp_cp], n),
            "offset": offsets.reshape(-1),
            "snapshot_time": (START_MS + times_ms).reshape(-1),
        }


def end_history(fleet: Fleet, until_ms: int, interval_ms: int) -> dict[str, np.ndarray]:
    """End-offset rows every ``interval_ms`` from ``START_MS`` up to ``START_MS + until_ms``.

    Parameters
    ----------
    fleet:
        The fleet.
    until_ms, interval_ms:
        Span and period, ms.

    Returns
    -------
    dict
        Column arrays ``topic`` (index into ``fleet.topics``), ``partition``, ``offset``,
        ``snapshot_time`` (epoch ms).
    """
    ks = np.arange(0, until_ms // interval_ms + 1)
    times_ms = ks * interval_ms
    ends = np.stack([fleet.end_offsets_at(t / 1000.0) for t in times_ms])
    n = len(ks)
    return {
        "topic": np.tile(fleet.cp_topic, n),
        "partition": np.tile(fleet.cp_partition, n),
        "offset": ends.reshape(-1),
        "snapshot_time": np.repeat(START_MS + times_ms, len(fleet.cp_topic)),
    }


def _dictionary(indices: np.ndarray, values: list[str]) -> Any:
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(
        pa.array(indices.astype(np.int32)), pa.array(values, pa.string())
    )


def write_history_parquet(
    fleet: Fleet,
    out: Path,
    snapshots: int,
    interval_ms: int = 10_000,
    end_interval_ms: int = 30_000,
) -> tuple[int, int]:
    """Write ``offsets.parquet/`` and ``end-offsets.parquet/`` histories under ``out``.

    Parameters
    ----------
    fleet:
        The fleet.
    out:
        Destination folder.
    snapshots:
        Collections per process.
    interval_ms, end_interval_ms:
        Periods of the offset and end-offset collections, ms.

    Returns
    -------
    tuple
        (offset rows written, end-offset rows written).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    offsets_dir, ends_dir = out / "offsets.parquet", out / "end-offsets.parquet"
    offsets_dir.mkdir(parents=True, exist_ok=True)
    ends_dir.mkdir(parents=True, exist_ok=True)
    written = 0
    for n, batch in enumerate(history_batches(fleet, snapshots, interval_ms)):
        table = pa.table(
            {
                "process_id": _dictionary(batch["process"], fleet.processes),
                "topic": _dictionary(batch["topic"], fleet.topics),
                "partition": pa.array(batch["partition"].astype(np.int32)),
                "offset": pa.array(batch["offset"]),
                "snapshot_time": pa.array(batch["snapshot_time"].astype(np.int64)),
            }
        )
        pq.write_table(table, offsets_dir / f"part-{n:05d}.parquet", row_group_size=1 << 20)
        written += table.num_rows
    last_ms = (snapshots - 1) * interval_ms + interval_ms // 2
    ends = end_history(fleet, last_ms, end_interval_ms)
    end_table = pa.table(
        {
            "topic": _dictionary(ends["topic"], fleet.topics),
            "partition": pa.array(ends["partition"].astype(np.int32)),
            "offset": pa.array(ends["offset"]),
            "snapshot_time": pa.array(ends["snapshot_time"].astype(np.int64)),
        }
    )
    pq.write_table(end_table, ends_dir / "part-00000.parquet", row_group_size=1 << 20)
    return written, end_table.num_rows


def snapshots_for_rows(fleet: Fleet, rows: int) -> int:
    """Number of snapshots that make about ``rows`` offset rows for this fleet.

    Parameters
    ----------
    fleet:
        The fleet (its replica-partitions: rows per snapshot).
    rows:
        Wanted number of offset rows.

    Returns
    -------
    int
        At least 1.
    """
    return max(1, math.ceil(rows / max(1, len(fleet.rp_process))))
