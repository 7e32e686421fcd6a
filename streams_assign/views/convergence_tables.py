"""The printed views of whole convergences: a plan's totals and rebalances (``plan``), and the
totals to stable beside the target optimum's one-step cost (``plan --optimal``, ``compare``)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from streams_assign.simulation.plan import Plan
from streams_assign.simulation.probing import Convergence, Move
from streams_assign.views.tables import short_client_ids

__all__ = [
    "convergence_vs_optimum_table",
    "moves_text",
    "print_plan",
    "rounds_table",
    "totals_table",
]

_WIDE = 100
_MOVES_SHOWN = 6


def _minutes(ms: int) -> str:
    return f"{ms / 60000:.1f}"


def totals_table(convergences: Sequence[Convergence], title: str | None = None) -> Table:
    """One row per assignor: rebalances, time until stable and the totals over all of them."""
    table = Table(title=title)
    table.add_column("assignor", no_wrap=True)
    for heading in (
        "rebalances",
        "stable after\n(min)",
        "records\nrestored",
        "unavailable\n(task-min)",
        "active\nmoves",
        "warmups",
    ):
        table.add_column(heading, justify="right")
    for c in convergences:
        table.add_row(
            c.assignor,
            f"{c.rebalances}" + ("" if c.converged else " (probing)"),
            _minutes(c.stable_ms),
            f"{c.records_restored:,}",
            f"{c.unavailable_task_ms / 60000:.1f}",
            str(c.moves),
            str(c.warmups),
        )
    return table


def moves_text(moves: Sequence[Move], labels: dict[str, str]) -> str:
    """``task:from>to`` for the first moves, ``(+N)`` for the rest, ``-`` for none."""
    shown = [
        f"{m.task}:{labels.get(m.source, '-') if m.source else 'none'}>{labels[m.target]}"
        for m in moves[:_MOVES_SHOWN]
    ]
    more = len(moves) - _MOVES_SHOWN
    return ", ".join(shown) + (f" (+{more})" if more > 0 else "") if moves else "-"


def rounds_table(convergence: Convergence, labels: dict[str, str], title: str) -> Table:
    """One row per rebalance: time, moves (task source>target), warmups, restore, probing."""
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("min", justify="right")
    table.add_column("active moves (task:from>to)", overflow="fold", max_width=34)
    table.add_column("warm\nups", justify="right")
    table.add_column("to restore", justify="right")
    table.add_column("restored", justify="right")
    table.add_column("unavail.\ntask-min", justify="right")
    table.add_column("probe", justify="center")
    for r in convergence.rounds:
        table.add_row(
            str(r.round),
            _minutes(r.time_ms),
            moves_text(r.moves, labels),
            str(len(r.warmups)),
            f"{r.records_to_restore:,}",
            f"{r.records_restored:,}",
            f"{r.unavailable_task_ms / 60000:.1f}",
            "yes" if r.probing_rebalance_needed else "no",
        )
    return table


def print_plan(plan: Plan, console: Console | None = None) -> None:
    """Print the changes, the totals per assignor and each assignor's rebalances (100 columns)."""
    console = console or Console()
    if not console.is_terminal or console.width > _WIDE:
        console = Console(width=_WIDE)
    name = plan.before.name or plan.source
    console.print(
        f"[bold]{name}[/]: {len(plan.before.clients)} -> {len(plan.after.clients)} clients; "
        + ("; ".join(plan.changes) if plan.changes else "no change (the next rebalance as is)")
    )
    interval = plan.after.configs.probing_rebalance_interval_ms
    measured = len(plan.rates.measured)
    console.print(
        f"probing.rebalance.interval.ms {interval} ({interval / 60000:g} min); restore "
        f"{plan.rates.default:g} records/s per task"
        + (f" ({measured} measured (client, task) rates)" if measured else "")
    )
    if plan.optimum is not None:
        scores = {c.assignor: c for c in plan.convergences}
        console.print(
            convergence_vs_optimum_table(scores, plan.optimum, "until stable, per assignor")
        )
    else:
        console.print(totals_table(plan.convergences, title="until stable, per assignor"))
    labels = short_client_ids([c.id for c in plan.after.clients])
    for convergence in plan.convergences:
        console.print(
            rounds_table(convergence, labels, title=f"{convergence.assignor}: rebalances")
        )
        if convergence.detection_ms:
            console.print(
                f"  the crash is detected after {convergence.detection_ms} ms "
                "(session.timeout.ms); first rebalance then"
            )
        if convergence.repeating:
            console.print(
                "  [yellow]keeps asking for probing rebalances that change nothing; "
                "stopped at the first repeat[/]"
            )
        elif not convergence.converged:
            console.print(
                f"  [yellow]still probing after {convergence.rebalances} rebalances "
                "(--max-rounds)[/]"
            )
    for assignor, message in plan.errors:
        console.print(f"[red]{assignor}:[/] {message}")


def convergence_vs_optimum_table(
    scores: dict[str, Convergence], optimum: dict[str, int] | None, title: str
) -> Table:
    """Totals to stable per assignor, with the target optimum's one-step cost as the last row."""
    table = Table(title=title)
    table.add_column("assignor", no_wrap=True)
    for heading in (
        "rebalances",
        "stable after\n(min)",
        "records\nrestored",
        "unavailable\n(task-min)",
        "active\nmoves",
        "restored vs\noptimum",
    ):
        table.add_column(heading, justify="right")
    for name, c in scores.items():
        ratio = "-"
        if optimum and optimum["restore_records"]:
            ratio = f"x{c.records_restored / optimum['restore_records']:.2f}"
        table.add_row(
            name,
            f"{c.rebalances}" + ("" if c.converged else " (probing)"),
            f"{c.stable_ms / 60000:.1f}",
            f"{c.records_restored:,}",
            f"{c.unavailable_task_ms / 60000:.1f}",
            str(c.moves),
            ratio,
        )
    if optimum is not None:
        table.add_row(
            "optimal_target\n(one step)",
            "1",
            "-",
            f"{optimum['restore_records']:,}",
            "-",
            str(optimum["moves"]),
            "x1.00",
        )
    return table
