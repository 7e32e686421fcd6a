"""Kafka Streams 4.3+ local state (KIP-1035): offsets read from the stores' ``offsets`` family.

The stores here are real RocksDB databases written with rocksdict the way Kafka 4.3's
``AbstractColumnFamilyAccessor`` writes them (key ``<topic>-<partition>`` in UTF-8, value an
8-byte big-endian long, plus the ``status`` and ``position`` keys); the real application's
stores are read in ``test_rocksdb_state_kafka.py``.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from rocksdict import Options, Rdict

from lag.cli import main as lag_main
from lag.sources.checkpoints import collect_state_dirs
from lag.sources.rocksdb_stores import decode_offset_entry, read_rocksdb_offsets, read_task_stores
from streams_assign.errors import LagInputError

PID = "0f0e0d0c-0b0a-4909-8807-060504030201"
PID2 = "1f0e0d0c-0b0a-4909-8807-060504030201"
LONG = struct.Struct(">q")


def make_instance(root: Path, process_id: str = PID, app: str = "app") -> Path:
    app_dir = root / app
    app_dir.mkdir(parents=True)
    (app_dir / "kafka-streams-process-metadata").write_text(json.dumps({"processId": process_id}))
    return app_dir


def rocksdb_store(
    path: Path,
    entries: dict[bytes, bytes] | None,
    data: dict[bytes, bytes] | None = None,
) -> Path:
    """A RocksDB database at ``path``; ``entries`` None = no ``offsets`` column family."""
    options = Options(raw_mode=True)
    options.create_if_missing(True)
    path.parent.mkdir(parents=True, exist_ok=True)
    db = Rdict(str(path), options=options)
    for key, value in (data or {b"customer-1": b"\x00\x01"}).items():
        db.put(key, value)
    if entries is not None:
        family = db.create_column_family("offsets", Options(raw_mode=True))
        for key, value in entries.items():
            family.put(key, value)
        family.close()
    db.close()
    return path


def offsets(**by_partition: int) -> dict[bytes, bytes]:
    """Kafka 4.3's entries for changelog ``app-s-changelog``: ``p3=41`` -> partition 3, 41."""
    entries = {b"status": LONG.pack(0), b"position": b"\x00\x00\x00\x00"}
    for name, offset in by_partition.items():
        entries[f"app-s-changelog-{name[1:]}".encode()] = LONG.pack(offset)
    return entries


def test_an_entry_is_topic_partition_and_a_big_endian_long() -> None:
    assert decode_offset_entry(b"my-app-store-changelog-12", LONG.pack(99)) == (
        "my-app-store-changelog",
        12,
        99,
    )
    assert decode_offset_entry(b"t-0", LONG.pack(-4)) == ("t", 0, -4)
    with pytest.raises(ValueError, match="has 4 bytes"):
        decode_offset_entry(b"t-0", b"\x00\x00\x00\x01")
    with pytest.raises(ValueError, match="not <topic>-<partition>"):
        decode_offset_entry(b"status-x", LONG.pack(1))
    with pytest.raises(ValueError, match="not <topic>-<partition>"):
        decode_offset_entry(b"t-2147483648", LONG.pack(1))  # beyond a Java int


def test_rows_carry_the_position_kafka_4_3_sums_and_skip_the_metadata_keys(
    tmp_path: Path,
) -> None:
    app_dir = make_instance(tmp_path / "i1")
    rocksdb_store(app_dir / "1_3" / "rocksdb" / "s", offsets(p3=41))
    rocksdb_store(
        app_dir / "1_3" / "rocksdb" / "t",
        {b"status": LONG.pack(1), b"app-t-changelog-3": LONG.pack(-4)},
    )

    result = collect_state_dirs([tmp_path / "i1"], "app", snapshot_time=7)

    assert result.errors == []
    assert sorted((r["topic"], r["partition"], r["offset"]) for r in result.rows) == [
        ("app-s-changelog", 3, 42),  # committed 41 (last record applied): position 42
        ("app-t-changelog", 3, -4),  # unknown stays unknown (0 in the sum, as in Kafka)
    ]
    assert {(r["process_id"], r["task_id"], r["snapshot_time"]) for r in result.rows} == {
        (PID, "1_3", 7)
    }
    assert {r["source"] for r in result.rows} == {
        str(app_dir / "1_3" / "rocksdb" / "s"),
        str(app_dir / "1_3" / "rocksdb" / "t"),
    }


def test_a_store_without_a_committed_offset_is_local_state_with_offset_sum_zero(
    tmp_path: Path,
) -> None:
    app_dir = make_instance(tmp_path / "i1")
    store = rocksdb_store(app_dir / "0_1" / "rocksdb" / "s", {b"status": LONG.pack(0)})

    result = collect_state_dirs([tmp_path / "i1"], "app")

    assert result.errors == []
    assert result.rows == [
        {
            "process_id": PID,
            "task_id": "0_1",
            "snapshot_time": None,
            "topic": None,
            "partition": None,
            "offset": None,
            "source": str(store),
            "line": None,
        }
    ]


