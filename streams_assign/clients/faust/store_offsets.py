"""The changelog offsets a faust worker's table stores hold: what it reports at each join.

faust's RocksDB store (``faust.stores.rocksdb.Store``) keeps one database per table partition,
``<tabledir>/<table>-<partition>.db``, and in it, under the key ``__faust\\0offset__``, the
offset of the last changelog record it applied (``set_persisted_offset``). The offset after it
(``+ 1``) is what the store lacks nothing before, so ``end offset - (that + 1)`` is its lag in
records, as a Kafka Streams checkpoint gives.

Databases the store has open are read through it; the others found in the table directory (a
worker restarted on its old state, a standby it no longer holds) are opened read-only, which
takes no lock, so faust can still open them for writing.

faust's in-memory store (``memory://``) keeps no offset and drops, after each rebalance, every
partition that is not active on the worker (``Store.on_recovery_completed``); a promoted standby
is restored from the changelog's start. Its partitions are therefore reported as no local state
(lag: the whole changelog) except the worker's running actives, which the leader counts as
running (``-2``) from the worker's previous assignment.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "OFFSET_KEY",
    "store_changelog_offsets",
]

log = logging.getLogger(__name__)

#: The key under which faust's RocksDB store keeps the last applied changelog offset.
OFFSET_KEY = b"__faust\x00offset__"


def _read_only_offset(store: Any, path: Path) -> int | None:
    if getattr(store, "use_rocksdict", False):
        import rocksdict

        options = rocksdict.Options(raw_mode=True)
        db = rocksdict.Rdict(
            str(path), options=options, access_type=rocksdict.AccessType.read_only()
        )
        try:
            raw = db.get(OFFSET_KEY)
        finally:
            db.close()
    else:
        raw = store.rocksdb_options.open(path, read_only=True).get(OFFSET_KEY)
    return None if raw is None else int(raw)


def _rocksdb_offsets(store: Any, topic: str) -> dict[tuple[str, int], int]:
    offsets: dict[tuple[str, int], int] = {}
    open_dbs = dict(getattr(store, "_dbs", {}))
    for partition, db in open_dbs.items():
        raw = db.get(OFFSET_KEY)
        if raw is not None:
            offsets[(topic, int(partition))] = int(raw) + 1
    prefix = store.partition_path(0).name[: -len("0.db")]
    folder = store.partition_path(0).parent
    pattern = re.compile(re.escape(prefix) + r"(\d+)\.db$")
    for path in sorted(folder.glob(f"{prefix}*.db")) if folder.is_dir() else ():
        match = pattern.match(path.name)
        if match is None or int(match.group(1)) in open_dbs:
            continue
        try:
            offset = _read_only_offset(store, path)
        except Exception as exc:  # noqa: BLE001 - an unreadable copy counts as none
            log.warning("cannot read the offset of %s: %r", path, exc)
            continue
        if offset is not None:
            offsets[(topic, int(match.group(1)))] = offset + 1
    return offsets


def store_changelog_offsets(tables: Iterable[Any]) -> dict[tuple[str, int], int]:
    """Per changelog partition with local state, the offset after the store's last record.

    Parameters
    ----------
    tables:
        faust tables (``app.tables.values()``); global tables are skipped (faust gives every
        worker all their partitions).

    Returns
    -------
    dict
        ``{(changelog topic, partition): next offset}`` for the RocksDB stores; nothing for
        in-memory stores (module docstring).
    """
    offsets: dict[tuple[str, int], int] = {}
    for table in tables:
        if getattr(table, "is_global", False):
            continue
        store = table.data
        if not hasattr(store, "partition_path") or not hasattr(store, "rocksdb_options"):
            continue  # the in-memory store keeps no offset
        try:
            offsets.update(_rocksdb_offsets(store, table.changelog_topic.get_topic_name()))
        except Exception as exc:  # noqa: BLE001 - a join must not fail on a store
            log.warning("cannot read the offsets of table %s: %r", table.name, exc)
    return offsets
