"""The merge as-of join's one sort (``lag.job.asof_join``, ``docs/lag.md``).

The merge sorts each partition in the forward fill's order before summing the offsets, and
:func:`lag.job.asof_join.enable_sort_aggregate` lets Spark run that sum as a sort aggregation that
keeps the order, so the plan has one sort and no hash aggregation. These tests check the plan Spark
builds (one ``Sort``, a ``SortAggregate``, no ``HashAggregate`` between the shuffle and the
forward fill), that the rows are the same with and without the setting on random histories, and
how the merge's shuffle is sized by the stacked offset and end-offset bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lag.job.asof_join import enable_sort_aggregate, merge_as_of_join
from lag.job.layout import TaskLayout
from lag.spark.sizing import MERGE_PARTITION_INPUT_BYTES, merge_partitions_for

ORIGIN = 1_800_000_000_000  # epoch ms
LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1

#: Sub-topology 0 with two changelogs (a, b), sub-topology 1 with one; two partitions each.
LAYOUT = TaskLayout(
    changelogs={"a-changelog": (0, "a"), "b-changelog": (0, "b"), "c-changelog": (1, "c")},
    partitions={0: 2, 1: 2},
    stateful_subtopologies=frozenset({0, 1}),
)

CONFS = ("spark.sql.execution.replaceHashWithSortAgg", "spark.sql.optimizer.excludedRules")


def test_merge_partitions_follow_the_stacked_bytes_between_the_floor_and_the_cap() -> None:
    assert merge_partitions_for(0, 4) == 4
    assert merge_partitions_for(10 * MERGE_PARTITION_INPUT_BYTES + 1, 4) == 11
    assert merge_partitions_for(10 * MERGE_PARTITION_INPUT_BYTES, 32) == 32
    assert merge_partitions_for(2**40, 4) == 4096
    assert merge_partitions_for(2**63 - 1, 7) is None  # Spark's "unknown size"


@pytest.fixture
def session_confs(spark: Any) -> Iterator[Any]:
    """The shared session, with the two settings of ``enable_sort_aggregate`` put back after."""
    saved = {key: spark.conf.get(key, None) for key in CONFS}
    try:
        yield spark
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def frames(spark: Any, offsets: list[tuple[int, int, int, int]], ends: list[tuple[int, int, int]]):
    """Validated offset rows (time, process key, task key, offset) and end-offset rows."""
    good_offsets = spark.createDataFrame(
        offsets, "time_key long, pkey long, task_key long, offset long"
    )
    good_ends = spark.createDataFrame(ends, "time_key long, task_key long, offset long")
    return good_offsets, good_ends


def plan_nodes(frame: Any) -> list[str]:
    """Node names of the frame's physical plan (before adaptive execution), top first."""
    plan = frame._jdf.queryExecution().executedPlan()
    if plan.nodeName() == "AdaptiveSparkPlan":
        plan = plan.inputPlan()
    names: list[str] = []
    nodes = [plan]
    while nodes:
        node = nodes.pop(0)
        names.append(str(node.nodeName()))
        children = node.children()
        nodes[:0] = [children.apply(i) for i in range(children.size())]
    return names


def test_the_merge_sums_in_one_sort_with_the_sort_aggregation(session_confs: Any) -> None:
    spark = session_confs
    offsets, ends = frames(spark, [(ORIGIN, 7, 1, 5)], [(ORIGIN, 1, 9)])
    enable_sort_aggregate(spark)
    enable_sort_aggregate(spark)  # idempotent: the rule is listed once
    excluded = spark.conf.get("spark.sql.optimizer.excludedRules").split(",")
    assert excluded.count("org.apache.spark.sql.catalyst.optimizer.EliminateSorts") == 1
    nodes = plan_nodes(merge_as_of_join(offsets, ends, LAYOUT, ORIGIN, partitions=3))
    below_fill = nodes[nodes.index("MapInArrow") : nodes.index("Exchange")]
    assert below_fill.count("Sort") == 1, nodes
    assert "SortAggregate" in below_fill and "HashAggregate" not in below_fill, nodes


def test_without_the_setting_the_merge_sorts_after_a_hash_aggregation(
    session_confs: Any,
) -> None:
    spark = session_confs
    for key in CONFS:
        spark.conf.unset(key)
    offsets, ends = frames(spark, [(ORIGIN, 7, 1, 5)], [(ORIGIN, 1, 9)])
    nodes = plan_nodes(merge_as_of_join(offsets, ends, LAYOUT, ORIGIN))
    below_fill = nodes[nodes.index("MapInArrow") : nodes.index("Exchange")]
    assert "HashAggregate" in below_fill and "SortAggregate" not in below_fill, nodes
    # The sort after the sum stays: the forward fill still gets its order.
    assert below_fill.index("Sort") < below_fill.index("HashAggregate"), nodes


tasks = st.sampled_from([0, 1, 1 << 32, (1 << 32) | 1])
times = st.one_of(
    st.sampled_from([LONG_MIN, LONG_MAX]), st.integers(ORIGIN - 50_000, ORIGIN + 50_000)
)
offset_rows = st.lists(
    st.tuples(times, st.integers(1, 3), tasks, st.sampled_from([-4, -2, 0, 3, 10, 2**62])),
    max_size=40,
)
end_rows = st.lists(st.tuples(times, tasks, st.integers(0, 50)), max_size=30)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(offsets=offset_rows, ends=end_rows, partitions=st.sampled_from([1, 3]))
def test_the_sort_aggregation_gives_the_rows_of_the_hash_aggregation(
    session_confs: Any,
    offsets: list[tuple[int, int, int, int]],
    ends: list[tuple[int, int, int]],
    partitions: int,
) -> None:
    spark = session_confs
    good_offsets, good_ends = frames(spark, offsets, ends)
    for key in CONFS:
        spark.conf.unset(key)
    hashed = merge_as_of_join(good_offsets, good_ends, LAYOUT, ORIGIN, partitions).collect()
    enable_sort_aggregate(spark)
    sorted_rows = merge_as_of_join(good_offsets, good_ends, LAYOUT, ORIGIN, partitions).collect()
    assert sorted(map(tuple, sorted_rows)) == sorted(map(tuple, hashed))
