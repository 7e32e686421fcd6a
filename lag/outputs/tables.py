"""Whole-or-nothing table outputs of the lag jobs.

A local path ending in ``.parquet``, ``.csv`` or ``.jsonl`` (``.json``, ``.ndjson``) gets ONE file
of that format, what a user opens by hand; a path ending in ``/``, a path without one of those
suffixes, an existing folder, and every remote path (``hdfs://``, ``s3a://``) get Spark's folder
of part files, which many executors write side by side.

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


def wants_one_file(path: str) -> bool:
    """Whether ``path`` names one file (local, a table suffix, not a folder) or a folder.

    Parameters
    ----------
    path:
        The destination as given.

    Returns
    -------
    bool
        True for a local path ending in ``.parquet``, ``.csv``, ``.jsonl``, ``.json`` or
        ``.ndjson`` that is not an existing folder and does not end in ``/``.
    """
    if path.endswith("/") or ("://" in path and not path.startswith("file://")):
        return False
    local = Path(path[len("file://") :] if path.startswith("file://") else path)
    suffix = local.suffix.lower()
    return (suffix == ".parquet" or suffix in _FORMATS) and not local.is_dir()


def write_table(
    frame: DataFrame,
    path: str,
    single_file: bool = False,
    plain_columns: Sequence[str] = (),
) -> None:
    """Write a DataFrame at ``path`` as one file or a folder of part files, whole or not at all.

    Parameters
    ----------
    frame:
        The table to write.
    path:
        Destination; its format follows the suffix (see :func:`table_format`), and it is one
        file when :func:`wants_one_file` says so (the rows then pass one writer task after a
        shuffle, so the work before it stays parallel), else a folder.
    single_file:
        Coalesce a folder output to one part file (for small tables).
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
    one_file = wants_one_file(path)
    if one_file:
        data = frame.repartition(1)
    elif single_file:
        data = frame.coalesce(1)
    else:
        data = frame
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
    single = target.parent / f"{temporary.name}.part"
    try:
        writer.save(str(temporary))
        if one_file:
            _single_part(temporary, fmt, frame.columns).rename(single)
            _swap_into_place(single, target)
        else:
            _swap_into_place(temporary, target)
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
        single.unlink(missing_ok=True)


def _single_part(folder: Path, fmt: str, columns: Sequence[str]) -> Path:
    """The one part file Spark wrote into ``folder`` (an empty one made when it wrote none)."""
    parts = sorted(p for p in folder.iterdir() if p.name.startswith("part-"))
    if len(parts) > 1:
        raise OSError(f"{folder}: {len(parts)} part files where one was asked for")
    if parts:
        return parts[0]
    empty = folder / "part-empty"
    if fmt == "csv":
        empty.write_text(",".join(columns) + "\n")
    else:
        empty.write_text("")
    return empty


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
