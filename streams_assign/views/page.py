"""One self-contained HTML page per question: tables and plots (PNG embedded as base64): the
report of ``plan`` (:func:`plan_page`), of ``compare`` (:func:`compare_page`) and of ``simulate``
(:func:`render_page` of :func:`convergence_tables`).

Rendered with Jinja2 (the ``report`` extra) from ``streams_assign/data/templates/report.html.j2``;
the page loads nothing from elsewhere, so it can be mailed or attached to a ticket as is.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_assign.simulation.probing import Convergence

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from streams_assign.optimal.compare import Comparison
    from streams_assign.simulation.plan import Plan

__all__ = ["PageTable", "compare_page", "convergence_tables", "plan_page", "render_page"]


@dataclass(frozen=True)
class PageTable:
    """A table of the page: a title, headings, rows of text cells, notes under it; the columns
    of ``text_columns`` are aligned left, the others (figures) right."""

    title: str
    headings: Sequence[str]
    rows: Sequence[Sequence[str]]
    notes: Sequence[str] = field(default_factory=tuple)
    text_columns: Sequence[int] = (0,)


def render_page(
    title: str,
    summary: Sequence[str],
    tables: Sequence[PageTable],
    figures: Sequence[tuple[str, Figure]] = (),
) -> str:
    """The HTML text of one page.

    Parameters
    ----------
    title:
        The page's title and heading.
    summary:
        Paragraphs under the heading.
    tables:
        The tables, in order.
    figures:
        ``(title, matplotlib figure)`` pairs, embedded as PNG.

    Returns
    -------
    str
        A complete HTML document with no external resource; every text is escaped.
    """
    from jinja2 import Environment, PackageLoader, select_autoescape

    from streams_assign.views.plots import render

    environment = Environment(
        loader=PackageLoader("streams_assign", "data/templates"),
        autoescape=select_autoescape(["html", "j2"]),
    )
    images: list[dict[str, Any]] = [
        {"title": name, "data": base64.b64encode(render(figure, ".png")).decode("ascii")}
        for name, figure in figures
    ]
    return environment.get_template("report.html.j2").render(
        title=title, summary=list(summary), tables=list(tables), images=images
    )


def convergence_tables(convergences: Sequence[Convergence]) -> list[PageTable]:
    """The totals table and one table of rebalances per assignor (process ids shortened)."""
    from streams_assign.views.tables import short_client_ids

    totals = PageTable(
        "Until stable, per assignor",
        (
            "assignor",
            "rebalances",
            "stable after (min)",
            "records restored",
            "unavailable (task-min)",
            "active moves",
            "warmups",
        ),
        [
            (
                c.assignor,
                str(c.rebalances) + ("" if c.converged else " (still probing)"),
                f"{c.stable_ms / 60000:.1f}",
                f"{c.records_restored:,}",
                f"{c.unavailable_task_ms / 60000:.1f}",
                str(c.moves),
                str(c.warmups),
            )
            for c in convergences
        ],
    )
    tables = [totals]
    for c in convergences:
        labels = short_client_ids(sorted({k for r in c.rounds for k in r.tasks_per_client}))
        rows = []
        for r in c.rounds:
            moves = ", ".join(
                f"{m.task} {labels.get(m.source, 'none') if m.source else 'none'}>"
                f"{labels[m.target]}"
                for m in r.moves
            )
            rows.append(
                (
                    str(r.round),
                    f"{r.time_ms / 60000:.1f}",
                    moves or "-",
                    ", ".join(f"{t}@{labels[k]}" for t, k in r.warmups) or "-",
                    f"{r.records_to_restore:,}",
                    f"{r.records_restored:,}",
                    f"{r.unavailable_task_ms / 60000:.1f}",
                    "yes" if r.probing_rebalance_needed else "no",
                )
            )
        notes = []
        if c.detection_ms:
            notes.append(f"The crash is detected after {c.detection_ms} ms (session.timeout.ms).")
        if c.repeating:
            notes.append("The assignor keeps asking for probing rebalances that change nothing.")
        tables.append(
            PageTable(
                f"{c.assignor}: every rebalance",
                (
                    "#",
                    "minute",
                    "active moves (task from>to)",
                    "warmups (task@client)",
                    "to restore",
                    "restored",
                    "unavailable (task-min)",
                    "probing next",
                ),
                rows,
                notes,
                text_columns=(0, 2, 3),
            )
        )
    return tables


def plan_page(plan: Plan) -> str:
    """The report of ``plan --report``: the changes, the totals, every rebalance, the plots."""
    from streams_assign.views.plots import plan_figure

    name = plan.before.name or plan.source
    summary = [
        f"{len(plan.before.clients)} clients before, {len(plan.after.clients)} after: "
        + ("; ".join(plan.changes) or "no change")
        + ".",
        f"Probing rebalances every {plan.after.configs.probing_rebalance_interval_ms} ms; "
        f"restore rate {plan.rates.default:g} records/s per task"
        + (f", {len(plan.rates.measured)} measured rates" if plan.rates.measured else "")
        + ".",
    ]
    summary.extend(f"{a}: {message}" for a, message in plan.errors)
    figures = [("Convergence", plan_figure(plan))] if plan.convergences else []
    return render_page(
        f"What will {name} do?", summary, convergence_tables(plan.convergences), figures
    )


def compare_page(
    comparison: Comparison,
    scores: dict[str, Convergence],
    to_go: dict[str, int],
    restore_rate: float,
    source: str,
) -> str:
    """The report of ``compare --report``: both tables, the bar charts, the convergence.

    Parameters
    ----------
    comparison:
        The rows, from :func:`~streams_assign.optimal.compare.compare_assignors`.
    scores:
        Per assignor, its whole convergence.
    to_go:
        Per assignor, the probing rebalances it still needs until stable.
    restore_rate:
        Records/s one client restores for one task.
    source:
        The input file name, shown when the state has no name.
    """
    from streams_assign.optimal.model import Problem
    from streams_assign.views.optimal_tables import (
        COLUMNS,
        gap_cell,
        short_number,
        target_gap_cell,
    )
    from streams_assign.views.plots import comparison_figure, convergence_figure

    rows = []
    for row in comparison.rows:
        cells = (
            [short_number(getattr(row.metrics, name)) for name, _ in COLUMNS]
            if row.metrics is not None
            else ["-"] * len(COLUMNS)
        )
        rows.append(
            (
                row.name,
                row.status,
                *cells,
                gap_cell(comparison.gap(row, Problem.IMMEDIATE)).replace("\n", ", "),
                target_gap_cell(comparison.gap(row, Problem.TARGET), to_go.get(row.name)).replace(
                    "\n", " "
                ),
            )
        )
    first = PageTable(
        "Next rebalance: assignors vs the optimum",
        ("assignor", "status", *(h for _, h in COLUMNS), "gap to immediate", "gap to target"),
        rows,
    )
    tables = [first, *convergence_tables(list(scores.values()))]
    figures = [("Assignors vs the optimum (next rebalance)", comparison_figure(comparison))]
    if scores:
        figures.append(("Whole convergence", convergence_figure(list(scores.values()))))
    name = comparison.cluster.name or source
    summary = [
        f"{len(comparison.cluster.clients)} clients; restore rate {restore_rate:g} "
        "records/s per task; probing rebalances every "
        f"{comparison.cluster.configs.probing_rebalance_interval_ms} ms."
    ]
    return render_page(f"How far from optimal is {name}?", summary, tables, figures)
