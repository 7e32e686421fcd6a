"""Kafka's ``StickyAssignor`` and ``CooperativeStickyAssignor`` (``AbstractStickyAssignor``).

Both keep as many owned partitions as balance allows. When every member subscribes to the same
topics the quota-based ``ConstrainedAssignmentBuilder`` runs, otherwise the iterative
``GeneralAssignmentBuilder`` (reassign partition by partition until balanced, undo if the
balance score got no better). The cooperative variant then withholds every partition that
changes owner: the previous owner must revoke it first, and a follow-up rebalance hands it out.

Java ``HashMap``/``HashSet`` iteration decides some outcomes; replayed with
:mod:`streams_assign.java.hash_order`:
the subscriptions map (which claim of a doubly owned partition
wins, which members keep ``maxQuota`` partitions), the sticky user data (owned partitions
grouped per topic in ``HashMap`` order) and the partition-movement sets the general builder
draws the partition to move from.

Rack-aware sticky assignment (KIP-881) needs partitions with replica racks; this format has
none for the sticky assignors, and Kafka then runs exactly the rack-free paths implemented here.
"""

from __future__ import annotations

from collections.abc import Iterable

from streams_assign.consumer.common import (
    Assignment,
    partitions_per_topic,
    subscriptions_map,
)
from streams_assign.consumer.model import (
    DEFAULT_GENERATION,
    ConsumerGroupState,
    MemberSubscription,
    TopicPartition,
)
from streams_assign.errors import TaskAssignmentError
from streams_assign.java.hash_order import JavaHashMap, JavaHashSet, java_string_hash_code

__all__ = ["assign_cooperative_sticky", "assign_sticky"]


def _tp_hash(tp: TopicPartition) -> int:
    return tp.java_hash_code()


class _MemberData:
    __slots__ = ("partitions", "generation")

    def __init__(self, partitions: list[TopicPartition], generation: int | None) -> None:
        self.partitions = partitions
        self.generation = generation


def _sticky_member_data(member: MemberSubscription) -> _MemberData:
    """``StickyAssignor.memberData``: the previous assignment from the user data.

    A member that never had an assignment sends no user data. Otherwise the user data holds the
    partitions grouped by topic (``CollectionUtils.groupPartitionsByTopic``, a ``HashMap``) and
    the generation.
    """
    if member.generation is None:
        return _MemberData([], None)
    by_topic: JavaHashMap[str, list[int]] = JavaHashMap(java_string_hash_code)
    for tp in member.owned_partitions:
        if tp.topic not in by_topic:
            by_topic.put(tp.topic, [])
        by_topic[tp.topic].append(tp.partition)
    partitions = [TopicPartition(t, p) for t in by_topic for p in by_topic[t]]
    return _MemberData(partitions, member.generation)


def _cooperative_member_data(member: MemberSubscription) -> _MemberData:
    """``CooperativeStickyAssignor.memberData``: owned partitions and the generation id
    (from the subscription, else from the user data, which holds -1 before any assignment)."""
    return _MemberData(list(member.owned_partitions), member.generation_id)


