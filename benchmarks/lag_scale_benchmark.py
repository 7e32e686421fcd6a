"""The lag job's scale matrix: sizes x history shapes, Spark with its default driver memory beside
DuckDB in the same run.

Shapes (each a generated fleet in the real formats, :mod:`lag.fleet.generate`; rows per snapshot =
replicas x changelog partitions, so the number of snapshots follows the size):

- ``few-snapshots``: a wide fleet, 300 instances, ~60,000 tasks, 2 stores, 1 standby (about
  80,000 offset rows per collection);
- ``many-snapshots``: the long-running fleet of issue #16, 60 instances, 3,000 tasks, 2 stores,
  1 standby (about 4,000 rows per collection: 2,000 changelog partitions x 2 holders), end
  offsets at every collection (a history as long as the offsets');
- ``many-processes``: 3,000 instances, ~30,000 tasks, 2 stores, 1 standby.

For each (size, shape) it runs the real Spark job (:func:`benchmarks.lag_benchmark.run_spark`:
cluster state's inputs, lag table and restore table written as Parquet folders) and the same
computations in DuckDB (:func:`benchmarks.lag_benchmark.run_duckdb`), and prints per engine the
wall seconds of the lag table and of the restore table, their total with the CPU seconds burnt
(for Spark the JVM, its Python workers, exited ones included, and this process; for DuckDB this
process), offset rows per wall second, the ratios to DuckDB in
wall and CPU time, the JVM's peak heap (sum of the heap pools' peaks since the run started: an
upper bound of the driver's peak) and the 1-minute load average (the machine is shared). Each
cell's results are appended to ``--json`` as soon as it finishes, so a long matrix keeps what
finished; ``--drop-inputs`` deletes each generated history after its cell (100 M rows take
about 1 GB of Parquet).
DuckDB runs as a user runs it: ``--duckdb-threads`` (2) threads and its default memory limit
(80 % of the machine's memory) unless ``--duckdb-memory`` is given. Engines: ``spark`` (what
``streams-lag compute`` runs), ``spark-cache`` (the earlier plan, the restore table from the
cached per-snapshot rows, for comparison) and ``duckdb``. Before the cells it prints Spark's
fixed costs in CPU and wall seconds (session start, first query, first Python worker:
:func:`lag_benchmark.spark_fixed_costs`), and after them Spark's executor CPU seconds per job
and kind of stage (:func:`stage_table`, from Spark's status store).
The Spark session uses Spark's default driver memory (1 GB) unless ``--driver-memory`` is given;
a run that fails (for instance ``OutOfMemoryError``) is printed as failed with its error line. A
Spark warm-up run on the 1 M many-snapshot history comes first and is not reported.

Usage::

    python benchmarks/lag_scale_benchmark.py --sizes 1e6,1e7 --shapes many-snapshots
    python benchmarks/lag_scale_benchmark.py --sizes 1e6,1e7,1e8      # the whole matrix
    nice -n 10 python benchmarks/lag_scale_benchmark.py --sizes 1e8 --shapes many-snapshots \
        --work /tmp/lag-scale --json /tmp/lag-scale/100m.json --drop-inputs
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import lag_benchmark  # noqa: E402

from lag.fleet.generate import generate  # noqa: E402
from lag.fleet.history import snapshots_for_rows  # noqa: E402
from lag.fleet.spec import FleetSpec, build_fleet  # noqa: E402

#: Shape -> (fleet, end-offset interval in ms; collections are every 10 s).
SHAPES: dict[str, tuple[FleetSpec, int]] = {
    "few-snapshots": (FleetSpec(instances=300, tasks=60_000, stores=2, standbys=1, seed=1), 30_000),
    "many-snapshots": (FleetSpec(instances=60, tasks=3_000, stores=2, standbys=1, seed=1), 10_000),
    "many-processes": (
        FleetSpec(instances=3_000, tasks=30_000, stores=2, standbys=1, seed=1),
        30_000,
    ),
}


def prepare(shape: str, rows: int, root: Path) -> dict[str, Any]:
    """Generate (or reuse) the history of about ``rows`` offset rows of ``shape``."""
    spec, end_interval = SHAPES[shape]
    folder = root / f"{shape}-{rows:.0e}".replace("+", "")
    manifest_path = folder / "fleet.json"
    if manifest_path.exists():
        return {"folder": folder, **json.loads(manifest_path.read_text())}
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    snapshots = snapshots_for_rows(build_fleet(spec), rows)
    manifest = generate(
        spec, folder, snapshots=snapshots, layout="parquet", end_interval_ms=end_interval
    )
    print(
        f"  generated {shape}: {manifest['offset_rows']:,} offset rows, "
        f"{manifest['end_offset_rows']:,} end-offset rows, {snapshots} snapshots "
        f"in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return {"folder": folder, **manifest}


def heap_pools(spark: Any) -> list[Any]:
    """The driver JVM's heap memory pools (``java.lang.management``)."""
    jvm = spark.sparkContext._jvm
    pools = jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
    return [p for p in pools if str(p.getType().toString()) == "Heap memory"]


