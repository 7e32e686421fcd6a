"""``streams-assign init``: a commented example cluster state, written whole, never overwritten."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from streams_assign.cli import main
from streams_assign.formats.cluster_state import load_cluster_state


def test_init_yaml_and_json_give_the_same_valid_state(tmp_path: Path) -> None:
    yaml_file, json_file = tmp_path / "c.yaml", tmp_path / "c.json"
    assert main(["init", str(yaml_file)]) == 0
    assert main(["init", str(json_file)]) == 0
    assert yaml_file.read_text().count("#") > 10  # commented
    from_yaml, from_json = load_cluster_state(yaml_file), load_cluster_state(json_file)
    assert replace(from_yaml, description=None) == replace(from_json, description=None)
    assert main(["assign", str(yaml_file), "--json"]) == 0


def test_init_never_overwrites_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "c.json"
    target.write_text("mine")
    assert main(["init", str(target)]) == 2
    assert f"init {target}: exists; give --force" in capsys.readouterr().err
    assert target.read_text() == "mine"
    assert main(["init", str(target), "--force"]) == 0
    assert json.loads(target.read_text())["name"] == "example"


def test_init_refuses_other_suffixes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path / "c.txt")]) == 2
    assert "use a .yaml, .yml, .json file name" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
