"""The exact caught-up-clients queue against the literal Kafka structures."""

from __future__ import annotations

import heapq
import logging
import random

import pytest

from devtools.generators.cluster_states import random_scenario, scale_scenario
from streams_assign.assignors.caught_up_clients import ExactCaughtUpClients, _remove_key
from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.java.hash_order import java_uuid_hash_code
from streams_assign.java.priority_queue import (
    JavaClientHeap,
    JavaPriorityQueue,
    java_hash_set_order,
)


def _java_queue(keys: list[int], order: list[int]) -> JavaPriorityQueue[int]:
    queue: JavaPriorityQueue[int] = JavaPriorityQueue(key=keys.__getitem__)
    for client in order:
        queue.offer(client)
    return queue


@pytest.mark.parametrize("seed", range(200))
def test_heapq_matches_java_on_valid_heaps_with_distinct_keys(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 80)
    keys = rng.sample(range(10_000), n)
    order = list(range(n))
    rng.shuffle(order)
    java = _java_queue(keys, order)
    mine: list[int] = []
    for client in order:
        heapq.heappush(mine, keys[client])
    assert [keys[c] for c in java.array_order()] == mine
    for _ in range(rng.randint(0, n)):
        assert keys[java.poll()] == heapq.heappop(mine)  # type: ignore[index]
        assert [keys[c] for c in java.array_order()] == mine
    for client in rng.sample(java.array_order(), min(5, len(mine))):
        java.remove(client)
        _remove_key(mine, keys[client])
        assert [keys[c] for c in java.array_order()] == mine


@pytest.mark.parametrize("seed", range(100))
def test_java_client_heap_matches_java_priority_queue_with_stale_keys(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 60)
    keys = [rng.randrange(1000) * 64 + c for c in range(n)]
    java = _java_queue(keys, list(range(n)))
    mine = JavaClientHeap(keys)
    mine.offer_many(range(n))
    for _ in range(30):
        client = rng.randrange(n)
        keys[client] = rng.randrange(1000) * 64 + client  # changed while in the heap
        other = rng.randrange(n)
        for c in (other, client):
            java.remove(c)
            java.offer(c)
            mine.remove(c)
            mine.offer(c)
        assert java.array_order() == mine.array
        if rng.random() < 0.3 and mine.array:
            assert java.poll() == mine.poll()


@pytest.mark.parametrize("seed", range(50))
def test_hash_set_order_matches_reference_model(seed: int) -> None:
    rng = random.Random(seed)
    cluster = parse_cluster_state(random_scenario(rng, 80, 20))
    from streams_assign.assignors.state import AssignmentState

    exact = ExactCaughtUpClients(AssignmentState(cluster))
    hashes = [java_uuid_hash_code(c.id) for c in cluster.clients]
    items = list(range(len(hashes)))
    rng.shuffle(items)
    items = items[: rng.randint(0, len(items))]
    assert exact._hash_set_order(items) == java_hash_set_order(items, hashes.__getitem__)


def _both(cluster) -> tuple[str, str]:
    logging.disable(logging.WARNING)
    try:
        return (
            HighAvailabilityTaskAssignor().assign(cluster).to_json(),
            HighAvailabilityTaskAssignor(literal=True).assign(cluster).to_json(),
        )
    finally:
        logging.disable(logging.NOTSET)


@pytest.mark.parametrize("seed", [80, 452])
def test_stale_heap_cases_match_literal_and_use_the_java_array(seed: int) -> None:
    """The two medium fuzz seeds where Kafka's heap goes invalid (the old fast path differed)."""
    made: list[ExactCaughtUpClients] = []
    original = ExactCaughtUpClients.__init__

    def recording_init(self, state) -> None:  # type: ignore[no-untyped-def]
        original(self, state)
        made.append(self)

    ExactCaughtUpClients.__init__ = recording_init  # type: ignore[method-assign]
    try:
        cluster = parse_cluster_state(random_scenario(random.Random(seed), 60, 150))
        fast, literal = _both(cluster)
    finally:
        ExactCaughtUpClients.__init__ = original  # type: ignore[method-assign]
    assert fast == literal
    assert any(m.literal_operations for m in made)  # ran on an invalid heap


@pytest.mark.parametrize("seed", range(0, 600, 7))
def test_medium_random_clusters_match_literal(seed: int) -> None:
    fast, literal = _both(parse_cluster_state(random_scenario(random.Random(seed), 60, 150)))
    assert fast == literal


@pytest.mark.parametrize("seed", range(300))
def test_small_random_clusters_match_literal(seed: int) -> None:
    fast, literal = _both(parse_cluster_state(random_scenario(random.Random(seed), 12, 30)))
    assert fast == literal


@pytest.mark.slow
def test_scale_scenario_matches_literal() -> None:
    fast, literal = _both(parse_cluster_state(scale_scenario(40)))
    assert fast == literal
