"""Throughput of the Spark lag job against DuckDB on the same Parquet offset histories.

For each size (offset rows; default 1e6 and 1e7, add 1e8 with ``--sizes 1e6,1e7,1e8``) this
script generates a history with :mod:`lag.fleet.generate` (a 60-instance fleet of 3000 tasks,
4 stores, 2 standbys: about 12 600 offset rows per snapshot every 10 s, end offsets every 30 s),
then runs on the same files, in the same process:

- **Spark** (``local[2]`` by default): the real job (:func:`lag.pipeline.build_job`): validation,
  per-snapshot offset sums, the merge as-of join, the lag table written as Parquet (*lag*);
  then the restore table from the kept per-snapshot rows (*restore*);
- **DuckDB** (2 threads): the same computations in SQL: offset sums pinned on overflow, complete
  end-offset sums, ``ASOF LEFT JOIN``, lag table to Parquet (*lag*); window over each replica's
  snapshots, restore table to Parquet (*restore*).

and prints rows/s (offset rows per second of wall time) per engine and step, plus the CPU
seconds each engine burnt (for Spark this process, the JVM and its Python workers, exited ones
included, by :class:`TreeCpuMeter`; for DuckDB this process): on a shared machine the wall time
depends on what else runs, the CPU time much less. A warm-up Spark run on 1e6 rows
comes first (not reported), so the JVM's JIT compilation is not billed to the first size.
Generated inputs are kept in ``benchmarks/out/`` (git-ignored) and reused; outputs are deleted
after each run.

Usage::

    python benchmarks/lag_benchmark.py                     # 1e6, 1e7
    python benchmarks/lag_benchmark.py --sizes 1e6,1e7,1e8 --driver-memory 8g
    python benchmarks/lag_benchmark.py --sizes 1e8 --engines spark --floor   # reading alone
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lag_stages import stage_breakdown, stage_ids  # noqa: E402

from lag.fleet.generate import generate  # noqa: E402
from lag.fleet.history import snapshots_for_rows  # noqa: E402
from lag.fleet.spec import FleetSpec, build_fleet  # noqa: E402
from lag.kafka_rules import LONG_MAX  # noqa: E402

SPEC = FleetSpec(
    application_id="orders-app", instances=60, tasks=3000, stores=4, standbys=2, seed=1
)
ACCEPTABLE = 10_000


def prepare_inputs(rows: int, root: Path) -> dict[str, Any]:
    """Generate (or reuse) the history of about ``rows`` offset rows under ``root``."""
    folder = root / f"history-{rows:.0e}".replace("+", "")
    manifest_path = folder / "fleet.json"
    if manifest_path.exists():
        return {"folder": folder, **json.loads(manifest_path.read_text())}
    if folder.exists():
        shutil.rmtree(folder)
    started = time.perf_counter()
    snapshots = snapshots_for_rows(build_fleet(SPEC), rows)
    manifest = generate(SPEC, folder, snapshots=snapshots, layout="parquet")
    print(
        f"  generated {manifest['offset_rows']:,} offset rows + "
        f"{manifest['end_offset_rows']:,} end-offset rows ({snapshots} snapshots) "
        f"in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return {"folder": folder, **manifest}


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (Linux), None once it exited."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and all its live descendants, reaped children included.

    A process that exited is counted only if its parent waited for it; PySpark's daemon does
    not (it ignores ``SIGCHLD``), so the CPU of a Python worker that exits between two readings
    is lost: :class:`TreeCpuMeter` keeps it.

    Spark's Python workers (``mapInArrow``, UDFs) are children of a daemon that the JVM forks;
    their CPU counts towards the job as much as the JVM's own. Each process counts its user +
    system time plus that of its children already waited for (``utime``, ``stime``, ``cutime``,
    ``cstime``).
    """
    ticks = sum(sum(int(f) for f in fields[11:15]) for fields in _live_tree(pid).values())
    return ticks / os.sysconf("SC_CLK_TCK")


