"""``lag_aware_sticky`` for a streams group (KIP-1071), as the broker plug-in decides (KIP-1357).

The group coordinator hands an assignor per member its process id, client tags, current active,
standby and warm-up tasks and the changelog offsets it last reported (``taskOffsets`` and
``taskEndOffsets``, up to a minute old, absent for a member that never reported), and wants
active and standby tasks per member. :func:`group_cluster_state` forms the classic rebalance
input of the same processes; :class:`~streams_assign.assignors.lag_aware_sticky.
LagAwareStickyTaskAssignor` decides per process; :func:`place_on_members` spreads each
process's tasks over its members. The Java plug-in
(``io.streamsassign.assignor.LagAwareStickyGroupAssignor``) makes the same decision, checked by
``tests/plugins/test_group_differential.py``.

How the target is chosen (``docs/plugins.md``):

- a process is a client; its members (stream threads) are its capacity;
- a task a member of the process runs as active has lag -2 (running); a task a member reported
  an offset for has state, with lag ``end - offset`` (0 for an offset at or beyond the end,
  :func:`reported_lag`) against the end its process's members reported, else the largest end
  any member reported (members report ends only for tasks they hold: a restarted process
  reports offsets from its state directory and no end), -3 (unknown) when nobody reported an
  end; a stateful task a member holds
  as standby or warm-up that no member of the process reported an offset for has state too,
  with the whole changelog as lag when a member reported its end offset, -3 otherwise; every
  other task: no state; the changelog size of a task is the largest end offset any member
  reported;
- why unreported standbys so: members report at join, then every
  ``streams.task.offset.interval.ms`` and when their reconciled tasks change, so in a group
  that has run longer than one interval an unreported standby is one assigned since the
  member's last report, most likely still restoring (a restore slot given to the target of a
  pending move), so it never counts as more caught up than a process without state (a pending
  move stays pending); but its process has some state, so among the processes that must
  restore the task (or that all count as caught up) the core prefers it to one without state,
  where the balance bounds allow (a client with state wins ties in records to restore). -3
  alone would rank it below a process without state when the changelog is known and within
  ``acceptable.recovery.lag`` (every process without state then counts as caught up, -3
  never does), hence the changelog as lag when it is known;
- an end offset sum of ``Long.MAX_VALUE`` counts as not reported: Kafka Streams 4.4 members
  report it for some standby tasks (measured, ``docs/plugins.md``), and as an end it makes
  lags and restore costs near ``Long.MAX_VALUE``, whose sums overflow the Java plug-in's
  ``long`` arithmetic;
- ``acceptable.recovery.lag`` and ``max.warmup.replicas`` are not group configs: the broker
  plug-in uses Kafka Streams' defaults (:data:`ACCEPTABLE_RECOVERY_LAG`,
  :data:`MAX_WARMUP_REPLICAS`);
- each task runs now where lag_aware_sticky's immediate active is: never on a member that must
  restore while a caught-up process exists (KIP-441's rule); a move whose target must restore
  waits, and for the first ``max.warmup.replicas`` of them the target holds a standby slot of
  the task, so it restores meanwhile. The broker inserts no warm-ups and this assignor adds
  no copies beyond ``num.standby.replicas``: lag_aware_sticky's warm-up replicas are left out;
  the move happens at a later group epoch bump (a member joining or leaving, a topology
  change), when the target reports that it has caught up.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping

from streams_assign.assignors.lag_aware_sticky import LagAwareStickyTaskAssignor
from streams_assign.errors import InvalidStreamsGroupError
from streams_assign.model import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    AssignmentConfigs,
    ClientState,
    ClusterState,
    TaskId,
    process_id_sort_key,
)
from streams_assign.streams_group import (
    StreamsGroupAssignment,
    StreamsGroupMember,
    StreamsGroupMemberAssignment,
    StreamsGroupState,
    java_string_order,
)

__all__ = [
    "ACCEPTABLE_RECOVERY_LAG",
    "MAX_WARMUP_REPLICAS",
    "StreamsGroupLagAwareStickyTaskAssignor",
    "assign_lag_aware_streams_group",
    "group_cluster_state",
    "place_on_members",
    "reported_lag",
]

#: ``acceptable.recovery.lag`` of the broker form (Kafka Streams' default), records.
ACCEPTABLE_RECOVERY_LAG = 10_000
#: ``max.warmup.replicas`` of the broker form (Kafka Streams' default): moves whose target
#: restores in a standby slot meanwhile.
MAX_WARMUP_REPLICAS = 2


#: A process id in ``UUID.toString`` form (any case), as Kafka Streams sends it.
_UUID_TEXT = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def _process_ids(members: Iterable[StreamsGroupMember]) -> dict[str, str]:
    """Process id -> the UUID it is ordered by: itself when every process id is a UUID,
    otherwise ``00000000-0000-0000-0000-<n>`` numbered from 1 in ``String.compareTo`` order."""
    ids = sorted({m.process_id for m in members}, key=java_string_order)
    if all(_UUID_TEXT.fullmatch(pid) for pid in ids):
        return {pid: str(uuid.UUID(pid)) for pid in ids}
    return {pid: str(uuid.UUID(int=n + 1)) for n, pid in enumerate(ids)}


class _Numbering:
    """Subtopology ids as the numbers of TaskIds: their value when every id is a decimal
    number (Kafka Streams' ids), otherwise their rank in ``String.compareTo`` order.

    Ids of one number (``1`` and ``01``, which Kafka Streams never writes) share its tasks;
    when only one of them is stateful, :class:`~streams_assign.errors.InvalidStreamsGroupError`
    is raised (the plug-in's ``GroupDecision`` throws there too)."""

    def __init__(self, state: StreamsGroupState) -> None:
        ids = sorted(state.topology, key=java_string_order)
        numeric = all(sub.isdecimal() and sub.isascii() for sub in ids)
        self.number = {sub: int(sub) if numeric else n for n, sub in enumerate(ids)}
        self.name = {n: sub for sub, n in self.number.items()}
        first: dict[int, str] = {}
        for sub in ids:
            other = first.setdefault(self.number[sub], sub)
            if state.topology[other].stateful != state.topology[sub].stateful:
                raise InvalidStreamsGroupError(
                    "topology",
                    f"subtopology ids {other} and {sub} are both TaskId subtopology "
                    f"{self.number[sub]} but only one is stateful",
                )

    def task(self, sub: str, partition: int) -> TaskId | None:
        """The task, or None for a subtopology the topology does not have."""
        n = self.number.get(sub)
        return None if n is None else TaskId(n, partition)

    def tasks(self, sets: Iterable[Mapping[str, Iterable[int]]]) -> set[TaskId]:
        """Every task of the task sets that the topology has."""
        found = {self.task(s, p) for tasks in sets for s, ps in tasks.items() for p in ps}
        found.discard(None)
        return found  # type: ignore[return-value]

    def offsets(
        self, reports: Iterable[Mapping[str, Mapping[int, int]]], below: int | None = None
    ) -> dict[TaskId, int]:
        """Per task, the largest offset of the reports (only values below ``below`` when given)."""
        out: dict[TaskId, int] = {}
        for report in reports:
            for sub, parts in report.items():
                for p, value in parts.items():
                    task = self.task(sub, p)
                    if task is not None and (below is None or value < below):
                        out[task] = max(value, out.get(task, value))
        return out


def group_cluster_state(
    state: StreamsGroupState,
    acceptable_recovery_lag: int = ACCEPTABLE_RECOVERY_LAG,
    max_warmup_replicas: int = MAX_WARMUP_REPLICAS,
) -> ClusterState:
    """The classic rebalance input the group's processes form (see the module docstring).

    Parameters
    ----------
    state:
        A validated streams-group state.
    acceptable_recovery_lag, max_warmup_replicas:
        The classic configs the broker form decides with (records; moves).

    Returns
    -------
    ClusterState
        One client per process (id from :func:`_process_ids`), capacity its member count;
        subtopologies numbered as :class:`_Numbering` says. Per client, its stateful tasks with
        local state and their lags: -2 for the process's actives; for a task it reported an
        offset for, :func:`reported_lag` against its own members' largest end offset, else the
        largest any member reported (-3 when nobody did); for a standby or warm-up task it
        holds without a report, the task's changelog size (the largest end offset any member
        reported) or -3 when nobody reported one. ``changelog_end_offset_sums``: those sizes,
        ``None`` when no member reported an end offset. Reported end offsets of
        ``Long.MAX_VALUE`` are left out.
    """
    numbering = _Numbering(state)
    stateful = {
        TaskId(numbering.number[s], p)
        for s, sub in state.topology.items()
        if sub.stateful
        for p in range(sub.partitions)
    }
    stateless = {
        TaskId(numbering.number[s], p)
        for s, sub in state.topology.items()
        if not sub.stateful
        for p in range(sub.partitions)
    }
    known = stateful | stateless
    ids = _process_ids(state.members)
    ends = {
        t: v
        for t, v in numbering.offsets(
            (m.task_end_offsets for m in state.members), below=LONG_MAX_VALUE
        ).items()
        if t in stateful
    }
    clients = []
    for pid, members in _by_process(state).items():
        active = numbering.tasks(m.active_tasks for m in members) & known
        held = numbering.tasks(t for m in members for t in (m.standby_tasks, m.warmup_tasks))
        offsets = numbering.offsets(m.task_offsets for m in members)
        member_ends = numbering.offsets((m.task_end_offsets for m in members), LONG_MAX_VALUE)
        # The process's own tasks only (not every stateful task): its actives, the tasks it
        # reported an offset for, then its unreported standby and warm-up tasks.
        lags = {task: LATEST_OFFSET for task in active if task in stateful}
        for task, offset in offsets.items():
            if task in stateful and task not in active:
                lags[task] = reported_lag(offset, member_ends.get(task, ends.get(task)))
        for task in sorted(held):
            if task in stateful and task not in lags:
                lags[task] = ends.get(task, UNKNOWN_OFFSET_SUM)
        clients.append(
            ClientState(
                id=ids[pid],
                capacity=len(members),
                prev_active=tuple(sorted(active)),
                prev_standby=tuple(sorted((held & known) - active)),
                task_lags=lags,
                tags=dict(members[0].client_tags),
            )
        )
    clients.sort(key=lambda c: process_id_sort_key(c.id))
    return ClusterState(
        configs=AssignmentConfigs(
            acceptable_recovery_lag=acceptable_recovery_lag,
            max_warmup_replicas=max_warmup_replicas,
            num_standby_replicas=state.configs.num_standby_replicas,
            rack_aware_assignment_tags=tuple(state.configs.rack_aware_assignment_tags),
        ),
        stateful_tasks=tuple(sorted(stateful)),
        stateless_tasks=tuple(sorted(stateless)),
        clients=tuple(clients),
        changelog_end_offset_sums=ends or None,
    )


def reported_lag(offset: int, end: int | None) -> int:
    """The lag, in records, of a reported offset sum against a reported end offset sum.

    ``-2`` and ``-3`` stay; no end gives ``-3`` (state of unknown lag); otherwise ``end -
    offset``, and 0 for an offset at or beyond the end. This differs from the classic rule
    (:func:`~streams_assign.model.compute_task_lag`, Kafka's ``ClientState.computeTaskLags``:
    an offset beyond the end reads as a truncated changelog, the whole end to restore) because a
    streams group's reports are not taken together: the end may be another member's and up to a
    report interval old, and Kafka 4.4 members report a caught-up store's end offset sum one
    below its offset sum (658 of 661 such pairs in ``docs/plugins.md``'s runs), which the
    classic rule would read as a whole changelog to restore.
    """
    if offset in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
        return offset
    if end is None:
        return UNKNOWN_OFFSET_SUM
    return max(end - offset, 0)


def _by_process(state: StreamsGroupState) -> dict[str, list[StreamsGroupMember]]:
    """Process id -> its members in member id (``String.compareTo``) order."""
    by_process: dict[str, list[StreamsGroupMember]] = {}
    for member in sorted(state.members, key=lambda m: java_string_order(m.member_id)):
        by_process.setdefault(member.process_id, []).append(member)
    return by_process


def _spread(
    tasks: list[TaskId], members: list[StreamsGroupMember], owned: dict[str, set[TaskId]]
) -> dict[str, list[TaskId]]:
    """The process's tasks over its members: every member ``floor`` or ``ceil`` of an even
    share (the first ``n mod m`` to reach ``ceil`` keep it), each task first to the member that
    owned it, the rest to the member with the fewest (then member id order)."""
    n, m = len(tasks), len(members)
    floor, highs = divmod(n, m)
    placed: dict[str, list[TaskId]] = {member.member_id: [] for member in members}

    def room(member_id: str) -> bool:
        count = len(placed[member_id])
        return count < floor or (count == floor and highs > 0)

    rest = []
    for task in tasks:
        owner = next((x.member_id for x in members if task in owned[x.member_id]), None)
        if owner is not None and room(owner):
            if len(placed[owner]) == floor:
                highs -= 1
            placed[owner].append(task)
        else:
            rest.append(task)
    for task in rest:
        target = min(
            (x.member_id for x in members if room(x.member_id)),
            key=lambda mid: (len(placed[mid]), java_string_order(mid)),
        )
        if len(placed[target]) == floor:
            highs -= 1
        placed[target].append(task)
    return placed


def place_on_members(
    state: StreamsGroupState, decided: Mapping[str, tuple[list[TaskId], list[TaskId]]]
) -> StreamsGroupAssignment:
    """Each process's actives and standbys spread over its members (:func:`_spread`).

    ``decided`` maps the client id of :func:`group_cluster_state` to its (actives, standbys).
    """
    numbering = _Numbering(state)
    ids = _process_ids(state.members)
    result: dict[str, StreamsGroupMemberAssignment] = {}
    for pid, members in _by_process(state).items():
        active, standby = decided[ids[pid]]
        actives = _spread(
            active, members, {m.member_id: numbering.tasks([m.active_tasks]) for m in members}
        )
        standbys = _spread(
            standby,
            members,
            {m.member_id: numbering.tasks([m.standby_tasks, m.warmup_tasks]) for m in members},
        )
        for member in members:
            result[member.member_id] = StreamsGroupMemberAssignment(
                active=_task_set(actives[member.member_id], numbering),
                standby=_task_set(standbys[member.member_id], numbering),
            )
    return StreamsGroupAssignment(members={m.member_id: result[m.member_id] for m in state.members})


def _task_set(tasks: list[TaskId], numbering: _Numbering) -> dict[str, tuple[int, ...]]:
    grouped: dict[str, list[int]] = {}
    for task in sorted(tasks):
        grouped.setdefault(numbering.name[task.subtopology], []).append(task.partition)
    return {sub: tuple(parts) for sub, parts in grouped.items()}


def assign_lag_aware_streams_group(state: StreamsGroupState) -> StreamsGroupAssignment:
    """lag_aware_sticky's decision for a streams group, per member (the broker plug-in's).

    Parameters
    ----------
    state:
        A validated streams-group state.

    Returns
    -------
    StreamsGroupAssignment
        Per member (the state's member order) active and standby tasks; no warm-ups.

    Raises
    ------
    InvalidStreamsGroupError
        For a subtopology id that is not a number.
    """
    if not state.members:
        return StreamsGroupAssignment(members={})
    cluster = group_cluster_state(state)
    decision = LagAwareStickyTaskAssignor().assign(cluster)
    decided = {
        pid: (list(c.active), [t for t in c.standby if t not in set(c.warmup)])
        for pid, c in decision.clients.items()
    }
    return place_on_members(state, decided)


class StreamsGroupLagAwareStickyTaskAssignor:
    """lag_aware_sticky for streams groups (:func:`assign_lag_aware_streams_group`)."""

    name = "lag_aware_sticky"

    def assign_group(self, state: StreamsGroupState) -> StreamsGroupAssignment:
        """Per member active and standby tasks; see :func:`assign_lag_aware_streams_group`."""
        return assign_lag_aware_streams_group(state)
