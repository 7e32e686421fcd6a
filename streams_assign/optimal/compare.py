"""Kafka's assignors beside the optima: one row per assignor, one column per metric.

:func:`compare_assignors` scores Kafka's HA assignment, every other importable assignor of
:data:`streams_assign.api.ASSIGNORS`, and the optimum of each problem on the same cluster state;
:func:`comparison_table` renders the rows as a ``rich`` table and :func:`plot_comparison` as a
matplotlib bar chart.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from streams_assign.api import ASSIGNORS, get_assignor
from streams_assign.errors import StreamsAssignError
from streams_assign.formats.atomic import write_atomic
from streams_assign.model import Assignment, ClusterState
from streams_assign.optimal.costs import PlacementCosts
from streams_assign.optimal.metrics import Metrics, score
from streams_assign.optimal.model import Problem
from streams_assign.optimal.solve import (
    DEFAULT_NUM_WORKERS,
    DEFAULT_RANDOM_SEED,
    DEFAULT_TIME_LIMIT,
    OptimalResult,
    json_number,
    solve_optimal,
)

log = logging.getLogger(__name__)

#: Columns of the table and panels of the chart: (metric, heading).
COLUMNS = (
    ("active_load_spread", "active load spread (tasks/thread)"),
    ("stateful_load_spread", "stateful load spread (tasks/thread)"),
    ("subtopology_skew", "subtopology skew (tasks)"),
    ("unavailable_actives", "unavailable actives (tasks)"),
    ("restore_records", "restore (records)"),
    ("moves", "moves (tasks)"),
    ("warmups", "warmups (tasks)"),
    ("standbys_missing", "standbys missing (tasks)"),
)
#: Short table headings (the chart uses the long ones).
SHORT = {
    "active_load_spread": "act.\nspread",
    "stateful_load_spread": "stf.\nspread",
    "subtopology_skew": "skew",
    "unavailable_actives": "un-\navail.",
    "restore_records": "restore\nrecords",
    "moves": "moves",
    "warmups": "warm-\nups",
    "standbys_missing": "stby\nmiss.",
}


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """One assignor's (or optimum's) assignment and its scores.

    Attributes
    ----------
    name:
        ``high_availability``, ``optimal_target``, ``optimal_immediate``, or an assignor name.
    status:
        ``valid``/``invalid`` for assignors; the solver status for optima.
    metrics:
        The scorer's metrics (``None`` when there is no assignment).
    assignment:
        The assignment (``None`` when there is none).
    note:
        Why there is no assignment, or other remarks.
    """

    name: str
    status: str
    metrics: Metrics | None
    assignment: Assignment | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every row of a comparison, with the optima's solve results."""

    cluster: ClusterState
    rows: tuple[ComparisonRow, ...]
    optima: dict[Problem, OptimalResult] = field(default_factory=dict)

    def row(self, name: str) -> ComparisonRow:
        """The row called ``name``; raises ``KeyError`` when there is none."""
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)

    def gap(self, row: ComparisonRow, problem: Problem) -> dict[str, int | Fraction] | None:
        """The row's excess over an optimum on that problem's objectives (``None`` if unknown)."""
        result = self.optima.get(problem)
        if row.metrics is None or result is None or result.metrics is None:
            return None
        gaps: dict[str, int | Fraction] = {}
        for name in result.objective:
            gaps[name] = getattr(row.metrics, name) - getattr(result.metrics, name)
        return gaps

    def to_json(self) -> dict[str, Any]:
        """The comparison as a JSON document (one entry per row)."""
        rows = []
        for row in self.rows:
            entry: dict[str, Any] = {"assignor": row.name, "status": row.status}
            if row.metrics is not None:
                entry["metrics"] = row.metrics.to_json()
            if row.note:
                entry["note"] = row.note
            entry["gap"] = {
                problem.value: (
                    {k: json_number(v) for k, v in gaps.items()}
                    if (gaps := self.gap(row, problem)) is not None
                    else None
                )
                for problem in Problem
            }
            rows.append(entry)
        optima = {
            problem.value: {
                "status": result.status,
                "objective": {k: json_number(v) for k, v in result.objective.items()},
                "bound": {k: json_number(v) for k, v in result.bound.items()},
                "solve_seconds": round(result.solve_seconds, 3),
                **({"explanation": result.explanation} if result.explanation else {}),
            }
            for problem, result in self.optima.items()
        }
        return {"name": self.cluster.name, "rows": rows, "optima": optima}


