"""Priority structures: Kafka's ConstrainedPrioritySet (ConstrainedPrioritySetTest) in its fast
and literal forms, java.util.PriorityQueue's exact poll order and java.util.HashSet's iteration
order."""

from __future__ import annotations

import heapq

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streams_assign.assignors.priority_set import ConstrainedPrioritySet, KafkaLiteralPrioritySet
from streams_assign.java.hash_order import java_uuid_hash_code
from streams_assign.java.priority_queue import (
    JavaPriorityQueue,
    java_hash_set_order,
    java_poll_order,
)

DUMMY_TASK = 0
P1, P2, P3 = 0, 1, 2  # client indices, in ProcessId order
#: UUID(0, n).hashCode() of P1..P3, which the literal set uses to re-offer rejected clients.
HASH_CODES = [java_uuid_hash_code(f"00000000-0000-0000-0000-00000000000{n}") for n in (1, 2, 3)]


@pytest.fixture(params=["fast", "literal"])
def priority_set(request):
    """Build either implementation of Kafka's ConstrainedPrioritySet; both must agree."""

    def make(weights, constraint):
        if request.param == "fast":
            return ConstrainedPrioritySet(weights, constraint)
        return KafkaLiteralPrioritySet(weights, constraint, HASH_CODES)

    return make


def always_true(client: int, task: int) -> bool:
    return True


def always_false(client: int, task: int) -> bool:
    return False


# -- ConstrainedPrioritySetTest -----------------------------------------------------------------


def test_should_return_only_client(priority_set):
    queue = priority_set([1.0], always_true)
    queue.offer_all([P1])
    assert queue.poll(DUMMY_TASK) == P1
    assert queue.poll(DUMMY_TASK) is None


def test_should_return_null(priority_set):
    queue = priority_set([1.0], always_false)
    queue.offer_all([P1])
    assert queue.poll(DUMMY_TASK) is None


def test_should_return_least_loaded_client(priority_set):
    queue = priority_set([3.0, 2.0, 1.0], always_true)
    queue.offer_all([P1, P2, P3])
    assert queue.poll(DUMMY_TASK) == P3
    assert queue.poll(DUMMY_TASK) == P2
    assert queue.poll(DUMMY_TASK) == P1
    assert queue.poll(DUMMY_TASK) is None


def test_should_not_retain_duplicates(priority_set):
    queue = priority_set([1.0], always_true)
    queue.offer_all([P1])
    queue.offer(P1)
    assert queue.poll(DUMMY_TASK) == P1
    assert queue.poll(DUMMY_TASK) is None


def test_should_only_return_valid_clients(priority_set):
    queue = priority_set([1.0, 1.0], lambda client, task: client == P1)
    queue.offer_all([P1, P2])
    assert queue.poll(DUMMY_TASK) == P1
    assert queue.poll(DUMMY_TASK) is None


def test_should_apply_poll_filter(priority_set):
    queue = priority_set([1.0, 1.0], always_true)
    queue.offer_all([P1, P2])
    assert queue.poll(DUMMY_TASK, lambda client: client == P1) == P1
    assert queue.poll(DUMMY_TASK, lambda client: client == P1) is None
    assert queue.poll(DUMMY_TASK) == P2
    assert queue.poll(DUMMY_TASK) is None


# -- further ConstrainedPrioritySet semantics (ordered by weight, then ProcessId) ----------------


def test_equal_weights_poll_in_process_id_order(priority_set):
    queue = priority_set([1.0, 1.0, 1.0], always_true)
    queue.offer_all([P3, P1, P2])
    assert [queue.poll(DUMMY_TASK) for _ in range(3)] == [P1, P2, P3]


def test_re_offering_a_client_re_keys_it_with_its_current_weight(priority_set):
    weights = [1.0, 2.0]
    queue = priority_set(weights, always_true)
    queue.offer_all([P1, P2])
    weights[P1] = 5.0
    queue.offer(P1)
    assert queue.poll(DUMMY_TASK) == P2
    assert queue.poll(DUMMY_TASK) == P1
    assert queue.poll(DUMMY_TASK) is None


