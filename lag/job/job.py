"""The Spark lag job: offset rows and end offsets in, lags, restore rates and cluster state out.

The job follows what a Kafka Streams group leader computes at a rebalance, per (process, task):
the offset sum the process reports, the end offset sum of every stateful task, and the lag by
``ClientState.computeTaskLags``. With histories (rows carrying ``snapshot_time``) the lag is
computed for every snapshot, each matched to the end offsets of the same or the latest earlier
moment (an as-of join), and the restore table turns consecutive snapshots into catch-up rates
and the time until each replica is caught up.

:func:`compute_lags` runs the stages in this order, each in its own module:

- :mod:`lag.job.layout`: tasks, stateful sub-topologies and running actives (plain Python);
- :mod:`lag.spark.sizing`: shuffle partitions and scan splits sized for the input;
- :mod:`lag.job.offset_sums`: validation of the rows and offset sums per (moment, process, task),
  over the compact keys of :mod:`lag.job.row_keys`;
- :mod:`lag.job.asof_join`: the as-of join, a merge of both inputs per task;

and :class:`LagJob` holds the result, from which :mod:`lag.job.restore` builds the restore table
and :mod:`lag.job.cluster_state` the cluster state. The per-snapshot result is cached once for
the lag table and the restore table; the cluster state does not wait for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from lag.error_rows import ErrorRow
from lag.job.asof_join import join_end_offsets
from lag.job.cluster_state import ClusterStateBuilder
from lag.job.layout import TaskLayout, plan_tasks, previous_active_tasks
from lag.job.offset_sums import (
    check_end_rows,
    check_offset_rows,
    end_offset_sums,
    incomplete_errors,
    kafka_lag,
    records_behind,
    snapshot_sums,
)
from lag.job.restore import restore_table, restore_table_from_lags
from lag.job.row_keys import LONG_MIN, decode, member_process_keys, scan_process_keys
from lag.kafka_rules import LONG_MAX
from lag.sources.members import Membership
from lag.sources.topology import Topology
from lag.spark.readers import errors_dataframe
from lag.spark.sizing import size_session
from streams_assign.errors import LagInputError
from streams_assign.model import AssignmentConfigs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "LAG_PLAIN_COLUMNS",
    "LAG_TABLE_COLUMNS",
    "LagJob",
    "compute_lags",
    "reads_restore_from_lags",
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
        Whether ``end_sums`` and ``snapshots`` are cached.
    shuffle_partitions:
        ``spark.sql.shuffle.partitions`` the job chose from the input volume.
    split_bytes:
        ``spark.sql.files.maxPartitionBytes`` the job chose (bytes of input per scan task).

    The decoded tables (:attr:`lags`, :attr:`restore`, :attr:`named`) are built on first use,
    after :attr:`process_keys`; the cluster state comes from :attr:`state`.
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
    split_bytes: int = 0

    @cached_property
    def process_keys(self) -> DataFrame:
        """``pkey`` -> ``process_id`` for every process of the offset rows (small DataFrame).

        With cached snapshots, the distinct keys are read from the cache (which this builds)
        and matched to the members' process ids; only when a key belongs to no member are the
        offset rows' ``process_id`` values scanned. Without ``persist``, they are scanned.

        Raises
        ------
        LagInputError
            When two process ids share a 64-bit key (odds about n^2 / 2^65).
        """

        keys: dict[int, str] | None = None
        if self.persist:
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
        """The restore table (:data:`lag.job.restore.RESTORE_TABLE_COLUMNS`), per replica."""
        return restore_table(
            self.snapshots,
            self.process_keys,
            self.configs.acceptable_recovery_lag,
            self.rate_window,
        )

    def restore_after(self, lags_table: str | None) -> DataFrame:
        """The restore table, read back from the lag table written at ``lags_table`` when it is
        Parquet (:func:`reads_restore_from_lags`), else :attr:`restore`.

        The read-back is the plan when the job writes both tables: the lag table is then
        computed once, straight from the merge, and the restore table scans seven of its
        Parquet columns (:func:`lag.job.restore.restore_table_from_lags`), where the cached
        plan encodes every per-snapshot row into Spark's columnar cache and reads it twice.

        Parameters
        ----------
        lags_table:
            Where :attr:`lags` was written (a folder, one ``.parquet`` file or a remote path),
            or None when it was not.

        Returns
        -------
        pyspark.sql.DataFrame
            :data:`lag.job.restore.RESTORE_TABLE_COLUMNS`, the same rows either way.
        """
        if lags_table is None or not reads_restore_from_lags(lags_table, "restore"):
            return self.restore
        written = self.spark.read.schema(self.lags.schema).parquet(lags_table)
        return restore_table_from_lags(
            written, self.configs.acceptable_recovery_lag, self.rate_window
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

    @cached_property
    def state(self) -> ClusterStateBuilder:
        """The cluster-state builder over this job's sums (it appends to :attr:`python_errors`)."""
        return ClusterStateBuilder(
            spark=self.spark,
            application_id=self.application_id,
            layout=self.layout,
            membership=self.membership,
            actives=self.actives,
            configs=self.configs,
            sums=self.sums,
            end_sums=self.end_sums,
            offsets=self.offsets,
            python_errors=self.python_errors,
        )

    def state_moment(self, at: int | None = None) -> int | None:
        """The moment a cluster state for ``at`` (epoch ms, None = latest) describes; see
        :meth:`lag.job.cluster_state.ClusterStateBuilder.state_moment`."""
        return self.state.state_moment(at)

    def cluster_state(self, at: int | None = None) -> dict[str, Any]:
        """The cluster-state document at ``at`` (epoch ms, None = latest), with the end offset
        sums Kafka's leader uses; see
        :meth:`lag.job.cluster_state.ClusterStateBuilder.cluster_state`."""
        return self.state.cluster_state(at)

    def non_member_processes(self, at: int | None = None) -> list[str]:
        """Process ids with local state that are not group members, sorted; see
        :meth:`lag.job.cluster_state.ClusterStateBuilder.non_member_processes`."""
        return self.state.non_member_processes(at)


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
) -> LagJob:
    """Build the lag job over offset rows and end-offset rows.

    Parameters
    ----------
    spark:
        The session; :func:`lag.spark.sizing.size_session` sizes its shuffles and scans, and
        :func:`lag.job.asof_join.join_end_offsets` sets its SQL conf for the merge.
    application_id:
        Kafka Streams' ``application.id``.
    topology:
        From :func:`lag.sources.topology.parse_topology`.
    membership:
        From :func:`lag.sources.members.parse_members`; must hold at least one Streams member.
    offsets:
        Offset rows (``lag.spark.readers.OFFSETS_SCHEMA``): checkpointed changelog offsets per
        process, any number of snapshots.
    end_offsets:
        End-offset rows (``lag.spark.readers.END_OFFSETS_SCHEMA``), one moment or a history.
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

    Returns
    -------
    LagJob
        Lazy DataFrames. One small Spark action has run (the end offsets' partition counts,
        rows and time span per topic).

    Raises
    ------
    LagInputError
        When the membership has no Kafka Streams member, or no changelog of the topology has
        end offsets.
    ValueError
        When ``rate_window`` < 2.
    """
    from pyspark import StorageLevel

    check_job_arguments(application_id, membership, rate_window)
    python_errors = list(errors)
    end_stats = end_offset_stats(end_offsets)
    partition_counts = {r["topic"]: r["n"] for r in end_stats}
    layout, layout_errors = plan_tasks(
        topology, application_id, partition_counts, membership, end_source
    )
    python_errors.extend(layout_errors)
    actives, active_errors = previous_active_tasks(membership, topology, application_id, layout)
    python_errors.extend(active_errors)
    sizing = size_session(spark, offsets)

    good_offsets, offset_errors = check_offset_rows(offsets, layout)
    good_ends, end_errors = check_end_rows(end_offsets, layout, end_source)
    end_sums = end_offset_sums(good_ends, layout)
    if persist:
        end_sums = end_sums.persist(StorageLevel.MEMORY_AND_DISK)
    snapshots = join_end_offsets(
        spark,
        good_offsets=good_offsets,
        good_ends=good_ends,
        end_offsets=end_offsets,
        end_stats=end_stats,
        layout=layout,
        sizing=sizing,
    )
    if persist:
        snapshots = snapshots.persist(StorageLevel.MEMORY_AND_DISK)
    row_errors = offset_errors.unionByName(end_errors).unionByName(
        incomplete_errors(end_sums, layout, end_source)
    )
    return LagJob(
        spark=spark,
        application_id=application_id,
        layout=layout,
        membership=membership,
        actives=actives,
        configs=configs or AssignmentConfigs(),
        snapshots=snapshots,
        sums=snapshot_sums(good_offsets),
        end_sums=end_sums,
        offsets=offsets,
        row_errors=row_errors,
        python_errors=python_errors,
        rate_window=rate_window,
        persist=persist,
        shuffle_partitions=sizing.shuffle_partitions,
        split_bytes=sizing.split_bytes,
    )


