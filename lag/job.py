"""The Spark lag job: offset rows and end offsets in, lags, restore rates and cluster state out.

The job follows what a Kafka Streams group leader computes at a rebalance, per (process, task):
the offset sum the process reports, the end offset sum of every stateful task, and the lag by
``ClientState.computeTaskLags``. With histories (rows carrying ``snapshot_time``) the lag is
computed for every snapshot, each matched to the end offsets of the same or the latest earlier
moment (an as-of join), and the restore table turns consecutive snapshots into catch-up rates
and the time until each replica is caught up.

The stages live in their own modules, in the order they run:

- :mod:`lag.layout`: tasks, stateful sub-topologies and running actives (plain Python);
- :mod:`lag.keys`: compact row keys (process id hash, ``sub << 32 | partition``) and decoding;
- :mod:`lag.sums`: validation of the rows and offset sums per (moment, process, task);
- :mod:`lag.asof`: the as-of join and the sizing that bounds the driver's memory;
- :mod:`lag.merge`: the merge as-of join (the default when the intervals are not broadcast);
- :mod:`lag.restore`: the restore table;
- :mod:`lag.state`: the cluster state from per-(process, task) aggregates.

This module ties them together (:func:`compute_lags`) and holds the result (:class:`LagJob`).
The per-snapshot result is cached once for the lag table and the restore table, unless the
restore table is read back from the written lag table (``cache_snapshots=False``,
:meth:`LagJob.restore_from`); the cluster state does not wait for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from lag.asof import (
    ADVISORY_PARTITION_BYTES,
    advisory_partition_bytes,
    as_of_join,
    broadcast_limit,
    estimated_interval_bytes,
    files_max_partition_bytes,
    input_split_bytes,
    moment_as_of_join,
    plan_size_bytes,
    shuffle_partitions_for,
)
from lag.error_rows import ErrorRow
from lag.kafka import LONG_MAX
from lag.keys import LONG_MIN, decode, member_process_keys, scan_process_keys
from lag.layout import TaskLayout, configs_json, plan_tasks, previous_active_tasks
from lag.members import Membership
from lag.merge import (
    enable_sort_aggregate,
    merge_as_of_join,
    merge_partitions_for,
    raise_arrow_batch_rows,
)
from lag.readers import errors_dataframe
from lag.restore import RESTORE_TABLE_COLUMNS, restore_from_lags, restore_table
from lag.sums import (
    check_end_rows,
    check_offset_rows,
    end_offset_sums,
    incomplete_errors,
    kafka_lag,
    records_behind,
    snapshot_sums,
)
from lag.topology import Topology
from streams_assign.errors import LagInputError
from streams_assign.model import AssignmentConfigs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "LAG_PLAIN_COLUMNS",
    "LAG_TABLE_COLUMNS",
    "LONG_MIN",
    "RESTORE_TABLE_COLUMNS",
    "LagJob",
    "compute_lags",
    "configs_json",
]

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
        Whether ``end_sums`` are cached, and ``snapshots`` too when ``cache_snapshots``.
    cache_snapshots:
        Whether ``snapshots`` is cached (with ``persist``); without it the restore table is read
        back from the written lag table (:meth:`restore_from`).
    shuffle_partitions:
        ``spark.sql.shuffle.partitions`` the job chose from the input volume.
    broadcast_join:
        Whether the as-of join broadcasts its interval table.
    split_bytes:
        ``spark.sql.files.maxPartitionBytes`` the job chose (bytes of input per scan task).
    moment_join:
        Whether the as-of join is the equi-join on (task, end-offset moment)
        (:func:`lag.asof.moment_as_of_join`).
    fallback_tasks:
        With ``moment_join``: tasks whose rows unmatched at their moment go through the interval
        join (complete at fewer end-offset moments than exist).
    merge_join:
        Whether the as-of join is the sorted merge per task (:func:`lag.merge.merge_as_of_join`),
        the plan when the intervals are not broadcast and neither ``moment_join`` nor
        ``interval_join`` was asked.

    The decoded tables (:attr:`lags`, :attr:`restore`, :attr:`named`) are built on first use,
    after :attr:`process_keys`.
    """

    spark: SparkSession
    application_id: str
    layout: TaskLayout
    membership: Membership
    actives: dict[str, set[tuple[int, int]]]
    configs: AssignmentConfigs
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
    split_bytes: int = 0
    moment_join: bool = False
    fallback_tasks: int = 0
    merge_join: bool = False
    cache_snapshots: bool = True
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
        if self.persist and self.cache_snapshots:
            members = member_process_keys(self.spark, self.membership)
            seen = {r["pkey"] for r in self.snapshots.select("pkey").distinct().collect()}
            if seen <= members.keys():
                keys = {k: members[k] for k in seen}
        if keys is None:
            keys = scan_process_keys(self.offsets)
        return self.spark.createDataFrame(sorted(keys.items()), "pkey long, process_id string")

    @cached_property
    def named(self) -> DataFrame:
        """:attr:`snapshots` with ``process_id``, ``sub`` and ``part`` decoded."""
        return decode(self.snapshots, self.process_keys)

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
        return restore_table(
            self.snapshots,
            self.process_keys,
            self.configs.acceptable_recovery_lag,
            self.rate_window,
        )

    def restore_from(self, lags_path: str) -> DataFrame:
        """The restore table read back from the lag table written at ``lags_path`` (Parquet).

        The same table as :attr:`restore` (:func:`lag.restore.restore_from_lags`), without the
        per-snapshot rows: the job built without ``cache_snapshots`` writes the lag table
        straight from the as-of join and reads only the columns the restore table needs.

        Parameters
        ----------
        lags_path:
            Where :attr:`lags` was written as Parquet (a file or a folder of part files).

        Returns
        -------
        pyspark.sql.DataFrame
            :data:`RESTORE_TABLE_COLUMNS`, one row per process and task.
        """
        lags = self.spark.read.parquet(lags_path)
        return restore_from_lags(lags, self.configs.acceptable_recovery_lag, self.rate_window)

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
        """The moment a cluster state for ``at`` (epoch ms, None = latest) describes; see
        :func:`lag.state.state_moment`."""
        from lag.state import state_moment

        return state_moment(self, at)

    def cluster_state(self, at: int | None = None, native: bool = False) -> dict[str, Any]:
        """The cluster-state document at ``at`` (epoch ms, None = latest); ``native`` writes
        offset sums instead of lags. See :func:`lag.state.cluster_state`."""
        from lag.state import cluster_state

        return cluster_state(self, at, native)

    def non_member_processes(self, at: int | None = None) -> list[str]:
        """Process ids with local state that are not group members, sorted; see
        :func:`lag.state.non_member_processes`."""
        from lag.state import non_member_processes

        return non_member_processes(self, at)


