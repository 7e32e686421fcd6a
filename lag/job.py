"""The Spark lag job: offset rows and end offsets in, lags, restore rates and cluster state out.

The job follows what a Kafka Streams group leader computes at a rebalance, per (process, task):

1. the **offset sum** the process reports in its subscription (``TaskManager.getTaskOffsetSums``
   and ``sumOfChangelogOffsets``): ``-2`` (``Task.LATEST_OFFSET``) for a task it runs as active;
   otherwise the sum of its checkpointed changelog offsets, ``-4`` (``OFFSET_UNKNOWN``) entries
   skipped, an overflow pinned to ``Long.MAX_VALUE``;
2. the **end offset sum** of every stateful task over its changelog partitions
   (``StreamsPartitionAssignor.computeEndOffsetSumsByTask``, overflow pinned likewise);
3. the **lag** by ``ClientState.computeTaskLags``: ``-2`` stays ``-2``, ``-3`` stays ``-3``, an
   offset sum beyond the end gives the end offset sum, otherwise ``end - offset sum``.

With histories (rows carrying ``snapshot_time``) step 3 runs for every snapshot, each matched to
the end offsets of the same or the latest earlier moment (an as-of join), and the restore table
turns consecutive snapshots into catch-up rates and the time until each replica is caught up.

Plan: offset rows are validated where they are read and summed per (snapshot, process, task)
before they cross the one big shuffle (Spark's partial aggregation merges the changelog
partitions of a task). Rows travel with compact keys: the process id as its 64-bit hash, the
task as ``sub-topology << 32 | partition``; they are decoded by broadcast joins at the end, the
process ids taken from the members when every key is a member's (else from one scan of the
offset rows' ``process_id`` column). The end-offset rows, about a tenth of the offset rows, are
summed per (moment, task), cached on their own, and turned into validity intervals; the as-of
join is then a broadcast equi-join on one long (task and time bucket folded together) with a
range check, so the big side is never sorted. The per-snapshot result is cached once, and the
lag table, the restore table and the cluster state all read it; the restore table is a few hash
aggregations over it by (process, task). On a cluster, the scan, the partial sums and the join
spread over the executors.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from lag.errors import ErrorRow, LagInputError
from lag.kafka import (
    LATEST_OFFSET,
    LONG_MAX,
    OFFSET_UNKNOWN,
    UNKNOWN_OFFSET_SUM,
    sorted_task_ids,
    uuid_sort_key,
)
from lag.members import Membership
from lag.readers import errors_dataframe
from lag.topology import Topology
from streams_assign.model import compute_task_lag

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: Smallest Java long: the time key of end offsets without a time (they apply to every snapshot).
LONG_MIN = -(2**63)
#: Columns of the lag table (one row per snapshot, process and task), see docs/lag.md.
LAG_TABLE_COLUMNS = (
    "snapshot_time",
    "process_id",
    "task_id",
    "subtopology",
    "partition",
    "changelog_partitions",
    "offset_sum",
    "end_offset_time",
    "end_offset_sum",
    "lag",
    "records_behind",
)
#: Lag-table columns of mostly distinct values, written without Parquet dictionaries.
LAG_PLAIN_COLUMNS = (
    "snapshot_time",
    "offset_sum",
    "end_offset_time",
    "end_offset_sum",
    "lag",
    "records_behind",
)
#: Columns of the restore table (one row per process and task), see docs/lag.md.
RESTORE_TABLE_COLUMNS = (
    "process_id",
    "task_id",
    "subtopology",
    "partition",
    "snapshots",
    "first_snapshot_time",
    "rate_from_time",
    "snapshot_time",
    "offset_sum",
    "end_offset_sum",
    "lag",
    "records_behind",
    "catch_up_rate",
    "restore_rate",
    "caught_up",
    "eta_ms",
    "caught_up_at",
)


@dataclass(frozen=True, slots=True)
class LagConfigs:
    """The assignment configs written into the cluster state (Kafka's names, dots as underscores).

    Defaults and ranges are Kafka's (``StreamsConfig``): ``acceptable.recovery.lag`` 10000
    (>= 0; ``Long.MAX_VALUE`` = unbounded), ``max.warmup.replicas`` 2 (>= 1),
    ``num.standby.replicas`` 0 (>= 0), ``probing.rebalance.interval.ms`` 600000 (>= 60000).

    Raises
    ------
    ValueError
        When a value is out of Kafka's range.
    """

    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    num_standby_replicas: int = 0
    probing_rebalance_interval_ms: int = 600_000

    def __post_init__(self) -> None:
        limits = {
            "acceptable_recovery_lag": 0,
            "max_warmup_replicas": 1,
            "num_standby_replicas": 0,
            "probing_rebalance_interval_ms": 60_000,
        }
        for name, low in limits.items():
            value = getattr(self, name)
            if not isinstance(value, int) or not low <= value <= LONG_MAX:
                raise ValueError(
                    f"{name.replace('_', '.')} must be an integer >= {low}, got {value!r}"
                )

    def to_json(self) -> dict[str, int]:
        """The ``configs`` object of the cluster-state format."""
        return {
            "acceptable_recovery_lag": self.acceptable_recovery_lag,
            "max_warmup_replicas": self.max_warmup_replicas,
            "num_standby_replicas": self.num_standby_replicas,
            "probing_rebalance_interval_ms": self.probing_rebalance_interval_ms,
        }


@dataclass(frozen=True, slots=True)
class TaskLayout:
    """Which tasks exist, which are stateful, and which changelog topics they restore from.

    Attributes
    ----------
    changelogs:
        Logged changelog topic -> (sub-topology, store). A store's changelog counts as logged
        when the end offsets list it.
    partitions:
        Sub-topology -> number of partitions (= tasks), for every sub-topology whose count is
        known.
    stateful_subtopologies:
        Sub-topologies with at least one logged changelog.
    source_topics:
        Source topic (both spellings of internal topics) -> sub-topology.
    """

    changelogs: dict[str, tuple[int, str]]
    partitions: dict[int, int]
    stateful_subtopologies: frozenset[int]
    source_topics: dict[str, int] = field(default_factory=dict)

    def expected_changelogs(self) -> dict[int, int]:
        """Sub-topology -> number of logged changelog partitions each of its tasks has."""
        counts: dict[int, int] = defaultdict(int)
        for sub, _store in self.changelogs.values():
            counts[sub] += 1
        return dict(counts)

    def stateful_tasks(self) -> list[str]:
        """Stateful task ids in Kafka's TaskId order."""
        return sorted_task_ids(
            f"{sub}_{p}"
            for sub in self.stateful_subtopologies
            for p in range(self.partitions.get(sub, 0))
        )

    def stateless_tasks(self) -> list[str]:
        """Stateless task ids in Kafka's TaskId order."""
        return sorted_task_ids(
            f"{sub}_{p}"
            for sub, count in self.partitions.items()
            if sub not in self.stateful_subtopologies
            for p in range(count)
        )


def plan_tasks(
    topology: Topology,
    application_id: str,
    end_offset_partitions: dict[str, int],
    membership: Membership,
    end_source: str = "end-offsets",
) -> tuple[TaskLayout, list[ErrorRow]]:
    """Derive the task layout from the topology, the end offsets and the members' ownership.

    Parameters
    ----------
    topology:
        Sub-topologies with their source topics and stores.
    application_id:
        Kafka Streams' ``application.id`` (prefix of changelog and internal topics).
    end_offset_partitions:
        Topic -> number of partitions seen in the end offsets (max partition + 1).
    membership:
        Members and their owned partitions.
    end_source:
        Name of the end-offsets input, for error rows.

    Returns
    -------
    layout : TaskLayout
    errors : list of ErrorRow
        Stores without end offsets (treated as not logged, as Kafka treats a store without a
        changelog) and sub-topologies whose partition count is unknown.

    Raises
    ------
    LagInputError
        When the topology has stores but no changelog topic appears in the end offsets (a wrong
        ``--application-id`` or end-offsets file), since no lag could be computed at all.

    Notes
    -----
    A sub-topology has as many tasks as the largest partition count of its source topics
    (``PartitionGrouper``); its changelog topics are created with that count. The count is the
    maximum over the changelog and source topics in the end offsets and the partitions the
    members own.
    """
    errors: list[ErrorRow] = []
    all_changelogs = topology.changelog_topics(application_id)
    logged = {t: owner for t, owner in all_changelogs.items() if t in end_offset_partitions}
    if all_changelogs and not logged:
        example = next(iter(all_changelogs))
        raise LagInputError(
            f"--end-offsets {end_source}: no end offset for any changelog topic of the topology "
            f"(expected names like {example}; is --application-id right?)"
        )
    for topic, (sub, store) in sorted(all_changelogs.items()):
        if topic not in logged:
            errors.append(
                ErrorRow(
                    end_source,
                    None,
                    topic,
                    f"no end offsets for changelog: store {store!r} of sub-topology {sub} "
                    "is treated as not logged (no lag for it)",
                )
            )
    sources = topology.source_topics(application_id)
    counts: dict[int, int] = defaultdict(int)
    for topic, (sub, _store) in logged.items():
        counts[sub] = max(counts[sub], end_offset_partitions[topic])
    for topic, sub in sources.items():
        if topic in end_offset_partitions:
            counts[sub] = max(counts[sub], end_offset_partitions[topic])
    for owned in membership.owned_partitions().values():
        for topic, partition in owned:
            sub = topology.subtopology_of_source(topic, application_id)
            if sub is not None:
                counts[sub] = max(counts[sub], partition + 1)
    for sub_id in topology.subtopologies:
        if counts.get(sub_id, 0) == 0:
            errors.append(
                ErrorRow(
                    "topology",
                    None,
                    f"Sub-topology: {sub_id}",
                    f"partition count unknown: no member owns, and no end offset lists, a source "
                    f"partition of sub-topology {sub_id}; its tasks are left out",
                )
            )
    layout = TaskLayout(
        changelogs=logged,
        partitions={sub: n for sub, n in sorted(counts.items()) if n > 0},
        stateful_subtopologies=frozenset(sub for sub, _store in logged.values()),
        source_topics=sources,
    )
    return layout, errors


def previous_active_tasks(
    membership: Membership, topology: Topology, application_id: str, layout: TaskLayout
) -> tuple[dict[str, set[tuple[int, int]]], list[ErrorRow]]:
    """Tasks each process runs now as active, from the partitions its threads own.

    Partition ``p`` of any source topic of sub-topology ``s`` belongs to task ``s_p``
    (``PartitionGrouper``; Kafka's ``ClientState.initializePrevTasks`` maps owned partitions to
    tasks the same way).

    Parameters
    ----------
    membership:
        The members and their owned partitions.
    topology:
        Source topics (and patterns) of each sub-topology.
    application_id:
        Prefix of internal topic names.
    layout:
        Partition counts: an owned partition beyond them is an error row.

    Returns
    -------
    actives : dict
        Process id -> set of (sub-topology, partition); every member process has an entry.
    errors : list of ErrorRow
        Owned partitions of topics no sub-topology reads.
    """
    actives: dict[str, set[tuple[int, int]]] = {pid: set() for pid in membership.processes()}
    errors: list[ErrorRow] = []
    for member in membership.members.values():
        for topic, partition in member.owned or ():
            sub = topology.subtopology_of_source(topic, application_id)
            if sub is None or partition >= layout.partitions.get(sub, 0):
                errors.append(
                    ErrorRow(
                        "members",
                        None,
                        f"{member.member_id} {topic}({partition})",
                        f"not a source partition: {topic}-{partition} is read by no sub-topology",
                    )
                )
                continue
            actives[member.process_id].add((sub, partition))
    return actives, errors


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


def _pinned_sum(has_latest: Column, raw_sum: Column) -> Column:
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


def _task_key(sub: Column, part: Column) -> Column:
    """One long per task: ``sub-topology << 32 | partition`` (both are non-negative ints)."""
    from pyspark.sql import functions as F

    return F.shiftleft(sub.cast("long"), 32).bitwiseOR(part.cast("long"))


def _task_sub(task_key: Column) -> Column:
    from pyspark.sql import functions as F

    return F.shiftright(task_key, 32).cast("int")


def _task_part(task_key: Column) -> Column:
    return task_key.bitwiseAND(0xFFFF_FFFF).cast("int")


def _keyed_process_ids(rows: list[Any], option: str) -> dict[int, str]:
    """``pkey`` -> process id from (process_id, pkey) rows; refuses two ids with one key."""
    keys: dict[int, str] = {}
    for row in rows:
        clash = keys.get(row["pkey"])
        if clash is not None:
            raise LagInputError(
                f"{option}: process ids {clash} and {row['process_id']} share a 64-bit key"
            )
        keys[row["pkey"]] = row["process_id"]
    return keys


def _scan_process_keys(offsets: DataFrame) -> dict[int, str]:
    """The distinct process ids of the offset rows by their 64-bit ``xxhash64`` keys.

    One pass over the ``process_id`` column of the offset rows.

    Raises
    ------
    LagInputError
        When two process ids share a key (odds about n^2 / 2^65).
    """
    from pyspark.sql import functions as F

    rows = (
        offsets.select("process_id")
        .where(F.col("process_id").isNotNull())
        .distinct()
        .select("process_id", F.xxhash64("process_id").alias("pkey"))
        .collect()
    )
    return _keyed_process_ids(rows, "--offsets")


def _member_process_keys(spark: SparkSession, membership: Membership) -> dict[int, str]:
    """The members' process ids by their ``xxhash64`` keys (a tiny Spark job: Spark's hash).

    Raises
    ------
    LagInputError
        When two member process ids share a key.
    """
    from pyspark.sql import functions as F

    ids = sorted(membership.processes())
    if not ids:
        return {}
    rows = (
        spark.createDataFrame([(pid,) for pid in ids], "process_id string")
        .select("process_id", F.xxhash64("process_id").alias("pkey"))
        .collect()
    )
    return _keyed_process_ids(rows, "--members")


def _with_task(frame: DataFrame) -> DataFrame:
    """Add ``sub`` and ``part`` back to rows keyed by ``task_key``."""
    from pyspark.sql import functions as F

    return frame.select(
        "*",
        _task_sub(F.col("task_key")).alias("sub"),
        _task_part(F.col("task_key")).alias("part"),
    )


def _decode(frame: DataFrame, process_keys: DataFrame) -> DataFrame:
    """Add ``process_id``, ``sub`` and ``part`` back to rows keyed by ``pkey`` and ``task_key``."""
    from pyspark.sql import functions as F

    return _with_task(frame.join(F.broadcast(process_keys), "pkey", "left"))


#: Estimated bytes of one as-of interval row held in a broadcast hash relation (four longs, the
#: key and the row overhead; measured about 95 B in the driver's heap).
INTERVAL_ROW_BYTES = 96
#: Target bytes of input per shuffle partition (about a million offset rows of Parquet).
PARTITION_INPUT_BYTES = 8 * 1024 * 1024
#: Most shuffle partitions the job asks for (AQE coalesces small ones after each shuffle).
MAX_SHUFFLE_PARTITIONS = 4096
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
    conf = spark._jsparkSession.sessionState().conf()  # type: ignore[attr-defined]
    return int(conf.autoBroadcastJoinThreshold())


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
    if input_bytes >= 2**62:  # Spark's "unknown" (spark.sql.defaultSizeInBytes)
        return configured
    wanted = -(-max(0, input_bytes) // PARTITION_INPUT_BYTES)
    return max(configured, min(wanted, MAX_SHUFFLE_PARTITIONS))


def _as_of_join(
    snapshots: DataFrame,
    complete_ends: DataFrame,
    end_stats: list[Any],
    layout: TaskLayout,
    broadcast: bool,
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

    def bucket(time: Column) -> Column:
        clamped = F.least(F.greatest(time, F.lit(low)), F.lit(high))
        return F.floor((clamped - F.lit(low)) / F.lit(width)).cast("long")

    def join_key(task_key: Column, b: Column) -> Column:
        part = _task_part(task_key).cast("long")
        task = _task_sub(task_key).cast("long") * F.lit(parts) + part
        return F.when(part < F.lit(parts), task * F.lit(buckets) + b)

    by_task = Window.partitionBy("task_key").orderBy("time_key")
    intervals = complete_ends.select(
        "task_key",
        F.col("time_key").alias("end_offset_time"),
        F.col("offset_sum").alias("end_offset_sum"),
        F.lead("time_key").over(by_task).alias("until"),
    )
    last_ms = F.coalesce(F.col("until") - 1, F.lit(LONG_MAX))
    intervals = intervals.select(
        "*", F.explode(F.sequence(bucket(F.col("end_offset_time")), bucket(last_ms))).alias("b")
    )
    o = snapshots.withColumn("b", bucket(F.col("time_key")))
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


def _row_source(fallback: Column) -> Column:
    """Where an error row came from: its ``source`` column, else the file it was read from.

    ``input_file_name`` is evaluated only on error rows, so the scan of good rows stays lean.
    """
    from pyspark.sql import functions as F

    return F.coalesce(F.col("source"), F.nullif(F.input_file_name(), F.lit("")), fallback)


def _map_lookup(mapping: dict[Any, Any], key: Column) -> Column:
    from pyspark.sql import functions as F

    if not mapping:
        return F.lit(None)
    pairs = [F.lit(x) for item in sorted(mapping.items()) for x in item]
    return F.element_at(F.create_map(*pairs), key)


@dataclass
class LagJob:
    """The computed lags of one run: lazy DataFrames plus the small driver-side facts.

    Attributes
    ----------
    spark:
        The session.
    application_id:
        Kafka Streams' ``application.id``.
    layout:
        Stateful and stateless tasks and their changelogs.
    membership:
        The group's Kafka Streams members.
    actives:
        Process id -> tasks it runs as active now, as (sub-topology, partition).
    configs:
        Configs written into the cluster state (and ``acceptable_recovery_lag`` for the ETA).
    snapshots:
        Per (snapshot, process, task) offset sums with the as-of end offsets, keyed by ``pkey``
        (process id hash) and ``task_key`` (internal); cached when ``persist``.
    sums:
        The same offset sums before the as-of join (never cached): the cluster state reads them.
    end_sums:
        Per (moment, task) end offset sums with their completeness, keyed by ``task_key``;
        cached when ``persist``.
    offsets:
        The offset rows as read (for the exact scan of their process ids, when needed).
    row_errors:
        Error rows found by Spark in the offset and end-offset rows.
    python_errors:
        Error rows of the parsed text inputs and of the layout.
    rate_window:
        Snapshots spanned by the restore table's rates.
    persist:
        Whether ``snapshots`` and ``end_sums`` are cached.
    shuffle_partitions:
        ``spark.sql.shuffle.partitions`` the job chose from the input volume.
    broadcast_join:
        Whether the as-of join broadcasts its interval table.

    The decoded tables (:attr:`lags`, :attr:`restore`, :attr:`named`) are built on first use,
    after :attr:`process_keys`.
    """

    spark: SparkSession
    application_id: str
    layout: TaskLayout
    membership: Membership
    actives: dict[str, set[tuple[int, int]]]
    configs: LagConfigs
    snapshots: DataFrame
    sums: DataFrame
    end_sums: DataFrame
    offsets: DataFrame
    row_errors: DataFrame
    python_errors: list[ErrorRow]
    rate_window: int = 2
    persist: bool = True
    shuffle_partitions: int = 0
    broadcast_join: bool = False
    _replica_memo: dict[int | None, tuple[list[tuple[int, int, int]], dict[int, str]]] = field(
        default_factory=dict, repr=False
    )
    _member_key_memo: dict[int, str] | None = field(default=None, repr=False)

    @cached_property
    def process_keys(self) -> DataFrame:
        """``pkey`` -> ``process_id`` for every process of the offset rows (small DataFrame).

        With cached snapshots, the distinct keys are read from the cache (which this builds)
        and matched to the members' process ids; only when a key belongs to no member are the
        offset rows' ``process_id`` values scanned. Without the cache, they are scanned.

        Raises
        ------
        LagInputError
            When two process ids share a 64-bit key (odds about n^2 / 2^65).
        """

        keys: dict[int, str] | None = None
        if self.persist:
            members = _member_process_keys(self.spark, self.membership)
            seen = {r["pkey"] for r in self.snapshots.select("pkey").distinct().collect()}
            if seen <= members.keys():
                keys = {k: members[k] for k in seen}
        if keys is None:
            keys = _scan_process_keys(self.offsets)
        return self.spark.createDataFrame(sorted(keys.items()), "pkey long, process_id string")

    @cached_property
    def named(self) -> DataFrame:
        """:attr:`snapshots` with ``process_id``, ``sub`` and ``part`` decoded."""
        return _decode(self.snapshots, self.process_keys)

    @cached_property
    def lags(self) -> DataFrame:
        """The lag table (:data:`LAG_TABLE_COLUMNS`), one row per snapshot, process and task."""
        from pyspark.sql import functions as F

        task_id = F.concat_ws("_", F.col("sub").cast("string"), F.col("part").cast("string"))
        return self.named.select(
            F.when(F.col("time_key") != LONG_MAX, F.col("time_key")).alias("snapshot_time"),
            F.col("process_id"),
            task_id.alias("task_id"),
            F.col("sub").alias("subtopology"),
            F.col("part").alias("partition"),
            F.col("n_partitions").alias("changelog_partitions"),
            F.col("offset_sum"),
            F.when(F.col("end_offset_time") != LONG_MIN, F.col("end_offset_time")).alias(
                "end_offset_time"
            ),
            F.col("end_offset_sum"),
            kafka_lag(F.col("offset_sum"), F.col("end_offset_sum")).alias("lag"),
            records_behind(F.col("offset_sum"), F.col("end_offset_sum")).alias("records_behind"),
        )

    @cached_property
    def restore(self) -> DataFrame:
        """The restore table (:data:`RESTORE_TABLE_COLUMNS`), one row per process and task."""
        return _restore_table(
            self.snapshots,
            self.process_keys,
            self.configs.acceptable_recovery_lag,
            self.rate_window,
        )

    def errors(self) -> DataFrame:
        """The whole errors table.

        Returns
        -------
        pyspark.sql.DataFrame
            ``source``, ``line``, ``raw``, ``reason``: Python-side rows, then Spark-side rows.
        """
        return errors_dataframe(self.spark, self.python_errors).unionByName(self.row_errors)

    def error_summary(self) -> dict[str, int]:
        """Error rows per reason category (the text before the first colon).

        Returns
        -------
        dict
            Category -> number of rows, most frequent first (runs one Spark action).
        """
        from pyspark.sql import functions as F

        rows = (
            self.errors()
            .groupBy(F.substring_index("reason", ":", 1).alias("reason"))
            .count()
            .collect()
        )
        return dict(
            sorted(((r["reason"], r["count"]) for r in rows), key=lambda kv: (-kv[1], kv[0]))
        )

    def unpersist(self) -> None:
        """Release the cached snapshots and end offset sums."""
        self.snapshots.unpersist()
        self.end_sums.unpersist()

    def state_moment(self, at: int | None = None) -> int | None:
        """The moment a cluster state for ``at`` describes: its latest end-offset snapshot.

        Parameters
        ----------
        at:
            Epoch ms, or None for the latest.

        The group leader fetches end offsets *after* the members sent their subscriptions, so
        the cluster state pairs the latest complete end offsets at or before ``at`` with each
        process's latest snapshot at or before *their* time. Without timed end offsets (a
        ``kafka-get-offsets.sh`` file) the moment is ``at`` itself (None = the latest).

        Returns
        -------
        int or None
            Epoch ms, or None for "the latest snapshot of each process".
        """
        from pyspark.sql import functions as F

        ends = self.end_sums.filter(F.col("complete"))
        if at is not None:
            ends = ends.filter(F.col("time_key") <= at)
        latest = ends.agg(F.max("time_key").alias("t")).first()
        moment = latest["t"] if latest is not None else None
        if moment is None or moment == LONG_MIN:
            return at
        return int(moment)

    def cluster_state(self, at: int | None = None, native: bool = False) -> dict[str, Any]:
        """The cluster-state document as the group leader would see it at time ``at``.

        Parameters
        ----------
        at:
            Epoch milliseconds; None = the latest moment in the data. The end offset sum of each
            task is its latest complete one at or before ``at``; each process contributes its
            latest snapshot at or before that end-offset moment (:meth:`state_moment`);
            snapshots without a time always count, as "now".
        native:
            Write Kafka's raw numbers instead of lags: per client ``task_offset_sums`` (what the
            subscription carries) and the top-level ``changelog_end_offset_sums``; the core turns
            them into lags with the same ``computeTaskLags`` rule. Without it, per client
            ``task_lags``.

        Returns
        -------
        dict
            The cluster-state document (``scenario-format.md``): ``configs``, ``stateful_tasks``,
            ``stateless_tasks`` and one client per member process with ``id``, ``capacity``,
            ``prev_active``, ``prev_standby`` and ``task_lags`` (or ``task_offset_sums``), task
            ids in Kafka's TaskId order, clients in UUID order. A stateful task without any end
            offsets gets lag -3 (unknown) on clients with local state, and an error row.

        Notes
        -----
        Built from per-(process, task) aggregates of the offset sums (their latest snapshot at or
        before the moment), not from the cached per-snapshot table: the driver collects at most
        tasks x clients rows and the per-task end offset sums, whatever the number of snapshots.
        """
        cutoff = self.state_moment(at)
        replicas, names = self._replicas_at(cutoff)
        end_sums = {
            f"{r['sub']}_{r['part']}": r["end_offset_sum"] for r in self._end_sums_at(at).collect()
        }

        stateful = self.layout.stateful_tasks()
        stateless = self.layout.stateless_tasks()
        known_stateful = set(stateful)
        for task in stateful:
            if task not in end_sums:
                self.python_errors.append(
                    ErrorRow(
                        "end-offsets",
                        None,
                        task,
                        "no end offsets: no complete end offsets for this task; lag -3 (unknown)",
                    )
                )

        capacity = self.membership.capacity()
        stateful_subs = self.layout.stateful_subtopologies
        local: dict[str, dict[str, int]] = defaultdict(dict)
        for pkey, task_key, offset_sum in replicas:
            process_id = names[pkey]
            if process_id not in capacity:
                continue  # not a group member: listed by non_member_processes
            task = f"{task_key >> 32}_{task_key & 0xFFFF_FFFF}"
            if task not in known_stateful:
                self.python_errors.append(
                    ErrorRow(
                        "offsets",
                        None,
                        f"{process_id} {task}",
                        "unknown task: beyond the partitions of its changelogs",
                    )
                )
                continue
            local[process_id][task] = offset_sum

        clients = []
        for process_id in sorted(capacity, key=uuid_sort_key):
            reported = dict(local.get(process_id, {}))
            owned = {f"{s}_{p}" for s, p in self.actives.get(process_id, set())}
            # A running active reports Task.LATEST_OFFSET for its stateful tasks.
            for task in owned:
                if int(task.split("_")[0]) in stateful_subs:
                    reported[task] = LATEST_OFFSET
            # ClientState.initializePrevTasks: owned partitions first, then offset sums of -2.
            active = owned | {t for t, v in reported.items() if v == LATEST_OFFSET}
            standby = {t for t in reported if t not in active}
            client: dict[str, Any] = {
                "id": process_id,
                "capacity": capacity[process_id],
                "prev_active": sorted_task_ids(active),
                "prev_standby": sorted_task_ids(standby),
            }
            ordered = sorted_task_ids(reported)
            if native:
                client["task_offset_sums"] = {t: reported[t] for t in ordered if t in end_sums}
            else:
                client["task_lags"] = {t: _state_lag(reported[t], end_sums.get(t)) for t in ordered}
            clients.append(client)

        document: dict[str, Any] = {
            "name": self.application_id,
            "configs": self.configs.to_json(),
            "stateful_tasks": stateful,
            "stateless_tasks": stateless,
        }
        if native:
            document["changelog_end_offset_sums"] = {
                t: end_sums[t] for t in stateful if t in end_sums
            }
        document["clients"] = clients
        return document

    def non_member_processes(self, at: int | None = None) -> list[str]:
        """Processes with local state that are not group members (left out of the state).

        Parameters
        ----------
        at:
            Epoch ms, or None for the latest; as for :meth:`cluster_state`.

        Returns
        -------
        list of str
            Process ids, sorted.
        """
        replicas, names = self._replicas_at(self.state_moment(at))
        members = set(self.membership.processes())
        return sorted({names[pkey] for pkey, _task, _sum in replicas} - members)

    def _replicas_at(self, cutoff: int | None) -> tuple[list[tuple[int, int, int]], dict[int, str]]:
        """Each process's latest snapshot at or before ``cutoff``: (pkey, task_key, offset sum).

        One aggregation per (process, task) over the offset sums (latest time and the sum then),
        then a window per process keeps the tasks of its latest snapshot. Collects at most
        tasks x processes rows; memoised per cutoff. Also returns the process ids by key.
        """
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        memo = self._replica_memo.get(cutoff)
        if memo is not None:
            return memo
        sums = self.sums
        if cutoff is not None:
            sums = sums.filter((F.col("time_key") <= cutoff) | (F.col("time_key") == LONG_MAX))
        per_task = sums.groupBy("pkey", "task_key").agg(
            F.max("time_key").alias("t"), F.max_by("offset_sum", "time_key").alias("offset_sum")
        )
        latest = F.max("t").over(Window.partitionBy("pkey"))
        rows = (
            per_task.select("*", latest.alias("latest"))
            .filter(F.col("t") == F.col("latest"))
            .select("pkey", "task_key", "offset_sum")
            .collect()
        )
        replicas = [(int(r["pkey"]), int(r["task_key"]), int(r["offset_sum"])) for r in rows]
        members = self._member_keys()
        seen = {pkey for pkey, _task, _sum in replicas}
        names = members if seen <= members.keys() else _scan_process_keys(self.offsets)
        result = (replicas, names)
        self._replica_memo[cutoff] = result
        return result

    def _member_keys(self) -> dict[int, str]:
        if self._member_key_memo is None:
            self._member_key_memo = _member_process_keys(self.spark, self.membership)
        return self._member_key_memo

    def _end_sums_at(self, at: int | None) -> DataFrame:
        from pyspark.sql import functions as F

        ends = self.end_sums.filter(F.col("complete"))
        if at is not None:
            ends = ends.filter(F.col("time_key") <= at)
        return (
            _with_task(ends)
            .groupBy("sub", "part")
            .agg(
                F.max_by("offset_sum", "time_key").alias("end_offset_sum"),
                F.max("time_key").alias("end_offset_time"),
            )
        )


def _state_lag(reported: int, end_offset_sum: int | None) -> int:
    """The lag a cluster state carries: Kafka's rule, -3 when the end offset sum is unknown."""
    if reported in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
        return reported
    if end_offset_sum is None:
        return UNKNOWN_OFFSET_SUM
    return compute_task_lag(reported, end_offset_sum)


def compute_lags(
    spark: SparkSession,
    *,
    application_id: str,
    topology: Topology,
    membership: Membership,
    offsets: DataFrame,
    end_offsets: DataFrame,
    configs: LagConfigs | None = None,
    rate_window: int = 2,
    errors: Sequence[ErrorRow] = (),
    end_source: str = "end-offsets",
    persist: bool = True,
    broadcast_end_offsets: bool | None = None,
) -> LagJob:
    """Build the lag job over offset rows and end-offset rows.

    Parameters
    ----------
    spark:
        The session.
    application_id:
        Kafka Streams' ``application.id``.
    topology:
        From :func:`lag.topology.parse_topology`.
    membership:
        From :func:`lag.members.parse_members`; must hold at least one Streams member.
    offsets:
        Offset rows (``lag.readers.OFFSETS_SCHEMA``): checkpointed changelog offsets per process,
        any number of snapshots.
    end_offsets:
        End-offset rows (``lag.readers.END_OFFSETS_SCHEMA``), one moment or a history.
    configs:
        Assignment configs; ``acceptable_recovery_lag`` also sets the restore table's target.
    rate_window:
        Snapshots spanned by the catch-up rate (2 = the last two consecutive snapshots).
    errors:
        Error rows already found while parsing the inputs (kept in the errors table).
    end_source:
        Name of the end-offsets input for error rows.
    persist:
        Cache the per-snapshot aggregates (the lag table, the restore table and the cluster
        state all read them). Without it, each output recomputes them from the inputs, and the
        restore table does so ``rate_window`` times.
    broadcast_end_offsets:
        Broadcast the as-of join's interval table (True), shuffle both sides (False), or decide
        from its estimated bytes against ``spark.sql.autoBroadcastJoinThreshold`` (None).

    Returns
    -------
    LagJob
        Lazy DataFrames. Two small Spark actions have run: the partition counts of the end
        offsets and the distinct process ids of the offset rows.

    Raises
    ------
    LagInputError
        When the membership has no Kafka Streams member, or no changelog of the topology has
        end offsets.
    ValueError
        When ``rate_window`` < 2.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    if rate_window < 2:
        raise ValueError(f"rate_window must be >= 2 snapshots, got {rate_window}")
    if not membership.members:
        raise LagInputError(
            f"--members: no Kafka Streams member of application {application_id!r} "
            f"({len(membership.errors)} line(s) in the errors table)"
        )
    configs = configs or LagConfigs()
    python_errors = list(errors)

    end_stats = (
        end_offsets.filter(F.col("partition") >= 0)
        .groupBy("topic")
        .agg(
            (F.max("partition") + 1).alias("n"),
            F.count("*").alias("rows"),
            F.min("snapshot_time").alias("first"),
            F.max("snapshot_time").alias("last"),
        )
        .collect()
    )
    partition_counts = {r["topic"]: r["n"] for r in end_stats}
    layout, layout_errors = plan_tasks(
        topology, application_id, partition_counts, membership, end_source
    )
    python_errors.extend(layout_errors)
    actives, active_errors = previous_active_tasks(membership, topology, application_id, layout)
    python_errors.extend(active_errors)

    changelog_sub = {topic: sub for topic, (sub, _store) in layout.changelogs.items()}
    stateful_subs = sorted(layout.stateful_subtopologies)

    # --- sizing: partitions by input volume, broadcast only what fits Spark's threshold ------
    configured = int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
    partitions = shuffle_partitions_for(plan_size_bytes(offsets), configured)
    if partitions != configured:
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    if broadcast_end_offsets is None:
        threshold = broadcast_threshold(spark)
        broadcast_end_offsets = 0 <= estimated_interval_bytes(end_stats, layout) <= threshold

    # --- offset rows: validate, map to tasks -----------------------------------------------
    is_marker = F.col("topic").isNull()  # an empty checkpoint: local state, offset sum 0
    task_part = "try_cast(regexp_extract(task_id, '^([0-9]+)_([0-9]+)$', {}) AS INT)"
    o = offsets.withColumn(
        "sub",
        F.when(is_marker, F.expr(task_part.format(1))).otherwise(
            _map_lookup(changelog_sub, F.col("topic"))
        ),
    ).withColumn(
        "part", F.when(is_marker, F.expr(task_part.format(2))).otherwise(F.col("partition"))
    )
    unknown_marker_task = F.col("sub").isNull()
    if stateful_subs:
        unknown_marker_task = unknown_marker_task | ~F.col("sub").isin(stateful_subs)
    derived_task = F.concat_ws("_", F.col("sub").cast("string"), F.col("partition").cast("string"))
    reason = (
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
    o = o.withColumn("reason", reason)
    raw_offsets = F.coalesce(
        F.col("raw"),
        F.to_json(
            F.struct("process_id", "topic", "partition", "offset", "task_id", "snapshot_time")
        ),
    )
    offset_errors = o.filter(F.col("reason").isNotNull()).select(
        _row_source(F.lit("offsets")).alias("source"),
        F.col("line"),
        raw_offsets.alias("raw"),
        F.col("reason"),
    )
    good_offsets = o.filter(F.col("reason").isNull()).select(
        F.coalesce(F.col("snapshot_time"), F.lit(LONG_MAX)).alias("time_key"),
        F.xxhash64("process_id").alias("pkey"),
        _task_key(F.col("sub"), F.col("part")).alias("task_key"),
        F.col("offset"),
    )

    # --- end-offset rows: validate, keep changelog partitions -----------------------------
    source_topics = sorted(layout.source_topics)
    e = end_offsets.withColumn("sub", _map_lookup(changelog_sub, F.col("topic")))
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
        _row_source(F.lit(end_source)).alias("source"),
        F.col("line"),
        F.coalesce(
            F.col("raw"), F.to_json(F.struct("topic", "partition", "offset", "snapshot_time"))
        ).alias("raw"),
        F.col("reason"),
    )
    good_ends = e.filter(F.col("reason").isNull() & F.col("sub").isNotNull()).select(
        F.coalesce(F.col("snapshot_time"), F.lit(LONG_MIN)).alias("time_key"),
        _task_key(F.col("sub"), F.col("partition")).alias("task_key"),
        F.col("offset"),
    )

    # --- per-snapshot sums ------------------------------------------------------------------
    # Rows are summed per (snapshot, process, task) before they cross the shuffle (Spark's
    # partial aggregation), with compact keys: the process id as its 64-bit xxhash, the task as
    # sub-topology << 32 | partition; both are decoded at the end.
    def sums(rows: DataFrame, keys: list[str]) -> DataFrame:
        return rows.groupBy(*keys).agg(
            F.max(F.col("offset") == LATEST_OFFSET).alias("has_latest"),
            F.try_sum(F.greatest(F.col("offset"), F.lit(0))).alias("raw_sum"),
            F.count("offset").alias("n_partitions"),
        )

    offset_sums = sums(good_offsets, ["time_key", "pkey", "task_key"])
    end_sums = sums(good_ends, ["time_key", "task_key"])
    expected = _map_lookup(layout.expected_changelogs(), _task_sub(F.col("task_key")))
    end_sums = end_sums.select(
        "time_key",
        "task_key",
        "n_partitions",
        _pinned_sum(F.col("has_latest"), F.col("raw_sum")).alias("offset_sum"),
        (F.col("n_partitions") == expected).alias("complete"),
    )
    if persist:
        end_sums = end_sums.persist(StorageLevel.MEMORY_AND_DISK)

    # --- as-of join: the latest complete end offsets at or before each snapshot ------------
    snapshots = offset_sums.select(
        "time_key",
        "pkey",
        "task_key",
        "n_partitions",
        _pinned_sum(F.col("has_latest"), F.col("raw_sum")).alias("offset_sum"),
    )
    sums = snapshots
    snapshots = _as_of_join(
        snapshots, end_sums.filter(F.col("complete")), end_stats, layout, broadcast_end_offsets
    )
    if persist:
        snapshots = snapshots.persist(StorageLevel.MEMORY_AND_DISK)

    incomplete_errors = end_sums.filter(~F.col("complete")).select(
        F.lit(end_source).alias("source"),
        F.lit(None).cast("long").alias("line"),
        F.concat(
            F.lit("task "),
            _task_sub(F.col("task_key")).cast("string"),
            F.lit("_"),
            _task_part(F.col("task_key")).cast("string"),
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

    return LagJob(
        spark=spark,
        application_id=application_id,
        layout=layout,
        membership=membership,
        actives=actives,
        configs=configs,
        snapshots=snapshots,
        sums=sums,
        end_sums=end_sums,
        offsets=offsets,
        row_errors=offset_errors.unionByName(end_errors).unionByName(incomplete_errors),
        python_errors=python_errors,
        rate_window=rate_window,
        persist=persist,
        shuffle_partitions=partitions,
        broadcast_join=broadcast_end_offsets,
    )


def _restore_table(
    snapshots: DataFrame, process_keys: DataFrame, acceptable_recovery_lag: int, rate_window: int
) -> DataFrame:
    """Per (process, task): where the replica stands, how fast it catches up, and when it will be.

    Rates are measured on ``records_behind`` (see :func:`records_behind`) between the snapshot
    ``rate_window - 1`` steps back (or the first one) and the latest: ``catch_up_rate`` is how
    fast it shrank, ``restore_rate`` how fast the offset sum grew, both in records/s.
    ``eta_ms`` is 0 when the replica is within ``acceptable.recovery.lag`` (always, when that is
    ``Long.MAX_VALUE``), ``ceil((records_behind - acceptable) / catch_up_rate)`` seconds in ms
    when it is catching up, and null when it is not. Snapshots with an unknown offset sum or
    end offset sum are left out.
    """
    from pyspark.sql import functions as F

    offset_sum, end_sum = F.col("offset_sum"), F.col("end_offset_sum")
    rows = snapshots.select(
        "pkey",
        "task_key",
        "time_key",
        "offset_sum",
        "end_offset_sum",
        kafka_lag(offset_sum, end_sum).alias("lag"),
        records_behind(offset_sum, end_sum).alias("behind"),
    ).filter(F.col("behind").isNotNull())
    keys = ["pkey", "task_key"]
    latest = rows.groupBy(*keys).agg(
        F.count("*").alias("snapshots"),
        F.min("time_key").alias("first_time"),
        F.min_by("behind", "time_key").alias("first_behind"),
        F.min_by("offset_sum", "time_key").alias("first_offset_sum"),
        F.max("time_key").alias("time_key"),
        *(
            F.max_by(c, "time_key").alias(c)
            for c in ("offset_sum", "end_offset_sum", "lag", "behind")
        ),
    )
    # The rate starts rate_window - 1 snapshots before the latest (or at the first): step back
    # one snapshot per pass, each a hash aggregation over the rows before the current point
    # (scalar max_by, not a struct, keeps it a hash aggregation instead of a sort).
    point = latest.select(*keys, F.col("time_key").alias("prev_time"))
    for _ in range(rate_window - 1):
        point = (
            rows.join(F.broadcast(point.select(*keys, "prev_time")), keys)
            .filter(F.col("time_key") < F.col("prev_time"))
            .groupBy(*keys)
            .agg(
                F.max("time_key").alias("prev_time"),
                F.max_by("behind", "time_key").alias("prev_behind"),
                F.max_by("offset_sum", "time_key").alias("prev_offset_sum"),
            )
        )
    latest = latest.join(point, keys, "left").select(
        *keys,
        "snapshots",
        "first_time",
        "time_key",
        "offset_sum",
        "end_offset_sum",
        "lag",
        "behind",
        F.coalesce("prev_time", "first_time").alias("prev_time"),
        F.coalesce("prev_behind", "first_behind").alias("prev_behind"),
        F.coalesce("prev_offset_sum", "first_offset_sum").alias("prev_offset_sum"),
    )
    timed = (F.col("time_key") != LONG_MAX) & (F.col("prev_time") != LONG_MAX)
    elapsed_ms = F.when(
        timed & (F.col("time_key") > F.col("prev_time")), F.col("time_key") - F.col("prev_time")
    )
    catch_up = (F.col("prev_behind") - F.col("behind")).cast("double") * 1000.0 / elapsed_ms
    restoring = F.when(
        (F.col("offset_sum") >= 0) & (F.col("prev_offset_sum") >= 0),
        F.col("offset_sum") - F.col("prev_offset_sum"),
    )
    restore_rate = restoring.cast("double") * 1000.0 / elapsed_ms
    unbounded = acceptable_recovery_lag == LONG_MAX
    target = 0 if unbounded else acceptable_recovery_lag
    caught_up = F.lit(True) if unbounded else F.col("behind") <= F.lit(target)
    to_go = (F.col("behind") - F.lit(target)).cast("double")
    eta = (
        F.when(caught_up, F.lit(0))
        .when(catch_up > 0, F.ceil(to_go * 1000.0 / catch_up))
        .cast("long")
    )
    snapshot_time = F.when(F.col("time_key") != LONG_MAX, F.col("time_key"))
    return _decode(latest, process_keys).select(
        "process_id",
        F.concat_ws("_", F.col("sub").cast("string"), F.col("part").cast("string")).alias(
            "task_id"
        ),
        F.col("sub").alias("subtopology"),
        F.col("part").alias("partition"),
        "snapshots",
        F.when(F.col("first_time") != LONG_MAX, F.col("first_time")).alias("first_snapshot_time"),
        F.when(timed, F.col("prev_time")).alias("rate_from_time"),
        snapshot_time.alias("snapshot_time"),
        F.col("offset_sum").alias("offset_sum"),
        F.col("end_offset_sum").alias("end_offset_sum"),
        F.col("lag").alias("lag"),
        F.col("behind").alias("records_behind"),
        catch_up.alias("catch_up_rate"),
        restore_rate.alias("restore_rate"),
        caught_up.alias("caught_up"),
        eta.alias("eta_ms"),
        (snapshot_time + eta).alias("caught_up_at"),
    )
