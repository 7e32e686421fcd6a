"""The runtime's shared bookkeeping and stores, without a broker."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from streams_assign.clients.codec import AssignmentInfo
from streams_assign.clients.runtime import RuntimeConfig, TaskContext, TaskManager
from streams_assign.clients.state import InMemoryStore, StateDirectory
from streams_assign.clients.topology import Subtopology, Topology
from streams_assign.errors import StateError, TopologyError
from streams_assign.model import TaskId

TOPOLOGY = Topology(
    (
        Subtopology(0, ("words",), ("app-counts-changelog",)),
        Subtopology(1, ("clicks",), ()),
    )
)


@dataclass
class Record:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def count(ctx: TaskContext, record: Record) -> None:
    if ctx.store is None:
        ctx.send("clicks-out", record.value, key=record.key)
        return
    key = (record.key or b"").decode()
    ctx.put(key, str(int(ctx.get(key) or 0) + 1))


def manager(tmp_path: Path, store: str = "sqlite") -> TaskManager:
    return TaskManager(RuntimeConfig("unused:9092", "app", tmp_path, store=store), TOPOLOGY, count)


def test_a_batch_gives_its_writes_and_the_offsets_to_commit(tmp_path: Path) -> None:
    tasks = manager(tmp_path)
    batch = {
        ("words", 2): [Record("words", 2, 7, b"a", b"x"), Record("words", 2, 8, b"a", b"y")],
        ("clicks", 0): [Record("clicks", 0, 3, b"u", b"c")],
    }
    writes, offsets = tasks.process(batch)
    assert offsets == {("words", 2): 9, ("clicks", 0): 4}
    changelog = [w for w in writes if w.store is not None]
    assert [(w.topic, w.partition, w.key, w.value) for w in changelog] == [
        ("app-counts-changelog", 2, b"a", b"1"),
        ("app-counts-changelog", 2, b"a", b"2"),
    ]
    assert dict(changelog[1].headers) == {
        "writer": tasks.process_id.encode(),
        "source": b"words/2/8",
    }
    sink = [w for w in writes if w.store is None]
    assert [(w.topic, w.key, w.value) for w in sink] == [("clicks-out", b"u", b"c")]


def test_the_position_moves_only_when_the_changelog_write_is_acknowledged(
    tmp_path: Path,
) -> None:
    tasks = manager(tmp_path)
    writes, _ = tasks.process({("words", 1): [Record("words", 1, 0, b"k", b"v")]})
    assert tasks.positions([TaskId(0, 1)]) == {("app-counts-changelog", 1): 0}
    tasks.acknowledged(writes[0], 41)
    assert tasks.positions([TaskId(0, 1)]) == {("app-counts-changelog", 1): 42}
    assert tasks.state.task_offset_sums() == {TaskId(0, 1): 42}


def test_standby_records_stop_applying_once_the_task_is_active(tmp_path: Path) -> None:
    tasks = manager(tmp_path)
    tasks.set_replicas(0, AssignmentInfo(standby=(TaskId(0, 3),)))
    assert tasks.replica_tasks() == {TaskId(0, 3)}
    changelog = ("app-counts-changelog", 3)
    tasks.apply_standby(changelog, [Record(*changelog, 0, b"k", b"1")])
    tasks.activate(1, [TaskId(0, 3)])
    tasks.apply_standby(changelog, [Record(*changelog, 1, b"k", b"2")])
    assert tasks.replica_tasks() == set()
    assert tasks.positions([TaskId(0, 3)]) == {changelog: 1}
    assert tasks.state.store(TaskId(0, 3)).get("k") == "1"


def test_a_stateless_task_has_no_store(tmp_path: Path) -> None:
    ctx = TaskContext(TaskId(1, 0), None, None, "p")
    with pytest.raises(StateError, match="1_0"):
        ctx.put("k", "v")


def test_one_store_per_task_means_one_changelog_per_subtopology(tmp_path: Path) -> None:
    two = Topology((Subtopology(0, ("in",), ("a-changelog", "b-changelog")),))
    with pytest.raises(TopologyError, match="a-changelog"):
        TaskManager(RuntimeConfig("unused:9092", "app", tmp_path), two, count)


def test_an_unknown_store_kind_is_named(tmp_path: Path) -> None:
    with pytest.raises(StateError, match="'rocksdb'"):
        manager(tmp_path, store="rocksdb")


def test_in_memory_stores_report_while_open_and_leave_no_checkpoint(tmp_path: Path) -> None:
    state = StateDirectory(tmp_path, "app", TOPOLOGY, store_factory=InMemoryStore)
    store = state.store(TaskId(0, 0))
    store.put("k", "1", ("app-counts-changelog", 0), 9)
    store.checkpoint()
    assert state.task_offset_sums() == {TaskId(0, 0): 10}
    assert list(store.items()) == [("k", "1")]
    state.close_all()
    assert state.task_offset_sums() == {}
    assert not (tmp_path / "app" / "0_0" / ".checkpoint").exists()


def test_revoked_actives_are_checkpointed(tmp_path: Path) -> None:
    tasks = manager(tmp_path)
    writes, _ = tasks.process({("words", 0): [Record("words", 0, 0, b"k", b"v")]})
    tasks.acknowledged(writes[0], 4)
    tasks.activate(0, [TaskId(0, 0)])
    tasks.deactivate([TaskId(0, 0)])
    assert (tmp_path / "app" / "0_0" / ".checkpoint").read_text() == (
        "0\n1\napp-counts-changelog 0 5\n"
    )
    tasks.close()