def reads_restore_from_lags(lags_table: str | None, restore_table: str | None) -> bool:
    """Whether the restore table is read back from the lag table (the job's plan when it writes
    both and the lag table is Parquet, :meth:`LagJob.restore_after`); the per-snapshot rows are
    then not cached.

    Parameters
    ----------
    lags_table, restore_table:
        The requested outputs' paths (None = not written).

    Returns
    -------
    bool
        True when both are given and ``lags_table``'s format is Parquet
        (:func:`lag.outputs.tables.table_format`).
    """
    from lag.outputs.tables import table_format

    return bool(lags_table and restore_table) and table_format(str(lags_table)) == "parquet"


def check_job_arguments(application_id: str, membership: Membership, rate_window: int) -> None:
    """Refuse a job that cannot run: no Kafka Streams member, or a rate window under 2.

    Raises
    ------
    LagInputError
        When the membership has no Kafka Streams member.
    ValueError
        When ``rate_window`` < 2.
    """
    if rate_window < 2:
        raise ValueError(f"rate_window must be >= 2 snapshots, got {rate_window}")
    if not membership.members:
        raise LagInputError(
            f"--members: no Kafka Streams member of application {application_id!r} "
            f"({len(membership.errors)} line(s) in the errors table)"
        )


def end_offset_stats(end_offsets: DataFrame) -> list[Any]:
    """Per end-offset topic: partitions, rows and time span (one small Spark action).

    Parameters
    ----------
    end_offsets:
        End-offset rows (``lag.spark.readers.END_OFFSETS_SCHEMA``).

    Returns
    -------
    list of pyspark.sql.Row
        ``topic``, ``n`` (largest partition + 1), ``rows``, ``first`` and ``last`` snapshot time.
    """
    from pyspark.sql import functions as F

    return (
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
