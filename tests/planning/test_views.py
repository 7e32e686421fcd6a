"""simulate --plot / --report, and compare's convergence scores and its gap wording."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.optimal.compare import _target_gap_cell
from streams_assign.planning.convergence import RestoreRates
from streams_assign.planning.scores import convergence_scores
from streams_assign.simulation.replay import replay

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


def test_probing_rebalances_to_go_match_the_replay(scale_out: Path) -> None:
    cluster = load_cluster_state(scale_out)
    scores = convergence_scores(cluster, ["high_availability"], RestoreRates(10_000.0))
    rounds = replay(cluster, 10_000.0)
    assert scores["high_availability"].probing_rebalances == len(rounds) - 1 > 0


def test_a_negative_target_gap_reads_not_balanced_yet() -> None:
    gaps = {"restore_records": -62_300, "moves": Fraction(2)}
    cell = _target_gap_cell(gaps, 9)
    assert cell.replace("\n", " ") == "not balanced yet (9 probing rebalances to go)"
    assert "-" not in cell
    assert _target_gap_cell(gaps, None).startswith("-62.3k rec")
    assert _target_gap_cell({"restore_records": 5}, 9) == "+5 rec"


def test_lags_lists_every_replica_with_kafkas_caught_up_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    crash = CORPORA / "kafka-diff" / "input" / "s0002-crash.json"
    cluster = load_cluster_state(crash)
    assert main(["lags", str(crash), "--json", "--restore-rate", "1000"]) == 0
    document = json.loads(capsys.readouterr().out)
    replicas = document["replicas"]
    assert len(replicas) == sum(len(c.task_lags) for c in cluster.clients)
    acceptable = cluster.configs.acceptable_recovery_lag
    for row in replicas:
        lag = row["lag"]
        if lag == -2:
            assert row["state"] == "running active" and row["catch_up_s"] is None
        elif lag > acceptable:
            assert row["state"] == "behind"
            assert row["catch_up_s"] == -(-(lag - acceptable) // 1000)
        elif lag >= 0:
            assert row["state"] == "caught up"


def test_lags_refuses_a_bad_rate(capsys: pytest.CaptureFixture[str]) -> None:
    crash = CORPORA / "kafka-diff" / "input" / "s0002-crash.json"
    assert main(["lags", str(crash), "--restore-rate", "-5"]) == 2
    assert "--restore-rate must be > 0 records/s, got -5" in capsys.readouterr().err


def test_compare_table_fits_100_columns_without_cutting(scale_out: Path) -> None:
    from rich.console import Console

    from streams_assign.optimal.compare import compare_assignors, comparison_table

    cluster = load_cluster_state(scale_out)
    comparison = compare_assignors(cluster, time_limit=2.0)
    scores = convergence_scores(
        cluster,
        [r.name for r in comparison.rows if not r.name.startswith("optimal_")],
        RestoreRates(10_000.0),
    )
    to_go = {name: c.probing_rebalances for name, c in scores.items() if c.converged}
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(comparison_table(comparison, probing_to_go=to_go))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "…" not in text
    for row in comparison.rows:
        assert row.name in text
    assert "not balanced" in text and "probing" in text