def reset_peak(spark: Any) -> None:
    """Reset the heap pools' peak usage (after a full GC, so the peak starts from live data)."""
    spark.sparkContext._jvm.java.lang.System.gc()
    for pool in heap_pools(spark):
        pool.resetPeakUsage()


def peak_heap_mb(spark: Any) -> float:
    """Sum of the heap pools' peak usage since :func:`reset_peak`, in MB."""
    return sum(int(p.getPeakUsage().getUsed()) for p in heap_pools(spark)) / 2**20


def peak_old_gen_mb(spark: Any) -> float:
    """Peak usage of the old generation (G1 ``Old Gen``, serial/parallel ``Tenured``/``Old``)
    since :func:`reset_peak`, in MB: the long-lived part of the driver's heap, a tighter
    figure than :func:`peak_heap_mb` (whose young pools peak at their capacity)."""
    old = [
        p for p in heap_pools(spark) if "Old" in str(p.getName()) or "Tenured" in str(p.getName())
    ]
    return sum(int(p.getPeakUsage().getUsed()) for p in old) / 2**20


def collectors(spark: Any) -> list[str]:
    """Names of the driver JVM's garbage collectors (``G1 Young Generation``, ``PS Scavenge``)."""
    jvm = spark.sparkContext._jvm
    beans = jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    return [str(b.getName()) for b in beans]


def run_cell(
    inputs: dict[str, Any], shape: str, engines: list[str], spark: Any, args: argparse.Namespace
) -> list[dict[str, Any]]:
    """Run every engine on one generated history; one result dict per engine.

    Each result holds ``rows`` (offset rows), ``end_rows``, ``shape``, ``engine``, ``lag`` and
    ``restore`` (wall seconds of the two tables), ``total``, ``cpu`` (CPU seconds: the JVM, its
    Python workers and this process for Spark, :class:`lag_benchmark.TreeCpuMeter`; this process
    for DuckDB), ``cpu_live_only`` (Spark: the older reading that lost exited workers),
    ``rows_per_s`` (offset rows per wall
    second), ``x_duckdb`` and ``x_duckdb_cpu`` (ratios to DuckDB), ``peak_heap_mb`` (Spark),
    ``load_avg`` (the 1-minute load average, the larger of start and end), or ``failed`` with
    the error's first line.
    """
    actual = inputs["offset_rows"]
    out = args.work / f"scale-run-{os.getpid()}"  # two runs may share --work
    timings: dict[str, dict[str, Any]] = {}
    for engine in engines:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        load = os.getloadavg()[0]
        try:
            if engine.startswith("spark"):
                assert spark is not None
                reset_peak(spark)
                # A floor of 2 x cores; the job raises it by input volume.
                spark.conf.set("spark.sql.shuffle.partitions", "4")
                plan = "cache" if engine == "spark-cache" else "job"
                t = lag_benchmark.run_spark(inputs, spark, out, restore_plan=plan)
                t["peak_heap_mb"] = round(peak_heap_mb(spark))
                t["peak_old_gen_mb"] = round(peak_old_gen_mb(spark))
            else:
                t = lag_benchmark.run_duckdb(inputs, out, args.duckdb_threads, args.duckdb_memory)
            t["total"] = t["lag"] + t["restore"]
        except Exception as exc:  # a failed run is a result too
            message = str(exc).strip() or repr(exc)
            t = {"failed": message.splitlines()[0][:200]}
        t["load_avg"] = round(max(load, os.getloadavg()[0]), 1)
        timings[engine] = t
    shutil.rmtree(out, ignore_errors=True)
    duck = timings.get("duckdb", {})
    results = []
    for engine, t in timings.items():
        result = {
            "rows": actual,
            "end_rows": inputs["end_offset_rows"],
            "shape": shape,
            "engine": engine,
            **{k: round(v, 1) if isinstance(v, float) else v for k, v in t.items()},
        }
        if "total" in t:
            result["rows_per_s"] = round(actual / t["total"])
            if "total" in duck and engine != "duckdb":
                result["x_duckdb"] = round(t["total"] / duck["total"], 2)
                result["x_duckdb_cpu"] = round(t["cpu"] / max(duck["cpu"], 0.01), 2)
        results.append(result)
        print(f"  {json.dumps({k: v for k, v in result.items() if k != 'stages'})}", flush=True)
    return results