class _StickyRun:
    """One ``assign`` call of a fresh ``AbstractStickyAssignor`` instance."""

    def __init__(self, state: ConsumerGroupState, cooperative: bool) -> None:
        self.state = state
        self.cooperative = cooperative
        self.subscriptions = subscriptions_map(state)
        self.counts = partitions_per_topic(state, self.subscriptions)
        self.max_generation = DEFAULT_GENERATION
        self.partitions_transferring_ownership: dict[TopicPartition, str] | None = {}

    def member_data(self, member: MemberSubscription) -> _MemberData:
        if self.cooperative:
            return _cooperative_member_data(member)
        return _sticky_member_data(member)

    # -- AbstractStickyAssignor.assignPartitions ------------------------------------------
    def assign(self) -> Assignment:
        owned: JavaHashMap[str, list[TopicPartition]] = JavaHashMap(java_string_hash_code)
        multiple_owners: set[TopicPartition] = set()
        if self.all_subscriptions_equal(owned, multiple_owners):
            self.partitions_transferring_ownership = {}
            result = _ConstrainedBuilder(self, owned, multiple_owners).build()
        else:
            self.partitions_transferring_ownership = None
            result = _GeneralBuilder(self, owned).build()
        if self.cooperative:
            self.withhold_transferring_partitions(result)
        return result

    def all_subscriptions_equal(
        self,
        consumer_to_owned: JavaHashMap[str, list[TopicPartition]],
        multiple_owners: set[TopicPartition],
    ) -> bool:
        all_equal = True
        subscribed: set[str] = set()
        previous_owner: dict[TopicPartition, str] = {}
        for consumer in self.subscriptions:
            subscription = self.subscriptions[consumer]
            if not subscribed:
                subscribed.update(subscription.topics)
            elif all_equal and not (
                len(subscription.topics) == len(subscribed)
                and subscribed.issuperset(subscription.topics)
            ):
                all_equal = False
            data = self.member_data(subscription)
            member_generation = DEFAULT_GENERATION if data.generation is None else data.generation
            self.max_generation = max(self.max_generation, member_generation)
            owned: list[TopicPartition] = []
            consumer_to_owned.put(consumer, owned)
            for tp in data.partitions:
                if tp.topic not in self.counts:
                    continue
                other = previous_owner.get(tp)
                if other is None:
                    owned.append(tp)
                    previous_owner[tp] = consumer
                    continue
                # Kafka compares with the other member's Subscription.generationId().
                other_generation = self.subscriptions[other].generation_id
                if member_generation == other_generation:
                    multiple_owners.add(tp)
                    _remove_first(consumer_to_owned[other], tp)
                    previous_owner[tp] = consumer
                elif member_generation > other_generation:
                    owned.append(tp)
                    _remove_first(consumer_to_owned[other], tp)
                    previous_owner[tp] = consumer
        return all_equal

    # -- CooperativeStickyAssignor.assignPartitions ---------------------------------------
    def withhold_transferring_partitions(self, assignment: Assignment) -> None:
        transferring = self.partitions_transferring_ownership
        if transferring is None:
            transferring = self.compute_partitions_transferring_ownership(assignment)
        for tp, consumer in transferring.items():
            _remove_first(assignment[consumer], tp)

    def compute_partitions_transferring_ownership(
        self, assignment: Assignment
    ) -> dict[TopicPartition, str]:
        added: dict[TopicPartition, str] = {}
        revoked: set[TopicPartition] = set()
        for consumer, assigned in assignment.items():
            owned = self.subscriptions[consumer].owned_partitions
            owned_set = set(owned)
            for tp in assigned:
                if tp not in owned_set:
                    added[tp] = consumer
            assigned_set = set(assigned)
            revoked.update(tp for tp in owned if tp not in assigned_set)
        return {tp: c for tp, c in added.items() if tp in revoked}


def _remove_first(items: list[TopicPartition], tp: TopicPartition) -> None:
    """``List.remove(Object)``: drop the first occurrence, if any."""
    if tp in items:
        items.remove(tp)


class _JavaListIterator:
    """A ``java.util.Iterator`` over a list, with ``remove()`` of the last returned element."""

    def __init__(self, items: list[str]) -> None:
        self.items = items
        self.cursor = 0
        self.last = -1

    def has_next(self) -> bool:
        return self.cursor < len(self.items)

    def next(self) -> str:
        self.last = self.cursor
        self.cursor += 1
        return self.items[self.last]

    def remove(self) -> None:
        del self.items[self.last]
        self.cursor = self.last
        self.last = -1


