"""Spark sizing rules of the lag job: shuffle partitions, scan splits and Arrow batches.

Shuffle partitions follow the input volume (:func:`shuffle_partitions_for`,
:func:`merge_partitions_for`), not the core count; scan tasks read about a million rows
(:func:`input_split_bytes`). The job applies these rules to its session in
:func:`lag.job.job.compute_lags`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

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


def _sql_conf(spark: SparkSession) -> Any:
    """The session's JVM ``SQLConf``, whose getters parse sizes as Spark itself does."""
    return spark._jsparkSession.sessionState().conf()  # type: ignore[attr-defined]


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


#: Rows per Arrow batch the merge as-of join asks for (Spark's default is 10,000): measured 6 %
#: less CPU at 10 M offset rows (the batches' fixed costs in the JVM and the Python worker).
ARROW_BATCH_ROWS = 100_000


def raise_arrow_batch_rows(spark: SparkSession) -> int:
    """Raise ``spark.sql.execution.arrow.maxRecordsPerBatch`` to :data:`ARROW_BATCH_ROWS`.

    Never lowers what the session set higher. One batch of the merge as-of join holds seven
    long columns: 5.6 MB at 100,000 rows.

    Parameters
    ----------
    spark:
        The session whose SQL conf is read and set.

    Returns
    -------
    int
        Rows per Arrow batch now in effect.
    """
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    current = int(spark.conf.get(key) or "10000")
    if 0 < current < ARROW_BATCH_ROWS:
        spark.conf.set(key, str(ARROW_BATCH_ROWS))
        return ARROW_BATCH_ROWS
    return current


#: Target bytes of input (offset and end-offset files together) per partition of the merge's
#: shuffle: about 270,000 stacked rows, whose sort fits a task's share of a 1 GB driver (at 8 MB,
#: sized from the offset files alone, the 100 M many-snapshot history spilled).
MERGE_PARTITION_INPUT_BYTES = 4 * 1024 * 1024


def merge_partitions_for(stacked_bytes: int, configured: int) -> int | None:
    """Partitions of the merge's shuffle for ``stacked_bytes`` of offset and end-offset files.

    Parameters
    ----------
    stacked_bytes:
        Estimated bytes of the offset rows plus the end-offset rows (Spark's plan statistics,
        :func:`plan_size_bytes`); at least :data:`UNKNOWN_SIZE_BYTES` means unknown.
    configured:
        ``spark.sql.shuffle.partitions`` as the job set it (a floor).

    Returns
    -------
    int or None
        ``max(configured, ceil(stacked_bytes / MERGE_PARTITION_INPUT_BYTES))``, at most
        :data:`lag.spark.sizing.MAX_SHUFFLE_PARTITIONS`;
        None when the size is unknown (the shuffle then takes ``spark.sql.shuffle.partitions``).
    """
    if stacked_bytes >= UNKNOWN_SIZE_BYTES:
        return None
    wanted = -(-max(0, stacked_bytes) // MERGE_PARTITION_INPUT_BYTES)
    return max(configured, min(wanted, MAX_SHUFFLE_PARTITIONS))


def local_input_bytes(paths: list[str]) -> int | None:
    """Bytes of the local files at ``paths`` (files, or folders summed recursively).

    Parameters
    ----------
    paths:
        Input paths as given (``file://`` allowed).

    Returns
    -------
    int or None
        The total, or None when a path is remote (``hdfs://``, ``s3a://``) or missing.
    """
    from pathlib import Path

    total = 0
    for path in paths:
        if "://" in path and not path.startswith("file://"):
            return None
        local = Path(path.removeprefix("file://"))
        if local.is_file():
            total += local.stat().st_size
        elif local.is_dir():
            total += sum(f.stat().st_size for f in local.rglob("*") if f.is_file())
        else:
            return None
    return total


@dataclass(frozen=True)
class JobSizing:
    """What :func:`size_session` set on the session for one job.

    Attributes
    ----------
    shuffle_partitions:
        ``spark.sql.shuffle.partitions`` now in effect.
    split_bytes:
        ``spark.sql.files.maxPartitionBytes`` now in effect (bytes of input per scan task).
    offset_bytes:
        Spark's estimate of the offset rows' size (:func:`plan_size_bytes`).
    """

    shuffle_partitions: int
    split_bytes: int
    offset_bytes: int


def size_session(spark: SparkSession, offsets: DataFrame) -> JobSizing:
    """Size the session's shuffles and scans for ``offsets``: partitions by input volume.

    Raises ``spark.sql.shuffle.partitions`` by :func:`shuffle_partitions_for`, lowers
    ``spark.sql.files.maxPartitionBytes`` to :func:`input_split_bytes` (scan tasks of about a
    million rows, whose partial aggregation then fits without spilling) and AQE's
    ``spark.sql.adaptive.advisoryPartitionSizeInBytes`` to :data:`ADVISORY_PARTITION_BYTES` (so
    do the final aggregations after AQE coalesced the shuffle partitions); never against what
    the session set.

    Parameters
    ----------
    spark:
        The session whose SQL conf is read and set.
    offsets:
        The offset rows (their plan's size estimate; no Spark job runs).

    Returns
    -------
    JobSizing
    """
    configured = int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
    offset_bytes = plan_size_bytes(offsets)
    partitions = shuffle_partitions_for(offset_bytes, configured)
    if partitions != configured:
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    configured_split = files_max_partition_bytes(spark)
    split = input_split_bytes(configured_split)
    if split != configured_split:
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(split))
    if advisory_partition_bytes(spark) > ADVISORY_PARTITION_BYTES:
        spark.conf.set(
            "spark.sql.adaptive.advisoryPartitionSizeInBytes", str(ADVISORY_PARTITION_BYTES)
        )
    return JobSizing(partitions, split, offset_bytes)
