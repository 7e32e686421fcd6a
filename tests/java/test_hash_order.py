"""Java collection orders (``streams_assign.java.hash_order``) against OpenJDK itself.

``tests/data/threads/jdk_collection_orders.json`` was produced by JDK 17 running
``tests/data/threads/JdkCollectionOrders.java``: 48 random TaskId sets, their ``HashMap``
order before and after removals, and ``new PriorityQueue<>(hashSet)`` before and after a mix of
``poll`` and ``remove(Object)``. Both emulations must reproduce every list exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streams_assign.assignors.threads import _TaskQueue
from streams_assign.java.hash_order import (
    JavaHashMap,
    JavaHashSet,
    int32,
    java_objects_hash,
    java_string_hash_code,
    spread,
    task_hash_map,
    task_hash_set,
    task_id_hash_code,
)
from streams_assign.model import TaskId

JDK_CASES = json.loads(
    (
        Path(__file__).resolve().parents[1] / "data" / "threads" / "jdk_collection_orders.json"
    ).read_text()
)


def tasks(texts: list[str]) -> list[TaskId]:
    return [TaskId.parse(t) for t in texts]


def names(items: object) -> list[str]:
    return [str(t) for t in items]  # type: ignore[attr-defined]


def test_string_hash_codes_match_java() -> None:
    assert java_string_hash_code("") == 0
    assert java_string_hash_code("a") == 97
    assert java_string_hash_code("hello") == 99162322
    assert java_string_hash_code("polygenelubricants") == -2147483648  # famous Integer.MIN_VALUE
    assert java_string_hash_code("\U0001f600") == 31 * 0xD83D + 0xDE00  # UTF-16 code units


def test_task_id_hash_code_is_objects_hash() -> None:
    assert task_id_hash_code(TaskId(0, 0)) == 31 * (31 * 31)  # 29791
    assert task_id_hash_code(TaskId(1, 2, "x")) == 31 * (31 * (31 + 1) + 2) + ord("x")
    assert task_id_hash_code(TaskId(2**31 - 1, 2**31 - 1)) == java_objects_hash(
        2**31 - 1, 2**31 - 1, None
    )
    assert int32(2**31) == -(2**31)
    assert spread(-1) == 0xFFFF0000
    assert spread(0x12345678) == 0x12345678 ^ 0x1234


@pytest.mark.parametrize("index", range(len(JDK_CASES)))
def test_hash_map_and_priority_queue_match_jdk(index: int) -> None:
    case = JDK_CASES[index]
    inserted = tasks(case["inserted"])
    hash_map = task_hash_map()
    for task in inserted:
        hash_map.put(task, 1)
    assert not hash_map.treeified
    assert names(hash_map) == case["map_order"]
    for task in tasks(case["removed"]):
        hash_map.remove(task)
    assert names(hash_map) == case["map_order_after_removal"]

    queue = _TaskQueue(list(task_hash_set(inserted)))
    assert names(queue.array_order()) == case["heapified"]
    for op in case["ops"]:
        if op == "poll":
            queue.poll()
        else:
            assert queue.remove(TaskId.parse(op[1:]))
    assert names(queue.array_order()) == case["heap_after_ops"]


def test_small_table_grows_instead_of_treeifying() -> None:
    """Nine colliding keys in a 16-bucket table: treeifyBin resizes to 32 (JDK case 0)."""
    colliding = [TaskId(s, s) for s in range(9)]  # 961 s + 31 s, same bucket mod 16 and 32
    hash_map = task_hash_map()
    for task in colliding[:8]:
        hash_map.put(task, 1)
    assert hash_map.capacity == 16
    hash_map.put(colliding[8], 1)
    assert hash_map.capacity == 32
    assert not hash_map.treeified


def test_treeification_is_reported() -> None:
    """A bucket of 9+ in a table of 64+ becomes a tree bin in Java (order out of scope)."""
    hash_map: JavaHashMap[int, int] = JavaHashMap(lambda key: 64 * key, initial_capacity=64)
    for key in range(9):
        hash_map.put(key, key)
    assert hash_map.treeified


def test_put_existing_key_keeps_position_and_updates_value() -> None:
    hash_map = task_hash_map()
    for task in tasks(["0_0", "0_1", "1_0"]):
        hash_map.put(task, 1)
    before = names(hash_map)
    hash_map.put(TaskId(0, 1), 7)
    assert names(hash_map) == before
    assert hash_map[TaskId(0, 1)] == 7
    assert hash_map.remove(TaskId(9, 9)) is None
    assert len(hash_map) == 3


def test_initial_capacity_is_rounded_to_a_power_of_two() -> None:
    hash_set: JavaHashSet[TaskId] = JavaHashSet(task_id_hash_code, initial_capacity=20)
    hash_set.add(TaskId(0, 0))
    assert hash_set._map.capacity == 32  # noqa: SLF001 - layout is the point of the test
    assert TaskId(0, 0) in hash_set
    hash_set.discard(TaskId(0, 0))
    assert len(hash_set) == 0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 300)), max_size=120, unique=True))
def test_order_is_bucket_index_then_insertion(keys: list[tuple[int, int]]) -> None:
    """Without tree bins, iteration = stable sort of the insertion order by bucket index."""
    inserted = [TaskId(s, p) for s, p in keys]
    hash_set = task_hash_set(inserted)
    capacity = hash_set._map.capacity  # noqa: SLF001
    expected = sorted(inserted, key=lambda t: spread(task_id_hash_code(t)) & (capacity - 1))
    assert list(hash_set) == expected
    assert capacity == 0 or len(inserted) <= 0.75 * capacity
