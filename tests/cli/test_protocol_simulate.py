"""``streams-assign protocol-simulate``: a timeline's results as JSON and a plot, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streams_assign.cli import main

TIMELINES = Path(__file__).resolve().parents[2] / "examples" / "timelines"


def test_protocol_simulate_json_and_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "timeline.png"
    status = main(
        ["protocol-simulate", str(TIMELINES / "crash.json"), "--json", "--plot", str(plot)]
    )
    assert status == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"eager", "cooperative"}
    assert printed["eager"]["final_tasks"] == {"running": 40}
    assert plot.stat().st_size > 1000


def test_protocol_simulate_rejects_a_bad_event_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tasks": 4, "events": [{"t": 0, "type": "explode"}]}))
    assert main(["protocol-simulate", str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "bad.json: events[0].type: must be one of" in captured.err


def test_protocol_simulate_names_an_unknown_member(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "ghost.json"
    bad.write_text(
        json.dumps(
            {
                "tasks": 4,
                "events": [
                    {"t": 0, "type": "start", "members": 2},
                    {"t": 1000, "type": "crash", "member": "m9"},
                ],
            }
        )
    )
    assert main(["protocol-simulate", str(bad), "--json"]) == 2
    assert "events[1].member: no member 'm9'" in capsys.readouterr().err