@pytest.mark.parametrize(
    ("entries", "reason"),
    [
        (None, "unreadable store: no 'offsets' column family"),
        ({b"app-s-changelog-0": b"\x01\x02"}, "unreadable store: offset is not a long"),
    ],
)
def test_an_unreadable_store_is_an_error_row_and_its_task_has_no_local_state(
    tmp_path: Path, entries: dict[bytes, bytes] | None, reason: str
) -> None:
    app_dir = make_instance(tmp_path / "i1")
    bad = rocksdb_store(app_dir / "0_0" / "rocksdb" / "bad", entries)
    rocksdb_store(app_dir / "0_0" / "rocksdb" / "good", offsets(p0=10))
    rocksdb_store(app_dir / "0_1" / "rocksdb" / "good", offsets(p1=20))

    result = collect_state_dirs([tmp_path / "i1"], "app")

    assert [(e.source, e.reason.startswith(reason)) for e in result.errors] == [(str(bad), True)]
    if entries is not None:
        assert "app-s-changelog-0" in result.errors[0].raw  # the entry, named
    # 0_0 counts as having no local state (a wrong sum would be worse); 0_1 is used
    assert [(r["task_id"], r["offset"]) for r in result.rows] == [("0_1", 21)]


def test_folders_that_are_no_rocksdb_database_are_reported(tmp_path: Path) -> None:
    app_dir = make_instance(tmp_path / "i1")
    (app_dir / "0_0" / "rocksdb" / "empty").mkdir(parents=True)
    broken = app_dir / "0_1" / "rocksdb" / "broken"
    broken.mkdir(parents=True)
    (broken / "CURRENT").write_text("MANIFEST-000099\n")

    result = collect_state_dirs([tmp_path / "i1"], "app")

    assert result.rows == []
    assert [(Path(e.source).name, e.reason.split(":")[0]) for e in result.errors] == [
        ("empty", "unreadable store"),
        ("broken", "unreadable store"),
    ]
    assert "RocksDB could not open it" in result.errors[1].reason
    assert sorted(p.name for p in broken.iterdir()) == ["CURRENT"]  # left as found


def test_odd_entries_are_error_rows_and_the_rest_of_the_store_is_used(tmp_path: Path) -> None:
    store = rocksdb_store(
        tmp_path / "s",
        {
            **offsets(p0=5),
            b"not-a-partition": LONG.pack(3),
            b"app-s-changelog-1": LONG.pack(-7),
        },
    )

    read, errors = read_rocksdb_offsets(store)

    assert read.usable and read.offsets == {("app-s-changelog", 0): 5}
    assert sorted(e.reason.split(":")[0] for e in errors) == [
        "invalid offset skipped",
        "unexpected key skipped",
    ]
    assert all(e.source == str(store) for e in errors)


def test_a_segmented_store_answers_from_its_newest_segment(tmp_path: Path) -> None:
    task = tmp_path / "2_0"
    rocksdb_store(task / "w" / "w.1000", offsets(p0=7))
    rocksdb_store(task / "w" / "w.2000", offsets(p0=19))
    rocksdb_store(task / "w" / "w.3000", {b"status": LONG.pack(0)})  # nothing committed yet

    stores = read_task_stores(task)

    assert stores.errors == [] and stores.usable
    assert [(s.source, s.offsets) for s in stores.stores] == [
        (str(task / "w"), {("app-s-changelog", 0): 19})
    ]


def test_a_store_that_does_not_manage_its_offsets_keeps_a_checkpoint_of_its_own(
    tmp_path: Path,
) -> None:
    app_dir = make_instance(tmp_path / "i1")
    (app_dir / "0_2").mkdir()
    (app_dir / "0_2" / ".checkpoint_custom").write_text("0\n1\napp-custom-changelog 2 99\n")

    result = collect_state_dirs([tmp_path / "i1"], "app")

    assert result.errors == []
    assert [(r["topic"], r["partition"], r["offset"]) for r in result.rows] == [
        ("app-custom-changelog", 2, 100)
    ]


