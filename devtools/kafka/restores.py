"""What a Streams app instance restored: the ``restores.jsonl`` its ``RestoreLog`` writes.

``kafka/streams-app/src/streamsassign/app/RestoreLog.java`` is Kafka Streams'
``StateRestoreListener`` (``KafkaStreams#setGlobalStateRestoreListener``) and
``StandbyUpdateListener`` (``KafkaStreams#setStandbyUpdateListener``, KIP-988) of every instance
of :mod:`devtools.kafka.streams_app`. It appends one JSON line of kind ``restore`` each time the
restore of an active task's store partition ends (``onRestoreEnd``) or is suspended because the
task was revoked (``onRestoreSuspended``), and one of kind ``standby`` per batch a standby task
loads (``onBatchLoaded``). "Restored records" in the project's measurements are the ``restore``
lines' records: what an active task had to read back before it could run; standby catch-up is
counted apart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Restore", "StandbyLoad", "read_restores", "read_standby_loads"]


@dataclass(frozen=True)
class Restore:
    """One restore of an active task's store partition, as ``RestoreLog`` wrote it.

    Attributes
    ----------
    time_ms:
        Wall-clock time of the end (or suspension), ms since the epoch.
    task:
        Task id ``1_3`` (the store's sub-topology and the changelog partition), or None when
        the store is not in the topology's description.
    store, changelog, partition:
        The store, its changelog topic and the partition restored.
    records:
        Records restored (``onRestoreEnd`` / ``onRestoreSuspended``'s total).
    start_offset, end_offset:
        The offsets ``onRestoreStart`` gave (checkpointed position, changelog end), or None when
        the start was not seen.
    ms:
        Milliseconds from ``onRestoreStart`` to the end, or None.
    suspended:
        True when the restore was suspended (the task moved away before it ended).
    """

    time_ms: int
    task: str | None
    store: str
    changelog: str
    partition: int
    records: int
    start_offset: int | None
    end_offset: int | None
    ms: int | None
    suspended: bool


@dataclass(frozen=True)
class StandbyLoad:
    """One batch a standby task loaded into its store (``StandbyUpdateListener#onBatchLoaded``).

    Attributes
    ----------
    time_ms, task, store, changelog, partition:
        As in :class:`Restore` (the task id is Kafka's).
    records:
        Records in the batch.
    batch_end_offset, end_offset:
        Offset of the batch's last record and the changelog's end offset then.
    """

    time_ms: int
    task: str
    store: str
    changelog: str
    partition: int
    records: int
    batch_end_offset: int
    end_offset: int


def _lines(path: Path, kind: str) -> list[dict[str, object]]:
    """JSON lines of ``kind`` in ``path`` (none when it does not exist); a torn last line, as a
    killed JVM leaves, is skipped."""
    if not path.exists():
        return []
    found = []
    for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(line, dict) and line.get("kind") == kind:
            found.append(line)
    return found


def _optional_int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def read_restores(path: str | Path, since_ms: int = 0) -> list[Restore]:
    """The ``restore`` lines of one instance's ``restores.jsonl`` at or after ``since_ms``.

    Parameters
    ----------
    path:
        The file (``StreamsInstance.restores_file``); a missing file reads as no restore.
    since_ms:
        Keep lines whose ``time_ms`` (ms since the epoch) is at least this.

    Raises
    ------
    KeyError, ValueError
        When a complete line lacks a field or holds a non-number where a number belongs.
    """
    return [
        Restore(
            time_ms=int(line["time_ms"]),  # type: ignore[call-overload]
            task=None if line["task"] is None else str(line["task"]),
            store=str(line["store"]),
            changelog=str(line["changelog"]),
            partition=int(line["partition"]),  # type: ignore[call-overload]
            records=int(line["records"]),  # type: ignore[call-overload]
            start_offset=_optional_int(line["start_offset"]),
            end_offset=_optional_int(line["end_offset"]),
            ms=_optional_int(line["ms"]),
            suspended=line["ended"] == "suspended",
        )
        for line in _lines(Path(path), "restore")
        if int(line["time_ms"]) >= since_ms  # type: ignore[call-overload]
    ]


def read_standby_loads(path: str | Path, since_ms: int = 0) -> list[StandbyLoad]:
    """The ``standby`` lines of one instance's ``restores.jsonl`` at or after ``since_ms``.

    Raises
    ------
    KeyError, ValueError
        As :func:`read_restores`.
    """
    return [
        StandbyLoad(
            time_ms=int(line["time_ms"]),  # type: ignore[call-overload]
            task=str(line["task"]),
            store=str(line["store"]),
            changelog=str(line["changelog"]),
            partition=int(line["partition"]),  # type: ignore[call-overload]
            records=int(line["records"]),  # type: ignore[call-overload]
            batch_end_offset=int(line["batch_end_offset"]),  # type: ignore[call-overload]
            end_offset=int(line["end_offset"]),  # type: ignore[call-overload]
        )
        for line in _lines(Path(path), "standby")
        if int(line["time_ms"]) >= since_ms  # type: ignore[call-overload]
    ]
