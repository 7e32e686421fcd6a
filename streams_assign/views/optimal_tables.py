"""The printed views of ``optimal``, ``score`` and ``compare``: the optimum's objectives, an
assignment's metrics, and Kafka's assignors beside the optima (rich tables).

Numbers are shown compactly (:func:`short_number`); the gap to an optimum is one line per
objective (:func:`gap_cell`), and an assignor still short of the target optimum because it is
still converging says so (:func:`target_gap_cell`).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from rich import box
from rich.console import Console
from rich.table import Table

from streams_assign.model import ClusterState
from streams_assign.optimal.compare import Comparison
from streams_assign.optimal.metrics import METRIC_NAMES, Metrics
from streams_assign.optimal.model import Problem
from streams_assign.optimal.solve import OptimalResult, json_number
from streams_assign.simulation.probing import Convergence
from streams_assign.views.convergence_tables import convergence_vs_optimum_table
from streams_assign.views.tables import assignment_table

__all__ = [
    "COLUMNS",
    "SHORT",
    "comparison_table",
    "gap_cell",
    "metrics_table",
    "print_comparison",
    "print_metrics",
    "print_optimum",
    "short_number",
    "target_gap_cell",
]

_WIDE = 100

#: Columns of the comparison table and panels of its chart: (metric, heading).
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


def short_number(value: int | Fraction) -> str:
    """A compact number: fractions to 3 digits, large counts as k/M/G."""
    if isinstance(value, Fraction):
        return f"{float(value):.3g}"
    for threshold, unit, suffix in ((10**9, 10**9, "G"), (10**6, 10**6, "M"), (10**4, 10**3, "k")):
        if abs(value) >= threshold:
            return f"{value / unit:.3g}{suffix}"
    return str(value)


def gap_cell(gaps: dict[str, int | Fraction] | None) -> str:
    """``+spread / +records / +moves`` over an optimum, one line per objective."""
    if gaps is None:
        return "-"
    labels = {"active_load_spread": "spread", "restore_records": "rec", "moves": "moves"}
    lines = []
    for name, value in gaps.items():
        magnitude: int | Fraction = -value if value < 0 else value
        lines.append(
            f"{'+' if value >= 0 else '-'}{short_number(magnitude)} {labels.get(name, name)}"
        )
    return "\n".join(lines)


def target_gap_cell(gaps: dict[str, int | Fraction] | None, to_go: int | None) -> str:
    """The gap to the target optimum, or why an assignor still short of it is not better."""
    if to_go and gaps is not None and any(value < 0 for value in gaps.values()):
        plural = "s" if to_go > 1 else ""
        return f"not balanced\nyet ({to_go}\nprobing\nrebalance{plural}\nto go)"
    return gap_cell(gaps)


def comparison_table(
    comparison: Comparison,
    title: str | None = None,
    probing_to_go: Mapping[str, int] | None = None,
) -> Table:
    """One row per assignor, one column per metric, and the gaps to both optima.

    Parameters
    ----------
    comparison:
        The rows, from :func:`~streams_assign.optimal.compare.compare_assignors`.
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
            cells = [short_number(getattr(row.metrics, name)) for name, _ in COLUMNS]
        table.add_row(
            f"{row.name}\n({row.status})",
            *cells,
            gap_cell(comparison.gap(row, Problem.IMMEDIATE)),
            target_gap_cell(
                comparison.gap(row, Problem.TARGET), (probing_to_go or {}).get(row.name)
            ),
        )
    return table


def print_optimum(cluster: ClusterState, result: OptimalResult, console: Console) -> None:
    """Print the optimum's objectives in order (value, proven bound, gap, stage status), why
    there is none when it failed, its assignment and the solve time."""
    name = cluster.name or "cluster"
    summary = Table(title=f"{name}: {result.problem.value} optimum ({result.status})")
    summary.add_column("objective (in order)")
    summary.add_column("value", justify="right")
    summary.add_column("proven bound", justify="right")
    summary.add_column("gap", justify="right")
    summary.add_column("stage status")
    for stage in result.stages:
        value = result.objective.get(stage.name)
        bound = result.bound.get(stage.name)
        gap = result.gap(stage.name)
        summary.add_row(
            stage.name,
            "-" if value is None else str(json_number(value)),
            "-" if bound is None else str(json_number(bound)),
            "-" if gap is None else f"{gap:.2%}",
            f"{stage.status} ({stage.seconds:.2f} s)",
        )
    console.print(summary)
    if result.explanation:
        console.print(f"[bold]{result.status}[/]: {result.explanation}")
    if result.assignment is not None:
        console.print(
            assignment_table(cluster, result.assignment, title=f"{result.problem.value} optimum")
        )
    console.print(f"solved in {result.solve_seconds:.2f} s")


def metrics_table(metrics: Metrics, title: str) -> Table:
    """One row per metric of :data:`~streams_assign.optimal.metrics.METRIC_NAMES`, then the
    active and standby moves."""
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name in METRIC_NAMES:
        value = metrics.value(name)
        table.add_row(name, f"{value:.3g}" if isinstance(value, float) else str(value))
    table.add_row("active_moves", str(metrics.active_moves))
    table.add_row("standby_moves", str(metrics.standby_moves))
    return table


def print_metrics(metrics: Metrics, console: Console, title: str) -> None:
    """Print the metrics table and every rule the assignment breaks."""
    console.print(metrics_table(metrics, title))
    for violation in metrics.violations:
        console.print(f"[red]invalid:[/] {violation}")


def print_comparison(
    comparison: Comparison,
    probing_to_go: Mapping[str, int],
    scores: dict[str, Convergence],
    optimum: dict[str, int] | None,
    restore_rate: float,
) -> None:
    """Print ``compare``'s view in at most 100 columns: the comparison table, each row's note,
    then the whole convergences beside the target optimum's one-step cost.

    Parameters
    ----------
    comparison:
        The rows, from :func:`~streams_assign.optimal.compare.compare_assignors`.
    probing_to_go:
        Per assignor, the probing rebalances it still needs until stable.
    scores:
        Per assignor, its whole convergence.
    optimum:
        The target optimum's one-step cost (``restore_records``, ``moves``), if solved.
    restore_rate:
        Records/s one client restores for one task (for the title).
    """
    console = Console()
    if not console.is_terminal or console.width > _WIDE:
        console = Console(width=_WIDE)  # rich wraps the cells so the table fits 100 columns
    console.print(comparison_table(comparison, probing_to_go=probing_to_go))
    for row in comparison.rows:
        if row.note:
            console.print(f"[yellow]{row.name}:[/] {row.note}")
    console.print(
        convergence_vs_optimum_table(
            scores,
            optimum,
            title=f"until stable (restore {restore_rate:g} records/s per task)",
        )
    )
