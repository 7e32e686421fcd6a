"""``streams-assign consumer-assign``: expected-file JSON, batch mode, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main

FOLDER = CORPORA / "kafka-consumer"
STICKY = FOLDER / "input" / "c0001_sticky.json"
RANGE = FOLDER / "input" / "c0000_range.json"


def test_json_prints_exactly_the_expected_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["consumer-assign", "--json", str(STICKY)]) == 0
    assert capsys.readouterr().out == (FOLDER / "expected" / STICKY.name).read_text()


def test_output_dir_writes_one_expected_file_per_input(tmp_path: Path) -> None:
    assert main(["consumer-assign", "--output-dir", str(tmp_path), str(STICKY), str(RANGE)]) == 0
    for source in (STICKY, RANGE):
        written = (tmp_path / source.name).read_text()
        assert written == (FOLDER / "expected" / source.name).read_text()


def test_table_lists_every_member(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["consumer-assign", str(RANGE)]) == 0
    out = capsys.readouterr().out
    for member in json.loads(RANGE.read_text())["members"]:
        assert member["member_id"] in out


def test_bad_value_exits_2_naming_file_path_and_value_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(RANGE.read_text())
    doc["members"][1]["owned_partitions"] = [["t0", -4]]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = tmp_path / "out"
    out.mkdir()
    assert main(["consumer-assign", "--output-dir", str(out), str(RANGE), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(bad) in err and "members[1].owned_partitions[0][1]" in err and "-4" in err
    assert list(out.iterdir()) == []


def test_unknown_assignor_in_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(RANGE.read_text())
    doc["assignor"] = "sticky-ish"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert main(["consumer-assign", "--json", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "assignor" in err and '"sticky-ish"' in err
