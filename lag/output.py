"""Whole-or-nothing table outputs of the lag jobs.

Spark writes a table as a folder of part files. To never leave half a table at the destination,
the folder is written beside it under a hidden temporary name (Spark and Hive readers skip names
starting with ``.``) and renamed into place once Spark has committed it; a table already at the
destination is swapped out and removed only after the new one is in place. Remote destinations
(``hdfs://``, ``s3a://``) are written with Spark's own committer in overwrite mode.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_FORMATS = {".jsonl": "json", ".json": "json", ".ndjson": "json", ".csv": "csv"}


def table_format(path: str) -> str:
    """The table format of an output path.

    Parameters
    ----------
    path:
        Destination folder.

    Returns
    -------
    str
        ``json`` (JSON Lines) for ``.jsonl``/``.json``/``.ndjson``, ``csv`` for ``.csv``, else
        ``parquet``.
    """
    return _FORMATS.get(Path(path.rstrip("/")).suffix.lower(), "parquet")


def write_table(
    frame: DataFrame,
    path: str,
    single_file: bool = False,
    plain_columns: Sequence[str] = (),
) -> None:
    """Write a DataFrame as a table folder at ``path``, whole or not at all.

    Parameters
    ----------
    frame:
        The table to write.
    path:
        Destination folder; its format follows the suffix (see :func:`table_format`).
    single_file:
        Coalesce to one part file (for small tables meant to be opened by hand).
    plain_columns:
        Parquet columns written without dictionary encoding: for columns of mostly distinct
        values (times, offsets), where trying a dictionary per row group only costs time
        (about a fifth of the lag table's write time; the files stay the same size).

    Raises
    ------
    OSError
        When the destination's parent folder does not exist or is not writable.
    pyspark.errors.PySparkException
        When Spark fails; the destination is then unchanged.
    """
    fmt = table_format(path)
    data = frame.coalesce(1) if single_file else frame
    writer = data.write.mode("overwrite").format(fmt)
    if fmt == "csv":
        writer = writer.option("header", "true")
    if fmt == "parquet":
        for column in plain_columns:
            writer = writer.option(f"parquet.enable.dictionary#{column}", "false")
    if "://" in path and not path.startswith("file://"):
        writer.save(path)
        return
    target = Path(path[len("file://") :] if path.startswith("file://") else path).absolute()
    if not target.parent.is_dir():
        raise OSError(f"{target.parent}: no such directory")
    temporary = target.parent / f".{target.name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        writer.save(str(temporary))
        _swap_into_place(temporary, target)
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)


def _swap_into_place(new: Path, target: Path) -> None:
    if not target.exists():
        new.rename(target)
        return
    old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
    target.rename(old)
    try:
        new.rename(target)
    except OSError:
        old.rename(target)
        raise
    if old.is_dir():
        shutil.rmtree(old, ignore_errors=True)
    else:
        old.unlink(missing_ok=True)
