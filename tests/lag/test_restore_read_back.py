"""The restore table read back from the written lag table equals the one from the per-snapshot
rows (``LagJob.restore_after`` against ``LagJob.restore``), for Parquet folders and single
files, timeless and timed snapshots, and wider rate windows; other formats keep the cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lag.job.job import LAG_PLAIN_COLUMNS, LagJob, reads_restore_from_lags
from lag.job.restore import restore_table, restore_table_from_lags
from lag.outputs.tables import write_table
from lag.pipeline import ComputeRequest, build_job, prepare

pytestmark = pytest.mark.spark

P1 = "11111111-1111-4111-8111-111111111111"
P2 = "22222222-2222-4222-8222-222222222222"
P3 = "33333333-3333-4333-8333-333333333333"


def rows_of(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in frame.collect()), key=repr)


@pytest.fixture(scope="module")
def job(
    tmp_path_factory: pytest.TempPathFactory, spark: Any, fleet_factory: Any, offset_row: Any
) -> Any:
    """A history with timed and timeless snapshots, a stalled and a caught-up replica."""
    files = fleet_factory(tmp_path_factory.mktemp("read-back"))
    files.write_members([(P1, 1, "in(0,1), other(0,1), plain(0,1)"), (P2, 1, "-"), (P3, 1, "-")])
    ends = [
        {"topic": f"app-{s}-changelog", "partition": p, "offset": 100_000 + t, "snapshot_time": t}
        for s in ("s1", "s2", "s3")
        for p in (0, 1)
        for t in (0, 10_000)
    ]
    files.write_end_rows(ends)
    rows = [offset_row(P3, "s1", 1, 5_000)]  # timeless: "now"
    for t, restoring in ((0, 10_000), (10_000, 40_000), (20_000, 50_000), (30_000, 52_000)):
        rows += [
            offset_row(P2, "s1", 0, restoring, t=t),
            offset_row(P2, "s2", 1, restoring // 2, t=t),
            offset_row(P2, "s3", 1, restoring // 2, t=t),
            offset_row(P3, "s1", 0, 20_000, t=t),
            offset_row(P2, "s1", 1, 99_900 + t // 10_000, t=t),
        ]
    files.write_offsets(rows)
    request = ComputeRequest(
        application_id="app",
        topology=str(files.topology),
        members=[str(files.members)],
        end_offsets=[str(files.end_rows)],
        offsets=[str(files.offsets)],
        output=str(files.root / "cluster.json"),
        configs={"acceptable_recovery_lag": 1000},
    )
    topology, membership = prepare(request)
    built = build_job(request, spark, topology, membership)
    yield built
    built.unpersist()


@pytest.mark.parametrize("name", ["lags.parquet", "lags-folder/"])
def test_restore_read_back_equals_the_restore_from_the_snapshots(
    job: LagJob, tmp_path: Path, name: str
) -> None:
    path = str(tmp_path / name)
    write_table(job.lags, path, plain_columns=LAG_PLAIN_COLUMNS)
    expected = rows_of(job.restore)
    assert len(expected) == 5  # P2's 0_0, 0_1, 1_1; P3's 0_0 and its timeless 0_1
    assert rows_of(job.restore_after(path)) == expected
    written = job.spark.read.parquet(path)
    for window in (3, 4):
        assert rows_of(restore_table_from_lags(written, 1000, window)) == rows_of(
            restore_table(job.snapshots, job.process_keys, 1000, window)
        )


def test_an_empty_lag_table_reads_back_as_an_empty_restore_table(
    job: LagJob, tmp_path: Path
) -> None:
    path = str(tmp_path / "empty.parquet")
    write_table(job.lags.limit(0), path)
    written = job.spark.read.schema(job.lags.schema).parquet(path)
    assert restore_table_from_lags(written, 1000, 2).count() == 0


def test_the_restore_table_is_read_back_only_after_a_parquet_lag_table() -> None:
    assert reads_restore_from_lags("out/lags.parquet", "out/restore.parquet")
    assert reads_restore_from_lags("hdfs://nn/lags/", "out/restore.csv")
    assert not reads_restore_from_lags("out/lags.csv", "out/restore.parquet")
    assert not reads_restore_from_lags("out/lags.jsonl", "out/restore.parquet")
    assert not reads_restore_from_lags(None, "out/restore.parquet")
    assert not reads_restore_from_lags("out/lags.parquet", None)
