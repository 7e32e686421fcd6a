"""Human-readable views of an assignment (rich tables), used by the CLIs and the demo."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from streams_assign.model import Assignment, ClusterState, TaskId


def _tasks(tasks: tuple[TaskId, ...] | list[TaskId], limit: int = 12) -> str:
    shown = [str(t) for t in tasks[:limit]]
    more = len(tasks) - limit
    return ", ".join(shown) + (f" (+{more})" if more > 0 else "") if tasks else "-"


def short_client_ids(process_ids: list[str]) -> dict[str, str]:
    """Short, distinct labels for process ids: the first 8 hex digits, else the last 12.

    Random UUIDs differ in their first digits; sequential test ids such as
    ``00000000-0000-0000-0000-0000000000a1`` only in their last ones.
    """
    for label in (lambda pid: pid[:8], lambda pid: pid[-12:]):
        labels = {pid: label(pid) for pid in process_ids}
        if len(set(labels.values())) == len(process_ids):
            return labels
    return {pid: pid for pid in process_ids}


def assignment_table(
    cluster: ClusterState, assignment: Assignment, title: str | None = None
) -> Table:
    """A table with one row per client: capacity, actives, standbys, warmups, moved-in tasks.

    Clients show as a short form of their process id (see :func:`short_client_ids`; the JSON
    output has them whole), with their ``client.tag.*`` values when any client has tags.
    "Moved in" lists the actives the client did not run as active before (``prev_active``): the
    tasks whose processing moves to it at this rebalance.
    """
    table = Table(title=title)
    labels = short_client_ids([client.id for client in cluster.clients])
    show_tags = any(client.tags for client in cluster.clients)
    table.add_column("client", no_wrap=True)
    if show_tags:
        table.add_column("tags")
    table.add_column("threads", justify="right")
    table.add_column("act", justify="right")
    table.add_column("stby", justify="right")
    table.add_column("warm", justify="right")
    table.add_column("moved in (active)", overflow="fold")
    table.add_column("warmup tasks", overflow="fold")
    for client in cluster.clients:
        decided = assignment.clients[client.id]
        previous = set(client.prev_active)
        moved_in = [t for t in decided.active if t not in previous]
        table.add_row(
            labels[client.id],
            *([",".join(client.tags.values()) or "-"] if show_tags else []),
            str(client.capacity),
            str(len(decided.active)),
            str(len(decided.standby)),
            str(len(decided.warmup)),
            _tasks(moved_in),
            _tasks(decided.warmup),
        )
    return table


def probing_sentence(cluster: ClusterState, assignment: Assignment) -> str:
    """One line: whether a probing rebalance follows and when (probing.rebalance.interval.ms)."""
    interval = cluster.configs.probing_rebalance_interval_ms
    if assignment.probing_rebalance_needed:
        return (
            f"Probing rebalance: yes, in {interval} ms ({interval / 60000:g} min, "
            "probing.rebalance.interval.ms): some stateful tasks still wait for a caught-up "
            "client."
        )
    return (
        "Probing rebalance: no, every stateful active is on a caught-up client "
        "(or on the most caught-up one)."
    )


def print_assignment(
    cluster: ClusterState,
    assignment: Assignment,
    console: Console | None = None,
    title: str | None = None,
) -> None:
    """Print the per-client table and the probing-rebalance line."""
    console = console or Console()
    title = title or f"{cluster.name or 'cluster'}: {assignment.assignor} assignment"
    console.print(assignment_table(cluster, assignment, title=title))
    console.print(probing_sentence(cluster, assignment))


__all__ = [
    "assignment_table",
    "print_assignment",
    "probing_sentence",
    "short_client_ids",
]
