"""``streams-assign compare``: Kafka's assignors beside the optima, as JSON, a table and a plot."""

from __future__ import annotations

import json

import pytest

from streams_assign.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


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