def test_constraint_is_asked_for_the_polled_task(priority_set):
    holds = {(P1, 7)}
    queue = priority_set([0.0, 1.0], lambda client, task: (client, task) not in holds)
    queue.offer_all([P1, P2])
    assert queue.poll(7) == P2
    assert queue.poll(8) == P1


def test_clients_rejected_for_one_task_stay_for_the_next(priority_set):
    queue = priority_set([0.0, 1.0, 2.0], lambda client, task: task == 1 or client == P3)
    queue.offer_all([P1, P2, P3])
    assert queue.poll(0) == P3
    assert [queue.poll(1), queue.poll(1), queue.poll(1)] == [P1, P2, None]


def test_a_polled_client_is_back_only_after_it_is_offered_again(priority_set):
    queue = priority_set([1.0, 2.0], always_true)
    queue.offer_all([P1, P2])
    assert queue.poll(DUMMY_TASK) == P1
    queue.offer(P1)
    assert queue.poll(DUMMY_TASK) == P1


# -- JavaPriorityQueue --------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    ops=st.lists(
        st.one_of(st.integers(-50, 50), st.none()),
        max_size=60,
    )
)
def test_java_priority_queue_polls_distinct_keys_in_sorted_order(ops):
    """Against a reference model: with distinct keys any heap polls the minimum."""
    queue: JavaPriorityQueue[int] = JavaPriorityQueue(key=lambda x: x)
    model: list[int] = []
    seen: set[int] = set()
    for op in ops:
        if op is None:
            expected = heapq.heappop(model) if model else None
            assert queue.poll() == expected
        elif op not in seen:
            seen.add(op)
            queue.offer(op)
            heapq.heappush(model, op)
        assert len(queue) == len(model)
        assert queue.peek() == (min(model) if model else None)
    assert [queue.poll() for _ in range(len(model))] == sorted(model)


def _tied_queue() -> JavaPriorityQueue[tuple[str, int]]:
    """Offer A(1), B(1), C(1), D(0), keyed on the number only."""
    queue: JavaPriorityQueue[tuple[str, int]] = JavaPriorityQueue(key=lambda e: e[1])
    for element in [("A", 1), ("B", 1), ("C", 1), ("D", 0)]:
        queue.offer(element)
    return queue


def test_java_priority_queue_array_after_offers_matches_openjdk():
    # OpenJDK siftUp: A, B, C stay (cmp >= 0 breaks); D climbs from index 3 past B and A.
    assert [e[0] for e in _tied_queue().array_order()] == ["D", "A", "C", "B"]


def test_java_priority_queue_polls_tied_keys_in_openjdk_heap_order():
    # Trace of OpenJDK poll/siftDown on [D, A, C, B]:
    #   poll D; last B sifts down from 0: children A, C tie (cmp > 0 false: left A), B vs A ties
    #   (cmp <= 0 breaks) -> [B, A, C]
    #   poll B; last C sifts down: only child A, tie breaks -> [C, A]
    #   poll C; then A.
    # Insertion order (FIFO among ties) would be A, B, C instead.
    queue = _tied_queue()
    assert [queue.poll()[0] for _ in range(4)] == ["D", "B", "C", "A"]
    assert queue.poll() is None


def test_java_priority_queue_sifts_down_into_the_left_child_on_ties():
    # Offers X(0), A(1), C(1), Z(2) give [X, A, C, Z]. poll X; last Z sifts down from 0: children
    # A and C tie, OpenJDK keeps the left one (cmp(c, right) > 0 is false) -> [A, Z, C]; poll A;
    # then C, Z. Choosing the right child on ties would poll C before A.
    queue: JavaPriorityQueue[tuple[str, int]] = JavaPriorityQueue(key=lambda e: e[1])
    for element in [("X", 0), ("A", 1), ("C", 1), ("Z", 2)]:
        queue.offer(element)
    assert [queue.poll()[0] for _ in range(4)] == ["X", "A", "C", "Z"]


