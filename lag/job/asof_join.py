"""The as-of join: each snapshot's offset sums matched with the latest complete end offsets of its
task at or before its time.

:func:`join_end_offsets` runs it as :func:`merge_as_of_join`: offset rows and end-offset rows
shuffled once by task, summed, sorted, and each task's latest complete end offsets carried
forward in Arrow batches, like DuckDB's ``ASOF JOIN`` (a merge of two sorted inputs), with the
forward fill in numpy inside ``mapInArrow``. It is the job's only plan: a broadcast interval
join, which the job used to choose for small end-offset histories, beat it in both wall and CPU
time on no shape and size measured (``docs/lag.md``, *Eleventh pass*).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from lag.job.layout import TaskLayout
from lag.job.offset_sums import pinned_sum, sum_rows
from lag.job.row_keys import map_lookup, task_part, task_sub
from lag.spark.sizing import (
    JobSizing,
    merge_partitions_for,
    plan_size_bytes,
    raise_arrow_batch_rows,
)
from lag.spark.worker_imports import lazy_zip_invalidation

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = [
    "enable_sort_aggregate",
    "join_end_offsets",
    "merge_as_of_join",
    "sort_prefix",
]

#: Optimizer rule the merge keeps out of the session (see :func:`enable_sort_aggregate`).
_ELIMINATE_SORTS = "org.apache.spark.sql.catalyst.optimizer.EliminateSorts"


def enable_sort_aggregate(spark: SparkSession) -> None:
    """Let the merge sum its sorted rows with one sort (``docs/lag.md``).

    Sets ``spark.sql.execution.replaceHashWithSortAgg`` (Spark then sums rows that arrive
    sorted by the grouping keys with a streaming sort aggregation, whose output keeps that
    order) and adds Spark's ``EliminateSorts`` optimizer rule to
    ``spark.sql.optimizer.excludedRules`` (that rule drops a sort placed under an aggregation
    whose functions do not depend on order, which would leave a hash aggregation and a second
    sort). Neither setting changes any result: without them :func:`merge_as_of_join` runs a
    hash aggregation and sorts its output.

    Parameters
    ----------
    spark:
        The session whose SQL conf is set.
    """
    spark.conf.set("spark.sql.execution.replaceHashWithSortAgg", "true")
    key = "spark.sql.optimizer.excludedRules"
    current = [r.strip() for r in (spark.conf.get(key, "") or "").split(",") if r.strip()]
    if _ELIMINATE_SORTS not in current:
        spark.conf.set(key, ",".join([*current, _ELIMINATE_SORTS]))


#: Columns of the merge as-of join's output batches, after the snapshot columns.
_MERGE_SNAPSHOT_COLUMNS = ("time_key", "pkey", "task_key", "n_partitions", "offset_sum")


def _forward_fill() -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function of :func:`merge_as_of_join`, made here so Spark pickles it by
    value: executors need numpy and pyarrow (PySpark's Arrow dependencies), not this package.
    Its first call in a worker process also makes that worker's per-task import-cache
    invalidation cheap (:func:`lag.spark.worker_imports.lazy_zip_invalidation`)."""
    columns = _MERGE_SNAPSHOT_COLUMNS
    make_lazy = lazy_zip_invalidation()

    def forward_fill_ends(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Carry each task's latest end-offset row to the snapshot rows after it (a partition).

        The rows arrive sorted by (``task_key``, ``time_key``, ``pkey`` nulls first); end-offset
        rows are those with a null ``pkey`` (their sum in ``offset_sum``), so at equal time the
        end offsets come first and match the snapshot (``time <= t``). Within a batch the index
        of the latest end row at or before each row is a running maximum
        (``numpy.maximum.accumulate``); it counts only when it belongs to the same task. Rows
        before the batch's first end row take the last end row of the previous batches when
        that was of their task. Only the snapshot rows are emitted.
        """
        import numpy as np
        import pyarrow as pa

        make_lazy()
        carry_task: int | None = None
        carry_sum = 0
        carry_time = 0
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            task = batch.column("task_key").to_numpy(zero_copy_only=False)
            time = batch.column("time_key").to_numpy(zero_copy_only=False)
            is_end = batch.column("pkey").is_null().to_numpy(zero_copy_only=False)
            total = batch.column("offset_sum").to_numpy(zero_copy_only=False)
            index = np.where(is_end, np.arange(n), -1)
            last = np.maximum.accumulate(index)
            at = np.maximum(last, 0)
            found = (last >= 0) & (task[at] == task)
            end_sum = total[at]
            end_time = time[at]
            if carry_task is not None:
                carried = (last < 0) & (task == carry_task)
                found = found | carried
                end_sum = np.where(carried, carry_sum, end_sum)
                end_time = np.where(carried, carry_time, end_time)
            ends = np.flatnonzero(is_end)
            if len(ends):
                tail = ends[-1]
                carry_task, carry_sum = int(task[tail]), int(total[tail])
                carry_time = int(time[tail])
            keep = ~is_end
            missing = ~found[keep]
            kept = batch.filter(pa.array(keep))
            yield pa.RecordBatch.from_arrays(
                [
                    *(kept.column(name) for name in columns),
                    pa.array(end_sum[keep], mask=missing),
                    pa.array(end_time[keep], mask=missing),
                ],
                names=[*columns, "end_offset_sum", "end_offset_time"],
            )

    return forward_fill_ends


#: Fewest bits of time a :func:`sort_prefix` key must keep to be worth it (about 17 minutes in
#: milliseconds); with fewer the merge sorts on the plain columns.
_MIN_PREFIX_TIME_BITS = 20


def sort_prefix(layout: TaskLayout, time_origin: int) -> Column | None:
    """One long that orders the merge's rows like (task, time) wherever it differs.

    Spark's sort compares a 64-bit prefix of the first sort column before the whole rows; with
    ``task_key`` first, nearly every comparison ties on it (a task has thousands of rows) and
    falls back to the full three-column comparison. This key folds the task as
    ``sub-topology * P + partition`` (``P`` the largest partition count of a stateful
    sub-topology) into the high bits and the time since ``time_origin``, clamped to the bits
    left, into the low ones: ``(fold << b) | clamp(time - origin, 0, 2^b - 1)``. It never
    decreases along (task, time) within a task, and different tasks get disjoint ranges, so
    sorting by (key, ``task_key``, ``time_key``, ...) gives the same order as (``task_key``,
    ``time_key``, ...) up to the order of tasks, which the forward fill does not need (it needs
    each task's rows together and in time order). Times outside the clamp, the timeless
    ``Long.MIN_VALUE`` and ``Long.MAX_VALUE`` included, and partitions beyond ``P`` tie on the
    key and are ordered by the columns after it.

    Parameters
    ----------
    layout:
        The task layout (stateful sub-topologies and their partition counts).
    time_origin:
        Epoch milliseconds mapped to 0, usually the first end-offset time.

    Returns
    -------
    pyspark.sql.Column or None
        The key (a long), or None when fewer than 20 bits would be left for the time.
    """
    from pyspark.sql import functions as F

    parts = max([1, *(layout.partitions.get(sub, 0) for sub in layout.stateful_subtopologies)])
    top_sub = max(layout.stateful_subtopologies, default=0)
    task_bits = ((top_sub + 1) * parts).bit_length()
    time_bits = 62 - task_bits
    if time_bits < _MIN_PREFIX_TIME_BITS:
        return None
    top = (1 << time_bits) - 1
    time = F.col("time_key")
    since = (
        F.when(time < F.lit(time_origin), F.lit(0))
        .when(time > F.lit(time_origin + top), F.lit(top))
        .otherwise(time - F.lit(time_origin))
    )
    part = task_part(F.col("task_key")).cast("long")
    fold = task_sub(F.col("task_key")).cast("long") * F.lit(parts) + part
    return F.when(part < F.lit(parts), F.shiftleft(fold, time_bits).bitwiseOR(since)).otherwise(
        F.lit(2**63 - 1)
    )


def merge_as_of_join(
    good_offsets: DataFrame,
    good_ends: DataFrame,
    layout: TaskLayout,
    time_origin: int | None = None,
    partitions: int | None = None,
) -> DataFrame:
    """The as-of join as one sorted merge per task, forward-filled in Arrow batches.

    Like DuckDB's ``ASOF JOIN``: the validated end-offset rows are stacked under the offset rows
    (their ``pkey`` null), the stack is shuffled once by ``task_key``, each partition is sorted
    by (``task_key``, ``time_key``, ``pkey`` nulls first) and summed per (``time_key``,
    ``pkey``, ``task_key``) in that order (a sort aggregation once
    :func:`enable_sort_aggregate` ran), incomplete end-offset sums are dropped, and
    ``mapInArrow`` carries each task's latest complete end-offset sum to the snapshot rows after
    it (numpy, :func:`_forward_fill`). One shuffle of the rows and one sort: no interval table,
    no explode, no second shuffle of the offset sums, and no Spark ``WindowExec`` (which
    evaluates its frame row by row, ``docs/lag.md``). Each snapshot gets the latest complete
    end offsets at or before its time (end offsets without a time, ``Long.MIN_VALUE``, come
    first; snapshots without one, ``Long.MAX_VALUE``, last).

    Parameters
    ----------
    good_offsets:
        Validated offset rows: ``time_key``, ``pkey``, ``task_key``, ``offset``
        (:func:`lag.job.offset_sums.check_offset_rows`).
    good_ends:
        Validated end-offset rows: ``time_key``, ``task_key``, ``offset``
        (:func:`lag.job.offset_sums.check_end_rows`).
    layout:
        The task layout (changelog partitions each task's end offsets need to be complete).
    time_origin:
        Epoch milliseconds (usually the first end-offset time): when given, each partition is
        sorted on :func:`sort_prefix` first (same result, cheaper comparisons).
    partitions:
        Partitions of the shuffle by task (:func:`merge_partitions_for`); None: Spark's
        ``spark.sql.shuffle.partitions``.

    Returns
    -------
    pyspark.sql.DataFrame
        Per (``time_key``, ``pkey``, ``task_key``): ``n_partitions``, ``offset_sum`` (records,
        as :func:`lag.job.offset_sums.snapshot_sums`), ``end_offset_sum`` and
        ``end_offset_time`` (null when none match). Runs Python workers (pyarrow, numpy).
    """
    from pyspark.sql import functions as F

    ends = good_ends.select(
        "time_key", F.lit(None).cast("long").alias("pkey"), "task_key", "offset"
    )
    stacked = good_offsets.select("time_key", "pkey", "task_key", "offset").unionByName(ends)
    shuffled = (
        stacked.repartition("task_key")
        if partitions is None
        else stacked.repartition(partitions, "task_key")
    )
    order: list[str | Column] = ["task_key", "time_key", F.col("pkey").asc_nulls_first()]
    group = ["task_key", "time_key", "pkey"]
    prefix = None if time_origin is None else sort_prefix(layout, time_origin)
    if prefix is not None:
        shuffled = shuffled.withColumn("_sort", prefix)
        order = ["_sort", *order]
        group = ["_sort", *group]
    # The rows are sorted in the forward fill's order before the sum: with
    # enable_sort_aggregate, Spark sums them in a sort aggregation that keeps the order, and
    # drops the sort after it as redundant (one sort, no hash map). Without it, Spark drops the
    # first sort, sums in a hash aggregation and sorts after it: the same rows either way.
    summed = sum_rows(shuffled.sortWithinPartitions(*order), group)
    expected = map_lookup(layout.expected_changelogs(), task_sub(F.col("task_key")))
    ordered = (
        summed.select(
            *(["_sort"] if prefix is not None else []),
            *_MERGE_SNAPSHOT_COLUMNS[:4],
            pinned_sum(F.col("has_latest"), F.col("raw_sum")).alias("offset_sum"),
        )
        .filter(F.col("pkey").isNotNull() | (F.col("n_partitions") == expected))
        .sortWithinPartitions(*order)
    )
    if prefix is not None:
        ordered = ordered.drop("_sort")
    schema = ", ".join(
        f"{name} long" for name in (*_MERGE_SNAPSHOT_COLUMNS, "end_offset_sum", "end_offset_time")
    )
    fill: Any = _forward_fill()  # PySpark types it over Iterable, the same at run time
    return ordered.mapInArrow(fill, schema)


def join_end_offsets(
    spark: SparkSession,
    *,
    good_offsets: DataFrame,
    good_ends: DataFrame,
    end_offsets: DataFrame,
    end_stats: list[Any],
    layout: TaskLayout,
    sizing: JobSizing,
) -> DataFrame:
    """Match each snapshot's offset sums with its task's latest complete end offsets.

    Runs :func:`merge_as_of_join` with the session set for it: Arrow batches raised
    (:func:`lag.spark.sizing.raise_arrow_batch_rows`), the sort aggregation enabled
    (:func:`enable_sort_aggregate`), the sort on :func:`sort_prefix` from the first end-offset
    time, and the shuffle sized by both inputs (:func:`lag.spark.sizing.merge_partitions_for`).

    Parameters
    ----------
    spark:
        The session (its SQL conf is set for the merge).
    good_offsets, good_ends:
        Validated offset and end-offset rows (:func:`lag.job.offset_sums.check_offset_rows`,
        :func:`lag.job.offset_sums.check_end_rows`).
    end_offsets:
        The end-offset rows as read (their plan's size estimate).
    end_stats:
        Per end-offset topic: ``topic``, ``n``, ``rows``, ``first``, ``last``.
    layout:
        The task layout.
    sizing:
        What :func:`lag.spark.sizing.size_session` set.

    Returns
    -------
    pyspark.sql.DataFrame
        Per (``time_key``, ``pkey``, ``task_key``): ``n_partitions``, ``offset_sum``,
        ``end_offset_sum`` and ``end_offset_time`` (null when none match).
    """
    raise_arrow_batch_rows(spark)
    enable_sort_aggregate(spark)
    starts = [r["first"] for r in end_stats if r["topic"] in layout.changelogs]
    origin = min((t for t in starts if t is not None), default=None)
    # The merge's shuffle carries the end-offset rows too: size it by both inputs.
    # (An unknown size on either side makes the sum unknown too.)
    stacked_bytes = sizing.offset_bytes + plan_size_bytes(end_offsets)
    partitions = merge_partitions_for(stacked_bytes, sizing.shuffle_partitions)
    return merge_as_of_join(good_offsets, good_ends, layout, origin, partitions)