def compare_assignors(
    cluster: ClusterState,
    time_limit: float = DEFAULT_TIME_LIMIT,
    num_workers: int = DEFAULT_NUM_WORKERS,
    random_seed: int = DEFAULT_RANDOM_SEED,
    progress: Callable[[str], None] | None = None,
) -> Comparison:
    """Score Kafka's HA, the other importable assignors and both optima on one cluster state.

    Parameters
    ----------
    cluster:
        The validated rebalance input.
    time_limit:
        Seconds per optimisation problem.
    num_workers, random_seed:
        CP-SAT settings (see :func:`~streams_assign.optimal.solve.solve_optimal`).
    progress:
        Called with a short message before each step (for a spinner).

    Returns
    -------
    Comparison
        Rows in the order: ``high_availability``, ``optimal_target``, ``optimal_immediate``,
        then the other assignors of :data:`~streams_assign.api.ASSIGNORS` that import (an
        assignor whose module is not there yet is left out).
    """
    costs = PlacementCosts.of(cluster)
    say = progress or (lambda _message: None)
    rows: list[ComparisonRow] = []
    say("Kafka's HighAvailabilityTaskAssignor")
    ha: Assignment | None = None
    try:
        ha = get_assignor("high_availability").assign(cluster)
        rows.append(_assignor_row("high_availability", cluster, ha, costs))
    except StreamsAssignError as exc:
        rows.append(
            ComparisonRow(name="high_availability", status="error", metrics=None, note=str(exc))
        )
    optima: dict[Problem, OptimalResult] = {}
    for problem in (Problem.TARGET, Problem.IMMEDIATE):
        say(f"CP-SAT: {problem.value} optimum (up to {time_limit:g} s)")
        result = solve_optimal(
            cluster,
            problem,
            time_limit=time_limit,
            num_workers=num_workers,
            random_seed=random_seed,
            hint=ha if problem is Problem.IMMEDIATE else None,
            costs=costs,
        )
        optima[problem] = result
        rows.append(
            ComparisonRow(
                name=f"optimal_{problem.value}",
                status=result.status,
                metrics=result.metrics,
                assignment=result.assignment,
                note=result.explanation,
            )
        )
    for name in ASSIGNORS:
        if name == "high_availability":
            continue
        try:
            assignor = get_assignor(name)
        except (ImportError, ModuleNotFoundError):
            log.info("assignor %s is not available; left out of the comparison", name)
            continue
        say(f"assignor {name}")
        try:
            assignment = assignor.assign(cluster)
        except StreamsAssignError as exc:
            rows.append(ComparisonRow(name=name, status="error", metrics=None, note=str(exc)))
            continue
        rows.append(_assignor_row(name, cluster, assignment, costs))
    return Comparison(cluster=cluster, rows=tuple(rows), optima=optima)


def _assignor_row(
    name: str, cluster: ClusterState, assignment: Assignment, costs: PlacementCosts
) -> ComparisonRow:
    metrics = score(cluster, assignment, costs)
    note = "; ".join(metrics.violations[:3]) if metrics.violations else None
    return ComparisonRow(
        name=name,
        status="valid" if metrics.valid else "invalid",
        metrics=metrics,
        assignment=assignment,
        note=note,
    )


def _short(value: int | Fraction) -> str:
    """A compact number: fractions to 3 digits, large counts as k/M/G."""
    if isinstance(value, Fraction):
        return f"{float(value):.3g}"
    for threshold, unit, suffix in ((10**9, 10**9, "G"), (10**6, 10**6, "M"), (10**4, 10**3, "k")):
        if abs(value) >= threshold:
            return f"{value / unit:.3g}{suffix}"
    return str(value)


def _gap_cell(gaps: dict[str, int | Fraction] | None) -> str:
    """``+spread / +records / +moves`` over an optimum, one line per objective."""
    if gaps is None:
        return "-"
    labels = {"active_load_spread": "spread", "restore_records": "rec", "moves": "moves"}
    lines = []
    for name, value in gaps.items():
        magnitude: int | Fraction = -value if value < 0 else value
        lines.append(f"{'+' if value >= 0 else '-'}{_short(magnitude)} {labels.get(name, name)}")
    return "\n".join(lines)


def _target_gap_cell(gaps: dict[str, int | Fraction] | None, to_go: int | None) -> str:
    """The gap to the target optimum, or why an assignor still short of it is not better."""
    if to_go and gaps is not None and any(value < 0 for value in gaps.values()):
        plural = "s" if to_go > 1 else ""
        return f"not balanced\nyet ({to_go}\nprobing\nrebalance{plural}\nto go)"
    return _gap_cell(gaps)