def _live_tree(root: int) -> dict[int, list[str]]:
    """``/proc/<pid>/stat`` fields (after the command name) of ``root`` and its live descendants,
    by pid; one pass over ``/proc``."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))) is not None:
            stats[int(entry.name)] = fields
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    tree: dict[int, list[str]] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        if (fields := stats.get(pid)) is not None:
            tree[pid] = fields
            todo.extend(children.get(pid, []))
    return tree


def own_cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class TreeCpuMeter:
    """CPU seconds burnt by a process tree while the meter runs, exited processes included.

    A context manager. A thread samples ``/proc`` every ``interval`` seconds and keeps, per
    process (pid and start time, so a reused pid is a new process), the user + system time
    (``utime`` + ``stime``) last seen; the result is the sum over every process of the tree seen
    while the meter ran, less what each had burnt when the meter started, less the sampling
    thread's own CPU when the tree is this process's. Unlike :func:`tree_cpu_seconds`,
    processes that exit while the meter runs keep their CPU: PySpark's daemon ignores
    ``SIGCHLD``, so the kernel reaps its Python workers without adding their time to any
    parent's ``cutime``, and Spark stops a worker after a minute idle. A process loses at most
    its last ``interval`` seconds of CPU before it exits.

    Parameters
    ----------
    root:
        The tree's root pid (this process by default: the driver, the JVM it started, PySpark's
        daemon and its workers).
    interval:
        Seconds between samples.
    """

    def __init__(self, root: int | None = None, interval: float = 0.25) -> None:
        import threading

        self.root = os.getpid() if root is None else root
        self.interval = interval
        self._base: dict[tuple[int, str], int] = {}
        self._last: dict[tuple[int, str], int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._own = 0.0
        self.seconds = 0.0

    def _sample(self) -> dict[tuple[int, str], int]:
        """``utime + stime`` ticks by (pid, start time) of the tree's live processes."""
        return {
            (pid, fields[19]): int(fields[11]) + int(fields[12])
            for pid, fields in _live_tree(self.root).items()
        }

    def _run(self) -> None:
        started = time.thread_time()
        while not self._stop.wait(self.interval):
            self._last.update(self._sample())
        self._own = time.thread_time() - started

    def __enter__(self) -> TreeCpuMeter:
        self._base = self._sample()
        self._last = dict(self._base)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._last.update(self._sample())
        ticks = sum(v - self._base.get(k, 0) for k, v in self._last.items())
        # The sampling thread's CPU is in this process: take it out when the tree includes it.
        own = self._own if self.root == os.getpid() else 0.0
        self.seconds = ticks / os.sysconf("SC_CLK_TCK") - own


def spark_fixed_costs(
    master: str, driver_memory: str | None = None
) -> tuple[Any, dict[str, float]]:
    """Start a Spark session and measure its fixed costs, in CPU seconds of every process (the
    JVM, PySpark's daemon and workers, this process; :class:`TreeCpuMeter`) and wall seconds:
    ``session`` (:func:`lag.spark.session.get_spark`: the JVM and the session), ``first_query``
    (a first SQL aggregation: planning, code generation, the first tasks) and ``python_worker``
    (a first ``mapInArrow``: PySpark's daemon, a worker, its imports of pyarrow). Returns the
    session and ``{name: seconds}`` with ``<name>_cpu`` and ``<name>_wall`` keys."""
    from lag.spark.session import get_spark

    costs: dict[str, float] = {}
    holder: dict[str, Any] = {}

    def session() -> None:
        holder["spark"] = get_spark(master, app_name="lag-benchmark", driver_memory=driver_memory)

    def first_query() -> None:
        holder["spark"].range(100_000).selectExpr("sum(id) AS s").collect()

    def python_worker() -> None:
        def same(batches: Any) -> Any:
            yield from batches

        holder["spark"].range(1000).mapInArrow(same, "id long").collect()

    for name, step in (
        ("session", session),
        ("first_query", first_query),
        ("python_worker", python_worker),
    ):
        started = time.perf_counter()
        with TreeCpuMeter() as meter:
            step()
        costs[f"{name}_wall"] = round(time.perf_counter() - started, 2)
        costs[f"{name}_cpu"] = round(meter.seconds, 2)
    return holder["spark"], costs