def test_a_fleet_mixing_4_2_checkpoints_and_4_3_stores_is_collected_whole(
    tmp_path: Path,
) -> None:
    old = make_instance(tmp_path / "old", PID)
    (old / "1_0").mkdir()
    (old / "1_0" / ".checkpoint").write_text("0\n1\napp-s-changelog 0 500\n")
    # a task folder with both: Kafka 4.3 migrates .checkpoint, then deletes it; read as 4.2
    rocksdb_store(old / "1_0" / "rocksdb" / "s", offsets(p0=1))
    new = make_instance(tmp_path / "new", PID2)
    rocksdb_store(new / "1_0" / "rocksdb" / "s", offsets(p0=499))
    out = tmp_path / "offsets.jsonl"
    errors = tmp_path / "errors.jsonl"

    status = lag_main(
        ["collect", str(tmp_path / "old"), str(tmp_path / "new"), "-o", str(out)]
        + ["--application-id", "app", "--errors-table", str(errors)]
    )

    assert status == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((r["process_id"], r["offset"], r["line"]) for r in rows) == [
        (PID, 500, 3),
        (PID2, 500, None),
    ]
    assert errors.read_text() == ""


def test_a_4_3_store_without_rocksdict_is_a_clear_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    app_dir = make_instance(tmp_path / "i1")
    store = rocksdb_store(app_dir / "1_0" / "rocksdb" / "s", offsets(p0=1))
    monkeypatch.setitem(sys.modules, "rocksdict", None)  # import fails
    out = tmp_path / "offsets.parquet"

    with pytest.raises(LagInputError, match="needs the rocksdict package") as caught:
        collect_state_dirs([tmp_path / "i1"], "app")
    assert str(store) in str(caught.value)
    status = lag_main(["collect", str(tmp_path / "i1"), "-o", str(out)])
    assert status == 2
    assert str(store) in capsys.readouterr().err
    assert not out.exists()  # nothing partial


def test_collect_writes_unreadable_stores_into_the_errors_table(tmp_path: Path) -> None:
    app_dir = make_instance(tmp_path / "i1")
    bad = rocksdb_store(app_dir / "1_0" / "rocksdb" / "s", {b"app-s-changelog-0": b"\x07"})
    rocksdb_store(app_dir / "1_1" / "rocksdb" / "s", offsets(p1=4))
    out, errors = tmp_path / "offsets.jsonl", tmp_path / "errors.jsonl"

    status = lag_main(
        ["collect", str(tmp_path / "i1"), "-o", str(out), "--errors-table", str(errors)]
    )

    assert status == 0
    assert [json.loads(line)["offset"] for line in out.read_text().splitlines()] == [5]
    rows = [json.loads(line) for line in errors.read_text().splitlines()]
    assert [(r["source"], r["reason"].split(":")[0]) for r in rows] == [
        (str(bad), "unreadable store")
    ]
    assert "app-s-changelog-0" in rows[0]["raw"] and "07" in rows[0]["raw"]  # key and value


def test_a_task_of_in_memory_stores_only_has_no_local_offsets(tmp_path: Path) -> None:
    app_dir = make_instance(tmp_path / "i1")
    (app_dir / "0_0").mkdir()
    (app_dir / "0_0" / ".lock").write_text("")

    result = collect_state_dirs([tmp_path / "i1"], "app")

    assert result.rows == [] and result.errors == []


