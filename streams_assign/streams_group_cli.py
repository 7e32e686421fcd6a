"""Command-line helpers for streams-group states (KIP-1071): deciding and printing.

``streams-assign assign`` reads both input formats; a streams-group state (``members`` and
``topology``) goes to :func:`assign_streams_group_cli` and is printed by
:func:`print_streams_group_assignment` (or written as the output JSON of
``kafka-streams-group/FORMAT.md``).
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from streams_assign.errors import StreamsGroupUsageError
from streams_assign.streams_group import StreamsGroupAssignment, StreamsGroupState

__all__ = ["assign_streams_group_cli", "print_streams_group_assignment"]


def assign_streams_group_cli(
    state: StreamsGroupState, args: argparse.Namespace
) -> StreamsGroupAssignment:
    """Decide a streams-group state for ``streams-assign assign``.

    Raises
    ------
    StreamsGroupUsageError
        When ``--assignor`` names a classic assignor: only ``streams_group_sticky`` (the
        group coordinator's ``StickyTaskAssignor``) decides for a streams group.
    TaskAssignorException
        When Kafka's assignor throws (a group without members but with tasks).
    """
    from streams_assign.assignors.streams_group_sticky import assign_streams_group

    chosen = getattr(args, "assignor", None)
    if chosen not in (None, "streams_group_sticky"):
        raise StreamsGroupUsageError(
            f"a streams-group state (members + topology) is decided by streams_group_sticky, "
            f"not --assignor {chosen}"
        )
    return assign_streams_group(state)


def _tasks(tasks: dict[str, tuple[int, ...]] | object) -> str:
    assert isinstance(tasks, dict)
    return " ".join(f"{s}_{p}" for s, parts in tasks.items() for p in parts) or "-"


def print_streams_group_assignment(
    state: StreamsGroupState,
    assignment: StreamsGroupAssignment,
    console: Console | None = None,
) -> None:
    """Print one row per member (process, member id, active and standby tasks, counts)."""
    console = console or Console()
    process_of = {m.member_id: m.process_id for m in state.members}
    table = Table(
        title=f"streams group ({len(state.members)} members, "
        f"{len(set(process_of.values()))} processes): streams_group_sticky assignment"
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
            _tasks(dict(member.active)),
            _tasks(dict(member.standby)),
            str(count),
        )
    console.print(table)