def markdown_table(results: list[dict[str, Any]]) -> str:
    """The results as the Markdown table of docs/performance.md."""
    lines = [
        "| offset rows | end-offset rows | shape | engine | lag s | restore s | total s (CPU s) "
        "| rows/s | × DuckDB wall (CPU) | peak driver heap MB (old gen) | load avg |",
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        head = f"| {r['rows']:,} | {r['end_rows']:,} | {r['shape']} | {r['engine']} |"
        if "failed" in r:
            lines.append(f"{head} failed: {r['failed']} | | | | | | {r['load_avg']} |")
            continue
        ratio = f"{r['x_duckdb']}× ({r['x_duckdb_cpu']}×)" if "x_duckdb" in r else ""
        peak = f"≤ {r['peak_heap_mb']:,}" if "peak_heap_mb" in r else ""
        if "peak_old_gen_mb" in r:
            peak += f" (old gen {r['peak_old_gen_mb']:,})"
        lines.append(
            f"{head} {r['lag']:.1f} | {r['restore']:.1f} | {r['total']:.1f} ({r['cpu']:.1f}) | "
            f"{r['rows_per_s'] / 1e6:.2f} M | {ratio} | {peak} | {r['load_avg']} |"
        )
    return "\n".join(lines)


def stage_table(results: list[dict[str, Any]]) -> str:
    """Spark's executor CPU seconds per job and kind of stage (:func:`lag_benchmark.stage_kind`),
    one column per cell, as Markdown."""
    cells = [r for r in results if r.get("stages")]
    keys: list[tuple[str, str]] = []
    for r in cells:
        for g in r["stages"]:
            if (g["job"], g["kind"]) not in keys:
                keys.append((g["job"], g["kind"]))
    head = " | ".join(f"{r['shape']} {r['rows'] / 1e6:.0f} M" for r in cells)
    lines = [
        f"| job | stages | {head} |",
        "|---|---|" + "---:|" * len(cells),
    ]
    for job, kind in keys:
        values = []
        for r in cells:
            found = [g for g in r["stages"] if (g["job"], g["kind"]) == (job, kind)]
            values.append(
                " ".join(
                    f"{g['cpu_s']:.1f}"
                    + (f" (spill {g['spill_mb']:.0f} MB)" if g["spill_mb"] else "")
                    for g in found
                )
            )
        lines.append(f"| {job} | {kind} | " + " | ".join(values) + " |")
    totals = " | ".join(f"{sum(g['cpu_s'] for g in r['stages']):.1f}" for r in cells)
    lines.append(f"| all stages | executor CPU s | {totals} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6,1e7", help="offset rows, comma separated")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma separated")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", help="default: Spark's (1g)")
    parser.add_argument("--duckdb-threads", type=int, default=2)
    parser.add_argument(
        "--duckdb-memory", help="DuckDB's memory_limit (default: DuckDB's own, as a user runs it)"
    )
    parser.add_argument("--engines", default="spark,duckdb")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument(
        "--drop-inputs", action="store_true", help="delete each generated history after its cell"
    )
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    engines = args.engines.split(",")
    args.work.mkdir(parents=True, exist_ok=True)

    spark = None
    if any(e.startswith("spark") for e in engines):
        spark, fixed = lag_benchmark.spark_fixed_costs(args.master, args.driver_memory)
        print(
            "Spark's fixed costs, CPU s (wall s): "
            + ", ".join(
                f"{name.replace('_', ' ')} {fixed[name + '_cpu']} ({fixed[name + '_wall']})"
                for name in ("session", "first_query", "python_worker")
            ),
            flush=True,
        )
        print(
            f"Spark {spark.version} {args.master}, driver memory "
            f"{spark.sparkContext.getConf().get('spark.driver.memory', '1g (default)')}, "
            f"collectors {', '.join(collectors(spark))}",
            flush=True,
        )

    if spark is not None:
        # Warm-up (not reported): the JVM's JIT would otherwise be billed to the first run.
        warm = prepare("many-snapshots", 1_000_000, args.work)
        warm_out = args.work / f"warm-up-{os.getpid()}"
        shutil.rmtree(warm_out, ignore_errors=True)
        warm_out.mkdir(parents=True)
        lag_benchmark.run_spark(warm, spark, warm_out)
        shutil.rmtree(warm_out, ignore_errors=True)

    results: list[dict[str, Any]] = []
    for rows in sizes:
        for shape in shapes:
            inputs = prepare(shape, rows, args.work)
            results.extend(run_cell(inputs, shape, engines, spark, args))
            if args.json:  # after every cell: a long matrix keeps what finished
                args.json.write_text(json.dumps(results, indent=1) + "\n")
            if args.drop_inputs:
                shutil.rmtree(inputs["folder"], ignore_errors=True)

    print(markdown_table(results))
    print(stage_table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