def run_spark(
    inputs: dict[str, Any],
    spark: Any,
    out: Path,
    persist: bool = True,
    restore_plan: str = "job",
) -> dict[str, Any]:
    """The Spark job: lag table, then restore table.

    ``restore_plan`` ``job`` runs what ``streams-lag compute`` runs (the job's own plan: the
    restore table read back from the Parquet lag table, :meth:`lag.job.job.LagJob.restore_after`);
    ``cache`` the earlier plan, kept for comparison: the per-snapshot rows cached and the restore
    table computed from the cache (``persist`` as given).

    Returns ``lag`` and ``restore`` (wall seconds of the two steps), ``cpu`` (CPU seconds of
    this process, the JVM and its Python workers, exited workers included: :class:`TreeCpuMeter`)
    and ``cpu_live_only`` (the same from :func:`tree_cpu_seconds` at both ends, which loses the
    CPU of workers that exit in between: kept to show the difference).
    """
    from lag.job.job import LAG_PLAIN_COLUMNS
    from lag.outputs.tables import write_table
    from lag.pipeline import ComputeRequest, build_job, prepare

    folder = inputs["folder"]
    request = ComputeRequest(
        application_id=SPEC.application_id,
        topology=str(folder / "topology.txt"),
        members=[str(folder / "members.txt")],
        end_offsets=[str(folder / "end-offsets.parquet")],
        offsets=[str(folder / "offsets.parquet")],
        output=str(out / "cluster.json"),
        lags_table=f"{out}/spark-lags.parquet/",
        restore_table=f"{out}/spark-restore.parquet/",
        configs={"acceptable_recovery_lag": ACCEPTABLE},
        persist=persist,
    )
    jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    # The old reading (live processes only) beside the meter, to show what it missed.
    live0 = tree_cpu_seconds(jvm) + own_cpu_seconds()
    before = stage_ids(spark)
    context = spark.sparkContext
    with TreeCpuMeter() as meter:
        started = time.perf_counter()
        context.setJobDescription("plan")
        topology, membership = prepare(request)
        planned = request
        if restore_plan == "cache":  # the job then sees no restore table to read back
            planned = dataclasses.replace(request, restore_table=None)
        job = build_job(planned, spark, topology, membership)
        assert request.lags_table and request.restore_table
        context.setJobDescription("lag table")
        write_table(job.lags, request.lags_table, plain_columns=LAG_PLAIN_COLUMNS)
        lag_done = time.perf_counter()
        context.setJobDescription("restore table")
        restore = job.restore if restore_plan == "cache" else job.restore_after(request.lags_table)
        write_table(restore, request.restore_table)
        restore_done = time.perf_counter()
        context.setJobDescription(None)
    live = tree_cpu_seconds(jvm) + own_cpu_seconds() - live0
    job.unpersist()
    return {
        "lag": lag_done - started,
        "restore": restore_done - lag_done,
        "cpu": meter.seconds,
        "cpu_live_only": live,
        "stages": stage_breakdown(spark, before),
    }


