"""``streams-assign connect-replay``: expected-file JSON, scores, batch mode, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main

FOLDER = CORPORA / "kafka-connect"
INCREMENTAL = FOLDER / "input" / "k0001_incremental.json"
EAGER = FOLDER / "input" / "k0000_eager.json"


def test_json_prints_exactly_the_expected_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["connect-replay", "--json", str(INCREMENTAL)]) == 0
    assert capsys.readouterr().out == (FOLDER / "expected" / INCREMENTAL.name).read_text()


def test_output_dir_writes_one_expected_file_per_input(tmp_path: Path) -> None:
    assert (
        main(["connect-replay", "--output-dir", str(tmp_path), str(INCREMENTAL), str(EAGER)]) == 0
    )
    for source in (INCREMENTAL, EAGER):
        assert (tmp_path / source.name).read_text() == (
            FOLDER / "expected" / source.name
        ).read_text()


def test_scores_json_has_one_entry_per_round(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["connect-replay", "--json", "--scores", str(EAGER)]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert len(scores["rounds"]) == len(json.loads(EAGER.read_text())["rounds"])
    assert scores["revoked"] == sum(r["revoked"] for r in scores["rounds"])


def test_table_names_every_round(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["connect-replay", str(EAGER)]) == 0
    out = capsys.readouterr().out
    for number in range(1, len(json.loads(EAGER.read_text())["rounds"]) + 1):
        assert f"round {number} " in out


def test_leader_outside_the_members_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(INCREMENTAL.read_text())
    doc["rounds"][2]["leader"] = "w99"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = tmp_path / "out"
    out.mkdir()
    assert main(["connect-replay", "--output-dir", str(out), str(EAGER), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(bad) in err and "rounds[2].leader" in err and '"w99"' in err
    assert list(out.iterdir()) == []


def test_negative_task_count_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(EAGER.read_text())
    first = sorted(doc["connectors"])[0]
    doc["connectors"][first] = -1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert main(["connect-replay", str(bad)]) == 2
    assert f"connectors.{first}" in capsys.readouterr().err
