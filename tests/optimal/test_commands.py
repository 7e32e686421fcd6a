"""The ``optimal``, ``score`` and ``compare`` subcommands through ``streams_assign.cli.main``."""

from __future__ import annotations

import json

import pytest

from streams_assign.cli import main

pytest.importorskip("matplotlib")


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


def test_missing_cluster_file_is_a_usage_error(capsys, tmp_path):
    status, _, err = run(capsys, "optimal", str(tmp_path / "absent.json"))
    assert status == 2
    assert "absent.json: cannot read" in err


def test_non_positive_time_limit_is_a_usage_error(capsys, data):
    status, _, err = run(capsys, "optimal", str(data.path("hand-cluster")), "--time-limit", "0")
    assert status == 2
    assert "--time-limit must be > 0" in err


def test_compare_json_has_a_row_per_assignor_and_gaps(capsys, data):
    status, out, _ = run(
        capsys, "compare", str(data.path("hand-cluster")), "--json", "--time-limit", "5"
    )
    assert status == 0
    document = json.loads(out)
    names = [row["assignor"] for row in document["rows"]]
    assert names[:3] == ["high_availability", "optimal_target", "optimal_immediate"]
    target_row = document["rows"][1]
    assert target_row["gap"]["target"] == {"restore_records": 0, "moves": 0}
    ha_gap = document["rows"][0]["gap"]["immediate"]
    assert ha_gap is not None and set(ha_gap) == {"active_load_spread", "restore_records", "moves"}
    assert document["optima"]["target"]["status"] == "OPTIMAL"


@pytest.mark.slow
def test_compare_table_and_plot(capsys, data, tmp_path):
    plot = tmp_path / "compare.png"
    status, out, err = run(capsys, "compare", str(data.path("hand-cluster")), "--plot", str(plot))
    assert status == 0
    assert "high_availability" in out and "optimal_target" in out
    assert plot.stat().st_size > 1000
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["compare.png"]  # no temporary file left
    assert "wrote" in err


def test_compare_plot_into_missing_folder_is_a_usage_error(capsys, data, tmp_path):
    status, _, err = run(
        capsys, "compare", str(data.path("hand-cluster")), "--plot", str(tmp_path / "no" / "x.png")
    )
    assert status == 2
    assert "does not exist" in err


def test_compare_plot_needs_an_image_suffix(capsys, data, tmp_path):
    status, _, err = run(
        capsys, "compare", str(data.path("hand-cluster")), "--plot", str(tmp_path / "x.txt")
    )
    assert status == 2
    assert ".png" in err


def test_compare_table_fits_100_columns(capsys, data):
    status, out, _ = run(capsys, "compare", str(data.path("hand-cluster")), "--time-limit", "5")
    assert status == 0
    assert "high_availability" in out
    assert max(len(line) for line in out.splitlines()) <= 100