def duckdb_sql(inputs: dict[str, Any], out: Path) -> tuple[list[str], list[str]]:
    """The SQL statements of the lag step and of the restore step."""
    folder = inputs["folder"]
    app = SPEC.application_id
    stores = inputs["stores"]
    changelogs = ", ".join(
        f"('{app}-{store}-changelog', {sub})" for sub, names in stores.items() for store in names
    )
    expected = ", ".join(f"({sub}, {len(names)})" for sub, names in stores.items())
    offsets = f"read_parquet('{folder}/offsets.parquet/*.parquet')"
    ends = f"read_parquet('{folder}/end-offsets.parquet/*.parquet')"
    lag_step = [
        f"CREATE OR REPLACE TEMP TABLE cl AS SELECT * FROM (VALUES {changelogs}) t(topic, sub)",
        f"CREATE OR REPLACE TEMP TABLE expected AS SELECT * FROM (VALUES {expected}) t(sub, n)",
        f"""CREATE OR REPLACE TEMP TABLE sums AS
            SELECT o.snapshot_time AS t, o.process_id, cl.sub, o.partition AS part,
                   CASE WHEN bool_or(o."offset" = -2) THEN -2
                        ELSE least(coalesce(sum(o."offset") FILTER (WHERE o."offset" >= 0), 0),
                                   {LONG_MAX})::BIGINT END AS offset_sum,
                   count(*) AS n_partitions
            FROM {offsets} o JOIN cl USING (topic)
            WHERE o."offset" >= 0 OR o."offset" IN (-2, -4)
            GROUP BY ALL""",
        f"""CREATE OR REPLACE TEMP TABLE end_sums AS
            SELECT e.snapshot_time AS t, cl.sub, e.partition AS part,
                   least(sum(e."offset"), {LONG_MAX})::BIGINT AS end_sum, count(*) AS n
            FROM {ends} e JOIN cl USING (topic)
            WHERE e."offset" >= 0
            GROUP BY ALL""",
        """CREATE OR REPLACE TEMP TABLE complete_ends AS
            SELECT s.* FROM end_sums s JOIN expected x ON s.sub = x.sub AND s.n = x.n""",
        """CREATE OR REPLACE TEMP TABLE lags AS
            SELECT s.t AS snapshot_time, s.process_id, s.sub || '_' || s.part AS task_id,
                   s.sub AS subtopology, s.part AS partition,
                   s.n_partitions AS changelog_partitions,
                   s.offset_sum, e.t AS end_offset_time, e.end_sum AS end_offset_sum,
                   CASE WHEN s.offset_sum IN (-2, -3) THEN s.offset_sum
                        WHEN e.end_sum IS NULL THEN NULL
                        WHEN e.end_sum < s.offset_sum THEN e.end_sum
                        ELSE e.end_sum - s.offset_sum END AS lag,
                   CASE WHEN s.offset_sum = -2 THEN 0
                        WHEN s.offset_sum < 0 OR e.end_sum IS NULL THEN NULL
                        ELSE greatest(e.end_sum - s.offset_sum, 0) END AS records_behind
            FROM sums s ASOF LEFT JOIN complete_ends e
              ON s.sub = e.sub AND s.part = e.part AND s.t >= e.t""",
        f"COPY lags TO '{out}/duckdb-lags.parquet' (FORMAT parquet)",
    ]
    restore_step = [
        f"""COPY (
            WITH w AS (
                SELECT process_id, task_id, snapshot_time AS t, offset_sum, end_offset_sum,
                       lag, records_behind AS behind,
                       lag(snapshot_time) OVER r AS prev_t,
                       lag(records_behind) OVER r AS prev_behind,
                       lag(offset_sum) OVER r AS prev_offset
                FROM lags WHERE records_behind IS NOT NULL
                WINDOW r AS (PARTITION BY process_id, task_id ORDER BY snapshot_time)
            ), latest AS (
                SELECT process_id, task_id, count(*) AS snapshots, min(t) AS first_t,
                       max_by(struct_pack(t, offset_sum, end_offset_sum, lag, behind,
                                          prev_t, prev_behind, prev_offset), t) AS s
                FROM w GROUP BY process_id, task_id
            ), rates AS (
                SELECT *,
                       (s.prev_behind - s.behind) * 1000.0 / nullif(s.t - s.prev_t, 0) AS catch_up,
                       (s.offset_sum - s.prev_offset) * 1000.0 / nullif(s.t - s.prev_t, 0) AS rr
                FROM latest
            )
            SELECT process_id, task_id, snapshots, first_t AS first_snapshot_time,
                   s.prev_t AS rate_from_time, s.t AS snapshot_time, s.offset_sum,
                   s.end_offset_sum, s.lag, s.behind AS records_behind,
                   catch_up AS catch_up_rate, rr AS restore_rate,
                   s.behind <= {ACCEPTABLE} AS caught_up,
                   CASE WHEN s.behind <= {ACCEPTABLE} THEN 0
                        WHEN catch_up > 0
                        THEN ceil((s.behind - {ACCEPTABLE}) * 1000.0 / catch_up)
                   END::BIGINT AS eta_ms
            FROM rates
        ) TO '{out}/duckdb-restore.parquet' (FORMAT parquet)""",
    ]
    return lag_step, restore_step


def run_duckdb(
    inputs: dict[str, Any], out: Path, threads: int, memory: str | None = None
) -> dict[str, float]:
    """The same computations in DuckDB, as a user runs them: ``threads`` threads and DuckDB's
    default memory limit (80 % of the machine's memory) unless ``memory`` is given.

    Returns ``lag`` and ``restore`` (wall seconds of the two steps) and ``cpu`` (CPU seconds of
    this process, where DuckDB runs all its threads).
    """
    import duckdb

    inputs = {**inputs, "stores": {int(k): v for k, v in inputs["stores"].items()}}
    lag_step, restore_step = duckdb_sql(inputs, out)
    config: dict[str, Any] = {"threads": threads}
    if memory:
        config["memory_limit"] = memory
    connection = duckdb.connect(config=config)
    connection.execute(f"SET temp_directory = '{out}/duckdb-tmp'")
    timings = {}
    cpu0 = own_cpu_seconds()
    for name, statements in (("lag", lag_step), ("restore", restore_step)):
        started = time.perf_counter()
        for statement in statements:
            connection.execute(statement)
        timings[name] = time.perf_counter() - started
    timings["cpu"] = own_cpu_seconds() - cpu0
    connection.close()
    return timings


