"""Kafka's ``RangeAssignor`` (``partition.assignment.strategy=range``), rack-aware included."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from streams_assign.consumer.common import (
    Assignment,
    empty_assignment,
    member_info_key,
    partitions_per_topic,
    subscriptions_map,
)
from streams_assign.consumer.model import ConsumerGroupState, TopicPartition

__all__ = ["assign_range"]


class _TopicAssignmentState:
    """``RangeAssignor.TopicAssignmentState``: one topic's consumers, quotas and racks."""

    def __init__(
        self,
        topic: str,
        num_partitions: int,
        consumers: list[tuple[str, str | None]],
        replica_racks: tuple[frozenset[str], ...],
    ) -> None:
        self.topic = topic
        self.consumers = dict(consumers)  # sorted MemberInfo order -> rack
        self.consumer_key = tuple(consumers)
        self.unassigned: dict[TopicPartition, None] = {
            TopicPartition(topic, p): None for p in range(num_partitions)
        }
        self.num_assigned = dict.fromkeys(self.consumers, 0)
        n = len(self.consumers)
        self.num_per_consumer = num_partitions // n if n else 0
        self.remaining_with_extra = num_partitions % n if n else 0
        consumer_racks = {rack for rack in self.consumers.values() if rack is not None}
        self.partition_racks: dict[TopicPartition, frozenset[str]] = {}
        partition_rack_union: set[str] = set()
        if consumer_racks:
            for p in range(num_partitions):
                racks = replica_racks[p] if p < len(replica_racks) else frozenset()
                self.partition_racks[TopicPartition(topic, p)] = racks
                partition_rack_union |= racks
        # AbstractPartitionAssignor.useRackAwareAssignment
        self.needs_rack_aware = (
            bool(consumer_racks)
            and not consumer_racks.isdisjoint(partition_rack_union)
            and not all(r == partition_rack_union for r in self.partition_racks.values())
        )

    def racks_match(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumers[consumer]
        replica_racks = self.partition_racks.get(tp)
        return rack is None or (replica_racks is not None and rack in replica_racks)

    def max_assignable(self, consumer: str) -> int:
        extra = 1 if self.remaining_with_extra > 0 else 0
        return max(0, self.num_per_consumer + extra - self.num_assigned[consumer])

    def on_assigned(self, consumer: str, partitions: list[TopicPartition]) -> None:
        self.num_assigned[consumer] += len(partitions)
        if self.num_assigned[consumer] > self.num_per_consumer:
            self.remaining_with_extra -= 1
        for tp in partitions:
            self.unassigned.pop(tp, None)


def _assign(
    consumer: str,
    partitions: list[TopicPartition],
    state: _TopicAssignmentState,
    assignment: Assignment,
) -> None:
    assignment[consumer].extend(partitions)
    state.on_assigned(consumer, partitions)


def _assign_ranges(
    state: _TopicAssignmentState,
    may_assign: Callable[[str, TopicPartition], bool],
    assignment: Assignment,
) -> None:
    for consumer in state.consumers:
        if not state.unassigned:
            break
        limit = state.max_assignable(consumer)
        assignable = [tp for tp in state.unassigned if may_assign(consumer, tp)][:limit]
        if assignable:
            _assign(consumer, assignable, state, assignment)


def _assign_co_partitioned_with_rack_matching(
    consumers: list[str],
    num_partitions: int,
    states: list[_TopicAssignmentState],
    assignment: Assignment,
) -> None:
    remaining = list(consumers)
    for p in range(num_partitions):
        match = next(
            (
                c
                for c in remaining
                if all(
                    s.racks_match(c, TopicPartition(s.topic, p)) and s.max_assignable(c) > 0
                    for s in states
                )
            ),
            None,
        )
        if match is None:
            continue
        for s in states:
            _assign(match, [TopicPartition(s.topic, p)], s, assignment)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break


def _assign_with_rack_matching(states: list[_TopicAssignmentState], assignment: Assignment) -> None:
    by_consumers: dict[tuple[tuple[str, str | None], ...], list[_TopicAssignmentState]] = (
        defaultdict(list)
    )
    for s in states:
        by_consumers[s.consumer_key].append(s)
    for group in by_consumers.values():
        by_size: dict[int, list[_TopicAssignmentState]] = defaultdict(list)
        for s in group:
            by_size[len(s.partition_racks)].append(s)
        for size, co_partitioned in by_size.items():
            if len(co_partitioned) > 1:
                consumers = list(co_partitioned[0].consumers)
                _assign_co_partitioned_with_rack_matching(
                    consumers, size, co_partitioned, assignment
                )
            elif co_partitioned[0].needs_rack_aware:
                only = co_partitioned[0]
                _assign_ranges(only, only.racks_match, assignment)


def assign_range(state: ConsumerGroupState) -> Assignment:
    """Give each member a contiguous range of every topic it subscribes to.

    Per topic, the subscribers are sorted as ``MemberInfo`` sorts them (static members first,
    by ``group.instance.id``, then member id); with ``P`` partitions and ``C`` subscribers the
    first ``P % C`` get ``P // C + 1`` partitions, the others ``P // C``.

    When members have racks and partitions have replica racks that differ between partitions
    (``AbstractPartitionAssignor.useRackAwareAssignment``), a first pass gives members
    partitions with a replica on their rack (co-partitioned topics, same subscribers and
    partition count, partition by partition), within the same quotas; the range pass then
    fills up.

    Parameters
    ----------
    state:
        The group; owned partitions and generations are ignored, as in Kafka.

    Returns
    -------
    Assignment
        Every member of ``state`` (in input order) with its partitions.

    References
    ----------
    ``org.apache.kafka.clients.consumer.RangeAssignor`` (Kafka 4.x), KIP-881 (rack-aware).
    """
    subscriptions = subscriptions_map(state)
    counts = partitions_per_topic(state, subscriptions)
    per_topic: dict[str, list[tuple[tuple[int, str], str, str | None]]] = defaultdict(list)
    for member_id in subscriptions:
        member = subscriptions[member_id]
        rack = member.rack or None  # an empty rack counts as none
        for topic in member.topics:
            per_topic[topic].append((member_info_key(member), member_id, rack))
    states = []
    for topic in counts:
        members = sorted(per_topic.get(topic, []), key=lambda item: item[0])  # stable, as Java
        consumers: list[tuple[str, str | None]] = []
        for _, member_id, rack in members:
            if member_id not in dict(consumers):
                consumers.append((member_id, rack))
        racks = state.partition_racks.get(topic, ())
        states.append(_TopicAssignmentState(topic, counts[topic], consumers, racks))
    assignment = empty_assignment(state)
    if any(s.needs_rack_aware for s in states):
        _assign_with_rack_matching(states, assignment)
    for s in states:
        _assign_ranges(s, lambda c, tp: True, assignment)
    return assignment