def test_java_priority_queue_remove_uses_openjdk_remove_at():
    # remove(A) at index 1 of [D, A, C, B]: the last element B moves to index 1, cannot sift
    # down (no children in a 3-element heap), sifts up against D (1 >= 0 breaks) -> [D, B, C].
    queue = _tied_queue()
    assert queue.remove(("A", 1))
    assert [e[0] for e in queue.array_order()] == ["D", "B", "C"]
    # poll D; last C sifts down against B: tie breaks -> [C, B]
    assert [queue.poll()[0] for _ in range(3)] == ["D", "C", "B"]


def test_java_priority_queue_remove_of_an_absent_element_returns_false():
    queue = _tied_queue()
    assert not queue.remove(("Z", 9))
    assert len(queue) == 4


def test_java_priority_queue_remove_of_the_last_slot_leaves_the_rest():
    queue = _tied_queue()
    assert queue.remove(("B", 1))
    assert [e[0] for e in queue.array_order()] == ["D", "A", "C"]


def test_java_priority_queue_reads_keys_when_it_compares():
    # Java reads a comparator's inputs at each comparison, so a key that changes between offers
    # orders later offers against the changed value (a cached key would put y first).
    weights = {"x": 5, "y": 3}
    queue: JavaPriorityQueue[str] = JavaPriorityQueue(key=lambda e: weights[e])
    queue.offer("x")
    weights["x"] = 1
    queue.offer("y")
    assert queue.array_order() == ["x", "y"]
    assert queue.poll() == "x"


@pytest.mark.parametrize("empty_op", ["poll", "peek"])
def test_java_priority_queue_returns_none_when_empty(empty_op: str):
    queue: JavaPriorityQueue[int] = JavaPriorityQueue(key=lambda x: x)
    assert getattr(queue, empty_op)() is None
    assert not queue


# -- java.util.HashSet iteration order ----------------------------------------------------------
# OpenJDK: bucket = (h ^ (h >>> 16)) & (n - 1), n = 16 doubled while size > 0.75 n; buckets in
# index order, each in insertion order.


def _hash_order(hashes: dict[str, int]) -> list[str]:
    return java_hash_set_order(list(hashes), lambda item: hashes[item])


def test_hash_set_iterates_buckets_in_index_order_and_insertion_order_within():
    # buckets: a 17 & 15 = 1, b 1, c 16 & 15 = 0, d 2
    assert _hash_order({"a": 17, "b": 1, "c": 16, "d": 2}) == ["c", "a", "b", "d"]


def test_hash_set_spreads_high_bits_into_the_bucket():
    # 0x10000 ^ (0x10000 >>> 16) = 0x10001 -> bucket 1; -1 -> 0xffffffff ^ 0xffff -> bucket 0
    assert _hash_order({"high": 0x10000, "one": 1, "minus_one": -1}) == ["minus_one", "high", "one"]


def test_hash_set_table_doubles_past_three_quarters_full():
    # 12 items fit 16 buckets: hash 16 shares bucket 0 with hash 0 and follows it. With 13 items
    # the table has 32 buckets and hash 16 moves to bucket 16, after hashes 1..12.
    twelve = {f"h{h}": h for h in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16)}
    assert _hash_order(twelve)[:2] == ["h0", "h16"]
    thirteen = {**twelve, "h11": 11}
    assert _hash_order(thirteen)[-1] == "h16"


def test_hash_set_keeps_one_copy_of_a_repeated_item():
    assert java_hash_set_order(["x", "y", "x"], lambda item: 0) == ["x", "y"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=6), max_size=40))
def test_java_poll_order_is_the_poll_order_of_a_filled_java_priority_queue(keys):
    # Items (key, position): ties on the key are broken only by Java's heap layout, which the
    # poll order must reproduce whether or not keys repeat.
    items = list(enumerate(keys))
    queue = JavaPriorityQueue(key=lambda item: item[1], items=items)
    polled = []
    while queue:
        polled.append(queue.poll())
    assert java_poll_order(items, key=lambda item: item[1]) == polled


def test_java_poll_order_of_tied_keys_is_not_insertion_order():
    # Offers 1, 0a, 0b, 0c: OpenJDK's heap polls the tied zeros as 0a, 0c, 0b.
    items = [("x", 1), ("a", 0), ("b", 0), ("c", 0)]
    order = [name for name, _ in java_poll_order(items, key=lambda item: item[1])]
    assert order == ["a", "c", "b", "x"]
