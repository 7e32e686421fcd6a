"""A small changelog-backed key-value store per task, in Kafka Streams' state-directory layout.

Layout (Kafka Streams' ``StateDirectory``, so ``streams-lag collect`` reads it)::

    <state_dir>/<application_id>/kafka-streams-process-metadata   {"processId": "<uuid>"}
    <state_dir>/<application_id>/<task id>/store.sqlite            the key-value data
    <state_dir>/<application_id>/<task id>/.checkpoint             OffsetCheckpoint, version 0

The ``.checkpoint`` text is Kafka's ``OffsetCheckpoint``: a line ``0`` (version), a line with
the entry count, then one ``<topic> <partition> <offset>`` line per changelog partition, where
the offset is the next changelog offset the store still lacks (records before it are applied).
It is written whole (temporary file + rename). The sum of a task's checkpointed offsets is the
offset sum its process reports in the subscription.

Every store follows :class:`KeyValueStore`: :class:`TaskStore` keeps its data in sqlite and
survives a restart at its checkpoint; :class:`InMemoryStore` keeps it in a dict, writes no
checkpoint (its data dies with the process, so a restarted process must not report an offset
for it) and reports its live position while open. ``put`` records the changelog offset of each
write; standby and warmup stores follow the changelog by :meth:`KeyValueStore.apply`.

This module keeps state; it does not restore it. Reading the changelog into a standby, warmup
or promoted store is the task runtime's job (:mod:`streams_assign.clients.runtime`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from streams_assign.clients.topology import Topology
from streams_assign.errors import StateError
from streams_assign.model import LONG_MAX_VALUE, TaskId, TopicPartition

__all__ = [
    "CHECKPOINT_FILE",
    "OFFSET_UNKNOWN",
    "InMemoryStore",
    "KeyValueStore",
    "StoreFactory",
    "PROCESS_FILE",
    "StateDirectory",
    "TaskStore",
    "offset_sum",
    "read_checkpoint",
    "write_checkpoint",
]


CHECKPOINT_FILE = ".checkpoint"
PROCESS_FILE = "kafka-streams-process-metadata"
#: Kafka's ``OffsetCheckpoint.OFFSET_UNKNOWN``: skipped when summing.
OFFSET_UNKNOWN = -4


def write_checkpoint(path: Path, offsets: Mapping[TopicPartition, int]) -> None:
    """Write a ``.checkpoint`` file in Kafka's ``OffsetCheckpoint`` format, atomically."""
    lines = ["0", str(len(offsets))]
    lines += [f"{t} {p} {offset}" for (t, p), offset in sorted(offsets.items())]
    fd, tmp = tempfile.mkstemp(prefix=".checkpoint.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_checkpoint(path: Path) -> dict[TopicPartition, int]:
    """Read a ``.checkpoint`` file (Kafka's ``OffsetCheckpoint.read``).

    Raises
    ------
    StateError
        Naming the file and line for an unknown version, a bad count or a malformed entry.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != "0":
        raise StateError(f"{path}: line 1: expected checkpoint version 0, got {lines[:1]!r}")
    try:
        count = int(lines[1])
    except (IndexError, ValueError):
        raise StateError(f"{path}: line 2: expected the entry count") from None
    entries = [line for line in lines[2:] if line.strip()]
    if len(entries) != count:
        raise StateError(f"{path}: line 2: count {count} but {len(entries)} entries")
    result: dict[TopicPartition, int] = {}
    for number, line in enumerate(entries, start=3):
        parts = line.split(" ")
        try:
            topic, partition, offset = parts[0], int(parts[1]), int(parts[2])
        except (IndexError, ValueError):
            raise StateError(f"{path}: line {number}: malformed entry {line!r}") from None
        if len(parts) != 3:
            raise StateError(f"{path}: line {number}: malformed entry {line!r}")
        result[(topic, partition)] = offset
    return result


def offset_sum(offsets: Mapping[TopicPartition, int]) -> int:
    """Kafka's ``sumOfChangelogOffsets``: unknown (-4) offsets skipped, pinned at Long.MAX."""
    total = sum(offset for offset in offsets.values() if offset != OFFSET_UNKNOWN and offset > 0)
    return min(total, LONG_MAX_VALUE)


class KeyValueStore(Protocol):
    """What the runtime needs of a task's store: string keys and values, changelog positions.

    Attributes
    ----------
    positions:
        Per changelog partition, the next offset the store lacks (records before it applied).
    """

    positions: dict[TopicPartition, int]

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None``."""
        ...

    def put(self, key: str, value: str | None, changelog: TopicPartition, offset: int) -> None:
        """Write (``None`` deletes) and move the position past ``offset`` of ``changelog``."""
        ...

    def apply(self, key: str, value: str | None, changelog: TopicPartition, offset: int) -> None:
        """Apply one changelog record (the same as :meth:`put`)."""
        ...

    def items(self) -> Iterator[tuple[str, str]]:
        """Every key and value, sorted by key."""
        ...

    def checkpoint(self) -> None:
        """Make the positions durable (``.checkpoint``), when the data is."""
        ...

    @property
    def offset_sum(self) -> int:
        """The sum of the positions, in records."""
        ...

    def close(self, checkpoint: bool = True) -> None:
        """Checkpoint (by default) and release the store."""
        ...


#: Opens a task's store: ``(task directory, changelog partitions) -> store``.
StoreFactory = Callable[[Path, tuple[TopicPartition, ...]], KeyValueStore]


class TaskStore:
    """One task's key-value store (sqlite) and its changelog position.

    Parameters
    ----------
    directory:
        The task directory (``<state_dir>/<application_id>/<task id>``), created if missing.
    changelog_partitions:
        The task's changelog partitions; their position starts at the checkpoint (0 without).

    Attributes
    ----------
    positions:
        Per changelog partition, the next offset the store lacks.
    """

    def __init__(self, directory: Path, changelog_partitions: tuple[TopicPartition, ...]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        # Stores may move between a member's thread and the standby updater's: callers
        # serialise access (one lock per process), so the connection is not tied to a thread.
        self._db = sqlite3.connect(
            directory / "store.sqlite", isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT)")
        checkpoint = directory / CHECKPOINT_FILE
        saved = read_checkpoint(checkpoint) if checkpoint.exists() else {}
        self.positions: dict[TopicPartition, int] = {
            tp: max(0, saved.get(tp, 0)) for tp in changelog_partitions
        }

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None``."""
        row = self._db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, value: str | None, changelog: TopicPartition, offset: int) -> None:
        """Write (``None`` deletes) and move the position past ``offset`` of ``changelog``.

        The active calls this once its changelog write at ``offset`` is acknowledged; a standby
        or a restoring active calls it for each changelog record it reads.
        """
        if value is None:
            self._db.execute("DELETE FROM kv WHERE key = ?", (key,))
        else:
            self._db.execute(
                "INSERT INTO kv (key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        if offset + 1 > self.positions.get(changelog, 0):
            self.positions[changelog] = offset + 1

    apply = put

    def items(self) -> Iterator[tuple[str, str]]:
        """Every key and value, sorted by key."""
        yield from self._db.execute("SELECT key, value FROM kv ORDER BY key")

    def checkpoint(self) -> None:
        """Write the current positions to ``.checkpoint``."""
        write_checkpoint(self.directory / CHECKPOINT_FILE, self.positions)

    @property
    def offset_sum(self) -> int:
        """The sum of the positions (what the process reports for this task)."""
        return offset_sum(self.positions)

    def close(self, checkpoint: bool = True) -> None:
        """Checkpoint (by default) and close the database."""
        if checkpoint:
            self.checkpoint()
        self._db.close()


class InMemoryStore:
    """One task's key-value store in a dict: fast, gone when the process ends.

    It writes no ``.checkpoint`` (the data would not be there after a restart) and starts
    empty at position 0; while open, its live position counts in the process's offset sums, so
    a standby kept in memory still makes its process a caught-up client.

    Parameters
    ----------
    directory:
        Unused (the task directory of the on-disk store); kept for :data:`StoreFactory`.
    changelog_partitions:
        The task's changelog partitions, all at position 0.
    """

    def __init__(self, directory: Path, changelog_partitions: tuple[TopicPartition, ...]) -> None:
        self.directory = directory
        self._data: dict[str, str] = {}
        self.positions: dict[TopicPartition, int] = {tp: 0 for tp in changelog_partitions}

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None``."""
        return self._data.get(key)

    def put(self, key: str, value: str | None, changelog: TopicPartition, offset: int) -> None:
        """Write (``None`` deletes) and move the position past ``offset`` of ``changelog``."""
        if value is None:
            self._data.pop(key, None)
        else:
            self._data[key] = value
        if offset + 1 > self.positions.get(changelog, 0):
            self.positions[changelog] = offset + 1

    apply = put

    def items(self) -> Iterator[tuple[str, str]]:
        """Every key and value, sorted by key."""
        yield from sorted(self._data.items())

    def checkpoint(self) -> None:
        """Nothing: the data is not durable, so neither are the positions."""

    @property
    def offset_sum(self) -> int:
        """The sum of the positions (what the process reports while the store is open)."""
        return offset_sum(self.positions)

    def close(self, checkpoint: bool = True) -> None:
        """Drop the data."""
        self._data.clear()


class StateDirectory:
    """A process's state directory: its process id, task stores and their offset sums.

    Parameters
    ----------
    state_dir:
        ``state.dir``.
    application_id:
        ``application.id`` (also the group id).
    topology:
        Gives each task's changelog partitions.
    store_factory:
        Opens a task's store: :class:`TaskStore` (sqlite, the default) or
        :class:`InMemoryStore`, or any :data:`StoreFactory`.
    """

    def __init__(
        self,
        state_dir: str | Path,
        application_id: str,
        topology: Topology,
        store_factory: StoreFactory = TaskStore,
    ) -> None:
        self.root = Path(state_dir) / application_id
        self.root.mkdir(parents=True, exist_ok=True)
        self.topology = topology
        self.store_factory = store_factory
        self.stores: dict[TaskId, KeyValueStore] = {}

    def process_id(self) -> str:
        """The process id kept in ``kafka-streams-process-metadata``; made once, then reused.

        Raises
        ------
        StateError
            When the file exists but holds no UUID under ``processId``.
        """
        path = self.root / PROCESS_FILE
        if path.exists():
            try:
                return str(uuid.UUID(json.loads(path.read_text())["processId"]))
            except (ValueError, KeyError, TypeError):
                raise StateError(f"{path}: processId is not a UUID") from None
        process_id = str(uuid.uuid4())
        path.write_text(json.dumps({"processId": process_id}))
        return process_id

    def store(self, task: TaskId) -> KeyValueStore:
        """The open store of ``task`` (opened from disk, or created empty, on first use)."""
        store = self.stores.get(task)
        if store is None:
            directory = self.root / str(task)
            store = self.store_factory(directory, self.topology.changelog_partitions(task))
            self.stores[task] = store
        return store

    def close(self, task: TaskId) -> None:
        """Checkpoint and close one task's store, if open."""
        store = self.stores.pop(task, None)
        if store is not None:
            store.close()

    def close_all(self) -> None:
        """Checkpoint and close every open store."""
        for task in list(self.stores):
            self.close(task)

    def task_offset_sums(self) -> dict[TaskId, int]:
        """Per task with local state, its offset sum in records (subscription input).

        Open stores report their live position; closed ones their ``.checkpoint``. Task
        directories without a readable checkpoint are skipped (so are closed in-memory stores).
        """
        sums: dict[TaskId, int] = {task: store.offset_sum for task, store in self.stores.items()}
        for directory in sorted(self.root.iterdir()):
            if not directory.is_dir():
                continue
            try:
                task = TaskId.parse(directory.name)
            except ValueError:
                continue
            if task in sums:
                continue
            checkpoint = directory / CHECKPOINT_FILE
            if checkpoint.exists():
                try:
                    sums[task] = offset_sum(read_checkpoint(checkpoint))
                except StateError:
                    continue
        return sums
