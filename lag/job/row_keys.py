"""Compact keys of the lag job's rows, and small column helpers.

Rows travel through the shuffles with two longs instead of strings: the process id as its 64-bit
``xxhash64`` (``pkey``) and the task as ``sub-topology << 32 | partition`` (``task_key``); both
are decoded by broadcast joins at the end (:func:`decode`). The process ids come from the
members when every key is a member's, else from one scan of the offset rows' ``process_id``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lag.sources.members import Membership
from streams_assign.errors import LagInputError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: Smallest Java long: the time key of end offsets without a time (they apply to every snapshot).
LONG_MIN = -(2**63)


def encode_task(sub: Column, part: Column) -> Column:
    """One long per task: ``sub-topology << 32 | partition`` (both are non-negative ints)."""
    from pyspark.sql import functions as F

    return F.shiftleft(sub.cast("long"), 32).bitwiseOR(part.cast("long"))


def task_sub(task_key: Column) -> Column:
    from pyspark.sql import functions as F

    return F.shiftright(task_key, 32).cast("int")


def task_part(task_key: Column) -> Column:
    return task_key.bitwiseAND(0xFFFF_FFFF).cast("int")


def keyed_process_ids(rows: list[Any], option: str) -> dict[int, str]:
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


def scan_process_keys(offsets: DataFrame) -> dict[int, str]:
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
    return keyed_process_ids(rows, "--offsets")


def member_process_keys(spark: SparkSession, membership: Membership) -> dict[int, str]:
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
    return keyed_process_ids(rows, "--members")


def with_task(frame: DataFrame) -> DataFrame:
    """Add ``sub`` and ``part`` back to rows keyed by ``task_key``."""
    from pyspark.sql import functions as F

    return frame.select(
        "*",
        task_sub(F.col("task_key")).alias("sub"),
        task_part(F.col("task_key")).alias("part"),
    )


def decode(frame: DataFrame, process_keys: DataFrame) -> DataFrame:
    """Add ``process_id``, ``sub`` and ``part`` back to rows keyed by ``pkey`` and ``task_key``."""
    from pyspark.sql import functions as F

    return with_task(frame.join(F.broadcast(process_keys), "pkey", "left"))


def row_source(fallback: Column) -> Column:
    """Where an error row came from: its ``source`` column, else the file it was read from.

    ``input_file_name`` is evaluated only on error rows, so the scan of good rows stays lean.
    """
    from pyspark.sql import functions as F

    return F.coalesce(F.col("source"), F.nullif(F.input_file_name(), F.lit("")), fallback)


def map_lookup(mapping: dict[Any, Any], key: Column) -> Column:
    from pyspark.sql import functions as F

    if not mapping:
        return F.lit(None)
    pairs = [F.lit(x) for item in sorted(mapping.items()) for x in item]
    return F.element_at(F.create_map(*pairs), key)
