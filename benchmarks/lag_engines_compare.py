"""Check that the Spark lag job and the DuckDB reference of the benchmarks write the same tables.

The scale matrix (``lag_scale_benchmark.py``) compares the two engines' times; this script runs
both on one generated history (``lag_benchmark.run_spark`` and ``run_duckdb``, the same
functions the matrix times) and compares their Parquet outputs in DuckDB with ``EXCEPT ALL``
both ways: the lag table on all 11 columns, the restore table on the 14 columns both engines
write (rates rounded to 1e-6 records/s). It prints the row counts and the rows left over on each
side, and exits 1 when any are.

Usage::

    python benchmarks/lag_engines_compare.py --shape many-snapshots --rows 1e6 --work /tmp/cmp
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import lag_benchmark  # noqa: E402
import lag_scale_benchmark  # noqa: E402

LAG_COLUMNS = (
    "snapshot_time, process_id, task_id, subtopology, partition, changelog_partitions, "
    "offset_sum, end_offset_time, end_offset_sum, lag, records_behind"
)
RESTORE_COLUMNS = (
    "process_id, task_id, snapshots, first_snapshot_time, rate_from_time, snapshot_time, "
    "offset_sum, end_offset_sum, lag, records_behind, round(catch_up_rate, 6), "
    "round(restore_rate, 6), caught_up, eta_ms"
)


def left_over(connection: object, table: str, columns: str, spark: str, duck: str) -> bool:
    """Print counts and rows left over each way for one table; True when the tables match."""
    s = f"(SELECT {columns} FROM read_parquet('{spark}'))"
    d = f"(SELECT {columns} FROM read_parquet('{duck}'))"

    def one(query: str) -> int:
        return int(connection.execute(query).fetchone()[0])  # type: ignore[attr-defined]

    counts = one(f"SELECT count(*) FROM {s}"), one(f"SELECT count(*) FROM {d}")
    extra = one(f"SELECT count(*) FROM ({s} EXCEPT ALL {d})")
    missing = one(f"SELECT count(*) FROM ({d} EXCEPT ALL {s})")
    print(
        f"{table}: Spark {counts[0]:,} rows, DuckDB {counts[1]:,} rows; "
        f"only in Spark {extra:,}, only in DuckDB {missing:,}"
    )
    return counts[0] == counts[1] and extra == 0 and missing == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="many-snapshots", choices=lag_scale_benchmark.SHAPES)
    parser.add_argument("--rows", default="1e6", help="offset rows of the generated history")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out")
    args = parser.parse_args(argv)

    import duckdb

    from lag.spark.session import get_spark

    args.work.mkdir(parents=True, exist_ok=True)
    inputs = lag_scale_benchmark.prepare(args.shape, int(float(args.rows)), args.work)
    out = args.work / "engines-compare"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    try:
        spark = get_spark("local[2]", app_name="lag-compare")
        try:
            lag_benchmark.run_spark(inputs, spark, out)
        finally:
            spark.stop()
        lag_benchmark.run_duckdb(inputs, out, threads=2)
        connection = duckdb.connect()
        same = left_over(
            connection,
            "lag table",
            LAG_COLUMNS,
            f"{out}/spark-lags.parquet/*.parquet",
            f"{out}/duckdb-lags.parquet",
        )
        same &= left_over(
            connection,
            "restore table",
            RESTORE_COLUMNS,
            f"{out}/spark-restore.parquet/*.parquet",
            f"{out}/duckdb-restore.parquet",
        )
        connection.close()
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print("same tables" if same else "DIFFERENT tables")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
