"""Readers that turn the lag job's inputs into Spark DataFrames with one fixed schema each.

Offset rows (local state) and end-offset rows can come from files of any size (Parquet or JSON
Lines, a file or a folder of part files, local or on a cluster file system), from the checkpoint
walker of :mod:`lag.sources.checkpoints`, or, for end offsets, from ``kafka-get-offsets.sh``
text. Whatever the origin, the job sees:

- offsets: ``process_id string, topic string, partition int, offset long, task_id string,
  snapshot_time long, source string, line long``;
- end offsets: ``topic string, partition int, offset long, snapshot_time long, source string,
  line long``.

``snapshot_time`` is epoch milliseconds (a Spark timestamp column is converted); ``source`` and
``line`` say where a row came from, for the errors table (the job falls back to the file the row
was read from when ``source`` is null); ``raw`` keeps the text of a JSON line Spark could not
parse (all other columns are then null, and the job files the row as an error).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lag.error_rows import ErrorRow
from lag.sources.get_offsets import parse_get_offsets
from streams_assign.errors import LagInputError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

OFFSETS_SCHEMA = (
    "process_id string, topic string, partition int, offset long, task_id string, "
    "snapshot_time long, source string, line long, raw string"
)
END_OFFSETS_SCHEMA = (
    "topic string, partition int, offset long, snapshot_time long, source string, line long, "
    "raw string"
)
ERRORS_SCHEMA = "source string, line long, raw string, reason string"

_ROW_FORMATS = {".parquet": "parquet", ".jsonl": "json", ".ndjson": "json", ".json": "json"}


def input_format(path: str) -> str:
    """How a row or text input is read, from the path's suffix.

    Parameters
    ----------
    path:
        A local or remote path.

    Returns
    -------
    str
        ``parquet`` (``.parquet``, or a local folder: Spark's part-file layout), ``json`` (JSON
        Lines: ``.jsonl``, ``.ndjson``, ``.json``) or ``text`` (anything else).
    """
    suffix = Path(path.rstrip("/")).suffix.lower()
    if suffix in _ROW_FORMATS:
        return _ROW_FORMATS[suffix]
    if _is_local(path) and Path(path).is_dir():
        return "parquet"
    return "text"


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def _local_path(path: str) -> Path:
    return Path(path[len("file://") :] if path.startswith("file://") else path)


def spark_error_line(exc: BaseException) -> str:
    """The one line of a Spark (or Py4J-wrapped Java) error that says what went wrong.

    Parameters
    ----------
    exc:
        The exception raised by a Spark call.

    Returns
    -------
    str
        The first line carrying a Spark error class (``[FAILED_READ_FILE...] ...``), else the
        deepest ``Caused by:`` line, else the first line of the message.
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for line in lines:
        match = re.search(r"\[[A-Z][A-Z0-9_.]+\].*", line)
        if match:
            return match.group(0)
    causes = [line for line in lines if line.startswith("Caused by:")]
    if causes:
        return causes[-1].removeprefix("Caused by:").strip()
    return lines[0] if lines else type(exc).__name__


def require_exists(option: str, path: str) -> None:
    """Fail fast when a local input path does not exist.

    Parameters
    ----------
    option:
        The CLI option, for the message.
    path:
        The path; remote ones (``hdfs://``, ``s3a://``) are left to Spark, which checks them
        when reading.

    Raises
    ------
    LagInputError
        When a local path does not exist.
    """
    if _is_local(path) and not _local_path(path).exists():
        raise LagInputError(f"{option} {path}: no such file or directory")


def _read_rows(
    spark: SparkSession, option: str, path: str, schema: str, required: Sequence[str]
) -> DataFrame:
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType, TimestampNTZType, TimestampType

    require_exists(option, path)
    fmt = input_format(path)
    target = StructType.fromDDL(schema)
    assert isinstance(target, StructType)
    try:
        if fmt == "json":
            frame = spark.read.schema(target).option("columnNameOfCorruptRecord", "raw").json(path)
        else:
            frame = spark.read.parquet(path)
    except AnalysisException as exc:
        raise LagInputError(
            f"{option} {path}: unreadable as {fmt}: {spark_error_line(exc)}"
        ) from None
    except Exception as exc:
        if not type(exc).__module__.startswith(("pyspark", "py4j")):
            raise
        raise LagInputError(
            f"{option} {path}: unreadable as {fmt}: {spark_error_line(exc)}"
        ) from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise LagInputError(f"{option} {path}: missing column(s) {', '.join(missing)}")
    _check_column_types(option, path, frame)
    columns = []
    for field in target.fields:
        name = field.name
        if name in frame.columns:
            column = F.col(f"`{name}`")
            given = frame.schema[name].dataType
            if name == "snapshot_time" and isinstance(given, TimestampType | TimestampNTZType):
                column = F.unix_millis(column.cast("timestamp"))
            elif given != field.dataType:
                # try_cast: a value that does not fit becomes null and the row an error row,
                # where a plain cast would fail the whole job under ANSI mode.
                column = F.expr(f"try_cast(`{name}` AS {field.dataType.simpleString()})")
            columns.append(column.alias(name))
        else:
            columns.append(F.lit(None).cast(field.dataType).alias(name))
    return frame.select(*columns)


#: Column types a row input may give for each numeric column: numbers (cast), strings (parsed;
#: a value that does not parse is an error row) and, for ``snapshot_time``, timestamps.
_NUMERIC_COLUMNS = ("partition", "offset", "snapshot_time", "line")


