"""The merge as-of join's sort prefix (``lag.job.asof_join.sort_prefix``, ``docs/lag.md``).

The merge sorts each partition by (prefix, ``task_key``, ``time_key``, ``pkey`` nulls first); the
forward fill needs every task's rows together and in time order. These tests sort drawn rows by
the prefix Spark computes and check exactly that, on layouts where the time is clamped (few time
bits left, times far before and after the origin, ``Long.MIN_VALUE`` and ``Long.MAX_VALUE``) and
where partitions lie beyond the layout's count (they tie on the prefix).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lag.job.asof_join import sort_prefix
from lag.job.layout import TaskLayout

pytestmark = pytest.mark.spark

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1
ORIGIN = 1_800_000_000_000  # epoch ms

#: Sub-topology 0 with 2^38 partitions leaves 62 - 40 = 22 bits of time (about 70 minutes).
WIDE = TaskLayout(
    changelogs={"a-changelog": (0, "a"), "b-changelog": (1, "b")},
    partitions={0: 2**38, 1: 3},
    stateful_subtopologies=frozenset({0, 1}),
)
#: Two partitions per sub-topology: partitions 2 and up lie beyond it.
NARROW = TaskLayout(
    changelogs={"a-changelog": (0, "a"), "b-changelog": (1, "b")},
    partitions={0: 2, 1: 2},
    stateful_subtopologies=frozenset({0, 1}),
)

times = st.one_of(
    st.sampled_from([LONG_MIN, LONG_MAX, ORIGIN, ORIGIN - 1, ORIGIN + 2**22 - 1, ORIGIN + 2**22]),
    st.integers(ORIGIN - 10**10, ORIGIN + 10**10),
)
rows_strategy = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 5), times), min_size=1, max_size=80
)


def sorted_by_prefix(spark: Any, layout: TaskLayout, rows: list[tuple[int, int, int]]) -> list:
    """(task_key, time_key) of ``rows`` as the merge orders them."""
    frame = spark.createDataFrame(
        [((sub << 32) | part, time) for sub, part, time in rows], "task_key long, time_key long"
    )
    prefix = sort_prefix(layout, ORIGIN)
    assert prefix is not None
    ordered = frame.withColumn("_sort", prefix).orderBy("_sort", "task_key", "time_key")
    return [(r["task_key"], r["time_key"]) for r in ordered.collect()]


def assert_grouped_in_time_order(ordered: list[tuple[int, int]]) -> None:
    """Every task's rows are contiguous and their times never decrease."""
    finished: set[int] = set()
    previous: tuple[int, int] | None = None
    for task, time in ordered:
        if previous is not None and previous[0] != task:
            finished.add(previous[0])
        assert task not in finished, f"task {task} split in {ordered}"
        if previous is not None and previous[0] == task:
            assert previous[1] <= time, f"task {task} out of time order in {ordered}"
        previous = (task, time)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=rows_strategy, wide=st.booleans())
def test_prefix_keeps_each_task_together_in_time_order(
    spark: Any, rows: list[tuple[int, int, int]], wide: bool
) -> None:
    layout = WIDE if wide else NARROW
    ordered = sorted_by_prefix(spark, layout, rows)
    assert sorted(ordered) == sorted(((s << 32) | p, t) for s, p, t in rows)
    assert_grouped_in_time_order(ordered)


def test_prefix_gives_way_when_too_few_time_bits_are_left() -> None:
    huge = TaskLayout(
        changelogs={"a-changelog": (0, "a")},
        partitions={0: 2**42},
        stateful_subtopologies=frozenset({0}),
    )
    assert sort_prefix(huge, ORIGIN) is None
