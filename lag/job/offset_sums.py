"""Offset rows and end-offset rows: validated, mapped to tasks, summed per (moment, task).

The job follows what a Kafka Streams group leader computes at a rebalance, per (process, task):
the **offset sum** a process reports (``TaskManager.getTaskOffsetSums`` and
``sumOfChangelogOffsets``: ``-4`` entries skipped, an overflow pinned to ``Long.MAX_VALUE``), the
**end offset sum** of every stateful task (``StreamsPartitionAssignor.computeEndOffsetSumsByTask``)
and the **lag** (``ClientState.computeTaskLags``, :func:`kafka_lag`).

Rows are validated where they are read (a bad row becomes an error row with its reason) and
summed per (snapshot, process, task) before they cross the shuffle: Spark's partial aggregation
merges the changelog partitions of a task on the map side, with the compact keys of
:mod:`lag.job.row_keys`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lag.job.layout import TaskLayout
from lag.job.row_keys import LONG_MIN, encode_task, map_lookup, row_source, task_part, task_sub
from lag.kafka_rules import LATEST_OFFSET, LONG_MAX, OFFSET_UNKNOWN, UNKNOWN_OFFSET_SUM

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def kafka_lag(offset_sum: Column, end_offset_sum: Column) -> Column:
    """``ClientState.computeTaskLags`` as a Spark column expression.

    Parameters
    ----------
    offset_sum:
        Long column: the reported offset sum (-2 running active, -3 unknown, else >= 0).
    end_offset_sum:
        Long column: the task's end offset sum (>= 0), or null when unknown.

    Returns
    -------
    pyspark.sql.Column
        Long, records: -2 and -3 pass through; null when the end offset sum is unknown; the end
        offset sum when the offset sum is beyond it (Kafka warns the task is probably
        corrupted); else ``end - offset sum``.
    """
    from pyspark.sql import functions as F

    return (
        F.when(offset_sum == LATEST_OFFSET, F.lit(LATEST_OFFSET))
        .when(offset_sum == UNKNOWN_OFFSET_SUM, F.lit(UNKNOWN_OFFSET_SUM))
        .when(end_offset_sum.isNull() | offset_sum.isNull(), F.lit(None))
        .when(end_offset_sum < offset_sum, end_offset_sum)
        .otherwise(end_offset_sum - offset_sum)
        .cast("long")
    )


def records_behind(offset_sum: Column, end_offset_sum: Column) -> Column:
    """Records a replica still has to restore: ``max(end - offset sum, 0)`` (long, records).

    Unlike Kafka's lag, an offset sum *ahead* of the end offsets counts as caught up (0): with
    periodic snapshots the matched end offsets are older than the checkpoint, so being ahead
    means "caught up to that moment", not a corrupted task. A running active (-2) is 0; an
    unknown offset sum (-3) or end offset sum is null.

    Parameters
    ----------
    offset_sum, end_offset_sum:
        Long columns, as for :func:`kafka_lag`.

    Returns
    -------
    pyspark.sql.Column
        Long, records, >= 0 or null.
    """
    from pyspark.sql import functions as F

    return (
        F.when(offset_sum == LATEST_OFFSET, F.lit(0))
        .when((offset_sum < 0) | offset_sum.isNull() | end_offset_sum.isNull(), F.lit(None))
        .otherwise(F.greatest(end_offset_sum - offset_sum, F.lit(0)))
        .cast("long")
    )


def pinned_sum(has_latest: Column, raw_sum: Column) -> Column:
    """Kafka's offset sum from aggregates: -2 if any partition said so, pinned on overflow.

    ``raw_sum`` is ``try_sum(greatest(offset, 0))``: sentinels and marker rows add 0, so it is
    null only when the sum overflowed.
    """
    from pyspark.sql import functions as F

    return (
        F.when(F.coalesce(has_latest, F.lit(False)), F.lit(LATEST_OFFSET))
        .otherwise(F.coalesce(raw_sum, F.lit(LONG_MAX)))
        .cast("long")
    )


def check_offset_rows(offsets: DataFrame, layout: TaskLayout) -> tuple[DataFrame, DataFrame]:
    """Validate offset rows and map each to its task.

    Parameters
    ----------
    offsets:
        Offset rows (``lag.spark.readers.OFFSETS_SCHEMA``).
    layout:
        Which changelog topic belongs to which stateful sub-topology.

    Returns
    -------
    good : pyspark.sql.DataFrame
        ``time_key`` (epoch ms, ``Long.MAX_VALUE`` = "now"), ``pkey``, ``task_key``, ``offset``.
    errors : pyspark.sql.DataFrame
        Error rows (``source``, ``line``, ``raw``, ``reason``): unparsable rows, missing process
        ids, unknown tasks or changelog topics, bad partitions or offsets, task mismatches.
    """
    from pyspark.sql import functions as F

    o = _with_task_columns(offsets, layout)
    reason = _offset_row_reason(sorted(layout.stateful_subtopologies))
    o = o.withColumn("reason", reason)
    raw_offsets = F.coalesce(
        F.col("raw"),
        F.to_json(
            F.struct("process_id", "topic", "partition", "offset", "task_id", "snapshot_time")
        ),
    )
    offset_errors = o.filter(F.col("reason").isNotNull()).select(
        row_source(F.lit("offsets")).alias("source"),
        F.col("line"),
        raw_offsets.alias("raw"),
        F.col("reason"),
    )
    good_offsets = o.filter(F.col("reason").isNull()).select(
        F.coalesce(F.col("snapshot_time"), F.lit(LONG_MAX)).alias("time_key"),
        F.xxhash64("process_id").alias("pkey"),
        encode_task(F.col("sub"), F.col("part")).alias("task_key"),
        F.col("offset"),
    )

    return good_offsets, offset_errors


def _with_task_columns(offsets: DataFrame, layout: TaskLayout) -> DataFrame:
    """``offsets`` plus ``sub`` and ``part``: from the changelog topic and partition, or from
    ``task_id`` on a marker row (an empty checkpoint: local state, offset sum 0)."""
    from pyspark.sql import functions as F

    changelog_sub = {topic: sub for topic, (sub, _store) in layout.changelogs.items()}
    is_marker = F.col("topic").isNull()
    marker_part = "try_cast(regexp_extract(task_id, '^([0-9]+)_([0-9]+)$', {}) AS INT)"
    return offsets.withColumn(
        "sub",
        F.when(is_marker, F.expr(marker_part.format(1))).otherwise(
            map_lookup(changelog_sub, F.col("topic"))
        ),
    ).withColumn(
        "part", F.when(is_marker, F.expr(marker_part.format(2))).otherwise(F.col("partition"))
    )


def _offset_row_reason(stateful_subs: list[int]) -> Column:
    """Why an offset row (with ``sub`` and ``part``) is not used; null for a good row."""
    from pyspark.sql import functions as F

    is_marker = F.col("topic").isNull()
    unknown_marker_task = F.col("sub").isNull()
    if stateful_subs:
        unknown_marker_task = unknown_marker_task | ~F.col("sub").isin(stateful_subs)
    derived_task = F.concat_ws("_", F.col("sub").cast("string"), F.col("partition").cast("string"))
    return (
        F.when(
            F.col("raw").isNotNull(),
            F.lit("unparsable row: not a JSON object of the offsets schema"),
        )
        .when(F.col("process_id").isNull(), F.lit("invalid row: process_id is missing"))
        .when(
            is_marker & F.col("task_id").isNull(), F.lit("invalid row: neither topic nor task_id")
        )
        .when(
            is_marker & unknown_marker_task,
            F.concat(
                F.lit("unknown task: "),
                F.coalesce(F.col("task_id"), F.lit("")),
                F.lit(" is not a stateful task"),
            ),
        )
        .when(
            ~is_marker & F.col("sub").isNull(),
            F.concat(
                F.lit("unknown changelog topic: no logged store of the topology owns "),
                F.col("topic"),
            ),
        )
        .when(
            ~is_marker & (F.col("partition").isNull() | (F.col("partition") < 0)),
            F.lit("invalid row: partition"),
        )
        .when(
            ~is_marker
            & (
                F.col("offset").isNull()
                | ((F.col("offset") < 0) & ~F.col("offset").isin(OFFSET_UNKNOWN, LATEST_OFFSET))
            ),
            F.concat(
                F.lit("invalid offset: "), F.coalesce(F.col("offset").cast("string"), F.lit("null"))
            ),
        )
        .when(
            ~is_marker & F.col("task_id").isNotNull() & (F.col("task_id") != derived_task),
            F.concat(
                F.lit("task mismatch: the partition belongs to task "),
                derived_task,
                F.lit(", row says "),
                F.col("task_id"),
            ),
        )
    )


def check_end_rows(
    end_offsets: DataFrame, layout: TaskLayout, end_source: str
) -> tuple[DataFrame, DataFrame]:
    """Validate end-offset rows and keep those of changelog partitions.

    Parameters
    ----------
    end_offsets:
        End-offset rows (``lag.spark.readers.END_OFFSETS_SCHEMA``).
    layout:
        Changelog and source topics of the topology.
    end_source:
        Name of the end-offsets input, for error rows.

    Returns
    -------
    good : pyspark.sql.DataFrame
        ``time_key`` (epoch ms, ``Long.MIN_VALUE`` = no time: applies to every snapshot),
        ``task_key``, ``offset``.
    errors : pyspark.sql.DataFrame
        Error rows: unparsable rows, bad topic, partition or offset, unknown topics.
    """
    from pyspark.sql import functions as F

    changelog_sub = {topic: sub for topic, (sub, _store) in layout.changelogs.items()}
    source_topics = sorted(layout.source_topics)
    e = end_offsets.withColumn("sub", map_lookup(changelog_sub, F.col("topic")))
    unknown_topic = F.col("sub").isNull()
    if source_topics:
        unknown_topic = unknown_topic & ~F.col("topic").isin(source_topics)
    end_reason = (
        F.when(
            F.col("raw").isNotNull(),
            F.lit("unparsable row: not a JSON object of the end-offsets schema"),
        )
        .when(
            F.col("topic").isNull() | F.col("partition").isNull() | (F.col("partition") < 0),
            F.lit("invalid row: topic or partition"),
        )
        .when(
            F.col("offset").isNull() | (F.col("offset") < 0),
            F.concat(
                F.lit("invalid end offset: "),
                F.coalesce(F.col("offset").cast("string"), F.lit("null")),
            ),
        )
        .when(
            unknown_topic,
            F.concat(
                F.lit("unknown topic: "),
                F.col("topic"),
                F.lit(" is neither a changelog nor a source topic of the topology"),
            ),
        )
    )
    e = e.withColumn("reason", end_reason)
    end_errors = e.filter(F.col("reason").isNotNull()).select(
        row_source(F.lit(end_source)).alias("source"),
        F.col("line"),
        F.coalesce(
            F.col("raw"), F.to_json(F.struct("topic", "partition", "offset", "snapshot_time"))
        ).alias("raw"),
        F.col("reason"),
    )
    good_ends = e.filter(F.col("reason").isNull() & F.col("sub").isNotNull()).select(
        F.coalesce(F.col("snapshot_time"), F.lit(LONG_MIN)).alias("time_key"),
        encode_task(F.col("sub"), F.col("partition")).alias("task_key"),
        F.col("offset"),
    )

    return good_ends, end_errors


def sum_rows(rows: DataFrame, keys: list[str]) -> DataFrame:
    """Sum offsets per ``keys``: ``has_latest`` (any -2), ``raw_sum``, ``n_partitions``.

    ``raw_sum`` is ``try_sum(greatest(offset, 0))`` (null on overflow, see :func:`pinned_sum`).
    """
    from pyspark.sql import functions as F

    return rows.groupBy(*keys).agg(
        F.max(F.col("offset") == LATEST_OFFSET).alias("has_latest"),
        F.try_sum(F.greatest(F.col("offset"), F.lit(0))).alias("raw_sum"),
        F.count("offset").alias("n_partitions"),
    )


def snapshot_sums(good_offsets: DataFrame) -> DataFrame:
    """Offset sums per (snapshot, process, task): ``time_key``, ``pkey``, ``task_key``,
    ``n_partitions`` and ``offset_sum`` (records; -2 or pinned to ``Long.MAX_VALUE``)."""
    from pyspark.sql import functions as F

    return sum_rows(good_offsets, ["time_key", "pkey", "task_key"]).select(
        "time_key",
        "pkey",
        "task_key",
        "n_partitions",
        pinned_sum(F.col("has_latest"), F.col("raw_sum")).alias("offset_sum"),
    )


def end_offset_sums(good_ends: DataFrame, layout: TaskLayout) -> DataFrame:
    """End offset sums per (moment, task), with ``complete``: every logged changelog partition
    of the task is present (``StreamsPartitionAssignor`` needs them all)."""
    from pyspark.sql import functions as F

    expected = map_lookup(layout.expected_changelogs(), task_sub(F.col("task_key")))
    return sum_rows(good_ends, ["time_key", "task_key"]).select(
        "time_key",
        "task_key",
        "n_partitions",
        pinned_sum(F.col("has_latest"), F.col("raw_sum")).alias("offset_sum"),
        (F.col("n_partitions") == expected).alias("complete"),
    )


def incomplete_errors(end_sums: DataFrame, layout: TaskLayout, end_source: str) -> DataFrame:
    """One error row per (moment, task) whose end offsets miss a changelog partition."""
    from pyspark.sql import functions as F

    expected = map_lookup(layout.expected_changelogs(), task_sub(F.col("task_key")))
    return end_sums.filter(~F.col("complete")).select(
        F.lit(end_source).alias("source"),
        F.lit(None).cast("long").alias("line"),
        F.concat(
            F.lit("task "),
            task_sub(F.col("task_key")).cast("string"),
            F.lit("_"),
            task_part(F.col("task_key")).cast("string"),
            F.lit(" at "),
            F.when(F.col("time_key") == LONG_MIN, F.lit("(no time)")).otherwise(
                F.col("time_key").cast("string")
            ),
            F.lit(": "),
            F.col("n_partitions").cast("string"),
            F.lit(" of "),
            expected.cast("string"),
            F.lit(" changelog partitions"),
        ).alias("raw"),
        F.lit(
            "incomplete end offsets: a changelog partition of the task is missing; "
            "snapshot not used"
        ).alias("reason"),
    )
