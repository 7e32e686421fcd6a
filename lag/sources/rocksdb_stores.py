"""Read the changelog offsets a Kafka Streams 4.3+ task keeps inside its stores (KIP-1035).

Since Kafka Streams 4.3 ("StateStore managed changelog offsets", KIP-1035) a persistent store
commits its changelog offsets itself, and RocksDB stores write no ``.checkpoint`` file any more.
Read from Kafka 4.3.1's classes:

- ``RocksDBStore`` opens every database with a column family named ``offsets`` beside
  ``default`` (``RocksDBStore.OFFSETS_COLUMN_FAMILY_NAME``);
- ``AbstractColumnFamilyAccessor.commit`` writes one entry per changelog partition: key
  ``TopicPartition#toString()`` (``<topic>-<partition>``, UTF-8), value the offset as an 8-byte
  big-endian signed long (``LongSerializer``); an empty commit (a corrupted store) deletes every
  entry but ``status``. Two more keys are metadata: ``status`` (8-byte long, 1 while the store
  is open, 0 after a clean close) and ``position`` (the IQv2 ``Position``);
- ``ProcessorStateManager.commit`` passes the offset of the last changelog record applied to the
  store, or ``-4`` (``OffsetCheckpoint.OFFSET_UNKNOWN``) when it has none;
- at start-up ``StateDirectory.initializeStartupStores`` opens every task folder's stores and
  ``ProcessorStateManager.changelogOffsets`` turns each committed offset ``o`` into the position
  ``o + 1`` (and an unknown one into 0); ``StateDirectory.sumOfChangelogOffsets`` sums those, and
  that sum is what the subscription reports for a task the process does not run as active.

Other stores of 4.3:

- window and session stores keep one RocksDB per segment, ``<task>/<store>/<store>.<segment id>``;
  every segment gets the same commit, and ``AbstractSegments.committedOffset`` answers from the
  newest segment that holds an offset;
- a persistent store that does not manage its offsets (a custom ``StateStore``) is wrapped in
  ``LegacyCheckpointingStateStore``, which writes ``<task>/.checkpoint_<store>`` in the old
  ``OffsetCheckpoint`` format;
- in-memory stores keep no offsets on disk at all (neither before 4.3 nor after);
- the task-level ``<task>/.checkpoint`` of Kafka Streams <= 4.2 is read once and deleted when 4.3
  opens the task (``LegacyCheckpointingStateStore.migrateLegacyOffsets``), and written again only
  for a downgrade (``upgrade.from`` below 4.3, ``maybeDowngradeOffsets``).

A RocksDB store without the ``offsets`` family is a store of Kafka Streams <= 4.2, whose offsets
are in the task's ``.checkpoint`` (:func:`has_offsets_family` tells them apart from RocksDB's
``OPTIONS`` file, without opening the store or taking its lock); a task folder of such stores
and no ``.checkpoint`` is one whose checkpoint Kafka has not written yet (``no checkpoint yet``),
not an unreadable store.

:func:`read_task_stores` reads one task folder this way. The offset rows it gives carry the
*positions* Kafka 4.3 sums (``committed + 1``), so their offset sum is the one a 4.3 process
reports; an unknown offset stays ``-4`` (summed as 0 by both). ``streams-lag collect`` calls it
for every task folder without a ``.checkpoint``
(:func:`lag.sources.checkpoints.collect_state_dirs`).
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lag.error_rows import ErrorRow
from lag.kafka_rules import INT_MAX, LONG_MAX, OFFSET_UNKNOWN
from lag.sources.checkpoint_file import read_checkpoint
from streams_assign.errors import LagInputError

__all__ = [
    "LEGACY_STORE_CHECKPOINT_PREFIX",
    "OFFSETS_COLUMN_FAMILY",
    "ROCKSDB_DIR",
    "StoreOffsets",
    "TaskStores",
    "decode_offset_entry",
    "find_rocksdb_stores",
    "has_offsets_family",
    "read_rocksdb_offsets",
    "read_task_stores",
    "store_is_open",
]

#: ``RocksDBStore.DB_FILE_DIR``: the folder of a task holding its key-value stores.
ROCKSDB_DIR = "rocksdb"
#: ``RocksDBStore.OFFSETS_COLUMN_FAMILY_NAME``.
OFFSETS_COLUMN_FAMILY = "offsets"
#: ``LegacyCheckpointingStateStore.checkpointFileFor``: ``.checkpoint_<store>``.
LEGACY_STORE_CHECKPOINT_PREFIX = ".checkpoint_"
#: Keys of the ``offsets`` column family that are not changelog partitions.
_METADATA_KEYS = (b"status", b"position")
#: The file rocksdict writes into every database folder it opens.
_ROCKSDICT_CONFIG = "rocksdict-config.json"
_TOPIC_PARTITION = re.compile(r"^(?P<topic>.+)-(?P<partition>[0-9]+)$")
_SEGMENT = re.compile(r"^(?P<store>.+)\.(?P<segment>[0-9]+)$")


@dataclass(slots=True)
class StoreOffsets:
    """The committed changelog offsets of one store, as Kafka 4.3 would read them.

    Attributes
    ----------
    source:
        The store's folder (RocksDB) or ``.checkpoint_<store>`` file.
    offsets:
        ``(topic, partition) -> committed offset`` in records: the offset of the last changelog
        record in the store, or -4 (unknown).
    usable:
        False when Kafka could not have read the store either (an error row says why).
    """

    source: str
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    usable: bool = True


@dataclass(slots=True)
class TaskStores:
    """What a task folder of Kafka Streams 4.3+ holds.

    Attributes
    ----------
    stores:
        One entry per store of Kafka Streams 4.3+ found (RocksDB folder with the ``offsets``
        family, segmented store, ``.checkpoint_<store>``).
    errors:
        Error rows (an unusable store, a skipped entry, a task without a checkpoint yet).
    legacy:
        RocksDB stores without the ``offsets`` family, as Kafka Streams <= 4.2 writes them
        (their offsets are in the task's ``.checkpoint``, not in the store).
    """

    stores: list[StoreOffsets] = field(default_factory=list)
    errors: list[ErrorRow] = field(default_factory=list)
    legacy: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """True when at least one store was found and every store could be read."""
        return bool(self.stores) and all(store.usable for store in self.stores)

    def rows(self, base: dict[str, Any]) -> list[dict[str, Any]]:
        """Offset rows (see :data:`lag.sources.checkpoints.OFFSET_ROW_COLUMNS`) for this task.

        Parameters
        ----------
        base:
            ``process_id``, ``task_id`` and ``snapshot_time`` of every row.

        Returns
        -------
        list of dict
            One row per changelog partition with ``offset`` the position ``committed + 1``
            (records; -4 kept for an unknown offset), ``source`` the store and ``line`` None;
            a single marker row (null topic, partition and offset: local state, offset sum 0)
            when the stores hold no offset; nothing when a store is unusable (Kafka would not
            report the task either) or no store was found.
        """
        if not self.usable:
            return []
        rows: list[dict[str, Any]] = []
        for store in self.stores:
            for (topic, partition), committed in sorted(store.offsets.items()):
                position = committed if committed == OFFSET_UNKNOWN else committed + 1
                rows.append(
                    {
                        **base,
                        "topic": topic,
                        "partition": partition,
                        "offset": position,
                        "source": store.source,
                        "line": None,
                    }
                )
        if not rows:
            rows.append(
                {
                    **base,
                    "topic": None,
                    "partition": None,
                    "offset": None,
                    "source": self.stores[0].source,
                    "line": None,
                }
            )
        return rows


def decode_offset_entry(key: bytes, value: bytes) -> tuple[str, int, int]:
    """Decode one entry of the ``offsets`` column family.

    Parameters
    ----------
    key:
        ``TopicPartition#toString()`` in UTF-8: ``<topic>-<partition>``.
    value:
        The committed offset, 8 bytes big-endian (Kafka's ``LongSerializer``).

    Returns
    -------
    (topic, partition, offset)
        ``offset`` in records, as committed (-4 = unknown).

    Raises
    ------
    ValueError
        When the key is not ``<topic>-<partition>`` (partition a Java int) or the value is not
        8 bytes (``LongDeserializer`` would throw too).
    """
    try:
        text = key.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"key {key!r} is not UTF-8") from None
    match = _TOPIC_PARTITION.match(text)
    if match is None or int(match["partition"]) > INT_MAX:
        raise ValueError(f"key {text!r} is not <topic>-<partition>")
    if len(value) != 8:
        raise ValueError(f"value of {text!r} has {len(value)} bytes, a long has 8: {value!r}")
    (offset,) = struct.unpack(">q", value)
    return match["topic"], int(match["partition"]), offset


#: The section RocksDB writes for each column family into its ``OPTIONS-<number>`` file.
_OFFSETS_FAMILY_SECTION = f'[CFOptions "{OFFSETS_COLUMN_FAMILY}"]'
_OPTIONS_FILE = re.compile(r"^OPTIONS-(?P<number>[0-9]+)$")
#: Why a task folder of Kafka Streams <= 4.2 has no ``.checkpoint``, with Kafka's classes.
NO_CHECKPOINT_YET = (
    "no checkpoint yet: Kafka Streams <= 4.2 writes <task>/.checkpoint every 10,000 records or "
    "on close (ProcessorStateManager.checkpoint, StateManagerUtil.checkpointNeeded), and "
    "deletes it while the task runs under exactly-once; until then the task reports no offset "
    "sum from disk (StateDirectory, TaskManager.getTaskOffsetSums), so it counts as having no "
    "local state here"
)


def has_offsets_family(path: Path) -> bool | None:
    """Whether a RocksDB database has Kafka Streams 4.3's ``offsets`` column family.

    Read from the newest ``OPTIONS-<number>`` file RocksDB keeps in the folder (one
    ``[CFOptions "<family>"]`` section per column family), so neither the database nor its
    ``LOCK`` is touched and a store a running process holds open is recognised too; without
    such a file, from the MANIFEST through rocksdict (``Rdict.list_cf``).

    Parameters
    ----------
    path:
        A RocksDB folder (holding ``CURRENT``).

    Returns
    -------
    bool or None
        True for a store of Kafka Streams 4.3+, False for one of <= 4.2 (no ``offsets``
        family), None when neither the options file nor rocksdict can tell.
    """
    numbered = []
    for candidate in path.iterdir():
        match = _OPTIONS_FILE.match(candidate.name)
        if match and candidate.is_file():
            numbered.append((int(match["number"]), candidate))
    if numbered:
        try:
            text = max(numbered)[1].read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        return _OFFSETS_FAMILY_SECTION in text
    try:
        from rocksdict import Rdict
    except ImportError:
        return None
    try:
        return OFFSETS_COLUMN_FAMILY in Rdict.list_cf(str(path))
    except Exception:  # rocksdict raises a bare Exception for RocksDB's Status
        return None


def store_is_open(path: Path) -> bool:
    """Whether a running process holds the RocksDB database at ``path`` open.

    RocksDB locks ``<db>/LOCK`` with ``fcntl`` for as long as a process has the database open
    for writing (``PosixEnv::LockFile``); Kafka Streams opens a store for as long as the task
    is assigned. A lock that cannot be taken means the store is open elsewhere.

    Parameters
    ----------
    path:
        A RocksDB folder.

    Returns
    -------
    bool
        False when there is no ``LOCK`` file or it cannot be opened for writing (a read-only
        copy: nobody can hold it there either).
    """
    try:
        handle = open(path / "LOCK", "r+b")  # noqa: SIM115 (closed below)
    except OSError:
        return False
    try:
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.lockf(handle, fcntl.LOCK_UN)
        return False
    finally:
        handle.close()


def _open_read_only(path: Path) -> tuple[Any, Any]:
    """Open a RocksDB folder read-only with raw bytes; return (db, offsets family or None)."""
    try:
        from rocksdict import AccessType, Options, Rdict
    except ImportError:
        raise LagInputError(
            f"--state-dirs: {path} is a Kafka Streams 4.3+ RocksDB store; reading it needs the "
            "rocksdict package: pip install 'streams-assign[lag]'"
        ) from None
    families = Rdict.list_cf(str(path))
    # Open only ``default`` and ``offsets``: a read-only open may leave other families out, and
    # rocksdict knows no family of a database it did not create unless it is named here.
    wanted = (
        {OFFSETS_COLUMN_FAMILY: Options(raw_mode=True)}
        if (OFFSETS_COLUMN_FAMILY in families)
        else {}
    )
    db = Rdict(
        str(path),
        options=Options(raw_mode=True),
        column_families=wanted,
        access_type=AccessType.read_only(),
    )
    if not wanted:
        return db, None
    return db, db.get_column_family(OFFSETS_COLUMN_FAMILY)


def read_rocksdb_offsets(path: str | Path) -> tuple[StoreOffsets, list[ErrorRow]]:
    """Read the ``offsets`` column family of one RocksDB database, read-only.

    Parameters
    ----------
    path:
        A RocksDB folder (holding ``CURRENT``): ``<task>/rocksdb/<store>`` or a segment
        ``<task>/<store>/<store>.<segment id>``. It is opened read-only (no lock taken) and left
        as it was found.

    Returns
    -------
    store : StoreOffsets
        Unusable (``usable`` False) when a running process holds the database open (see
        :func:`store_is_open`: its files do not hold the offsets it committed), when the
        database cannot be opened, has no ``offsets``
        column family (a store written by Kafka Streams <= 4.2, whose offsets were in the lost
        ``.checkpoint``), or holds an offset value that is not a long.
    errors : list of ErrorRow
        ``unreadable store: <reason>`` for an unusable store; ``invalid offset skipped`` for a
        negative offset other than -4 and ``unexpected key`` for a key that is no changelog
        partition (both skipped, the rest of the store used).

    Raises
    ------
    LagInputError
        When the rocksdict package is not installed.
    """
    source = str(path)
    store = StoreOffsets(source)
    errors: list[ErrorRow] = []

    def unusable(reason: str, raw: str = "") -> tuple[StoreOffsets, list[ErrorRow]]:
        store.usable = False
        store.offsets.clear()
        errors.append(ErrorRow(source, None, raw, f"unreadable store: {reason}"))
        return store, errors

    if store_is_open(Path(path)):
        return unusable(
            "open in a running instance (its RocksDB LOCK is held): Kafka Streams 4.3 writes "
            "the offsets with the write-ahead log off, so the committed ones stay in memory "
            "until the store is flushed or closed, and the files hold older ones or none"
        )
    # rocksdict records its settings in the folder it opens, even read-only: remove that file
    # again so that the state directory is left as it was found.
    config = Path(path) / _ROCKSDICT_CONFIG
    had_config = config.exists()
    try:
        db, family = _open_read_only(Path(path))
    except LagInputError:
        raise
    except Exception as exc:  # rocksdict raises a bare Exception for RocksDB's Status
        if not had_config:
            with contextlib.suppress(OSError):
                config.unlink()
        return unusable(f"RocksDB could not open it: {exc}")
    try:
        if family is None:
            return unusable(
                f"no '{OFFSETS_COLUMN_FAMILY}' column family (a store of Kafka Streams <= 4.2 "
                "whose .checkpoint is missing)"
            )
        for key, value in family.items():
            if key in _METADATA_KEYS:
                continue
            raw = f"{bytes(key)!r} = {bytes(value).hex()}"
            try:
                topic, partition, offset = decode_offset_entry(bytes(key), bytes(value))
            except ValueError as exc:
                if len(value) != 8 and _TOPIC_PARTITION.match(key.decode("utf-8", "replace")):
                    return unusable(f"offset is not a long: {exc}", raw)
                errors.append(ErrorRow(source, None, raw, f"unexpected key skipped: {exc}"))
                continue
            if offset < 0 and offset != OFFSET_UNKNOWN:
                errors.append(
                    ErrorRow(
                        source,
                        None,
                        raw,
                        f"invalid offset skipped: {offset} ({topic}-"
                        f"{partition}; Kafka's offset sum refuses it)",
                    )
                )
                continue
            if offset == LONG_MAX:
                errors.append(
                    ErrorRow(
                        source,
                        None,
                        raw,
                        f"invalid offset skipped: {offset} (its position would overflow a long)",
                    )
                )
                continue
            store.offsets[(topic, partition)] = offset
    except Exception as exc:  # a read error of RocksDB (corrupted block, ...)
        return unusable(f"RocksDB read failed: {exc}")
    finally:
        if family is not None:
            family.close()
        db.close()
        if not had_config:
            with contextlib.suppress(OSError):
                config.unlink()
    return store, errors


def _is_rocksdb(path: Path) -> bool:
    return path.is_dir() and (path / "CURRENT").is_file()


def find_rocksdb_stores(task_dir: Path) -> Iterator[tuple[str, list[Path]]]:
    """The RocksDB stores of a task folder, each as (store name, its databases).

    Parameters
    ----------
    task_dir:
        ``<state.dir>/<application.id>/<task id>``.

    Yields
    ------
    (str, list of Path)
        ``rocksdb/<store>`` as one database; a segmented store ``<store>/`` with its segment
        databases ``<store>.<segment id>`` in increasing segment order (a folder there without
        ``CURRENT`` is yielded too, so that it is reported, not skipped).
    """
    kv_root = task_dir / ROCKSDB_DIR
    if kv_root.is_dir():
        for store_dir in sorted(kv_root.iterdir()):
            if store_dir.is_dir():
                yield store_dir.name, [store_dir]
    for store_dir in sorted(task_dir.iterdir()):
        if not store_dir.is_dir() or store_dir.name == ROCKSDB_DIR:
            continue
        segments = []
        for segment in store_dir.iterdir():
            match = _SEGMENT.match(segment.name)
            if segment.is_dir() and match and match["store"] == store_dir.name:
                segments.append((int(match["segment"]), segment))
        if segments:
            yield store_dir.name, [s for _, s in sorted(segments)]


def _read_segmented(name: str, segments: list[Path]) -> tuple[StoreOffsets, list[ErrorRow]]:
    """A window or session store: per partition the newest segment's offset
    (``AbstractSegments.committedOffset``)."""
    store = StoreOffsets(str(segments[0].parent))
    errors: list[ErrorRow] = []
    for segment in segments:  # oldest first: a newer segment overrides
        if not _is_rocksdb(segment):
            errors.append(
                ErrorRow(
                    str(segment),
                    None,
                    "",
                    "unreadable store: segment without CURRENT "
                    f"(not a RocksDB database) in store {name}",
                )
            )
            store.usable = False
            continue
        part, part_errors = read_rocksdb_offsets(segment)
        errors.extend(part_errors)
        if not part.usable:
            store.usable = False
        store.offsets.update(part.offsets)
    if not store.usable:
        store.offsets.clear()
    return store, errors


def _is_legacy(databases: list[Path]) -> bool:
    """Whether every database of a store is a RocksDB database of Kafka Streams <= 4.2."""
    return all(_is_rocksdb(d) and has_offsets_family(d) is False for d in databases)


def _legacy_store_errors(result: TaskStores, folder: Path) -> None:
    """Report the <= 4.2 stores of a task: a missing checkpoint, or a store 4.3 did not write.

    A task folder with no store of 4.3 is a task of Kafka Streams <= 4.2 without its
    ``.checkpoint`` yet (:data:`NO_CHECKPOINT_YET`); beside stores of 4.3, a store without the
    ``offsets`` family is an unreadable store, and the task has no local state.
    """
    if not result.legacy:
        return
    if not result.stores:
        result.errors.append(
            ErrorRow(str(folder), None, " ".join(result.legacy), NO_CHECKPOINT_YET)
        )
        return
    for source in result.legacy:
        result.stores.append(StoreOffsets(source, usable=False))
        result.errors.append(
            ErrorRow(
                source,
                None,
                "",
                f"unreadable store: no '{OFFSETS_COLUMN_FAMILY}' column family beside stores "
                "of Kafka Streams 4.3+ in the same task (a store of Kafka Streams <= 4.2 whose "
                ".checkpoint is missing)",
            )
        )


def read_task_stores(task_dir: str | Path) -> TaskStores:
    """Read every store of a task folder without a task-level ``.checkpoint``.

    Parameters
    ----------
    task_dir:
        ``<state.dir>/<application.id>/<task id>``, a folder without a task-level
        ``.checkpoint`` (with one, the folder is read as Kafka Streams <= 4.2 wrote it).

    Returns
    -------
    TaskStores
        RocksDB key-value stores (``rocksdb/<store>``), segmented window/session stores and
        ``.checkpoint_<store>`` files of stores that do not manage their offsets (Kafka Streams
        4.3+). RocksDB stores without the ``offsets`` family (:func:`has_offsets_family`) are
        stores of Kafka Streams <= 4.2 and are not opened: when the task has no store of 4.3,
        one error row ``no checkpoint yet`` names the folder (a checkpoint not written yet,
        not an unreadable store). Empty when the folder holds no store at all (a task of
        in-memory stores: no local offsets).

    Raises
    ------
    LagInputError
        When a RocksDB store that may be of 4.3 is found and the rocksdict package is not
        installed.
    """
    folder = Path(task_dir)
    result = TaskStores()
    for name, databases in find_rocksdb_stores(folder):
        if _is_legacy(databases):
            kv = databases[0].parent.name == ROCKSDB_DIR
            result.legacy.append(str(databases[0] if kv else databases[0].parent))
            continue
        if databases[0].parent.name == ROCKSDB_DIR:
            database = databases[0]
            if not _is_rocksdb(database):
                result.stores.append(StoreOffsets(str(database), usable=False))
                result.errors.append(
                    ErrorRow(
                        str(database),
                        None,
                        "",
                        "unreadable store: no CURRENT file "
                        f"(not a RocksDB database) for store {name}",
                    )
                )
                continue
            store, errors = read_rocksdb_offsets(database)
        else:
            store, errors = _read_segmented(name, databases)
        result.stores.append(store)
        result.errors.extend(errors)
    for path in sorted(folder.glob(f"{LEGACY_STORE_CHECKPOINT_PREFIX}*")):
        if not path.is_file():
            continue
        checkpoint, errors = read_checkpoint(path)
        result.errors.extend(errors)
        if checkpoint is None:
            result.stores.append(StoreOffsets(str(path), usable=False))
            continue
        result.stores.append(
            StoreOffsets(str(path), {(t, p): o for t, p, o, _ in checkpoint.entries})
        )
    _legacy_store_errors(result, folder)
    return result
