"""The assignor a simulated group leader runs: a small interface and its implementations.

A :class:`GroupAssignor` sees what a classic-protocol leader sees in the JoinGroup response: the
members with what they report (owned tasks, previous tasks, local state lags) and the tasks to
spread, and returns each member's tasks. Task names are opaque strings: Streams task ids
(``0_3``) here, topic-partitions (``orders-3``) or Connect connectors/tasks for the consumer and
Connect assignors of issue #13, which plug in through :class:`CallableAssignor`.

- :class:`BalancedStickyAssignor`: keeps what each member ran up to its fair share, deals the
  rest to the least loaded members; fast enough for 1000 members x 10,000 tasks.
- :class:`StreamsAssignor`: the Streams assignors of :mod:`streams_assign.assignors`
  (``high_availability``, ``legacy_sticky``, ...), one member = one Streams client.

:func:`cooperative_adjust` is the rule every cooperative assignor applies (KIP-429
``ConsumerPartitionAssignor`` and ``StreamsPartitionAssignor``): a task still owned by another
member is withheld from its new owner until the old owner has revoked it and rejoined.
"""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from streams_assign.errors import UnknownGroupAssignorError

__all__ = [
    "CONSUMER_STRATEGIES",
    "AssignFunction",
    "BalancedStickyAssignor",
    "CallableAssignor",
    "ConsumerAssignor",
    "GroupAssignment",
    "GroupAssignor",
    "MemberSubscription",
    "StreamsAssignor",
    "cooperative_adjust",
    "make_assignor",
    "process_uuid",
]


@dataclass(frozen=True)
class MemberSubscription:
    """What one member reports in its JoinGroup metadata.

    Attributes
    ----------
    member_id:
        The member id the coordinator gave it.
    owned:
        Tasks it still owns (cooperative members; empty for eager members, which revoked all).
    previous:
        Tasks it ran in the previous generation (Streams reports them in its subscription even
        when eager).
    task_lags:
        Records behind the changelog end, per task it has local state for.
    capacity:
        Stream threads / weight, >= 1.
    generation:
        The generation of its previous assignment, -1 if it never had one.
    """

    member_id: str
    owned: frozenset[str] = frozenset()
    previous: frozenset[str] = frozenset()
    task_lags: Mapping[str, int] = field(default_factory=dict)
    capacity: int = 1
    generation: int = -1


@dataclass(frozen=True)
class GroupAssignment:
    """The leader's decision: active tasks per member, and Streams' extras.

    Attributes
    ----------
    active:
        Member id -> the tasks it runs.
    standby:
        Member id -> standby tasks, warmups included (kept caught up, never processing).
    warmup:
        Member id -> the standbys that are warmup replicas.
    probing_rebalance_needed:
        The leader should rejoin after ``probing.rebalance.interval.ms``.
    """

    active: Mapping[str, frozenset[str]]
    standby: Mapping[str, frozenset[str]] = field(default_factory=dict)
    warmup: Mapping[str, frozenset[str]] = field(default_factory=dict)
    probing_rebalance_needed: bool = False


class GroupAssignor(Protocol):
    """An assignor a simulated leader runs once per rebalance.

    ``assign`` receives the members in the leader's JoinGroup-response order, every task, the
    stateful ones and each stateful task's changelog end offset (records).
    """

    name: str

    def assign(
        self,
        members: Sequence[MemberSubscription],
        tasks: Sequence[str],
        stateful: frozenset[str],
        end_offsets: Mapping[str, int],
    ) -> GroupAssignment:
        """Decide the next generation's assignment."""


class BalancedStickyAssignor:
    """Sticky and balanced: each member keeps its previous tasks up to its share.

    Members are visited in member-id order; each keeps the tasks it ran (owned or previous),
    the least lagging first, up to ``ceil(tasks / members)`` (only as many members as the
    remainder may hold the ceiling); then the unassigned tasks go, in task order, to the member
    with the fewest tasks (ties by member id). O(T log M).
    """

    name = "balanced_sticky"

    def assign(
        self,
        members: Sequence[MemberSubscription],
        tasks: Sequence[str],
        stateful: frozenset[str],
        end_offsets: Mapping[str, int],
    ) -> GroupAssignment:
        """See :class:`GroupAssignor`."""
        if not members:
            return GroupAssignment(active={})
        ordered = sorted(members, key=lambda m: m.member_id)
        n = len(ordered)
        floor, extra = divmod(len(tasks), n)
        all_tasks = set(tasks)
        taken: set[str] = set()
        result: dict[str, list[str]] = {}
        ceilings_left = extra
        for member in ordered:
            # the most caught-up first: a member gives away the tasks it is still restoring
            keep = sorted(
                (member.owned | member.previous) & all_tasks - taken,
                key=lambda t, lags=member.task_lags: (lags.get(t, 0), t),  # type: ignore[misc]
            )
            quota = floor + (1 if ceilings_left > 0 and len(keep) > floor else 0)
            if quota > floor:
                ceilings_left -= 1
            kept = keep[:quota]
            taken.update(kept)
            result[member.member_id] = kept
        heap = [(len(result[m.member_id]), m.member_id) for m in ordered]
        heapq.heapify(heap)
        for task in tasks:
            if task in taken:
                continue
            count, member_id = heapq.heappop(heap)
            result[member_id].append(task)
            heapq.heappush(heap, (count + 1, member_id))
        return GroupAssignment(active={m: frozenset(ts) for m, ts in result.items()})


