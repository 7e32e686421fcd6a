"""The printed views of Kafka's rebalance chain (``plan``): every rebalance with its kind, time
and moves, and how the chain varies with where new process ids sort."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from streams_assign.simulation.chain import FOLLOW_UP, PROBING, Chain
from streams_assign.simulation.plan import IdSpread, Plan
from streams_assign.views.convergence_tables import moves_text
from streams_assign.views.tables import short_client_ids

__all__ = ["chain_table", "id_spread_table", "print_chains"]


_WIDE = 100


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f}"


def chain_table(chain: Chain, labels: dict[str, str], title: str) -> Table:
    """One row per rebalance: kind, time (s), moves (task:from>to), withheld tasks, warmups,
    probing flag."""
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("s", justify="right")
    table.add_column("kind", no_wrap=True)
    table.add_column("active moves (task:from>to)", overflow="fold", max_width=34)
    table.add_column("with-\nheld", justify="right")
    table.add_column("warm\nups", justify="right")
    table.add_column("probe", justify="center")
    for r in chain.rebalances:
        table.add_row(
            str(r.number),
            _seconds(r.time_ms),
            r.kind,
            moves_text(r.moves, labels),
            str(len(r.withheld)),
            str(sum(len(c.warmup) for c in r.decided.values())),
            "yes" if r.probing_rebalance_needed else "no",
        )
    return table


def id_spread_table(spread: IdSpread) -> Table:
    """One row per sampled placement of the new process ids in ``java.util.UUID`` order."""
    table = Table(title=f"{spread.assignor}: by where the new process id(s) sort")
    table.add_column("new id(s)", no_wrap=True)
    for heading in (
        "rebal-\nances",
        "follow-\nups",
        "moves",
        "stable\nafter (s)",
        "actives\n≠ 1st",
    ):
        table.add_column(heading, justify="right")
    for index, (ids, chain) in enumerate(spread.samples):
        table.add_row(
            ", ".join(pid[:8] for pid in ids),
            str(len(chain.rebalances)),
            str(chain.count(FOLLOW_UP)),
            str(chain.moves),
            _seconds(chain.stable_ms),
            str(spread.differing_actives[index]),
        )
    return table


def print_chains(plan: Plan, console: Console | None = None) -> None:
    """Each chain's rebalances, then the id-order spread when there is one (100 columns)."""
    console = console or Console()
    if not console.is_terminal or console.width > _WIDE:
        console = Console(width=_WIDE)
    labels = short_client_ids([c.id for c in plan.after.clients])
    for chain in plan.chains:
        console.print(
            chain_table(chain, labels, title=f"{chain.assignor}: Kafka's rebalance chain")
        )
        console.print(
            f"  {len(chain.rebalances)} rebalances ({chain.count(FOLLOW_UP)} immediate "
            f"follow-ups, {chain.count(PROBING)} probing), {chain.moves} active moves; stable "
            f"after {_seconds(chain.stable_ms)} s; follow-ups {plan.follow_up_ms} ms after "
            f"their decision, session.timeout.ms {plan.session_timeout_ms}"
            + ("" if chain.converged else "; [yellow]not stable (repeats or limit)[/]")
        )
        if not chain.threads_known:
            console.print(
                "  [yellow]the input does not list which stream thread owns which task: the "
                "first rebalance's moves between threads of one client are a guess[/]"
            )
    if plan.id_spread is not None:
        spread = plan.id_spread
        console.print(id_spread_table(spread))
        low, high = spread.span("differing_actives")
        console.print(
            f"  Kafka breaks ties by process id: rebalances {_span(spread, 'rebalances')}, "
            f"moves {_span(spread, 'moves')}, final actives placed differently {low}-{high}; "
            "give --add-id for one answer"
        )


def _span(spread: IdSpread, metric: str) -> str:
    low, high = spread.span(metric)
    return str(low) if low == high else f"{low}-{high}"
