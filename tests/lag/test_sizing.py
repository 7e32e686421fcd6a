"""How the lag job sizes Spark's work by input volume (``lag.spark.sizing``), and that the sizing
never changes a result.

The job lowers ``spark.sql.files.maxPartitionBytes`` (scan tasks of about a million offset rows)
and ``spark.sql.adaptive.advisoryPartitionSizeInBytes`` (coalesced shuffle partitions of about a
million offset sums) so the per-(snapshot, process, task) aggregations fit a task's share of a
1 GB driver instead of spilling; it never raises a value the session set lower. The lag and
restore tables of a generated history must be the same whether the inputs are read in one scan
task or in dozens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lag.spark.sizing import (
    ADVISORY_PARTITION_BYTES,
    MAX_SHUFFLE_PARTITIONS,
    PARTITION_INPUT_BYTES,
    input_split_bytes,
    shuffle_partitions_for,
)

SPLIT = "spark.sql.files.maxPartitionBytes"
ADVISORY = "spark.sql.adaptive.advisoryPartitionSizeInBytes"


def test_input_splits_are_capped_at_the_partition_volume_never_raised() -> None:
    assert input_split_bytes(128 * 1024 * 1024) == PARTITION_INPUT_BYTES
    assert input_split_bytes(PARTITION_INPUT_BYTES) == PARTITION_INPUT_BYTES
    assert input_split_bytes(64 * 1024) == 64 * 1024


def test_shuffle_partitions_follow_volume_between_the_floor_and_the_cap() -> None:
    assert shuffle_partitions_for(0, 4) == 4
    assert shuffle_partitions_for(10 * PARTITION_INPUT_BYTES + 1, 4) == 11
    assert shuffle_partitions_for(10 * PARTITION_INPUT_BYTES, 32) == 32
    assert shuffle_partitions_for(2**40, 4) == MAX_SHUFFLE_PARTITIONS
    assert shuffle_partitions_for(2**63 - 1, 7) == 7  # Spark's "unknown size"


def _history(root: Path) -> dict[str, Any]:
    """A generated Parquet history, its offset rows rewritten as many small row groups."""
    import pyarrow.parquet as pq

    from lag.fleet.generate import generate
    from lag.fleet.spec import FleetSpec

    manifest = generate(
        FleetSpec(instances=4, tasks=24, stores=2, standbys=1, seed=7),
        root,
        snapshots=40,
        layout="parquet",
        end_interval_ms=20_000,
    )
    part = next((root / "offsets.parquet").glob("*.parquet"))
    table = pq.read_table(part)
    part.unlink()
    pq.write_table(table, part, row_group_size=64)
    assert pq.ParquetFile(part).metadata.num_row_groups > 20
    return manifest


def _tables(spark: Any, root: Path, out: Path) -> tuple[list[Any], list[Any], Any]:
    from lag.pipeline import ComputeRequest, build_job, prepare

    request = ComputeRequest(
        application_id="orders-app",
        topology=str(root / "topology.txt"),
        members=[str(root / "members.txt")],
        end_offsets=[str(root / "end-offsets.parquet")],
        offsets=[str(root / "offsets.parquet")],
        output=str(out / "cluster.json"),
        configs={"acceptable_recovery_lag": 10_000},
    )
    topology, membership = prepare(request)
    job = build_job(request, spark, topology, membership)
    try:
        scan_tasks = job.offsets.rdd.getNumPartitions()
        lags = sorted(tuple(r) for r in job.lags.collect())
        restore = sorted(tuple(r) for r in job.restore.collect())
    finally:
        job.unpersist()
    return lags, restore, (job.split_bytes, scan_tasks)


@pytest.mark.spark
def test_sizing_lowers_spark_defaults_and_never_changes_the_tables(
    spark: Any, tmp_path: Path
) -> None:
    root = tmp_path / "history"
    _history(root)
    saved = {key: spark.conf.get(key) for key in (SPLIT, ADVISORY)}
    try:
        spark.conf.set(SPLIT, str(128 * 1024 * 1024))
        spark.conf.set(ADVISORY, str(64 * 1024 * 1024))
        lags, restore, (split, _) = _tables(spark, root, tmp_path)
        assert split == PARTITION_INPUT_BYTES
        assert int(spark.conf.get(SPLIT)) == PARTITION_INPUT_BYTES
        assert int(spark.conf.get(ADVISORY)) == ADVISORY_PARTITION_BYTES

        # A session that asks for smaller pieces keeps them: many scan tasks, same tables.
        spark.conf.set(SPLIT, "4096")
        spark.conf.set(ADVISORY, "1024")
        small_lags, small_restore, (small_split, scan_tasks) = _tables(spark, root, tmp_path)
        assert small_split == 4096
        assert int(spark.conf.get(ADVISORY)) == 1024
        assert scan_tasks > 1
    finally:
        for key, value in saved.items():
            spark.conf.set(key, value)
    assert lags, "the generated history gave an empty lag table"
    assert small_lags == lags
    assert small_restore == restore
