"""``streams-assign score``: an assignment's metrics, and its input errors naming file and path."""

from __future__ import annotations

import json

import pytest

from streams_assign.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_score_json_prints_the_metrics(capsys, data):
    status, out, _ = run(
        capsys, "score", str(data.path("hand-cluster")), str(data.path("hand-valid")), "--json"
    )
    assert status == 0
    metrics = json.loads(out)
    assert (metrics["restore_records"], metrics["moves"], metrics["valid"]) == (20_000, 2, True)


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("hand-unknown-client", "clients.00000000-0000-0000-0000-0000000000ff"),
        ("hand-unknown-task", "clients.00000000-0000-0000-0000-000000000002.standby[1]"),
    ],
)
def test_score_rejects_unknown_clients_and_tasks_naming_the_json_path(capsys, data, name, path):
    status, out, err = run(
        capsys, "score", str(data.path("hand-cluster")), str(data.path(name)), "--json"
    )
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert f"{name}.json: {path}: unknown" in err


def test_score_rejects_malformed_json(capsys, data, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    status, _, err = run(capsys, "score", str(data.path("hand-cluster")), str(broken))
    assert status == 2
    assert "broken.json: malformed JSON" in err
