"""One self-contained HTML page per question: tables and plots (PNG embedded as base64).

Rendered with Jinja2 (the ``report`` extra) from ``streams_assign/data/templates/report.html.j2``;
the page loads nothing from elsewhere, so it can be mailed or attached to a ticket as is.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_assign.planning.convergence import Convergence

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from streams_assign.planning.plan import Plan

__all__ = ["PageTable", "convergence_tables", "plan_page", "render_page"]


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

    from streams_assign.planning.plots import render

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
    from streams_assign.report import short_client_ids

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
    from streams_assign.planning.plots import plan_figure

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
