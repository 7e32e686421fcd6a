"""The state helper: Kafka's checkpoint format, offset sums, stores that survive a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from lag.sources.checkpoint_file import read_checkpoint as lag_read_checkpoint
from streams_assign.clients.state import (
    StateDirectory,
    StateError,
    read_checkpoint,
    write_checkpoint,
)
from streams_assign.clients.topology import Subtopology, Topology
from streams_assign.model import TaskId

TOPOLOGY = Topology((Subtopology(0, ("in",), ("app-a-changelog", "app-b-changelog")),))


def test_checkpoint_file_is_kafkas_offset_checkpoint_text(tmp_path: Path) -> None:
    path = tmp_path / ".checkpoint"
    write_checkpoint(path, {("app-b-changelog", 3): 7, ("app-a-changelog", 3): 12})
    assert path.read_text() == "0\n2\napp-a-changelog 3 12\napp-b-changelog 3 7\n"
    assert read_checkpoint(path) == {("app-a-changelog", 3): 12, ("app-b-changelog", 3): 7}
    checkpoint, errors = lag_read_checkpoint(path)  # what `streams-lag collect` reads
    assert errors == [] and checkpoint is not None
    assert sorted(e[:3] for e in checkpoint.entries) == [
        ("app-a-changelog", 3, 12),
        ("app-b-changelog", 3, 7),
    ]


@pytest.mark.parametrize(
    "text", ["1\n0\n", "0\n2\nt 0 1\n", "0\n1\nt x 1\n", "0\n1\nt 0 1 9\n", ""]
)
def test_broken_checkpoints_name_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".checkpoint"
    path.write_text(text)
    with pytest.raises(StateError, match=str(path)):
        read_checkpoint(path)


def test_offset_sums_come_from_open_stores_and_checkpoints(tmp_path: Path) -> None:
    state = StateDirectory(tmp_path, "app", TOPOLOGY)
    store = state.store(TaskId(0, 1))
    store.put("k", "1", ("app-a-changelog", 1), 41)
    store.put("k", "2", ("app-b-changelog", 1), 9)
    assert state.task_offset_sums() == {TaskId(0, 1): 42 + 10}
    state.close_all()
    (tmp_path / "app" / "0_2").mkdir()
    write_checkpoint(
        tmp_path / "app" / "0_2" / ".checkpoint",
        {("app-a-changelog", 2): -4, ("app-b-changelog", 2): 5},  # -4: unknown, not summed
    )
    assert state.task_offset_sums() == {TaskId(0, 1): 52, TaskId(0, 2): 5}


def test_store_reopens_at_its_checkpoint_with_its_data(tmp_path: Path) -> None:
    state = StateDirectory(tmp_path, "app", TOPOLOGY)
    process_id = state.process_id()
    store = state.store(TaskId(0, 0))
    store.put("a", "1", ("app-a-changelog", 0), 0)
    store.put("a", "2", ("app-a-changelog", 0), 1)
    store.put("b", None, ("app-a-changelog", 0), 2)
    state.close_all()
    again = StateDirectory(tmp_path, "app", TOPOLOGY)
    assert again.process_id() == process_id
    reopened = again.store(TaskId(0, 0))
    assert reopened.positions == {("app-a-changelog", 0): 3, ("app-b-changelog", 0): 0}
    assert list(reopened.items()) == [("a", "2")]
    again.close_all()
