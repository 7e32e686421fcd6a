"""``streams-assign assign`` on streams-group states (KIP-1071): the JSON, the batch, the table
and the errors."""

from __future__ import annotations

import json
from pathlib import Path

from devtools.paths import CORPORA
from streams_assign.cli import main

GROUP = CORPORA / "kafka-streams-group"


def _group_file(name: str = "sg000_rolling_bounce.json") -> tuple[Path, dict]:
    source = GROUP / "input" / name
    assert source.is_file(), f"missing shared state {source}"
    return source, json.loads((GROUP / "expected" / name).read_text())


def test_assign_json_prints_kafkas_decision_for_a_streams_group(capsys) -> None:
    source, expected = _group_file()
    assert main(["assign", "--json", str(source)]) == 0
    assert json.loads(capsys.readouterr().out) == expected


def test_assign_output_dir_writes_the_decision(tmp_path: Path) -> None:
    source, expected = _group_file("sg033_uneven_prev.json")
    assert main(["assign", "--output-dir", str(tmp_path), str(source)]) == 0
    assert json.loads((tmp_path / source.name).read_text()) == expected


def test_assign_table_names_every_member(capsys) -> None:
    source, expected = _group_file("sg011_tiny.json")
    assert main(["assign", str(source)]) == 0
    out = capsys.readouterr().out
    assert all(member in out for member in expected["members"])


def test_bad_streams_group_file_exits_2_naming_file_path_and_value(tmp_path: Path, capsys) -> None:
    source, _ = _group_file()
    document = json.loads(source.read_text())
    document["members"][2]["standby_tasks"] = {"0": ["x"]}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    out = tmp_path / "out"
    out.mkdir()
    assert main(["assign", "--output-dir", str(out), str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert str(bad) in err[0] and "members[2].standby_tasks.0[0]" in err[0] and "'x'" in err[0]
    assert not list(out.iterdir())


def test_classic_assignor_refused_for_a_streams_group(capsys) -> None:
    source, _ = _group_file()
    assert main(["assign", "--assignor", "high_availability", str(source)]) == 2
    assert "streams_group_sticky" in capsys.readouterr().err
