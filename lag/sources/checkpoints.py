"""Walk Kafka Streams state directories and turn their checkpoint files into offset rows.

Layout (Kafka Streams <= 4.2, ``StateDirectory``)::

    <state.dir>/<application.id>/kafka-streams-process-metadata   {"processId":"<uuid>"}
    <state.dir>/<application.id>/<task id>/.checkpoint             OffsetCheckpoint, version 0

Kafka Streams 4.3+ keeps the offsets of RocksDB stores inside them (KIP-1035) and writes no
``.checkpoint`` for them: a task folder without one is read by :mod:`lag.sources.rocksdb_stores`.

Spark's file sources skip names starting with ``.`` or ``_``, so the Spark job never reads the
checkpoint files itself: this module reads them in plain Python (they are tiny, one per task and
instance) and writes *offset rows*, the same table any exporter can produce (see docs/lag.md):

==============  ========  ==========================================================
column          type      meaning
==============  ========  ==========================================================
process_id      string    Kafka Streams process id (UUID)
topic           string    changelog topic (null on a marker row, see below)
partition       int       changelog partition
offset          long      checkpointed offset, records; -4 = unknown (kept, not summed)
task_id         string    the task directory the checkpoint was found in
snapshot_time   long      epoch ms of the collection (null = "now")
source          string    the checkpoint file
line            long      1-based line of the entry in the checkpoint file
==============  ========  ==========================================================

A checkpoint with no entries still means "local state with offset sum 0" to Kafka
(``TaskManager.getTaskOffsetSums`` reports the empty sum), so it is written as one *marker row*
with null topic, partition and offset and its task_id.
"""

from __future__ import annotations

import io
import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lag.error_rows import ErrorRow
from lag.kafka_rules import parse_task_id
from lag.sources.checkpoint_file import CHECKPOINT_FILE, read_checkpoint
from lag.sources.rocksdb_stores import read_task_stores
from streams_assign.errors import LagInputError

PROCESS_METADATA_FILE = "kafka-streams-process-metadata"
#: Columns of an offset-rows table, in order (``source`` and ``line`` are optional extras).
OFFSET_ROW_COLUMNS = (
    "process_id",
    "topic",
    "partition",
    "offset",
    "task_id",
    "snapshot_time",
    "source",
    "line",
)


@dataclass(slots=True)
class CollectResult:
    """Offset rows and error rows of a collection.

    Attributes
    ----------
    rows:
        Dicts with the keys of :data:`OFFSET_ROW_COLUMNS`.
    errors:
        Files and lines not used.
    processes:
        Process id per application directory read.
    """

    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[ErrorRow] = field(default_factory=list)
    processes: dict[str, str] = field(default_factory=dict)


def read_process_id(app_dir: Path) -> str:
    """The process id in ``kafka-streams-process-metadata`` (written by ``StateDirectory``).

    Parameters
    ----------
    app_dir:
        ``<state.dir>/<application.id>``.

    Returns
    -------
    str
        The UUID in canonical lower case.

    Raises
    ------
    ValueError
        When the file is missing, is not JSON, or holds no valid ``processId`` UUID.
    """
    path = app_dir / PROCESS_METADATA_FILE
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no {PROCESS_METADATA_FILE} (Kafka Streams writes it at start)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"unreadable {PROCESS_METADATA_FILE}: {exc}") from None
    process = document.get("processId") if isinstance(document, dict) else None
    try:
        return str(uuid.UUID(str(process)))
    except ValueError:
        raise ValueError(f"{PROCESS_METADATA_FILE} holds no processId UUID: {process!r}") from None


def application_dir(state_dir: Path, application_id: str | None) -> Path:
    """The ``<state.dir>/<application.id>`` folder for a path given as either of the two.

    Parameters
    ----------
    state_dir:
        A ``state.dir``, or an application folder.
    application_id:
        The application's folder name; optional when the ``state.dir`` holds one application.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    LagInputError
        When the path does not exist, or holds no application folder (naming the choices).
    """
    if not state_dir.is_dir():
        raise LagInputError(f"--state-dirs {state_dir}: no such directory")
    if (state_dir / PROCESS_METADATA_FILE).exists():
        return state_dir
    if application_id is not None:
        if (state_dir / application_id).is_dir():
            return state_dir / application_id
        if state_dir.name == application_id:
            return state_dir  # the application folder itself, its metadata file missing
        raise LagInputError(
            f"--state-dirs {state_dir}: no folder for application {application_id!r}"
        )
    candidates = [p for p in state_dir.iterdir() if (p / PROCESS_METADATA_FILE).exists()]
    if len(candidates) != 1:
        raise LagInputError(
            f"--state-dirs {state_dir}: {len(candidates)} application folders; "
            "give --application-id"
        )
    return candidates[0]


def check_process_ids(
    state_dirs: Sequence[str | os.PathLike[str]], application_id: str | None = None
) -> dict[str, str]:
    """The process id of each instance folder, refusing one id in two folders (no checkpoints read).

    Parameters
    ----------
    state_dirs:
        As for :func:`collect_state_dirs`.
    application_id:
        As for :func:`collect_state_dirs`.

    Returns
    -------
    dict
        Application folder -> process id, for the folders whose process id could be read.

    Raises
    ------
    LagInputError
        When a path does not exist or holds no application folder, or two folders hold the
        same process id (``kafka-streams-process-metadata`` copied from one instance to
        another: their offsets would be summed as one instance's).
    """
    seen: dict[str, str] = {}
    for given in state_dirs:
        app_dir = application_dir(Path(given), application_id)
        try:
            process_id = read_process_id(app_dir)
        except ValueError:
            continue  # an error row of collect_state_dirs
        for other, known in seen.items():
            if known == process_id:
                raise LagInputError(
                    f"--state-dirs {given}: process id {process_id} is also the process id of "
                    f"{other} (two instances cannot share a {PROCESS_METADATA_FILE}; was one "
                    "state directory copied from the other?)"
                )
        seen[str(app_dir)] = process_id
    return seen