def comparison_table(
    comparison: Comparison,
    title: str | None = None,
    probing_to_go: Mapping[str, int] | None = None,
) -> Table:
    """One row per assignor, one column per metric, and the gaps to both optima.

    Parameters
    ----------
    comparison:
        The rows, from :func:`compare_assignors`.
    title:
        The table's title (default: the cluster's name).
    probing_to_go:
        Per assignor, the probing rebalances it still needs until stable (from its whole
        convergence); its gap to the target optimum then reads "not balanced yet (N probing
        rebalances to go)" instead of a negative figure (KIP-441: the target is reached only
        after the probing rebalances).

    Returns
    -------
    rich.table.Table

    Notes
    -----
    Spreads are tasks per thread, skew and counts are tasks, restore records are records
    (from 10,000 on shown as k = thousands, M = millions, G = billions, 3 digits).
    """
    # No vertical rules and no outer edge: 11 columns then fit 100 without cutting headings.
    table = Table(
        title=title or f"{comparison.cluster.name or 'cluster'}: assignors vs the optimum",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=0,
    )
    # The status goes under the assignor's name, and every heading keeps its width.
    table.add_column("assignor\n(status)", no_wrap=True)
    for name, _ in COLUMNS:
        heading = SHORT[name]
        width = max(len(line) for line in heading.split("\n"))
        table.add_column(heading, justify="right", no_wrap=True, min_width=width)
    table.add_column("gap to\nimmediate", no_wrap=True)
    table.add_column("gap to\ntarget", no_wrap=True)
    for row in comparison.rows:
        if row.metrics is None:
            cells = ["-"] * len(COLUMNS)
        else:
            cells = [_short(getattr(row.metrics, name)) for name, _ in COLUMNS]
        table.add_row(
            f"{row.name}\n({row.status})",
            *cells,
            _gap_cell(comparison.gap(row, Problem.IMMEDIATE)),
            _target_gap_cell(
                comparison.gap(row, Problem.TARGET), (probing_to_go or {}).get(row.name)
            ),
        )
    return table


def comparison_figure(comparison: Comparison, metrics: Sequence[str] | None = None) -> Any:
    """The comparison as a matplotlib figure: one bar chart per metric (see
    :func:`plot_comparison`)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    chosen = [(name, heading) for name, heading in COLUMNS if metrics is None or name in metrics]
    names = [row.name for row in comparison.rows]
    columns = 4
    rows = -(-len(chosen) // columns)
    figure = Figure(figsize=(4.2 * columns, 3.4 * rows), layout="constrained")
    colors = ["#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd"]
    for i, (name, heading) in enumerate(chosen):
        axes = figure.add_subplot(rows, columns, i + 1)
        values = [
            float(getattr(row.metrics, name)) if row.metrics is not None else 0.0
            for row in comparison.rows
        ]
        axes.bar(
            range(len(names)), values, color=[colors[j % len(colors)] for j in range(len(names))]
        )
        axes.set_title(heading, fontsize=10)
        axes.set_ylim(bottom=0, top=None if any(values) else 1)
        axes.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
        axes.ticklabel_format(axis="y", style="sci", scilimits=(-3, 6))
    figure.suptitle(f"{comparison.cluster.name or 'cluster'}: assignors vs the optimum")
    return figure


def plot_comparison(
    comparison: Comparison, path: str | Path, metrics: Sequence[str] | None = None
) -> None:
    """Draw the comparison as bar charts (one panel per metric) and write it whole or not at all.

    Parameters
    ----------
    comparison:
        The rows to draw (rows without an assignment are drawn empty).
    path:
        The image file; its suffix picks the format (``.png``, ``.svg``, ``.pdf``).
    metrics:
        Which metrics to draw; default every column of the table.

    Raises
    ------
    OSError
        When the file cannot be written (the destination is then left as it was).
    """
    figure = comparison_figure(comparison, metrics)
    target = Path(path)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=target.suffix.lstrip(".").lower() or "png", dpi=110)
    write_atomic(target, buffer.getvalue())


__all__ = [
    "COLUMNS",
    "Comparison",
    "ComparisonRow",
    "SHORT",
    "compare_assignors",
    "comparison_figure",
    "comparison_table",
    "plot_comparison",
]