def test_a_store_a_running_process_holds_open_is_reported_not_read(tmp_path: Path) -> None:
    app_dir = make_instance(tmp_path / "i1")
    store = rocksdb_store(app_dir / "1_0" / "rocksdb" / "s", offsets(p0=9))
    rocksdb_store(app_dir / "1_1" / "rocksdb" / "s", offsets(p1=4))
    # Another process takes RocksDB's LOCK as an open database does (fcntl), until told to stop.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys; f = open(sys.argv[1], 'r+b'); "
            "fcntl.lockf(f, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()",
            str(store / "LOCK"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        result = collect_state_dirs([tmp_path / "i1"], "app")
    finally:
        holder.communicate("")
    assert [(e.source, e.reason.split(":")[0]) for e in result.errors] == [
        (str(store), "unreadable store")
    ]
    assert "open in a running instance" in result.errors[0].reason
    assert [(r["task_id"], r["offset"]) for r in result.rows] == [("1_1", 5)]
    # once the holder is gone, the same store is read
    again = collect_state_dirs([tmp_path / "i1"], "app")
    assert again.errors == [] and len(again.rows) == 2


def test_reading_leaves_the_store_folder_as_it_was(tmp_path: Path) -> None:
    store = rocksdb_store(tmp_path / "s", offsets(p0=1))
    (store / "rocksdict-config.json").unlink()  # written by the rocksdict that made it
    before = sorted((p.name, p.stat().st_size) for p in store.iterdir())

    read, errors = read_rocksdb_offsets(store)

    assert read.usable and errors == []
    assert sorted((p.name, p.stat().st_size) for p in store.iterdir()) == before


def _hold_lock(lock: Path) -> subprocess.Popen[str]:
    """Another process holding RocksDB's ``LOCK`` as a running instance does (fcntl)."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys; f = open(sys.argv[1], 'r+b'); "
            "fcntl.lockf(f, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()",
            str(lock),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_a_4_2_task_without_its_checkpoint_yet_says_so_not_unreadable_store(
    tmp_path: Path,
) -> None:
    # A Kafka Streams 4.2 instance: 0_0 checkpointed, 0_1 not yet (fewer than 10,000 records
    # since it started, never closed): its RocksDB store has no ``offsets`` family.
    app_dir = make_instance(tmp_path / "i1")
    rocksdb_store(app_dir / "0_0" / "rocksdb" / "counts", None)
    (app_dir / "0_0" / ".checkpoint").write_text("0\n1\napp-counts-changelog 0 41\n")
    fresh = app_dir / "0_1"
    rocksdb_store(fresh / "rocksdb" / "counts", None)

    result = collect_state_dirs([tmp_path / "i1"], "app")

    assert [(r["task_id"], r["offset"]) for r in result.rows] == [("0_0", 41)]
    assert [(e.source, e.reason.split(":")[0]) for e in result.errors] == [
        (str(fresh), "no checkpoint yet")
    ]
    reason = result.errors[0].reason
    assert "every 10,000 records or on close" in reason
    assert "ProcessorStateManager" in reason and "StateDirectory" in reason
    assert "4.3" not in reason and "write-ahead" not in reason
    assert str(fresh / "rocksdb" / "counts") in result.errors[0].raw


def test_a_running_4_2_instance_without_checkpoints_is_not_reported_as_4_3(
    tmp_path: Path,
) -> None:
    # The case: Kafka Streams 4.2.1 running, its stores open (LOCK held), no checkpoint.
    app_dir = make_instance(tmp_path / "i1")
    store = rocksdb_store(app_dir / "1_0" / "rocksdb" / "s", None)
    holder = _hold_lock(store / "LOCK")
    try:
        result = collect_state_dirs([tmp_path / "i1"], "app")
    finally:
        holder.communicate("")
    assert result.rows == []
    assert [(e.source, e.reason.split(":")[0]) for e in result.errors] == [
        (str(app_dir / "1_0"), "no checkpoint yet")
    ]
    assert "write-ahead log" not in result.errors[0].reason


def test_a_running_4_3_store_keeps_the_write_ahead_log_message(tmp_path: Path) -> None:
    app_dir = make_instance(tmp_path / "i1")
    store = rocksdb_store(app_dir / "1_0" / "rocksdb" / "s", offsets(p0=9))
    holder = _hold_lock(store / "LOCK")
    try:
        result = collect_state_dirs([tmp_path / "i1"], "app")
    finally:
        holder.communicate("")
    assert [(e.source, e.reason.split(":")[0]) for e in result.errors] == [
        (str(store), "unreadable store")
    ]
    assert "Kafka Streams 4.3 writes the offsets with the write-ahead log off" in (
        result.errors[0].reason
    )


def test_a_4_2_window_store_without_checkpoint_is_no_checkpoint_yet(tmp_path: Path) -> None:
    app_dir = make_instance(tmp_path / "i1")
    window = app_dir / "2_3" / "windowed"
    rocksdb_store(window / "windowed.1767225600000", None)
    rocksdb_store(window / "windowed.1767229200000", None)

    stores = read_task_stores(app_dir / "2_3")

    assert stores.stores == [] and stores.legacy == [str(window)]
    assert [(e.source, e.reason.split(":")[0]) for e in stores.errors] == [
        (str(app_dir / "2_3"), "no checkpoint yet")
    ]
    assert stores.rows({"process_id": PID, "task_id": "2_3", "snapshot_time": None}) == []


def test_a_4_2_store_is_told_apart_without_rocksdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app_dir = make_instance(tmp_path / "i1")
    rocksdb_store(app_dir / "0_0" / "rocksdb" / "s", None)
    monkeypatch.setitem(sys.modules, "rocksdict", None)  # import fails

    result = collect_state_dirs([tmp_path / "i1"], "app")  # no "needs rocksdict" error

    assert result.rows == []
    assert [e.reason.split(":")[0] for e in result.errors] == ["no checkpoint yet"]


def test_the_offsets_family_is_found_from_the_manifest_without_an_options_file(
    tmp_path: Path,
) -> None:
    from lag.sources.rocksdb_stores import has_offsets_family

    new = rocksdb_store(tmp_path / "new", offsets(p0=1))
    old = rocksdb_store(tmp_path / "old", None)
    assert (has_offsets_family(new), has_offsets_family(old)) == (True, False)
    for store in (new, old):
        for options in store.glob("OPTIONS-*"):
            options.unlink()
    assert (has_offsets_family(new), has_offsets_family(old)) == (True, False)