def collect_state_dirs(
    state_dirs: Sequence[str | os.PathLike[str]],
    application_id: str | None = None,
    snapshot_time: int | None = None,
) -> CollectResult:
    """Read the checkpoints of several instances' state directories into offset rows.

    Parameters
    ----------
    state_dirs:
        One ``state.dir`` (holding ``<application.id>/``) or application folder per instance.
    application_id:
        Selects the application folder inside a ``state.dir``; optional when there is one.
    snapshot_time:
        Epoch milliseconds stamped on every row; None leaves it null ("now").

    Returns
    -------
    CollectResult
        Offset rows (one per checkpoint entry, plus a marker row per empty checkpoint) and
        error rows. A folder whose process id cannot be read contributes only an error row. A
        task folder without ``.checkpoint`` is read as Kafka Streams 4.3+ keeps it (KIP-1035:
        offsets inside the RocksDB stores, :func:`lag.sources.rocksdb_stores.read_task_stores`).
        One whose stores are of Kafka Streams <= 4.2 (no ``offsets`` family) contributes an
        error row ``no checkpoint yet`` and no offset row: Kafka writes ``.checkpoint`` every
        10,000 records or on close, and reports no offset sum for the task before. One with no
        store at all contributes nothing (Kafka reports no offset sum for it either).

    Raises
    ------
    LagInputError
        When a given path does not exist or holds no application folder, when two folders
        hold the same process id (their offsets would be summed as one instance's), or when a
        4.3+ RocksDB store is met and the rocksdict package is missing.
    """
    check_process_ids(state_dirs, application_id)
    result = CollectResult()
    for given in state_dirs:
        app_dir = application_dir(Path(given), application_id)
        try:
            process_id = read_process_id(app_dir)
        except ValueError as exc:
            result.errors.append(
                ErrorRow(str(app_dir / PROCESS_METADATA_FILE), None, "", f"no process id: {exc}")
            )
            continue
        result.processes[str(app_dir)] = process_id
        for task_dir in sorted(app_dir.iterdir()):
            if not task_dir.is_dir() or parse_task_id(task_dir.name) is None:
                continue  # Kafka ignores unknown files beside task folders, too
            checkpoint_path = task_dir / CHECKPOINT_FILE
            base = {
                "process_id": process_id,
                "task_id": task_dir.name,
                "snapshot_time": snapshot_time,
            }
            if not checkpoint_path.exists():
                # Kafka Streams 4.3+ (KIP-1035): the offsets live in the stores themselves.
                stores = read_task_stores(task_dir)
                result.errors.extend(stores.errors)
                result.rows.extend(stores.rows(base))
                continue
            checkpoint, errors = read_checkpoint(checkpoint_path)
            result.errors.extend(errors)
            if checkpoint is None:
                continue
            if not checkpoint.entries:
                result.rows.append(
                    {
                        **base,
                        "topic": None,
                        "partition": None,
                        "offset": None,
                        "source": str(checkpoint_path),
                        "line": None,
                    }
                )
            for topic, partition, offset, number in checkpoint.entries:
                result.rows.append(
                    {
                        **base,
                        "topic": topic,
                        "partition": partition,
                        "offset": offset,
                        "source": str(checkpoint_path),
                        "line": number,
                    }
                )
    return result


def offset_rows_table(rows: list[dict[str, Any]]) -> Any:
    """The offset rows as a ``pyarrow.Table``.

    Parameters
    ----------
    rows:
        Dicts with the keys of :data:`OFFSET_ROW_COLUMNS`.

    Returns
    -------
    pyarrow.Table
        ``process_id`` string, ``topic`` string, ``partition`` int32, ``offset`` int64,
        ``task_id`` string, ``snapshot_time`` int64 (epoch ms), ``source`` string, ``line`` int64.
    """
    import pyarrow as pa

    schema = pa.schema(
        [
            ("process_id", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("task_id", pa.string()),
            ("snapshot_time", pa.int64()),
            ("source", pa.string()),
            ("line", pa.int64()),
        ]
    )
    return pa.Table.from_pylist(
        [{c: row.get(c) for c in OFFSET_ROW_COLUMNS} for row in rows], schema=schema
    )


def write_offset_rows(rows: list[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write offset rows whole or not at all: Parquet, or JSON Lines for ``.jsonl``/``.json``.

    Parameters
    ----------
    rows:
        Dicts with the keys of :data:`OFFSET_ROW_COLUMNS`.
    path:
        Destination file (a single Parquet file, readable by Spark and DuckDB).

    Raises
    ------
    OSError
        When the destination folder is not writable (the destination is then unchanged).
    """
    from streams_assign.formats.atomic import write_atomic

    target = Path(path)
    if target.suffix in (".jsonl", ".json", ".ndjson"):
        text = "".join(
            json.dumps({c: row.get(c) for c in OFFSET_ROW_COLUMNS}) + "\n" for row in rows
        )
        write_atomic(target, text)
        return
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(offset_rows_table(rows), buffer)
    write_atomic(target, buffer.getvalue())
