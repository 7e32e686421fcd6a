"""The restore table: per (process, task), where the replica stands, how fast it catches up, and
when it will be caught up (``acceptable.recovery.lag``), from the per-snapshot rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lag.job.offset_sums import kafka_lag, records_behind
from lag.job.row_keys import decode
from lag.kafka_rules import LONG_MAX

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

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


def restore_table(
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

    Parameters
    ----------
    snapshots:
        Per-snapshot rows keyed by ``pkey`` and ``task_key`` with ``time_key``, ``offset_sum``
        and ``end_offset_sum`` (:attr:`lag.job.job.LagJob.snapshots`).
    process_keys:
        ``pkey`` -> ``process_id``.
    acceptable_recovery_lag:
        ``acceptable.recovery.lag`` (records).
    rate_window:
        Snapshots spanned by the rates (>= 2).

    Returns
    -------
    pyspark.sql.DataFrame
        :data:`RESTORE_TABLE_COLUMNS`, one row per (process, task).
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
    )
    latest = _latest_and_rates(rows, ["pkey", "task_key"], rate_window)
    return _restore_columns(decode(latest, process_keys), acceptable_recovery_lag)


def restore_table_from_lags(
    lags: DataFrame, acceptable_recovery_lag: int, rate_window: int
) -> DataFrame:
    """The restore table from the lag table's rows, as :func:`restore_table` computes it from the
    per-snapshot rows.

    The lag table carries every column the restore table needs (``snapshot_time``, null for a
    timeless snapshot, ``offset_sum``, ``end_offset_sum``, ``lag``, ``records_behind``) with the
    process id and task decoded, so the job reads the restore table from the lag table it has
    just written (a scan of seven Parquet columns) instead of caching the per-snapshot rows
    (:meth:`lag.job.job.LagJob.restore_after`).

    Parameters
    ----------
    lags:
        Lag-table rows (:data:`lag.job.job.LAG_TABLE_COLUMNS`), for instance read back from the
        Parquet the job wrote.
    acceptable_recovery_lag:
        ``acceptable.recovery.lag`` (records).
    rate_window:
        Snapshots spanned by the rates (>= 2).

    Returns
    -------
    pyspark.sql.DataFrame
        :data:`RESTORE_TABLE_COLUMNS`, one row per (process, task): the same rows as
        :func:`restore_table` on the snapshots the lag table was made from.
    """
    from pyspark.sql import functions as F

    rows = lags.select(
        "process_id",
        F.col("subtopology").alias("sub"),
        F.col("partition").alias("part"),
        F.coalesce(F.col("snapshot_time"), F.lit(LONG_MAX)).alias("time_key"),
        "offset_sum",
        "end_offset_sum",
        "lag",
        F.col("records_behind").alias("behind"),
    )
    latest = _latest_and_rates(rows, ["process_id", "sub", "part"], rate_window)
    return _restore_columns(latest, acceptable_recovery_lag)


def _latest_and_rates(rows: DataFrame, keys: list[str], rate_window: int) -> DataFrame:
    """Per ``keys``: count, first and latest snapshot, and the point ``rate_window - 1`` back."""
    from pyspark.sql import functions as F

    rows = rows.filter(F.col("behind").isNotNull())
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
    return latest.join(point, keys, "left").select(
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


def _restore_columns(latest: DataFrame, acceptable_recovery_lag: int) -> DataFrame:
    """The restore table's columns from :func:`_latest_and_rates` with ``process_id``, ``sub``
    and ``part``."""
    from pyspark.sql import functions as F

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
    return latest.select(
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
