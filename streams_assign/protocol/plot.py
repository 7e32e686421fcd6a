"""Matplotlib figures of simulated timelines: tasks running over time and a rebalance Gantt."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from streams_assign.protocol.simulator import SimulationResult

__all__ = [
    "plot_timelines",
]

_STATE_COLOURS = {"PreparingRebalance": "tab:red", "CompletingRebalance": "tab:orange"}


def plot_timelines(results: Sequence[SimulationResult], path: str | Path, title: str = "") -> None:
    """Write a two-panel figure: running tasks per protocol over time, and rebalance phases.

    The file is written whole (a temporary file renamed into place) or not at all; its format
    follows the suffix (``.png``, ``.svg``, ``.pdf``).

    Parameters
    ----------
    results:
        One result per protocol of the same timeline.
    path:
        Output file.
    title:
        Figure title.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(10, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
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
                bottom.broken_barh([(t0 / 1000.0, max((t1 - t0) / 1000.0, 0.05))],
                                   (row - 0.4, 0.8), color=colour)
    bottom.set_yticks(range(len(results)), [r.protocol for r in results])
    bottom.set_xlabel("time (s)")
    bottom.set_title("rebalances (red: PreparingRebalance, orange: CompletingRebalance)",
                     fontsize=9)
    fig.tight_layout()
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=target.suffix)
    os.close(fd)
    try:
        fig.savefig(tmp)
        os.replace(tmp, target)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
