"""Convergence plots (matplotlib): tasks per client per rebalance, records left to restore over
time, and each assignor's totals. Needs the ``report`` extra; draws with the Agg backend (no
display)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from streams_assign.planning.convergence import Convergence
from streams_assign.report import short_client_ids

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from streams_assign.planning.plan import Plan

__all__ = ["convergence_figure", "plan_figure", "render"]


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
