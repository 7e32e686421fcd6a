"""The as-of join: each snapshot's offset sums matched with the latest complete end offsets of its
task at or before its time, and the sizing that keeps the driver's memory bounded.

Nothing that grows with offset rows, snapshots or end-offset moments is broadcast unless its
estimated size fits Spark's own broadcast threshold (:func:`estimated_interval_bytes`,
:func:`broadcast_threshold`), and shuffle partitions follow the input volume
(:func:`shuffle_partitions_for`), not the core count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lag.kafka import LONG_MAX
from lag.keys import task_part, task_sub
from lag.layout import TaskLayout

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: Estimated bytes of one as-of interval row held in a broadcast hash relation (four longs, the
#: key and the row overhead; measured about 95 B in the driver's heap).
INTERVAL_ROW_BYTES = 96


#: Target bytes of input per shuffle partition (about a million offset rows of Parquet).
PARTITION_INPUT_BYTES = 8 * 1024 * 1024


#: Target bytes of shuffled data per partition after AQE coalesces them (about a million rows of
#: offset sums; Spark's default of 64 MB made final aggregations of ~4 M keys spill in a 1 GB
#: driver).
ADVISORY_PARTITION_BYTES = 16 * 1024 * 1024


#: Most shuffle partitions the job asks for (AQE coalesces small ones after each shuffle).
MAX_SHUFFLE_PARTITIONS = 4096


#: Plan size at or above which Spark's estimate means "unknown" (its ``Long.MAX_VALUE``-like
#: ``spark.sql.defaultSizeInBytes``): no partitions are sized from it.
UNKNOWN_SIZE_BYTES = 2**62


#: Largest join key of the one-long-key as-of join (beyond it, the join uses two keys).
MAX_JOIN_KEY = 2**62


def estimated_interval_bytes(end_stats: list[Any], layout: TaskLayout) -> int:
    """Bytes the as-of join's interval table would take as a broadcast hash relation.

    Parameters
    ----------
    end_stats:
        Per end-offset topic: ``topic``, ``n`` (partitions), ``rows`` (end-offset rows).
    layout:
        The task layout (which topics are changelogs of which sub-topology).

    Returns
    -------
    int
        Bytes: one interval per (moment, task), i.e. the end-offset rows of the largest changelog
        topic of each stateful sub-topology, listed under 1.5 time buckets on average, at
        :data:`INTERVAL_ROW_BYTES` each. Grows with tasks x end-offset moments, which is why the
        join broadcasts only when this fits Spark's broadcast threshold.
    """
    per_sub: dict[int, int] = {}
    for r in end_stats:
        owner = layout.changelogs.get(r["topic"])
        if owner is not None:
            per_sub[owner[0]] = max(per_sub.get(owner[0], 0), int(r["rows"]))
    return int(1.5 * sum(per_sub.values()) * INTERVAL_ROW_BYTES)


def _sql_conf(spark: SparkSession) -> Any:
    """The session's JVM ``SQLConf``, whose getters parse sizes as Spark itself does."""
    return spark._jsparkSession.sessionState().conf()  # type: ignore[attr-defined]


def broadcast_threshold(spark: SparkSession) -> int:
    """Spark's ``spark.sql.autoBroadcastJoinThreshold`` in bytes (-1 = never broadcast).

    Parameters
    ----------
    spark:
        The session whose SQL conf is read (Spark's own parsing of ``10MB``, ``10485760b``).

    Returns
    -------
    int
        Bytes; -1 when broadcasts are switched off.
    """
    conf = _sql_conf(spark)
    return int(conf.autoBroadcastJoinThreshold())


#: Share of the driver's maximum heap a broadcast of the as-of intervals may take.
DRIVER_HEAP_SHARE = 8