class _ConstrainedBuilder:
    """``AbstractStickyAssignor.ConstrainedAssignmentBuilder`` (all subscriptions equal)."""

    def __init__(
        self,
        run: _StickyRun,
        current: JavaHashMap[str, list[TopicPartition]],
        multiple_owners: set[TopicPartition],
    ) -> None:
        self.run = run
        self.current = current
        self.multiple_owners = multiple_owners
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.under_min: list[str] = []
        self.exactly_min: list[str] = []
        total = sum(run.counts[t] for t in run.counts)
        members = len(current)
        self.total = total
        self.min_quota = total // members
        self.max_quota = -(-total // members)
        self.expected_over_min = total % members
        self.current_over_min = 0
        self.assignment: Assignment = {c: [] for c in current}
        self.assigned: list[TopicPartition] = []

    def build(self) -> Assignment:
        self.assign_owned_partitions()
        unassigned = self.unassigned_partitions()
        self.under_min.sort()
        self.exactly_min.sort()
        self.assign_round_robin(unassigned)
        self.verify_unfilled_members()
        return {m.member_id: self.assignment[m.member_id] for m in self.run.state.members}

    def assign_owned_partitions(self) -> None:
        for consumer in self.current:
            owned = sorted(self.current[consumer], key=lambda tp: (tp.partition, tp.topic))
            target = self.assignment[consumer]
            for doubly_claimed in self.multiple_owners:
                _remove_first(owned, doubly_claimed)
            if len(owned) < self.min_quota:
                target.extend(owned)
                self.assigned.extend(owned)
                self.under_min.append(consumer)
            elif len(owned) >= self.max_quota and self.current_over_min < self.expected_over_min:
                self.current_over_min += 1
                if self.current_over_min == self.expected_over_min:
                    self.exactly_min.clear()
                target.extend(owned[: self.max_quota])
                self.assigned.extend(owned[: self.max_quota])
                for tp in owned[self.max_quota :]:
                    self.maybe_revoked[tp] = consumer
            else:
                target.extend(owned[: self.min_quota])
                self.assigned.extend(owned[: self.min_quota])
                for tp in owned[self.min_quota :]:
                    self.maybe_revoked[tp] = consumer
                if self.current_over_min < self.expected_over_min:
                    self.exactly_min.append(consumer)

    def assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        it = _JavaListIterator(self.under_min)
        for index, tp in enumerate(unassigned):
            if it.has_next():
                consumer = it.next()
            elif not self.under_min and not self.exactly_min:
                raise TaskAssignmentError(
                    f"No more unfilled consumers to be assigned; {len(unassigned) - index} "
                    "partitions left (Kafka throws IllegalStateException)"
                )
            elif not self.under_min:
                consumer = self.exactly_min.pop(0)
            else:
                it = _JavaListIterator(self.under_min)
                consumer = it.next()
            count = self.assign_new_partition(tp, consumer)
            if count == self.min_quota:
                it.remove()
                self.exactly_min.append(consumer)
            elif count == self.max_quota:
                self.current_over_min += 1

    def assign_new_partition(self, tp: TopicPartition, consumer: str) -> int:
        target = self.assignment[consumer]
        target.append(tp)
        previous = self.maybe_revoked.get(tp)
        transferring = self.run.partitions_transferring_ownership
        assert transferring is not None
        if (previous is not None and previous != consumer) or tp in self.multiple_owners:
            transferring[tp] = consumer
        return len(target)

    def verify_unfilled_members(self) -> None:
        if not self.under_min:
            return
        if self.current_over_min != self.expected_over_min:
            raise TaskAssignmentError(
                "We haven't reached the expected number of members with more than the minQuota "
                "partitions, but no more partitions to be assigned"
            )
        for member in self.under_min:
            if len(self.assignment[member]) != self.min_quota:
                raise TaskAssignmentError(
                    f"Consumer: [{member}] doesn't reach minQuota partitions, and no more "
                    "partitions to be assigned"
                )

    def unassigned_partitions(self) -> list[TopicPartition]:
        """``getUnassignedPartitions``: a merge walk of all partitions against the sorted
        assigned ones (an owned partition beyond the topic's count ends the walk's matching,
        as in Kafka)."""
        topics = sorted(self.run.counts)
        if not self.assigned:
            return [TopicPartition(t, p) for t in topics for p in range(self.run.counts[t])]
        return _merge_unassigned(
            [TopicPartition(t, p) for t in topics for p in range(self.run.counts[t])],
            sorted(self.assigned),
        )


def _merge_unassigned(
    all_partitions: Iterable[TopicPartition], sorted_assigned: list[TopicPartition]
) -> list[TopicPartition]:
    unassigned: list[TopicPartition] = []
    add_directly = False
    position = 0
    next_assigned = sorted_assigned[0]
    for tp in all_partitions:
        if add_directly or next_assigned != tp:
            unassigned.append(tp)
        elif position + 1 < len(sorted_assigned):
            position += 1
            next_assigned = sorted_assigned[position]
        else:
            add_directly = True
    return unassigned


class _PartitionMovements:
    """``AbstractStickyAssignor.PartitionMovements``: moves made so far, per topic and pair."""

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[tuple[str, str], JavaHashSet[TopicPartition]]] = {}
        self.moves: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        per_pair = self.by_topic[tp.topic]
        per_pair[pair].discard(tp)
        if not len(per_pair[pair]):
            del per_pair[pair]
        if not per_pair:
            del self.by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        per_pair = self.by_topic.setdefault(tp.topic, {})
        if pair not in per_pair:
            per_pair[pair] = JavaHashSet(_tp_hash)
        per_pair[pair].add(tp)

    def move_partition(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            source, _ = self._remove_record(tp)
            if source != new:
                self._add_record(tp, (source, new))
        else:
            self._add_record(tp, (old, new))

    def actual_partition_to_be_moved(
        self, tp: TopicPartition, old: str, new: str
    ) -> TopicPartition:
        """``getTheActualPartitionToBeMoved``: undo an earlier opposite move of the same topic
        instead of making a new one (the first partition of that ``HashSet``)."""
        per_pair = self.by_topic.get(tp.topic)
        if per_pair is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = per_pair.get((new, old))
        if reverse is None:
            return tp
        return next(iter(reverse))


class _GeneralBuilder:
    """``AbstractStickyAssignor.GeneralAssignmentBuilder`` (subscriptions differ)."""

    def __init__(self, run: _StickyRun, current: JavaHashMap[str, list[TopicPartition]]) -> None:
        self.run = run
        counts = run.counts
        self.counts = counts
        self.total = sum(counts[t] for t in counts)
        self.topic2consumers: dict[str, list[str]] = {t: [] for t in counts}
        self.consumer2topics: dict[str, list[str]] = {}
        for consumer in run.subscriptions:
            topics: list[str] = []
            self.consumer2topics[consumer] = topics
            for topic in run.subscriptions[consumer].topics:
                if topic in counts:
                    topics.append(topic)
                    self.topic2consumers[topic].append(consumer)
            if consumer not in current:
                current.put(consumer, [])
        self.current = current
        self.partition_consumer: dict[TopicPartition, str] = {}
        for consumer in current:
            for tp in current[consumer]:
                self.partition_consumer[tp] = consumer
        sorted_topics = sorted(counts, key=lambda t: (len(self.topic2consumers[t]), t))
        self.sorted_all_partitions = [
            TopicPartition(t, p) for t in sorted_topics for p in range(counts[t])
        ]
        self.subscribed: set[str] = set()  # the members of sortedCurrentSubscriptions
        self.revocation_required = False
        self.movements = _PartitionMovements()

    def sorted_subscriptions(self) -> list[str]:
        """``sortedCurrentSubscriptions``: by assignment size, then member id."""
        return sorted(self.subscribed, key=lambda c: (len(self.current[c]), c))

    def build(self) -> Assignment:
        previous: dict[TopicPartition, tuple[str, int]] = {}
        self.prepopulate_current_assignments(previous)
        assigned = self.assign_owned_partitions()
        unassigned = self.unassigned_partitions(assigned)
        self.subscribed.update(self.current)
        self.balance(previous, unassigned)
        return {m.member_id: self.current[m.member_id] for m in self.run.state.members}

    def prepopulate_current_assignments(
        self, previous: dict[TopicPartition, tuple[str, int]]
    ) -> None:
        max_generation = self.run.max_generation
        for consumer in self.run.subscriptions:
            data = self.run.member_data(self.run.subscriptions[consumer])
            if data.generation is not None and data.generation < max_generation:
                generation = data.generation
            elif data.generation is None and max_generation > DEFAULT_GENERATION:
                generation = DEFAULT_GENERATION
            else:
                continue
            for tp in data.partitions:
                if tp not in previous or generation > previous[tp][1]:
                    previous[tp] = (consumer, generation)

    def assign_owned_partitions(self) -> list[TopicPartition]:
        assigned: list[TopicPartition] = []
        for consumer in self.current:
            topics = self.run.subscriptions[consumer].topics
            kept: list[TopicPartition] = []
            for tp in self.current[consumer]:
                if tp.topic not in self.topic2consumers:
                    self.partition_consumer.pop(tp, None)
                elif tp.topic not in topics:
                    self.revocation_required = True
                else:
                    kept.append(tp)
                    assigned.append(tp)
            self.current[consumer][:] = kept
        return assigned

    def unassigned_partitions(self, assigned: list[TopicPartition]) -> list[TopicPartition]:
        if not assigned:
            return self.sorted_all_partitions  # the same list, as in Kafka
        assigned.sort(key=lambda tp: (len(self.topic2consumers[tp.topic]), tp.topic, tp.partition))
        return _merge_unassigned(self.sorted_all_partitions, assigned)

    def max_assignment_size(self, topics: list[str]) -> int:
        if len(topics) == len(self.counts):
            return self.total
        return sum(self.counts[t] for t in topics)

    def is_balanced(self) -> bool:
        ordered = self.sorted_subscriptions()
        if len(self.current[ordered[0]]) >= len(self.current[ordered[-1]]) - 1:
            return True
        owner: dict[TopicPartition, str] = {}
        for consumer in self.current:
            for tp in self.current[consumer]:
                owner[tp] = consumer
        for consumer in ordered:
            partitions = self.current[consumer]
            count = len(partitions)
            topics = self.consumer2topics[consumer]
            if count == self.max_assignment_size(topics):
                continue
            mine = set(partitions)
            for topic in topics:
                for p in range(self.counts[topic]):
                    tp = TopicPartition(topic, p)
                    if tp not in mine and count + 1 < len(self.current[owner[tp]]):
                        return False
        return True

    def balance_score(self, assignment: dict[str, list[TopicPartition]]) -> int:
        sizes = [len(v) for v in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def maybe_assign(self, unassigned: list[TopicPartition]) -> None:
        for tp in unassigned:
            if not self.topic2consumers[tp.topic]:
                continue
            for consumer in self.sorted_subscriptions():
                if tp.topic in self.consumer2topics[consumer]:
                    self.current[consumer].append(tp)
                    self.partition_consumer[tp] = consumer
                    break

    def can_consumer_participate(self, consumer: str) -> bool:
        partitions = self.current[consumer]
        if len(partitions) < self.max_assignment_size(self.consumer2topics[consumer]):
            return True
        return any(len(self.topic2consumers[tp.topic]) >= 2 for tp in partitions)

    def balance(
        self, previous: dict[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]
    ) -> None:
        initializing = not self.current[self.sorted_subscriptions()[-1]]
        self.maybe_assign(unassigned)
        fixed_topics = {t for t, consumers in self.topic2consumers.items() if len(consumers) < 2}
        self.sorted_all_partitions[:] = [
            tp for tp in self.sorted_all_partitions if tp.topic not in fixed_topics
        ]
        unassigned[:] = [tp for tp in unassigned if tp.topic not in fixed_topics]
        fixed: dict[str, list[TopicPartition]] = {}
        for consumer in self.consumer2topics:
            if not self.can_consumer_participate(consumer):
                self.subscribed.discard(consumer)
                fixed[consumer] = self.current[consumer]
                self.current.remove(consumer)
        before = {c: list(self.current[c]) for c in self.current}
        owners_before = dict(self.partition_consumer)
        if not self.revocation_required:
            self.perform_reassignments(unassigned, previous)
        performed = self.perform_reassignments(self.sorted_all_partitions, previous)
        if (
            not initializing
            and performed
            and self.balance_score(self.current_dict()) >= self.balance_score(before)
        ):
            for consumer, partitions in before.items():
                self.current.put(consumer, partitions)
            self.partition_consumer = owners_before
        for consumer, partitions in fixed.items():
            self.current.put(consumer, partitions)
            self.subscribed.add(consumer)

    def current_dict(self) -> dict[str, list[TopicPartition]]:
        return {c: self.current[c] for c in self.current}

    def perform_reassignments(
        self, partitions: list[TopicPartition], previous: dict[TopicPartition, tuple[str, int]]
    ) -> bool:
        performed = False
        while True:
            modified = False
            i = 0
            while i < len(partitions) and not self.is_balanced():
                tp = partitions[i]
                i += 1
                consumer = self.partition_consumer[tp]
                try:
                    size = len(self.current[consumer])
                    if tp in previous and size > len(self.current[previous[tp][0]]) + 1:
                        self.reassign_partition_to(tp, previous[tp][0])
                        performed = modified = True
                        continue
                    for other in self.topic2consumers[tp.topic]:
                        if size > len(self.current[other]) + 1:
                            self.reassign_partition(tp)
                            performed = modified = True
                            break
                except KeyError as exc:  # Kafka: NullPointerException
                    raise TaskAssignmentError(
                        f"sticky assignor reached a member outside the reassignment: {exc}"
                    ) from None
            if not modified:
                return performed

    def reassign_partition(self, tp: TopicPartition) -> None:
        new = next(c for c in self.sorted_subscriptions() if tp.topic in self.consumer2topics[c])
        self.reassign_partition_to(tp, new)

    def reassign_partition_to(self, tp: TopicPartition, new: str) -> None:
        consumer = self.partition_consumer[tp]
        moved = self.movements.actual_partition_to_be_moved(tp, consumer, new)
        self.process_partition_movement(moved, new)

    def process_partition_movement(self, tp: TopicPartition, new: str) -> None:
        old = self.partition_consumer[tp]
        self.movements.move_partition(tp, old, new)
        _remove_first(self.current[old], tp)
        self.current[new].append(tp)
        self.partition_consumer[tp] = new


def assign_sticky(state: ConsumerGroupState, *, cooperative: bool = False) -> Assignment:
    """Kafka's sticky assignment: balanced, keeping owned partitions where balance allows.

    Parameters
    ----------
    state:
        The group; each member's ``owned_partitions`` and ``generation`` are its previous
        assignment (``StickyAssignor`` user data, or ``Subscription.ownedPartitions`` and
        ``generationId`` for the cooperative variant). A partition claimed by two members goes
        to the higher generation; with equal generations to neither (it is reassigned).
    cooperative:
        ``CooperativeStickyAssignor``: withhold each partition that changes owner (its owner
        revokes it in this rebalance; a follow-up rebalance assigns it).

    Returns
    -------
    Assignment
        Every member of ``state`` (in input order) with its partitions. Member counts differ
        by at most one among members subscribed to the same topics.

    Raises
    ------
    TaskAssignmentError
        Where Kafka throws ``IllegalStateException`` (for instance owned partition numbers
        beyond a topic's partition count leave the constrained builder without unfilled
        members).

    References
    ----------
    ``org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor``, ``StickyAssignor``,
    ``CooperativeStickyAssignor`` (Kafka 4.x); KIP-54, KIP-429, KIP-792.
    """
    return _StickyRun(state, cooperative).assign()


def assign_cooperative_sticky(state: ConsumerGroupState) -> Assignment:
    """``CooperativeStickyAssignor``: :func:`assign_sticky` with ``cooperative=True``."""
    return assign_sticky(state, cooperative=True)
