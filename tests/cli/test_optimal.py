"""``streams-assign optimal``: the optimum as JSON and as a table, and its usage errors."""

from __future__ import annotations

import json

from streams_assign.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_optimal_json_prints_an_assignment_with_status_objective_bound(capsys, data):
    status, out, _ = run(
        capsys, "optimal", str(data.path("hand-cluster")), "--json", "--time-limit", "5"
    )
    document = json.loads(out)
    assert status == 0
    assert document["status"] == "OPTIMAL"
    assert set(document["clients"]) == {
        "00000000-0000-0000-0000-000000000001",
        "00000000-0000-0000-0000-000000000002",
        "00000000-0000-0000-0000-000000000003",
    }
    assert set(document["objective"]) == {"restore_records", "moves"}
    assert document["bound"]["restore_records"] == document["objective"]["restore_records"]
    assert isinstance(document["probing_rebalance_needed"], bool)
    assert document["solve_seconds"] >= 0


def test_optimal_immediate_reports_three_objectives(capsys, data):
    status, out, _ = run(
        capsys, "optimal", str(data.path("hand-cluster")), "--problem", "immediate", "--json"
    )
    assert status == 0
    assert list(json.loads(out)["objective"]) == ["active_load_spread", "restore_records", "moves"]


def test_optimal_output_scores_back_to_its_objective(capsys, data, tmp_path):
    _, out, _ = run(capsys, "optimal", str(data.path("hand-cluster")), "--json")
    saved = tmp_path / "optimum.json"
    saved.write_text(out, encoding="utf-8")
    status, scored, _ = run(capsys, "score", str(data.path("hand-cluster")), str(saved), "--json")
    assert status == 0
    metrics = json.loads(scored)
    optimum = json.loads(out)
    assert metrics["valid"]
    assert metrics["restore_records"] == optimum["objective"]["restore_records"]
    assert metrics["moves"] == optimum["objective"]["moves"]


def test_optimal_infeasible_prints_status_and_explanation(capsys, data):
    status, out, err = run(capsys, "optimal", str(data.path("infeasible-cluster")), "--json")
    document = json.loads(out)
    assert status == 1
    assert document["status"] == "INFEASIBLE"
    assert "stateful load" in document["explanation"]
    assert "clients" not in document
    assert err == ""


def test_optimal_table_output(capsys, data):
    status, out, _ = run(capsys, "optimal", str(data.path("hand-cluster")))
    assert status == 0
    assert "target optimum (OPTIMAL)" in out
    assert "restore_records" in out


def test_missing_cluster_file_is_a_usage_error(capsys, tmp_path):
    status, _, err = run(capsys, "optimal", str(tmp_path / "absent.json"))
    assert status == 2
    assert "absent.json: cannot read" in err


def test_non_positive_time_limit_is_a_usage_error(capsys, data):
    status, _, err = run(capsys, "optimal", str(data.path("hand-cluster")), "--time-limit", "0")
    assert status == 2
    assert "--time-limit must be > 0" in err
