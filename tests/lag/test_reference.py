"""The Spark job against a plain-Python reference over the same rows.

The reference re-implements, without Spark and without the lag package's job code, what Kafka
does: ``TaskManager.sumOfChangelogOffsets`` per (snapshot, process, task),
``computeEndOffsetSumsByTask`` per (end-offset snapshot, task), the as-of match of each snapshot to
the latest complete end offsets at or before it, and ``ClientState.computeTaskLags``; then the
catch-up rate and ETA of the restore table from the last two usable snapshots.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lag.fleet.generate import generate
from lag.fleet.spec import FleetSpec
from lag.pipeline import ComputeRequest, build_job, prepare

pytestmark = pytest.mark.spark

LONG_MAX = 9_223_372_036_854_775_807
ACCEPTABLE = 10_000


def kafka_sum(offsets: list[int]) -> int:
    if any(o == -2 for o in offsets):
        return -2
    return min(sum(o for o in offsets if o >= 0), LONG_MAX)


def kafka_lag(offset_sum: int, end_sum: int) -> int:
    if offset_sum in (-2, -3):
        return offset_sum
    return end_sum if end_sum < offset_sum else end_sum - offset_sum


def reference_lags(
    offsets: list[dict[str, Any]],
    ends: list[dict[str, Any]],
    stores: dict[int, list[str]],
    app: str,
) -> dict[tuple[int, str, str], tuple[int, int | None, int | None, int | None]]:
    sub_of = {f"{app}-{store}-changelog": sub for sub, names in stores.items() for store in names}
    per_snapshot: dict[tuple[int, str, str], list[int]] = defaultdict(list)
    for r in offsets:
        task = f"{sub_of[r['topic']]}_{r['partition']}"
        per_snapshot[(r["snapshot_time"], r["process_id"], task)].append(r["offset"])
    end_parts: dict[tuple[int, str], list[int]] = defaultdict(list)
    for r in ends:
        end_parts[(r["snapshot_time"], f"{sub_of[r['topic']]}_{r['partition']}")].append(
            r["offset"]
        )
    complete: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for (t, task), values in end_parts.items():
        if len(values) == len(stores[int(task.split("_")[0])]):
            complete[task].append((t, kafka_sum(values)))
    result = {}
    for (t, pid, task), values in per_snapshot.items():
        offset_sum = kafka_sum(values)
        earlier = [(e, s) for e, s in complete[task] if e <= t]
        if not earlier:
            result[(t, pid, task)] = (offset_sum, None, None, None)
            continue
        e, end_sum = max(earlier)
        behind = 0 if offset_sum == -2 else max(end_sum - offset_sum, 0)
        result[(t, pid, task)] = (offset_sum, e, kafka_lag(offset_sum, end_sum), behind)
    return result


def reference_restore(
    lags: dict[tuple[int, str, str], tuple[Any, ...]],
) -> dict[tuple[str, str], tuple[float | None, int | None]]:
    series: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for (t, pid, task), (_sum, _e, _lag, behind) in lags.items():
        if behind is not None:
            series[(pid, task)].append((t, behind))
    result = {}
    for key, points in series.items():
        points.sort()
        (t0, b0), (t1, b1) = points[-2] if len(points) > 1 else points[-1], points[-1]
        rate = (b0 - b1) * 1000.0 / (t1 - t0) if t1 > t0 else None
        if b1 <= ACCEPTABLE:
            eta = 0
        elif rate is not None and rate > 0:
            eta = math.ceil((b1 - ACCEPTABLE) * 1000.0 / rate)
        else:
            eta = None
        result[key] = (rate, eta)
    return result


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("reference")
    manifest = generate(
        FleetSpec(instances=4, tasks=24, stores=3, standbys=2, seed=5),
        out,
        snapshots=10,
        layout="parquet",
    )
    # Drop one end offset of the second end-offset snapshot: that task's snapshot is incomplete.
    path = out / "end-offsets.parquet" / "part-00000.parquet"
    table = pq.read_table(path)
    times = sorted(set(table.column("snapshot_time").to_pylist()))
    drop = table.column("snapshot_time").to_pylist().index(times[1])
    table = pa.concat_tables([table.slice(0, drop), table.slice(drop + 1)])
    pq.write_table(table, path)
    return {"out": out, "manifest": manifest}


def read_rows(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path).to_pylist()


def test_spark_lag_table_equals_the_python_reference(generated: dict[str, Any], spark: Any) -> None:
    out, manifest = generated["out"], generated["manifest"]
    request = ComputeRequest(
        application_id="orders-app",
        topology=str(out / "topology.txt"),
        members=[str(out / "members.txt")],
        end_offsets=[str(out / "end-offsets.parquet")],
        offsets=[str(out / "offsets.parquet")],
        output=str(out / "cluster.json"),
        configs={"acceptable_recovery_lag": ACCEPTABLE},
    )
    topology, membership = prepare(request)
    job = build_job(request, spark, topology, membership)
    spark_lags = {
        (r["snapshot_time"], r["process_id"], r["task_id"]): (
            r["offset_sum"],
            r["end_offset_time"],
            r["lag"],
            r["records_behind"],
        )
        for r in job.lags.collect()
    }
    spark_restore = {
        (r["process_id"], r["task_id"]): (r["catch_up_rate"], r["eta_ms"])
        for r in job.restore.collect()
    }

    stores = {int(k): v for k, v in manifest["stores"].items()}
    expected = reference_lags(
        read_rows(out / "offsets.parquet"),
        read_rows(out / "end-offsets.parquet"),
        stores,
        "orders-app",
    )
    expected_restore = reference_restore(expected)

    assert len(expected) > 300
    assert spark_lags == expected
    assert set(spark_restore) == set(expected_restore)
    for key, (rate, eta) in expected_restore.items():
        assert spark_restore[key][0] == pytest.approx(rate)
        assert spark_restore[key][1] == eta
    assert job.error_summary() == {"incomplete end offsets": 1}