def compute_lags(
    spark: SparkSession,
    *,
    application_id: str,
    topology: Topology,
    membership: Membership,
    offsets: DataFrame,
    end_offsets: DataFrame,
    configs: AssignmentConfigs | None = None,
    rate_window: int = 2,
    errors: Sequence[ErrorRow] = (),
    end_source: str = "end-offsets",
    persist: bool = True,
    broadcast_end_offsets: bool | None = None,
    moment_join: bool = False,
    cache_snapshots: bool = True,
    interval_join: bool = False,
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
        from its estimated bytes against :func:`lag.asof.broadcast_limit` (None: Spark's
        threshold or an eighth of the driver's heap, whichever is larger).
    moment_join:
        When the intervals are not broadcast: join on (task, end-offset moment) with the interval
        join only for the rows that leave unmatched (:func:`lag.asof.moment_as_of_join`, when its
        moments fit the broadcast limit). False by default: measured at 100 M offset rows, the
        moment join cost 8-15 % more CPU on the wide fleets (``docs/lag.md``). The tables are the
        same for every plan.
    cache_snapshots:
        With ``persist``, also cache the per-snapshot rows for the restore table (True). False
        when the restore table is to be read back from the written lag table
        (:meth:`LagJob.restore_from`): the lag table is then written straight from the join,
        and the 50 M per-snapshot rows of a 100 M-row history are never encoded into a cache.
    interval_join:
        When the intervals are not broadcast (and no moment join runs): shuffle the interval
        table and join on (task, time bucket) (:func:`lag.asof.as_of_join`, the fifth pass's
        plan) instead of the default merge: the offset and end-offset rows shuffled once by task
        (partitions sized by both inputs, :func:`lag.merge.merge_partitions_for`), sorted,
        summed in that order, and the latest complete end offsets carried forward in Arrow
        batches (:func:`lag.merge.merge_as_of_join`: about a quarter less CPU at 10 M offset rows
        on the wide fleets, ``docs/lag.md``, seventh pass; the sum is a sort aggregation since
        the ninth pass, :func:`lag.merge.enable_sort_aggregate`, which sets two SQL confs of the
        session). The merge needs PySpark's Python workers with pyarrow and numpy.

    Returns
    -------
    LagJob
        Lazy DataFrames. One small Spark action has run (the end offsets' partition counts,
        rows and time span per topic), and with the moment join two more over the complete
        end-offset sums (the moments' count and span, the complete moments per task).

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
    configs = configs or AssignmentConfigs()
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

    # Sizing: partitions by input volume, broadcast only what fits Spark's threshold.
    configured = int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
    offset_bytes = plan_size_bytes(offsets)
    partitions = shuffle_partitions_for(offset_bytes, configured)
    if partitions != configured:
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    # Scan tasks of about a million rows: their partial aggregation then fits without spilling.
    configured_split = files_max_partition_bytes(spark)
    split = input_split_bytes(configured_split)
    if split != configured_split:
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(split))
    # ... and so do the final aggregations after AQE coalesced the shuffle partitions.
    if advisory_partition_bytes(spark) > ADVISORY_PARTITION_BYTES:
        spark.conf.set(
            "spark.sql.adaptive.advisoryPartitionSizeInBytes", str(ADVISORY_PARTITION_BYTES)
        )
    if broadcast_end_offsets is None:
        limit = broadcast_limit(spark)
        broadcast_end_offsets = 0 <= estimated_interval_bytes(end_stats, layout) <= limit

    good_offsets, offset_errors = check_offset_rows(offsets, layout)
    good_ends, end_errors = check_end_rows(end_offsets, layout, end_source)
    end_sums = end_offset_sums(good_ends, layout)
    if persist:
        end_sums = end_sums.persist(StorageLevel.MEMORY_AND_DISK)
    sums = snapshot_sums(good_offsets)
    complete_ends = end_sums.filter(F.col("complete"))
    by_moment = None
    if not broadcast_end_offsets and moment_join:
        by_moment = moment_as_of_join(
            sums, complete_ends, end_stats, layout, broadcast_limit(spark)
        )
    merged = False
    fallback_tasks = 0
    if by_moment is not None:
        snapshots, fallback_tasks = by_moment
    elif broadcast_end_offsets or interval_join:
        snapshots = as_of_join(sums, complete_ends, end_stats, layout, broadcast_end_offsets)
    else:
        raise_arrow_batch_rows(spark)
        merged = True
        starts = [r["first"] for r in end_stats if r["topic"] in layout.changelogs]
        origin = min((t for t in starts if t is not None), default=None)
        enable_sort_aggregate(spark)
        # The merge's shuffle carries the end-offset rows too: size it by both inputs.
        # (An unknown size on either side makes the sum unknown too.)
        merge_parts = merge_partitions_for(offset_bytes + plan_size_bytes(end_offsets), partitions)
        snapshots = merge_as_of_join(good_offsets, good_ends, layout, origin, merge_parts)
    if persist and cache_snapshots:
        snapshots = snapshots.persist(StorageLevel.MEMORY_AND_DISK)

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
        row_errors=offset_errors.unionByName(end_errors).unionByName(
            incomplete_errors(end_sums, layout, end_source)
        ),
        python_errors=python_errors,
        rate_window=rate_window,
        persist=persist,
        shuffle_partitions=partitions,
        broadcast_join=broadcast_end_offsets,
        split_bytes=split,
        moment_join=by_moment is not None,
        merge_join=merged,
        fallback_tasks=fallback_tasks,
        cache_snapshots=cache_snapshots,
    )
