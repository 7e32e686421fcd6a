"""``streams-assign simulate``: the rounds as JSON, the plot and the report, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main

SCALE_OUT = CORPORA / "kafka-diff" / "input" / "s0001-scale_out.json"


@pytest.fixture(scope="module")
def scale_out() -> Path:
    if not SCALE_OUT.exists():
        pytest.fail(f"shared scenario {SCALE_OUT} is missing")
    return SCALE_OUT


def test_simulate_writes_plot_and_report(scale_out: Path, tmp_path: Path) -> None:
    png, html = tmp_path / "c.png", tmp_path / "c.html"
    argv = ["simulate", str(scale_out), "--restore-rate", "500"]
    assert main([*argv, "--plot", str(png), "--report", str(html)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = html.read_text()
    assert "high_availability: every rebalance" in page and "data:image/png;base64," in page


def test_simulate_refuses_a_bad_plot_name_before_any_work(
    scale_out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "c.gif"
    assert main(["simulate", str(scale_out), "--plot", str(bad)]) == 2
    assert f"--plot {bad}: use a .png, .svg, .pdf file name" in capsys.readouterr().err
    assert not bad.exists()


def test_simulate_command_prints_rounds_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(SCALE_OUT), "--restore-rate", "1000000", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["converged"] is True
    assert document["rounds"][0]["round"] == 1


def test_simulate_command_exits_2_on_bad_rate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(SCALE_OUT), "--restore-rate", "-1"]) == 2
    assert "--restore-rate" in capsys.readouterr().err