AssignFunction = Callable[
    [Mapping[str, frozenset[str]], Sequence[str]], Mapping[str, Sequence[str]]
]
"""``(members' owned-or-previous tasks, all tasks) -> tasks per member``."""


class CallableAssignor:
    """Adapts a plain function ``(members, tasks) -> {member id: tasks}`` (issue #13's assignors).

    Parameters
    ----------
    name:
        The assignor's name (the JoinGroup protocol name).
    function:
        Receives ``{member id: owned-or-previous tasks}`` in member order and the task list.
    """

    def __init__(
        self,
        name: str,
        function: AssignFunction,
    ) -> None:
        self.name = name
        self._function = function

    def assign(
        self,
        members: Sequence[MemberSubscription],
        tasks: Sequence[str],
        stateful: frozenset[str],
        end_offsets: Mapping[str, int],
    ) -> GroupAssignment:
        """See :class:`GroupAssignor`."""
        decided = self._function({m.member_id: m.owned | m.previous for m in members}, tasks)
        return GroupAssignment(
            active={m.member_id: frozenset(decided.get(m.member_id, ())) for m in members}
        )


def process_uuid(member_key: str) -> str:
    """A stable process id (UUID) for a simulated Streams client."""
    return str(uuid.uuid5(uuid.NAMESPACE_OID, member_key))


class StreamsAssignor:
    """The Streams assignors of :func:`streams_assign.assignors.get_assignor`, a member a client.

    Each member becomes a client whose ``task_lags`` are ``-2`` (Kafka's ``LATEST_OFFSET``) for
    the tasks it still owns or ran last generation and its local-state lag for the others; the
    changelog end offsets are the tasks' current sizes. Actives, standbys, warmups and the
    probing flag come back per member.

    Parameters
    ----------
    name:
        ``high_availability``, ``legacy_sticky`` (alias ``sticky``) or ``fallback_prior``.
    acceptable_recovery_lag, max_warmup_replicas, num_standby_replicas:
        Kafka Streams configs (records, replicas, replicas).
    """

    def __init__(
        self,
        name: str = "high_availability",
        acceptable_recovery_lag: int = 10_000,
        max_warmup_replicas: int = 2,
        num_standby_replicas: int = 0,
    ) -> None:
        from streams_assign.assignors import get_assignor

        self.name = name
        self._assignor = get_assignor(name)
        self._configs = {
            "acceptable_recovery_lag": acceptable_recovery_lag,
            "max_warmup_replicas": max_warmup_replicas,
            "num_standby_replicas": num_standby_replicas,
        }

    def assign(
        self,
        members: Sequence[MemberSubscription],
        tasks: Sequence[str],
        stateful: frozenset[str],
        end_offsets: Mapping[str, int],
    ) -> GroupAssignment:
        """See :class:`GroupAssignor`."""
        from streams_assign.formats.cluster_state import parse_cluster_state

        if not members:
            return GroupAssignment(active={})
        by_process = {process_uuid(m.member_id): m for m in members}
        clients = []
        for process_id, member in by_process.items():
            running = (member.owned | member.previous) & set(tasks)
            lags = {t: lag for t, lag in member.task_lags.items() if t in stateful}
            for task in running & stateful:
                lags[task] = -2
            clients.append(
                {
                    "id": process_id,
                    "capacity": member.capacity,
                    "prev_active": sorted(running, key=_task_order),
                    "prev_standby": [],
                    "task_lags": lags,
                }
            )
        document = {
            "configs": self._configs,
            "stateful_tasks": sorted((t for t in tasks if t in stateful), key=_task_order),
            "stateless_tasks": sorted((t for t in tasks if t not in stateful), key=_task_order),
            "changelog_end_offset_sums": {t: end_offsets.get(t, 0) for t in tasks if t in stateful},
            "clients": clients,
        }
        decided = self._assignor.assign(parse_cluster_state(document))
        active, standby, warmup = {}, {}, {}
        for process_id, member in by_process.items():
            client = decided.clients.get(process_id)
            active[member.member_id] = frozenset(str(t) for t in (client.active if client else ()))
            standby[member.member_id] = frozenset(
                str(t) for t in (client.standby if client else ())
            )
            warmup[member.member_id] = frozenset(str(t) for t in (client.warmup if client else ()))
        return GroupAssignment(active, standby, warmup, decided.probing_rebalance_needed)


