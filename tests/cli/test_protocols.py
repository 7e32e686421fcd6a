"""``streams-assign protocols``: the classic HA decision beside the streams-group decision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main
from streams_assign.cli.protocols import compare_protocols
from streams_assign.formats.cluster_state import load_cluster_state

CLASSIC = CORPORA / "kafka-diff" / "input"


def _files(count: int) -> list[Path]:
    files = sorted(CLASSIC.glob("*.json"))[:count]
    assert files, f"no classic cluster states in {CLASSIC}"
    return files


@pytest.mark.parametrize("path", _files(6), ids=lambda p: p.stem)
def test_both_sides_run_every_task_once(path: Path) -> None:
    cluster = load_cluster_state(path)
    comparison = compare_protocols(cluster)
    for assignment in (comparison.classic, comparison.streams_group):
        actives = [t for c in assignment.clients.values() for t in c.active]
        assert sorted(actives) == sorted(cluster.all_tasks)
    assert comparison.classic.assignor == "high_availability"
    assert comparison.streams_group.assignor == "streams_group_sticky"
    owners = {t: cid for cid, c in comparison.classic.clients.items() for t in c.active}
    for task in comparison.differing_actives():
        assert task not in comparison.streams_group.clients[owners[task]].active


def test_protocols_json_holds_both_decisions(capsys) -> None:
    path = _files(1)[0]
    assert main(["protocols", "--json", str(path)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"high_availability", "streams_group_sticky", "differing_actives"}
    assert document["streams_group_sticky"]["summary"]["probing_rebalance_needed"] is False


def test_protocols_on_a_missing_file_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["protocols", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err
