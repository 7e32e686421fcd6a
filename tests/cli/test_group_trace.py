"""``streams-assign group-trace``: replays trace files from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main

FOLDER = CORPORA / "kafka-group"


def test_group_trace_json_prints_the_kafka_output_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    trace = FOLDER / "input" / "t0007.json"
    assert trace.is_file(), f"{trace} is missing"
    assert main(["group-trace", str(trace), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = json.loads((FOLDER / "expected" / "t0007.json").read_text())
    assert [e["responses"] for e in printed["events"]] == [
        e["responses"] for e in expected["events"]
    ]
    assert printed["summary"] == expected["summary"]


def test_group_trace_check_reports_identity_with_kafka(capsys: pytest.CaptureFixture[str]) -> None:
    flow = FOLDER / "flows" / "g06_leader_sync_missing_sync_timeout.json"
    assert flow.is_file(), f"{flow} is missing"
    assert main(["group-trace", "--check", str(flow), str(FOLDER / "input" / "t0001.json")]) == 0
    assert capsys.readouterr().err.count("identical to Kafka") == 2


def test_group_trace_rejects_an_unknown_event_type_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"group_id": "g", "events": [{"t": 0, "type": "jion"}]}))
    assert main(["group-trace", str(bad), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "bad.json: events[0].type: unknown event type 'jion'" in captured.err


def test_group_trace_check_fails_when_the_recording_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flow = json.loads((FOLDER / "flows" / "g01_single_member_initial_delay.json").read_text())
    flow["expect"] = [{"event": 0, "group": {"state": "Stable"}}]
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(flow))
    assert main(["group-trace", "--check", str(path)]) == 1
    assert "1 difference(s)" in capsys.readouterr().err