class ConsumerAssignor:
    """Kafka's consumer assignors (:mod:`streams_assign.consumer`, issue #13) as group assignors.

    Task ``<s>_<p>`` is partition ``p`` of topic ``t<s>``; every member subscribes to every
    topic and reports what it owns (``ownedPartitions``, which cooperative-sticky reads; empty
    for an eager member) or ran (the sticky assignor's user data), with the generation of that
    assignment. Members keep the leader's JoinGroup order. The simulator does not check that
    the strategy supports the members' protocol (Kafka lets only cooperative-sticky run
    cooperatively); the cooperative rule is applied on top of any strategy.

    Parameters
    ----------
    strategy:
        ``range``, ``roundrobin``, ``sticky`` or ``cooperative-sticky``.
    """

    def __init__(self, strategy: str) -> None:
        self.name = f"consumer:{strategy}"
        self.strategy = strategy

    def _reported(self, member: MemberSubscription) -> frozenset[str]:
        # cooperative-sticky reads ``ownedPartitions``, empty for an eager member that revoked
        # everything; sticky reads its previous assignment from its user data.
        if self.strategy == "cooperative-sticky":
            return member.owned
        return member.owned | member.previous

    def assign(
        self,
        members: Sequence[MemberSubscription],
        tasks: Sequence[str],
        stateful: frozenset[str],
        end_offsets: Mapping[str, int],
    ) -> GroupAssignment:
        """See :class:`GroupAssignor`."""
        from streams_assign.consumer.api import assign_consumer_group
        from streams_assign.consumer.model import (
            ConsumerGroupState,
            TopicPartition,
        )
        from streams_assign.consumer.model import (
            MemberSubscription as ConsumerSubscription,
        )

        def partition(task: str) -> TopicPartition:
            sub, _, part = task.partition("_")
            return TopicPartition(f"t{sub}", int(part))

        topics: dict[str, int] = {}
        for task in tasks:
            tp = partition(task)
            topics[tp.topic] = max(topics.get(tp.topic, 0), tp.partition + 1)
        known = set(tasks)
        state = ConsumerGroupState(
            assignor=self.strategy,
            topics=topics,
            members=tuple(
                ConsumerSubscription(
                    member_id=m.member_id,
                    topics=tuple(sorted(topics)),
                    owned_partitions=tuple(sorted(partition(t) for t in self._reported(m) & known)),
                    generation=m.generation if m.generation >= 0 else None,
                )
                for m in members
            ),
        )
        decided = assign_consumer_group(state)
        return GroupAssignment(
            active={
                m.member_id: frozenset(
                    f"{tp.topic[1:]}_{tp.partition}" for tp in decided.get(m.member_id, [])
                )
                for m in members
            }
        )


CONSUMER_STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")


def _task_order(task: str) -> tuple[int, ...]:
    return tuple(int(part) for part in task.split("_"))


def make_assignor(name: str, **streams_configs: int) -> GroupAssignor:
    """The assignor called ``name``.

    ``balanced_sticky``; ``consumer:<strategy>`` for Kafka's consumer assignors; or a Streams
    assignor of :mod:`streams_assign.assignors` (``high_availability``, ``legacy_sticky``, ...).

    Raises
    ------
    UnknownGroupAssignorError
        For an unknown name.
    """
    if name == BalancedStickyAssignor.name:
        return BalancedStickyAssignor()
    if name.startswith("consumer:") and name[len("consumer:") :] in CONSUMER_STRATEGIES:
        return ConsumerAssignor(name[len("consumer:") :])
    from streams_assign.assignors import ASSIGNORS

    if name in ASSIGNORS:
        return StreamsAssignor(name, **streams_configs)
    consumer = ", ".join(f"consumer:{s}" for s in CONSUMER_STRATEGIES)
    raise UnknownGroupAssignorError(
        f"unknown assignor {name!r}; choose balanced_sticky, {consumer} "
        f"or one of {', '.join(ASSIGNORS)}"
    )


def cooperative_adjust(
    assignment: GroupAssignment, members: Sequence[MemberSubscription]
) -> tuple[GroupAssignment, bool]:
    """Withhold every task still owned by a different member (KIP-429).

    Returns the adjusted assignment and whether anything was withheld (the owners will revoke
    and rejoin, which triggers the follow-up rebalance that hands the tasks over).
    """
    owner: dict[str, str] = {}
    for member in members:
        for task in member.owned:
            owner[task] = member.member_id
    withheld = False
    active: dict[str, frozenset[str]] = {}
    for member_id, tasks in assignment.active.items():
        keep = frozenset(t for t in tasks if owner.get(t, member_id) == member_id)
        withheld = withheld or len(keep) != len(tasks)
        active[member_id] = keep
    adjusted = GroupAssignment(
        active, assignment.standby, assignment.warmup, assignment.probing_rebalance_needed
    )
    return adjusted, withheld
