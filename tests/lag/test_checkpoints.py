"""Checkpoint files and state directories, read as Kafka's OffsetCheckpoint and TaskManager do."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lag.sources.checkpoint_file import read_checkpoint
from lag.sources.checkpoints import collect_state_dirs, write_offset_rows
from streams_assign.errors import LagInputError

PID = "0f0e0d0c-0b0a-4909-8807-060504030201"


def make_instance(root: Path, app: str = "app", process_id: str | None = PID) -> Path:
    app_dir = root / app
    app_dir.mkdir(parents=True)
    if process_id is not None:
        (app_dir / "kafka-streams-process-metadata").write_text(
            json.dumps({"processId": process_id})
        )
    return app_dir


def checkpoint(app_dir: Path, task: str, text: str) -> Path:
    (app_dir / task).mkdir(exist_ok=True)
    path = app_dir / task / ".checkpoint"
    path.write_text(text)
    return path


def test_checkpoint_entries_keep_unknown_offsets_for_the_sum_to_skip(tmp_path: Path) -> None:
    path = tmp_path / ".checkpoint"
    path.write_text("0\n3\napp-s-changelog 0 100\napp-t-changelog 0 -4\napp-u-changelog 0 0\n")

    read, errors = read_checkpoint(path)

    assert errors == []
    assert read is not None
    assert sorted(read.entries) == [
        ("app-s-changelog", 0, 100, 3),
        ("app-t-changelog", 0, -4, 4),
        ("app-u-changelog", 0, 0, 5),
    ]


def test_negative_offset_other_than_unknown_is_skipped_and_lowers_the_expected_count(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".checkpoint"
    path.write_text("0\n2\napp-s-changelog 0 100\napp-s-changelog 1 -7\n")

    read, errors = read_checkpoint(path)

    assert read is not None and [e[:3] for e in read.entries] == [("app-s-changelog", 0, 100)]
    assert [(e.line, e.raw, e.reason.split(":")[0]) for e in errors] == [
        (4, "app-s-changelog 1 -7", "invalid offset skipped")
    ]


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("1\n1\na 0 5\n", 1, "unknown checkpoint version 1"),
        ("0\n2\na 0 5\n", None, "count mismatch: expected 2 entries, found 1"),
        ("0\n1\na 0\n", 3, "malformed line: 2 fields"),
        ("0\n1\na 0 five\n", 3, "non-numeric partition or offset"),
        ("0\n", None, "file ended prematurely"),
        ("zero\n1\na 0 5\n", 1, "non-numeric version line"),
        ("0\n2\na 0 5\na 0 6\n", None, "count mismatch: expected 2 entries, found 1"),
    ],
)
def test_unreadable_checkpoint_counts_as_no_local_state(
    tmp_path: Path, text: str, line: int | None, reason: str
) -> None:
    path = tmp_path / ".checkpoint"
    path.write_text(text)

    read, errors = read_checkpoint(path)

    assert read is None
    assert len(errors) == 1
    assert errors[0].source == str(path)
    assert errors[0].line == line
    assert errors[0].reason.startswith("unreadable checkpoint: ")
    assert reason in errors[0].reason


def test_trailing_whitespace_is_tolerated_as_by_java_split(tmp_path: Path) -> None:
    path = tmp_path / ".checkpoint"
    path.write_text("0\n1\na 0 5  \n")

    read, errors = read_checkpoint(path)

    assert errors == [] and read is not None and read.entries == (("a", 0, 5, 3),)


def test_collect_reads_every_task_folder_and_marks_empty_checkpoints(tmp_path: Path) -> None:
    app_dir = make_instance(tmp_path / "i1")
    checkpoint(app_dir, "0_1", "0\n2\napp-s1-changelog 1 10\napp-s2-changelog 1 -4\n")
    checkpoint(app_dir, "1_10", "0\n0\n")
    checkpoint(app_dir, "1_2", "7\n")
    (app_dir / "1_3").mkdir()  # a task folder without checkpoint: nothing reported
    (app_dir / "not-a-task").mkdir()

    result = collect_state_dirs([tmp_path / "i1"], "app", snapshot_time=1234)

    rows = sorted(result.rows, key=lambda r: (r["task_id"], r["line"] or 0))
    assert [(r["task_id"], r["topic"], r["partition"], r["offset"], r["line"]) for r in rows] == [
        ("0_1", "app-s1-changelog", 1, 10, 3),
        ("0_1", "app-s2-changelog", 1, -4, 4),
        ("1_10", None, None, None, None),
    ]
    assert {r["process_id"] for r in rows} == {PID}
    assert {r["snapshot_time"] for r in rows} == {1234}
    assert [e.source.endswith("1_2/.checkpoint") for e in result.errors] == [True]
    assert result.processes == {str(app_dir): PID}


def test_instance_without_process_metadata_is_an_error_row_not_a_failure(tmp_path: Path) -> None:
    app_dir = make_instance(tmp_path / "i1", process_id=None)
    checkpoint(app_dir, "0_0", "0\n1\napp-s1-changelog 0 10\n")

    result = collect_state_dirs([app_dir], "app")

    assert result.rows == []
    assert [e.reason.split(":")[0] for e in result.errors] == ["no process id"]


def test_missing_state_dir_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(LagInputError, match="no such directory"):
        collect_state_dirs([tmp_path / "absent"], "app")


def test_offset_rows_are_written_whole_as_parquet_or_json_lines(tmp_path: Path) -> None:
    app_dir = make_instance(tmp_path / "i1")
    checkpoint(app_dir, "0_0", "0\n1\napp-s1-changelog 0 10\n")
    rows = collect_state_dirs([app_dir], "app").rows

    write_offset_rows(rows, tmp_path / "o.parquet")
    write_offset_rows(rows, tmp_path / "o.jsonl")

    table = pq.read_table(tmp_path / "o.parquet")
    assert table.column_names[:6] == [
        "process_id",
        "topic",
        "partition",
        "offset",
        "task_id",
        "snapshot_time",
    ]
    assert table.to_pylist()[0]["offset"] == 10
    assert json.loads((tmp_path / "o.jsonl").read_text().splitlines()[0])["task_id"] == "0_0"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i1", "o.jsonl", "o.parquet"]
