"""Every figure (matplotlib, drawn on a bare ``Figure``, no display needed).

- :func:`convergence_figure`, :func:`plan_figure`: tasks per client per rebalance, records left
  to restore over time, and each assignor's totals (``simulate``, ``plan``, ``compare``; the
  ``report`` extra);
- :func:`comparison_figure`: Kafka's assignors beside the optima, one bar chart per metric
  (``compare``; the ``optimal`` extra);
- :func:`timelines_figure`: a simulated group's running tasks over time and its rebalance
  phases (``protocol-simulate``; the ``protocol`` extra);
- :func:`render`: a figure as the content of a ``.png``, ``.svg`` or ``.pdf`` file.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from streams_assign.simulation.probing import Convergence
from streams_assign.views.tables import short_client_ids

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from streams_assign.optimal.compare import Comparison
    from streams_assign.protocol.simulator import SimulationResult
    from streams_assign.simulation.plan import Plan

__all__ = [
    "comparison_figure",
    "convergence_figure",
    "plan_figure",
    "render",
    "timelines_figure",
]

_STATE_COLOURS = {"PreparingRebalance": "tab:red", "CompletingRebalance": "tab:orange"}


def _tasks_per_client(ax, convergence: Convergence) -> None:  # type: ignore[no-untyped-def]
    clients = sorted({c for r in convergence.rounds for c in r.tasks_per_client})
    labels = short_client_ids(clients)
    rounds = [r.round for r in convergence.rounds]
    for client in clients:
        counts = [r.tasks_per_client.get(client, (0, 0))[0] for r in convergence.rounds]
        ax.plot(rounds, counts, marker="o", markersize=3, label=labels[client])
    ax.set_title(f"{convergence.assignor}: active tasks per client")
    ax.set_xlabel("rebalance")
    ax.set_ylabel("active tasks")
    if len(clients) <= 12:
        ax.legend(fontsize="x-small", ncols=2)


def _left_to_restore(ax, convergences: Sequence[Convergence]) -> None:  # type: ignore[no-untyped-def]
    for convergence in convergences:
        minutes = [r.time_ms / 60000 for r in convergence.rounds] + [convergence.stable_ms / 60000]
        left = [r.records_to_restore for r in convergence.rounds] + [0]
        ax.step(minutes, left, where="post", label=convergence.assignor)
    ax.set_title("records to restore at each rebalance (0 when stable)")
    ax.set_xlabel("minutes after the change")
    ax.set_ylabel("records")
    ax.legend(fontsize="x-small")


def _totals(axes, convergences: Sequence[Convergence]) -> None:  # type: ignore[no-untyped-def]
    names = [c.assignor for c in convergences]
    measures = (
        ("minutes to stable", [c.stable_ms / 60000 for c in convergences]),
        ("task-minutes unavailable", [c.unavailable_task_ms / 60000 for c in convergences]),
        ("records restored", [float(c.records_restored) for c in convergences]),
    )
    for ax, (label, values) in zip(axes, measures, strict=True):
        bars = ax.bar(range(len(names)), values, color=[f"C{i}" for i in range(len(names))])
        ax.bar_label(bars, fmt="%.3g", fontsize="x-small")
        ax.set_xticks(range(len(names)), names, fontsize="x-small")
        ax.set_title(label, fontsize="medium")


def convergence_figure(convergences: Sequence[Convergence]) -> Figure:
    """Tasks per client (first convergence), records to restore over time, per-assignor totals.

    Parameters
    ----------
    convergences:
        At least one convergence; the row of totals is left out when there is only one.

    Raises
    ------
    ValueError
        When ``convergences`` is empty.
    """
    from matplotlib.figure import Figure

    if not convergences:
        raise ValueError("nothing to plot: no convergence")
    several = len(convergences) > 1
    figure = Figure(figsize=(12.0, 8.0 if several else 4.2), layout="constrained")
    top: Any = figure
    bottom: Any = None
    if several:
        parts: Any = figure.subfigures(2, 1)
        top, bottom = parts[0], parts[1]
    upper = top.subplots(1, 2)
    _tasks_per_client(upper[0], convergences[0])
    _left_to_restore(upper[1], convergences)
    if bottom is not None:
        _totals(bottom.subplots(1, 3), convergences)
    return figure


def plan_figure(plan: Plan) -> Figure:
    """The figure of a plan (see :func:`convergence_figure`), titled with its changes."""
    figure = convergence_figure(plan.convergences)
    figure.suptitle(
        f"{plan.before.name or plan.source}: " + ("; ".join(plan.changes) or "no change")
    )
    return figure


def render(figure: Figure, suffix: str = ".png") -> bytes:
    """The figure as file content: ``.png`` (100 dpi), ``.svg`` or ``.pdf``."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=suffix.lower().lstrip(".") or "png", dpi=100)
    return buffer.getvalue()


def comparison_figure(comparison: Comparison, metrics: Sequence[str] | None = None) -> Figure:
    """The comparison as bar charts, one panel per metric (rows without metrics drawn empty).

    Parameters
    ----------
    comparison:
        The rows, from :func:`~streams_assign.optimal.compare.compare_assignors`.
    metrics:
        Which metrics to draw; default every column of
        :data:`~streams_assign.views.optimal_tables.COLUMNS`.
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from streams_assign.views.optimal_tables import COLUMNS

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


def timelines_figure(results: Sequence[SimulationResult], title: str = "") -> Figure:
    """Two panels: running tasks per protocol over time, and each protocol's rebalance phases.

    Parameters
    ----------
    results:
        One result per protocol of the same timeline.
    title:
        Title of the upper panel.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 6))
    top, bottom = figure.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    for result in results:
        times = [p[0] / 1000.0 for p in result.series]
        running = [p[1] for p in result.series]
        top.step(times, running, where="post", label=f"{result.protocol} (running)")
    top.set_ylabel("tasks running")
    top.legend(loc="lower right")
    if title:
        top.set_title(title)
    for row, result in enumerate(results):
        states = result.group_states + [(result.duration_ms, "end", 0)]
        for (t0, state, _), (t1, _, _) in zip(states, states[1:], strict=False):
            colour = _STATE_COLOURS.get(state)
            if colour is not None:
                bottom.broken_barh(
                    [(t0 / 1000.0, max((t1 - t0) / 1000.0, 0.05))], (row - 0.4, 0.8), color=colour
                )
    bottom.set_yticks(range(len(results)), [r.protocol for r in results])
    bottom.set_xlabel("time (s)")
    bottom.set_title(
        "rebalances (red: PreparingRebalance, orange: CompletingRebalance)", fontsize=9
    )
    figure.tight_layout()
    return figure