def _check_column_types(option: str, path: str, frame: DataFrame) -> None:
    """Refuse a row input whose numeric column has a type no value of which could be read.

    Raises
    ------
    LagInputError
        Naming the option, the path, the column and its type (a binary ``offset`` column, a
        struct ``partition``, ...), instead of Spark's cast error in the middle of the job.
    """
    from pyspark.sql.types import (
        DecimalType,
        IntegralType,
        StringType,
        TimestampNTZType,
        TimestampType,
    )

    readable: tuple[type, ...] = (IntegralType, DecimalType, StringType)
    for name in _NUMERIC_COLUMNS:
        if name not in frame.columns:
            continue
        given = frame.schema[name].dataType
        allowed = readable + ((TimestampType, TimestampNTZType) if name == "snapshot_time" else ())
        if not isinstance(given, allowed):
            raise LagInputError(
                f"{option} {path}: column {name!r} has type {given.simpleString()}, "
                "expected an integer (or its decimal text)"
            )
    for name in ("process_id", "topic", "task_id"):
        if name in frame.columns and not isinstance(frame.schema[name].dataType, StringType):
            raise LagInputError(
                f"{option} {path}: column {name!r} has type "
                f"{frame.schema[name].dataType.simpleString()}, expected a string"
            )


def read_offset_rows(
    spark: SparkSession, paths: Sequence[str], option: str = "--offsets"
) -> DataFrame:
    """Read offset rows (Parquet or JSON Lines) into the offsets schema.

    Parameters
    ----------
    spark:
        The session.
    paths:
        Files or folders; each read separately and unioned (schemas may differ in optional
        columns).
    option:
        The CLI option the paths came from, for error messages.

    Returns
    -------
    pyspark.sql.DataFrame
        ``OFFSETS_SCHEMA``; lazily read.

    Raises
    ------
    LagInputError
        When a path does not exist, cannot be read, or lacks one of ``process_id``, ``topic``,
        ``partition``, ``offset``.
    """
    if not paths:
        raise LagInputError(f"{option}: no path given")
    frames = [
        _read_rows(
            spark, option, path, OFFSETS_SCHEMA, ("process_id", "topic", "partition", "offset")
        )
        for path in paths
    ]
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def offset_rows_dataframe(spark: SparkSession, rows: Sequence[dict[str, Any]]) -> DataFrame:
    """Offset rows held in memory as a DataFrame.

    The rows come from :func:`lag.sources.checkpoints.collect_state_dirs`.

    Parameters
    ----------
    spark:
        The session.
    rows:
        Dicts with the offset-row columns (missing keys are null).

    Returns
    -------
    pyspark.sql.DataFrame
        ``OFFSETS_SCHEMA``, one row per dict.
    """
    names = [part.split()[0] for part in OFFSETS_SCHEMA.split(", ")]
    return spark.createDataFrame([tuple(row.get(n) for n in names) for row in rows], OFFSETS_SCHEMA)


def read_end_offsets(
    spark: SparkSession, paths: Sequence[str], option: str = "--end-offsets"
) -> tuple[DataFrame, list[ErrorRow]]:
    """Read changelog end offsets: ``kafka-get-offsets.sh`` text, or rows with a history.

    Parameters
    ----------
    spark:
        The session.
    paths:
        Text files (``topic:partition:offset`` lines, one moment, ``snapshot_time`` null), or
        Parquet / JSON Lines rows with ``topic``, ``partition``, ``offset`` and optionally
        ``snapshot_time`` (epoch ms).
    option:
        The CLI option the paths came from, for error messages.

    Returns
    -------
    frame : pyspark.sql.DataFrame
        ``END_OFFSETS_SCHEMA``.
    errors : list of ErrorRow
        Malformed text lines (row inputs are checked by the job itself).

    Raises
    ------
    LagInputError
        When a path does not exist or cannot be read, or a text file has no usable line.
    """
    if not paths:
        raise LagInputError(f"{option}: no path given")
    frames = []
    errors: list[ErrorRow] = []
    for path in paths:
        if input_format(path) != "text":
            frames.append(
                _read_rows(
                    spark, option, path, END_OFFSETS_SCHEMA, ("topic", "partition", "offset")
                )
            )
            continue
        require_exists(option, path)
        try:
            text = _local_path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LagInputError(f"{option} {path}: unreadable: {exc}") from None
        parsed, bad = parse_get_offsets(text, source=path)
        errors.extend(bad)
        if not parsed:
            raise LagInputError(
                f"{option} {path}: no topic:partition:offset line ({len(bad)} malformed)"
            )
        frames.append(
            spark.createDataFrame(
                [(e.topic, e.partition, e.offset, None, path, e.line, None) for e in parsed],
                END_OFFSETS_SCHEMA,
            )
        )
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result, errors


def errors_dataframe(spark: SparkSession, rows: Sequence[ErrorRow]) -> DataFrame:
    """Error rows as a DataFrame.

    Parameters
    ----------
    spark:
        The session.
    rows:
        Error rows found in Python (text inputs, checkpoints, layout).

    Returns
    -------
    pyspark.sql.DataFrame
        ``ERRORS_SCHEMA``: ``source``, ``line``, ``raw``, ``reason``.
    """
    return spark.createDataFrame([row.as_tuple() for row in rows], ERRORS_SCHEMA)
