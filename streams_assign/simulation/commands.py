"""The printed views of ``streams-assign simulate`` (the command is ``commands.simulate``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from rich.console import Console
from rich.table import Table

from streams_assign.model import ClusterState
from streams_assign.simulation.replay import RoundReport

__all__ = ["print_replay", "replay_json"]


def replay_json(reports: Sequence[RoundReport]) -> str:
    """The rounds of a replay as the JSON text ``simulate --json`` prints."""
    converged = not reports[-1].probing_rebalance_needed
    return json.dumps({"converged": converged, "rounds": [asdict(r) for r in reports]}, indent=1)


def print_replay(
    cluster: ClusterState,
    reports: Sequence[RoundReport],
    source: str,
    restore_rate: float,
    console: Console | None = None,
) -> None:
    """Print one table row per rebalance and whether the replay converged.

    Parameters
    ----------
    cluster:
        The starting state (for its name and ``probing.rebalance.interval.ms``).
    reports:
        The rounds of :func:`~streams_assign.simulation.replay.replay`, at least one.
    source:
        The input file name, shown when the state has no name.
    restore_rate:
        Records per second restored per task and client.
    """
    interval = cluster.configs.probing_rebalance_interval_ms
    table = Table(
        title=f"{cluster.name or source}: rebalance every {interval} ms, "
        f"restore {restore_rate:g} records/s"
    )
    for column in (
        "round",
        "time (min)",
        "moved actives",
        "warmups",
        "unavailable actives",
        "records to restore",
        "probing next",
    ):
        table.add_column(column, justify="right")
    for r in reports:
        table.add_row(
            str(r.round),
            f"{r.time_ms / 60000:g}",
            str(r.moved_actives),
            str(r.warmups),
            str(r.unavailable_actives),
            f"{r.restore_records:,}",
            "yes" if r.probing_rebalance_needed else "no",
        )
    console = console or Console()
    console.print(table)
    last = reports[-1]
    if not last.probing_rebalance_needed:
        console.print(f"Converged after {last.round} rebalance(s), {last.time_ms / 60000:g} min.")
    else:
        console.print(f"Not converged after {last.round} rebalances (--max-rounds).")