def read_floor(inputs: dict[str, Any], spark: Any, threads: int) -> dict[str, float]:
    """Seconds to merely read the offset rows: the floor under any job over them.

    Spark: a no-op write of the five columns (every value read, nothing computed) and a one-pass
    ``max`` of each column; DuckDB: the same ``max``. Times are wall seconds, one run each.
    """
    from pyspark.sql import functions as F

    path = str(inputs["folder"] / "offsets.parquet")
    floor = {}
    rows = spark.read.parquet(path)
    started = time.perf_counter()
    rows.write.format("noop").mode("overwrite").save()
    floor["spark_read"] = time.perf_counter() - started
    started = time.perf_counter()
    rows.agg(*(F.max(c) for c in rows.columns)).collect()
    floor["spark_max"] = time.perf_counter() - started
    if threads:
        import duckdb

        connection = duckdb.connect(config={"threads": threads})
        columns = ", ".join(f'max("{c}")' for c in rows.columns)
        started = time.perf_counter()
        connection.execute(f"SELECT {columns} FROM read_parquet('{path}/*.parquet')").fetchall()
        floor["duckdb_max"] = time.perf_counter() - started
        connection.close()
    return floor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="1e6,1e7", help="offset rows per run, comma separated (1e6,1e7,1e8)"
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--shuffle-partitions", type=int, default=8)
    parser.add_argument("--duckdb-threads", type=int, default=2)
    parser.add_argument("--duckdb-memory", help="DuckDB's memory_limit (default: DuckDB's own)")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out")
    parser.add_argument("--engines", default="spark,duckdb")
    parser.add_argument(
        "--no-persist",
        action="store_true",
        help="recompute instead of keeping the per-snapshot rows between the tables",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also time merely reading the offset rows (Spark no-op read, one-pass max)",
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    engines = args.engines.split(",")
    args.work.mkdir(parents=True, exist_ok=True)

    spark = None
    if "spark" in engines:
        from lag.spark.session import get_spark

        spark = get_spark(args.master, app_name="lag-benchmark", driver_memory=args.driver_memory)
        spark.conf.set("spark.sql.shuffle.partitions", str(args.shuffle_partitions))

    if spark is not None:
        warm_rows = min(sizes + [1_000_000])
        print(f"warm-up (not reported) on {warm_rows:,} rows", flush=True)
        warm = args.work / "warm-up"
        shutil.rmtree(warm, ignore_errors=True)
        warm.mkdir(parents=True)
        run_spark(prepare_inputs(warm_rows, args.work), spark, warm)
        shutil.rmtree(warm, ignore_errors=True)

    results = []
    for rows in sizes:
        print(f"size {rows:,} rows", flush=True)
        inputs = prepare_inputs(rows, args.work)
        actual = inputs["offset_rows"]
        out = args.work / "run"
        for engine in engines:
            if out.exists():
                shutil.rmtree(out)
            out.mkdir(parents=True)
            if engine == "spark":
                timings = run_spark(inputs, spark, out, persist=not args.no_persist)
            else:
                timings = run_duckdb(inputs, out, args.duckdb_threads, args.duckdb_memory)
            total = timings["lag"] + timings["restore"]
            result = {
                "rows": actual,
                "end_rows": inputs["end_offset_rows"],
                "engine": engine,
                "lag_s": round(timings["lag"], 2),
                "restore_s": round(timings["restore"], 2),
                "total_s": round(total, 2),
                "cpu_s": round(timings["cpu"], 1),
                "load_avg": round(os.getloadavg()[0], 1),
                "lag_rows_per_s": round(actual / timings["lag"]),
                "total_rows_per_s": round(actual / total),
            }
            results.append(result)
            print(
                f"  {engine:6s} lag {timings['lag']:7.1f} s "
                f"({actual / timings['lag'] / 1e6:6.2f} M rows/s)  "
                f"restore {timings['restore']:7.1f} s  total {total:7.1f} s "
                f"({actual / total / 1e6:6.2f} M rows/s)  "
                f"cpu {timings['cpu']:7.1f} s  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        shutil.rmtree(out, ignore_errors=True)
        if args.floor and spark is not None:
            threads = args.duckdb_threads if "duckdb" in engines else 0
            floor = read_floor(inputs, spark, threads)
            results[-1]["floor"] = {k: round(v, 2) for k, v in floor.items()}
            print(
                "  floor  "
                + "  ".join(
                    f"{k} {v:.1f} s ({actual / v / 1e6:.1f} M rows/s)" for k, v in floor.items()
                ),
                flush=True,
            )

    print(
        "\n| offset rows | engine | lag table s | restore table s | total s | rows/s (total) "
        "| CPU s |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['rows']:,} | {r['engine']} | {r['lag_s']} | {r['restore_s']} | {r['total_s']} | "
            f"{r['total_rows_per_s'] / 1e6:.2f} M | {r['cpu_s']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