def broadcast_limit(spark: SparkSession) -> int:
    """Most estimated bytes the as-of join broadcasts: Spark's threshold or 1/8 of the driver heap.

    The interval table is built in the driver before it is shipped, about twice its estimated
    size while the hash relation is made; an eighth of the driver's maximum heap
    (``Runtime.maxMemory``, 128 MB of the default 1 GB) keeps that a quarter of it. When Spark's
    ``spark.sql.autoBroadcastJoinThreshold`` is larger, it rules; when it is -1 (broadcasts off),
    nothing is broadcast.

    Parameters
    ----------
    spark:
        The session (its driver JVM and SQL conf).

    Returns
    -------
    int
        Bytes; -1 = never broadcast.
    """
    threshold = broadcast_threshold(spark)
    if threshold < 0:
        return -1
    jvm: Any = spark.sparkContext._jvm
    heap = int(jvm.java.lang.Runtime.getRuntime().maxMemory())
    return max(threshold, heap // DRIVER_HEAP_SHARE)


def plan_size_bytes(frame: DataFrame) -> int:
    """Spark's estimate of a DataFrame's size in bytes (the optimized plan's statistics).

    For files this is their size on disk (Parquet: compressed), for rows held in the driver
    their in-memory size; it costs no Spark job.

    Parameters
    ----------
    frame:
        Any DataFrame.

    Returns
    -------
    int
        Bytes (Spark reports ``Long.MAX_VALUE``-like numbers when it cannot tell).
    """
    plan = frame._jdf.queryExecution().optimizedPlan()  # type: ignore[attr-defined]
    return int(str(plan.stats().sizeInBytes()))


def files_max_partition_bytes(spark: SparkSession) -> int:
    """Spark's ``spark.sql.files.maxPartitionBytes`` in bytes (Spark's own parsing of ``128MB``).

    Parameters
    ----------
    spark:
        The session whose SQL conf is read.

    Returns
    -------
    int
        Most bytes of input files one scan task reads (128 MB by default).
    """
    conf = _sql_conf(spark)
    return int(conf.filesMaxPartitionBytes())


def advisory_partition_bytes(spark: SparkSession) -> int:
    """Spark's ``spark.sql.adaptive.advisoryPartitionSizeInBytes`` in bytes.

    Parameters
    ----------
    spark:
        The session whose SQL conf is read.

    Returns
    -------
    int
        Bytes of shuffled data AQE aims at when it coalesces partitions (64 MB by default).
    """
    conf = _sql_conf(spark)
    return int(conf.getConf(conf.ADVISORY_PARTITION_SIZE_IN_BYTES()))


def input_split_bytes(configured: int) -> int:
    """Bytes of input per scan task: :data:`PARTITION_INPUT_BYTES`, or less when set lower.

    The first step of the job is a partial aggregation per (snapshot, process, task) in each scan
    task. On long histories its keys are nearly all distinct (one changelog partition per task
    and snapshot), so its hash map grows with the rows a task reads: at Spark's default 128 MB
    splits (about 11 M offset rows) it spilled 3.5 GB to disk at 100 M rows in a 1 GB driver.
    Splits as small as the shuffle partitions' share (about a million rows) keep it in memory.

    Parameters
    ----------
    configured:
        ``spark.sql.files.maxPartitionBytes`` as set (a ceiling).

    Returns
    -------
    int
        ``min(configured, PARTITION_INPUT_BYTES)``, bytes.
    """
    return min(configured, PARTITION_INPUT_BYTES)


def shuffle_partitions_for(input_bytes: int, configured: int) -> int:
    """Shuffle partitions for ``input_bytes`` of offset rows: sized by volume, never fewer than set.

    Parameters
    ----------
    input_bytes:
        Estimated bytes of the offset rows (Spark's plan statistics).
    configured:
        ``spark.sql.shuffle.partitions`` as set (a floor).

    Returns
    -------
    int
        ``max(configured, ceil(input_bytes / PARTITION_INPUT_BYTES))``, at most
        :data:`MAX_SHUFFLE_PARTITIONS` (about a million offset rows per partition; Spark's AQE
        coalesces partitions that come out small).
    """
    if input_bytes >= UNKNOWN_SIZE_BYTES:
        return configured
    wanted = -(-max(0, input_bytes) // PARTITION_INPUT_BYTES)
    return max(configured, min(wanted, MAX_SHUFFLE_PARTITIONS))


def _time_buckets(low: int, high: int, width: int) -> Callable[[Column], Column]:
    """The time bucket of a time column (ms): clamped into ``[low, high]``, ``width`` ms each."""
    from pyspark.sql import functions as F

    def bucket(time: Column) -> Column:
        clamped = F.least(F.greatest(time, F.lit(low)), F.lit(high))
        return F.floor((clamped - F.lit(low)) / F.lit(width)).cast("long")

    return bucket


def _interval_buckets(start: Column, until: Column, bucket: Callable[[Column], Column]) -> Column:
    """One row per time bucket that the interval ``[start, until)`` touches (null: open end)."""
    from pyspark.sql import functions as F

    last_ms = F.coalesce(until - 1, F.lit(LONG_MAX))
    return F.explode(F.sequence(bucket(start), bucket(last_ms)))


def as_of_join(
    snapshots: DataFrame,
    complete_ends: DataFrame,
    end_stats: list[Any],
    layout: TaskLayout,
    broadcast: bool,
    only: str | None = None,
) -> DataFrame:
    """Add to each snapshot the latest complete end offsets of its task at or before its time.

    The complete end-offset sums of each task become intervals ``[time, next time)``. Each
    interval is listed under every time bucket it overlaps, so the join is an equi-join on
    (task, bucket) plus a range check; a snapshot finds at most one interval. The buckets are
    sized from ``end_stats`` (rows and time span of each end-offset topic) to about two end
    snapshots each, and any sizing gives the same result: both sides use the same monotonic
    bucket of the time clamped to the end offsets' span.

    Task and bucket are folded into one long, ``(sub-topology * P + partition) * B + bucket``
    with ``P`` the largest partition count and ``B`` the number of buckets, so the broadcast
    side is Spark's long-keyed hash relation (an array when the keys are dense); a partition
    beyond ``P`` has no end offsets and gets no key. When the fold could pass 2^62, the join
    keeps the two keys.

    ``broadcast`` ships the intervals to every task as a hash relation (decided by the caller from
    :func:`estimated_interval_bytes` against Spark's threshold); otherwise Spark plans the join
    (a shuffle of both sides on the key), so no table that grows with end-offset moments is
    ever built in the driver.

    ``only`` names a boolean column of ``snapshots``: rows where it is not true look nothing up
    (their key is null) and get nulls; :func:`moment_as_of_join` uses it for its fallback rows.

    Returns
    -------
    pyspark.sql.DataFrame
        ``snapshots`` plus ``end_offset_sum`` and ``end_offset_time`` (null when none match).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    stats = [r for r in end_stats if r["topic"] in layout.changelogs]
    times = [t for r in stats for t in (r["first"], r["last"]) if t is not None]
    low, high = (min(times), max(times)) if times else (0, 0)
    wanted = max(1, max((r["rows"] // r["n"] for r in stats), default=1) // 2)
    width = max(1, (high - low) // wanted + 1)
    buckets = (high - low) // width + 1
    parts = max([1, *(layout.partitions.get(sub, 0) for sub in layout.stateful_subtopologies)])
    top_sub = max(layout.stateful_subtopologies, default=0)
    folded = (top_sub + 1) * parts * buckets < MAX_JOIN_KEY
    bucket = _time_buckets(low, high, width)

    def join_key(task_key: Column, b: Column) -> Column:
        part = task_part(task_key).cast("long")
        task = task_sub(task_key).cast("long") * F.lit(parts) + part
        return F.when(part < F.lit(parts), task * F.lit(buckets) + b)

    by_task = Window.partitionBy("task_key").orderBy("time_key")
    intervals = complete_ends.select(
        "task_key",
        F.col("time_key").alias("end_offset_time"),
        F.col("offset_sum").alias("end_offset_sum"),
        F.lead("time_key").over(by_task).alias("until"),
    )
    intervals = intervals.select(
        "*", _interval_buckets(F.col("end_offset_time"), F.col("until"), bucket).alias("b")
    )
    o = snapshots.withColumn("b", bucket(F.col("time_key")))
    if only is not None:
        o = o.withColumn("b", F.when(F.col(only), F.col("b")))
    if folded:
        intervals = intervals.select(
            join_key(F.col("task_key"), F.col("b")).alias("k"),
            "end_offset_time",
            "end_offset_sum",
            "until",
        )
        o = o.withColumn("k", join_key(F.col("task_key"), F.col("b")))
        keys = F.col("o.k") == F.col("e.k")
    else:
        keys = (F.col("o.task_key") == F.col("e.task_key")) & (F.col("o.b") == F.col("e.b"))
    if broadcast:
        intervals = F.broadcast(intervals)
    o, e = o.alias("o"), intervals.alias("e")
    matches = (
        keys
        & (F.col("o.time_key") >= F.col("e.end_offset_time"))
        & (F.col("e.until").isNull() | (F.col("o.time_key") < F.col("e.until")))
    )
    return o.join(e, matches, "left").select(
        *(F.col(f"o.{name}") for name in snapshots.columns),
        F.col("e.end_offset_sum"),
        F.col("e.end_offset_time"),
    )


def moment_as_of_join(
    snapshots: DataFrame,
    complete_ends: DataFrame,
    end_stats: list[Any],
    layout: TaskLayout,
    limit: int,
) -> tuple[DataFrame, int] | None:
    """The as-of join as an equi-join on (task, end-offset moment), when end offsets are taken at
    global moments (one get-offsets run captures every changelog partition).

    Each snapshot time is mapped to the latest moment at or before it (a moment: a time at which
    some task has complete end offsets), through a broadcast join with the moments' intervals
    ``[moment, next moment)`` listed under time buckets, as in :func:`as_of_join` but with one
    interval per moment instead of one per (task, moment). Then the snapshot's task is looked up
    at that moment among the complete end-offset sums, an equi-join on (``task_key``, moment)
    with no interval table. When the task has complete end offsets at that moment, they are the
    latest complete ones at or before the snapshot: any later one would be a later moment.

    Rows whose task lacks complete end offsets at their moment may still match an earlier moment.
    Only tasks complete at fewer moments than exist can have such rows; for them alone (the
    "fallback tasks", counted from per-task aggregates, at most one row per task in the driver)
    :func:`as_of_join` runs on the rows left unmatched, with the intervals of those tasks' complete
    end offsets only. The result is the interval join's, row for row.

    Parameters
    ----------
    snapshots:
        Offset sums per (``time_key``, ``pkey``, ``task_key``).
    complete_ends:
        Complete end-offset sums per (``time_key``, ``task_key``) with ``offset_sum``
        (``time_key`` ``Long.MIN_VALUE`` = end offsets without a time).
    end_stats:
        Per end-offset topic: ``topic``, ``n``, ``rows``, ``first``, ``last`` (for the fallback's
        bucket sizing).
    layout:
        The task layout.
    limit:
        Most estimated bytes of the moments' interval table to broadcast
        (:func:`broadcast_limit`); -1 = never.

    Returns
    -------
    tuple of (pyspark.sql.DataFrame, int), or None
        ``snapshots`` plus ``end_offset_sum`` and ``end_offset_time`` (null when none match),
        and the number of fallback tasks; None when the moments' intervals would not fit
        ``limit`` (the caller then uses :func:`as_of_join`). Runs two small Spark actions over
        ``complete_ends`` (the moments' count and span; the complete moments per task).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from lag.keys import LONG_MIN

    timed = F.when(F.col("time_key") != LONG_MIN, F.col("time_key"))
    span = complete_ends.agg(
        F.countDistinct("time_key").alias("moments"),
        F.min(timed).alias("low"),
        F.max(timed).alias("high"),
    ).collect()[0]
    moments = int(span["moments"])
    if limit < 0 or int(1.5 * moments * INTERVAL_ROW_BYTES) > limit:
        return None
    per_task = complete_ends.groupBy("task_key").agg(F.count("*").alias("n")).collect()
    fallback = sorted(int(r["task_key"]) for r in per_task if int(r["n"]) < moments)

    low = span["low"] if span["low"] is not None else 0
    high = span["high"] if span["high"] is not None else low
    width = max(1, (high - low) // max(1, moments // 2) + 1)
    bucket = _time_buckets(low, high, width)

    # One partition: the moments are few (one per get-offsets run), the intervals need their order.
    by_time = Window.orderBy("moment")
    intervals = (
        complete_ends.select(F.col("time_key").alias("moment"))
        .distinct()
        .select("moment", F.lead("moment").over(by_time).alias("until"))
    )
    intervals = intervals.select(
        "moment", "until", _interval_buckets(F.col("moment"), F.col("until"), bucket).alias("b")
    )
    o = snapshots.withColumn("b", bucket(F.col("time_key"))).alias("o")
    m = F.broadcast(intervals).alias("m")
    in_interval = (
        (F.col("o.b") == F.col("m.b"))
        & (F.col("o.time_key") >= F.col("m.moment"))
        & (F.col("m.until").isNull() | (F.col("o.time_key") < F.col("m.until")))
    )
    timed_rows = o.join(m, in_interval, "left").select(
        *(F.col(f"o.{name}") for name in snapshots.columns), F.col("m.moment")
    )
    e = complete_ends.select(
        F.col("task_key").alias("e_task"),
        F.col("time_key").alias("e_time"),
        F.col("offset_sum").alias("e_sum"),
    )
    matched = timed_rows.join(
        e,
        (F.col("task_key") == F.col("e_task")) & (F.col("moment") == F.col("e_time")),
        "left",
    )
    if not fallback:
        return (
            matched.select(
                *snapshots.columns,
                F.col("e_sum").alias("end_offset_sum"),
                F.col("e_time").alias("end_offset_time"),
            ),
            0,
        )
    spark = snapshots.sparkSession
    tasks = F.broadcast(spark.createDataFrame([(t,) for t in fallback], "task_key long"))
    deficient = complete_ends.join(tasks, "task_key", "left_semi")
    unmatched = matched.select(
        *snapshots.columns, "e_sum", "e_time", F.col("e_time").isNull().alias("unmatched")
    )
    looked_up = as_of_join(unmatched, deficient, end_stats, layout, False, only="unmatched")
    return (
        looked_up.select(
            *snapshots.columns,
            F.coalesce("e_sum", "end_offset_sum").alias("end_offset_sum"),
            F.coalesce("e_time", "end_offset_time").alias("end_offset_time"),
        ),
        len(fallback),
    )
