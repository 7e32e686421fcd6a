"""The printed views (rich tables) of an assignment and of the subcommands that decide one.

- an assignment per client (:func:`print_assignment`; ``assign``, ``optimal``, the lag demo) and
  per member of a streams group (:func:`print_streams_group_assignment`);
- ``protocols``: both protocols' decisions side by side (:func:`print_protocols`);
- ``lags``: the lag of every replica (:func:`print_lags`);
- ``simulate``: one row per replayed rebalance (:func:`print_replay`);
- ``consumer-assign``, ``connect-replay``, ``protocol-simulate``: their tables.

The tables of whole convergences are in :mod:`~streams_assign.views.convergence_tables`, those
of the optimum in :mod:`~streams_assign.views.optimal_tables`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from streams_assign.model import Assignment, ClusterState, TaskId

if TYPE_CHECKING:
    from streams_assign.connect.model import ConnectSequence
    from streams_assign.consumer.model import ConsumerGroupState
    from streams_assign.protocol.simulator import SimulationResult
    from streams_assign.simulation.replay import RoundReport
    from streams_assign.streams_group import StreamsGroupAssignment, StreamsGroupState


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


def _member_tasks(tasks: dict[str, tuple[int, ...]] | object) -> str:
    assert isinstance(tasks, dict)
    return " ".join(f"{s}_{p}" for s, parts in tasks.items() for p in parts) or "-"


def print_streams_group_assignment(
    state: StreamsGroupState,
    assignment: StreamsGroupAssignment,
    console: Console | None = None,
    assignor: str = "streams_group_sticky",
) -> None:
    """Print one row per member (process, member id, active and standby tasks, counts);
    ``assignor`` names the assignor that decided in the title."""
    console = console or Console()
    process_of = {m.member_id: m.process_id for m in state.members}
    table = Table(
        title=f"streams group ({len(state.members)} members, "
        f"{len(set(process_of.values()))} processes): {assignor} assignment"
    )
    for column in ("process", "member", "active", "standby", "#"):
        table.add_column(column)
    members = sorted(assignment.members.items(), key=lambda kv: (process_of[kv[0]], kv[0]))
    for member_id, member in members:
        count = sum(len(p) for p in member.active.values()) + sum(
            len(p) for p in member.standby.values()
        )
        table.add_row(
            process_of[member_id][:8],
            member_id,
            _member_tasks(dict(member.active)),
            _member_tasks(dict(member.standby)),
            str(count),
        )
    console.print(table)


def print_protocols(
    cluster: ClusterState,
    sides: Sequence[tuple[str, Assignment, dict[str, Any]]],
    differing: set[TaskId],
    source: str,
    console: Console | None = None,
) -> None:
    """Print the classic and the streams-group decision of one cluster state side by side.

    Parameters
    ----------
    cluster:
        The classic cluster state.
    sides:
        ``(assignor name, assignment, summary)`` of the classic side, then of the streams-group
        side (the summary of ``ProtocolComparison.summary``).
    differing:
        The tasks whose active runs on a different client under the two protocols.
    source:
        The input file name, shown when the state has no name.
    """
    (classic_name, classic, _), (group_name, group, _) = sides
    table = Table(
        title=f"{cluster.name or source}: classic protocol ({classic_name}) vs "
        f"streams group ({group_name})"
    )
    for column in (
        "client",
        "threads",
        "HA act",
        "HA stby",
        "HA warm",
        "SG act",
        "SG stby",
        "moved",
    ):
        table.add_column(column, justify="left" if column == "client" else "right")
    for client in cluster.clients:
        ha = classic.clients.get(client.id)
        sg = group.clients.get(client.id)
        table.add_row(
            client.id[:8],
            str(client.capacity),
            str(len(ha.active) if ha else 0),
            str(len(ha.standby) - len(ha.warmup) if ha else 0),
            str(len(ha.warmup) if ha else 0),
            str(len(sg.active) if sg else 0),
            str(len(sg.standby) if sg else 0),
            str(sum(1 for t in (sg.active if sg else ()) if t in differing)),
        )
    console = console or Console()
    console.print(table)
    for name, _, s in sides:
        console.print(
            f"{name}: {s['stateful_actives_moved']} stateful actives moved off their previous "
            f"owner; actives per thread {s['actives_per_thread_min']}-"
            f"{s['actives_per_thread_max']}; {s['standbys']} standbys, {s['warmups']} warm-ups; "
            f"probing rebalance: {'yes' if s['probing_rebalance_needed'] else 'no'}"
        )
    console.print(f"{len(differing)} active tasks placed differently by the two protocols")


def print_lags(
    cluster: ClusterState,
    rows: Sequence[tuple[str, str, int, str, int | None]],
    uncovered: Sequence[str],
    source: str,
) -> None:
    """Print one row per replica (client, task, lag, state, time to catch up), the new
    instances, and the tasks no client is caught up on (at most 100 columns off a terminal).

    Parameters
    ----------
    cluster:
        The cluster state (for the client labels and ``acceptable.recovery.lag``).
    rows:
        ``(process id, task, lag in records, state, seconds to catch up or None)``.
    uncovered:
        The stateful tasks with no caught-up client.
    source:
        The input file name, shown when the state has no name.
    """
    labels = short_client_ids([c.id for c in cluster.clients])
    acceptable = cluster.configs.acceptable_recovery_lag
    table = Table(
        title=f"{cluster.name or source}: lag per replica, caught up within {acceptable:,}"
    )
    for heading, justify in (
        ("client", "left"),
        ("task", "left"),
        ("lag (records)", "right"),
        ("state", "left"),
        ("caught up in", "right"),
    ):
        table.add_column(heading, justify=justify)  # type: ignore[arg-type]
    for client, task, lag, state, eta in rows:
        table.add_row(
            labels[client],
            task,
            f"{lag:,}",
            state,
            "-" if eta is None else f"{eta:,} s",
        )
    console = Console(width=100) if not Console().is_terminal else Console()
    console.print(table)
    no_state = {
        c.id: [str(t) for t in cluster.stateful_tasks if t not in c.task_lags]
        for c in cluster.clients
    }
    for client, tasks in no_state.items():
        if len(tasks) == len(cluster.stateful_tasks):
            console.print(f"{labels[client]}: no local state (a new instance)")
    if uncovered:
        console.print(f"No caught-up client for: {', '.join(uncovered)}")
    else:
        console.print("Every stateful task has a caught-up client.")


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


def _partitions_text(partitions: list[list[Any]]) -> str:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return "; ".join(f"{t}: {','.join(map(str, ps))}" for t, ps in by_topic.items()) or "-"


def print_consumer_assignment(
    path: Path,
    state: ConsumerGroupState,
    document: dict[str, Any],
    name: str,
    score: Any,
    console: Console,
) -> None:
    """Print one row per member of a consumer group: its topics, owned and assigned partitions.

    Parameters
    ----------
    path:
        The input file (its name titles the table).
    state:
        The consumer-group state.
    document:
        The expected-file document of the assignment (``{"assignment": {member: [[topic,
        partition], ...]}}``).
    name:
        The assignor that decided.
    score:
        Its ``ConsumerScore`` (revoked, moved, kept, rounds).
    """
    table = Table(
        title=f"{path.name}: {name}: {score.revoked} revoked, {score.moved} moved, "
        f"{score.kept} kept, {score.rounds} round(s)"
    )
    for column in ("member", "static", "topics", "owned", "assigned", "partitions"):
        table.add_column(column, overflow="fold")
    for member in state.members:
        assigned = document["assignment"][member.member_id]
        table.add_row(
            member.member_id,
            member.group_instance_id or "-",
            ",".join(member.topics),
            str(len(member.owned_partitions)),
            str(len(assigned)),
            _partitions_text(assigned),
        )
    console.print(table)


def _connect_items(
    connectors: tuple[str, ...], tasks: tuple[tuple[str, int], ...], limit: int = 8
) -> str:
    names = [*sorted(connectors), *(f"{c}-{t}" for c, t in sorted(tasks))]
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" (+{more})" if more > 0 else "") if names else "-"


def print_connect_replay(
    path: Path, sequence: ConnectSequence, rounds: Sequence[Any], scores: Any, console: Console
) -> None:
    """Print one table per round of a Connect replay (per worker: assigned, revoked, delay),
    then the sequence's scores.

    Parameters
    ----------
    path:
        The input file (its name titles the tables).
    sequence:
        The Connect sequence (for its assignor).
    rounds:
        The replayed rounds.
    scores:
        Their ``SequenceScore`` (per round and in total).
    """
    for result, score in zip(rounds, scores.rounds, strict=True):
        table = Table(
            title=f"{path.name} ({sequence.assignor}) round {score.round} at "
            f"{result.time_ms} ms, generation {result.generation}: revoked {score.revoked}, "
            f"moved {score.moved}, downtime {score.stopped_ms} item-ms"
            + ("" if score.balanced else ", not balanced")
        )
        for column in ("worker", "assigned", "revoked", "delay ms"):
            table.add_column(column, overflow="fold")
        for worker, a in result.workers.items():
            table.add_row(
                worker,
                _connect_items(a.assigned_connectors, a.assigned_tasks),
                _connect_items(a.revoked_connectors, a.revoked_tasks),
                str(a.delay_ms),
            )
        console.print(table)
    console.print(
        f"{path.name}: {scores.revoked} revoked, {scores.moved} moved, "
        f"{scores.stopped_ms} item-ms stopped, rounds to balance: {scores.rounds_to_balance}"
    )


def print_simulations(
    results: Sequence[SimulationResult], source: str, console: Console | None = None
) -> None:
    """Print, per protocol of a simulated timeline, one row per event and the totals.

    Parameters
    ----------
    results:
        One result per protocol of the same timeline.
    source:
        The timeline file name.
    """
    console = console or Console()
    for result in results:
        table = Table(title=f"{result.protocol}: {source}")
        for column in (
            "event",
            "t (s)",
            "type",
            "rebalances",
            "generation",
            "task-s unavailable",
            "records restored",
            "time to stable (s)",
        ):
            table.add_column(column, justify="right")
        for e in result.events:
            table.add_row(
                str(e.index),
                f"{e.t_ms / 1000:.1f}",
                e.kind,
                str(e.rebalances),
                str(e.generation),
                f"{sum(e.task_seconds_unavailable.values()):.1f}",
                f"{e.records_restored:,}",
                "-" if e.time_to_stable_ms is None else f"{e.time_to_stable_ms / 1000:.2f}",
            )
        console.print(table)
        reasons = ", ".join(f"{k} {v:.1f}" for k, v in result.task_seconds_unavailable.items())
        console.print(
            f"total: {result.rebalances} rebalances, generation {result.generation}, "
            f"{result.total_task_seconds_unavailable:.1f} task-s unavailable ({reasons}), "
            f"stop-the-world {result.stop_the_world_ms / 1000:.2f} s, "
            f"{result.records_restored:,} records restored"
        )
        stopped = {t: s for t, s in result.final_status.items() if s != "running"}
        if stopped:
            console.print(f"[yellow]not running at the end:[/] {stopped}")
        for violation in result.violations:
            console.print(f"[red]violation:[/] {violation}")


__all__ = [
    "assignment_table",
    "print_assignment",
    "print_connect_replay",
    "print_consumer_assignment",
    "print_lags",
    "print_protocols",
    "print_replay",
    "print_simulations",
    "print_streams_group_assignment",
    "probing_sentence",
    "short_client_ids",
]
