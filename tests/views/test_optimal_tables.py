"""The tables of ``compare``: the gap wording, and the comparison fitting 100 columns."""

from __future__ import annotations

import io
from fractions import Fraction
from pathlib import Path

import pytest

from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.simulation.probing import RestoreRates
from streams_assign.simulation.scores import convergence_scores
from streams_assign.views.optimal_tables import target_gap_cell


@pytest.fixture(scope="module")
def scale_out(kafka_corpora: Path) -> Path:
    return kafka_corpora / "kafka-diff" / "input" / "s0001-scale_out.json"


def test_a_negative_target_gap_reads_not_balanced_yet() -> None:
    gaps = {"restore_records": -62_300, "moves": Fraction(2)}
    cell = target_gap_cell(gaps, 9)
    assert cell.replace("\n", " ") == "not balanced yet (9 probing rebalances to go)"
    assert "-" not in cell
    assert target_gap_cell(gaps, None).startswith("-62.3k rec")
    assert target_gap_cell({"restore_records": 5}, 9) == "+5 rec"


def test_compare_table_fits_100_columns_without_cutting(scale_out: Path) -> None:
    from rich.console import Console

    from streams_assign.optimal.compare import compare_assignors
    from streams_assign.views.optimal_tables import comparison_table

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
