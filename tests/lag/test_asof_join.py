"""The as-of join and the cluster state against a plain-Python reference on random histories.

Hypothesis draws small histories of the hand-made application (conftest ``HAND_TOPOLOGY``):
offset rows of three processes and end-offset rows at a few moments (some changelog partitions
missing, so some end offsets are incomplete; some rows without a time). The Spark job's lag
table must equal, row for row, what the rules in docs/lag.md give when applied by hand: offset
sums per (snapshot, process, task), complete end-offset sums per (moment, task), each snapshot
matched to the latest complete end offsets at or before it, Kafka's lag rule; and the cluster
state must pair each process's latest snapshot before the latest end-offset moment with the
latest complete end offsets. The job's as-of join is the merge (``lag.job.asof_join``), whose
Arrow batches carry each task's latest end offsets across batch boundaries (checked with one-row
batches in ``tests/lag/test_merge_fill.py``); a fixed example has tasks complete at fewer moments
than exist.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lag.job.job import compute_lags
from lag.job.row_keys import LONG_MIN
from lag.sources.members import parse_members
from lag.sources.topology import parse_topology
from lag.spark.readers import END_OFFSETS_SCHEMA, OFFSETS_SCHEMA
from streams_assign.model import compute_task_lag, process_id_sort_key

from .conftest import APP, HAND_TOPOLOGY, P1, P2, P3, members_verbose

pytestmark = pytest.mark.spark

LONG_MAX = 9_223_372_036_854_775_807
#: Changelog topic -> sub-topology (s1 of sub-topology 0, s2 and s3 of sub-topology 1).
CHANGELOGS = {f"{APP}-s1-changelog": 0, f"{APP}-s2-changelog": 1, f"{APP}-s3-changelog": 1}
MEMBERS = members_verbose([(P1, 1, "in(0), other(1), plain(0, 1)"), (P2, 1, "in(1)"), (P3, 1, "-")])
ACTIVE = {P1: {"0_0", "1_1"}, P2: {"0_1"}, P3: set()}

topics = st.sampled_from(sorted(CHANGELOGS))
partitions = st.integers(0, 1)
end_histories = st.dictionaries(
    st.tuples(st.sampled_from([None, 100, 200, 300, 400]), topics, partitions),
    st.integers(0, 1000),
    min_size=1,
    max_size=40,
)
offset_histories = st.dictionaries(
    st.tuples(
        st.sampled_from([None, 50, 100, 150, 250, 400, 450]),
        st.sampled_from([P1, P2, P3]),
        topics,
        partitions,
    ),
    st.one_of(st.just(-4), st.integers(0, 1000)),
    min_size=1,
    max_size=40,
)

#: End offsets at moments (no time), 100 and 300: task 0_0 is complete at all three, 0_1 at 100
#: only, 1_0 at 100 only (s3's partition is missing at 300), 1_1 only without a time: the
#: snapshots at 400 of 0_1 and 1_0 must match their end offsets at 100, not at 300.
FALLBACK_ENDS = {
    (None, f"{APP}-s1-changelog", 0): 1,
    (100, f"{APP}-s1-changelog", 0): 10,
    (100, f"{APP}-s1-changelog", 1): 11,
    (300, f"{APP}-s1-changelog", 0): 30,
    (100, f"{APP}-s2-changelog", 0): 5,
    (100, f"{APP}-s3-changelog", 0): 6,
    (300, f"{APP}-s2-changelog", 0): 7,
    (None, f"{APP}-s2-changelog", 1): 8,
    (None, f"{APP}-s3-changelog", 1): 9,
}
FALLBACK_OFFSETS = {
    (400, P1, f"{APP}-s1-changelog", 0): 20,
    (400, P1, f"{APP}-s1-changelog", 1): 3,
    (400, P2, f"{APP}-s2-changelog", 0): 4,
    (400, P2, f"{APP}-s3-changelog", 0): 1,
    (150, P2, f"{APP}-s2-changelog", 1): 2,
    (50, P3, f"{APP}-s1-changelog", 0): 1,
    (None, P3, f"{APP}-s3-changelog", 1): 5,
}


def reference(
    ends: dict[tuple[Any, str, int], int], offsets: dict[tuple[Any, str, str, int], int]
) -> tuple[set[tuple[Any, ...]], dict[str, dict[str, int]]]:
    """Lag-table rows and per-client ``task_lags`` by the rules, in plain Python."""
    logged = {topic for _t, topic, _p in ends}
    expected = defaultdict(int)
    for topic in logged:
        expected[CHANGELOGS[topic]] += 1
    end_sum: dict[tuple[int, str], int] = defaultdict(int)
    end_count: dict[tuple[int, str], int] = defaultdict(int)
    for (time, topic, part), offset in ends.items():
        key = (LONG_MIN if time is None else time, f"{CHANGELOGS[topic]}_{part}")
        end_sum[key] += offset
        end_count[key] += 1
    complete: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for (time, task), count in end_count.items():
        if count == expected[int(task.split("_")[0])]:
            complete[task].append((time, end_sum[(time, task)]))

    def as_of(task: str, time: int) -> tuple[int, int] | None:
        before = [pair for pair in complete[task] if pair[0] <= time]
        return max(before) if before else None

    sums: dict[tuple[int, str, str], int] = defaultdict(int)
    counts: dict[tuple[int, str, str], int] = defaultdict(int)
    for (time, process, topic, part), offset in offsets.items():
        if topic not in logged:
            continue  # an error row: no logged store owns the topic
        key = (LONG_MAX if time is None else time, process, f"{CHANGELOGS[topic]}_{part}")
        sums[key] += max(offset, 0)
        counts[key] += 1
    rows = set()
    for (time, process, task), total in sums.items():
        match = as_of(task, time)
        end_time, end_value = match if match else (None, None)
        rows.add(
            (
                None if time == LONG_MAX else time,
                process,
                task,
                counts[(time, process, task)],
                total,
                None if end_time in (None, LONG_MIN) else end_time,
                end_value,
                None if end_value is None else compute_task_lag(total, end_value),
            )
        )

    # The cluster state: the latest complete end-offset moment, each process's latest snapshot
    # at or before it (untimed snapshots always count), the latest complete end offsets.
    moments = [time for pairs in complete.values() for time, _ in pairs]
    cutoff = max(moments) if moments and max(moments) != LONG_MIN else None
    latest_end = {task: max(pairs)[1] for task, pairs in complete.items() if pairs}
    lags: dict[str, dict[str, int]] = {}
    stateful_subs = set(expected)
    for process in sorted(ACTIVE, key=process_id_sort_key):
        times = [
            t
            for (t, p, _task) in sums
            if p == process and (cutoff is None or t <= cutoff or t == LONG_MAX)
        ]
        reported = {}
        if times:
            newest = max(times)
            reported = {task: v for (t, p, task), v in sums.items() if p == process and t == newest}
        for task in ACTIVE[process]:
            if int(task.split("_")[0]) in stateful_subs:  # only stateful tasks report -2
                reported[task] = -2
        lags[process] = {
            task: -2
            if v == -2
            else (compute_task_lag(v, latest_end[task]) if task in latest_end else -3)
            for task, v in reported.items()
        }
    return rows, lags


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ends=end_histories, offsets=offset_histories)
@example(ends=FALLBACK_ENDS, offsets=FALLBACK_OFFSETS)
def test_lags_and_cluster_state_equal_the_plain_python_reference(
    spark: Any,
    ends: dict[tuple[Any, str, int], int],
    offsets: dict[tuple[Any, str, str, int], int],
) -> None:
    end_frame = spark.createDataFrame(
        [
            (topic, part, offset, time, "ends", None, None)
            for (time, topic, part), offset in ends.items()
        ],
        END_OFFSETS_SCHEMA,
    )
    offset_frame = spark.createDataFrame(
        [
            (process, topic, part, offset, None, time, "offsets", None, None)
            for (time, process, topic, part), offset in offsets.items()
        ],
        OFFSETS_SCHEMA,
    )
    job = compute_lags(
        spark,
        application_id=APP,
        topology=parse_topology(HAND_TOPOLOGY),
        membership=parse_members(MEMBERS, APP),
        offsets=offset_frame,
        end_offsets=end_frame,
    )
    try:
        document = job.cluster_state()
        got = {
            (
                r["snapshot_time"],
                r["process_id"],
                r["task_id"],
                r["changelog_partitions"],
                r["offset_sum"],
                r["end_offset_time"],
                r["end_offset_sum"],
                r["lag"],
            )
            for r in job.lags.collect()
        }
        cached = sorted(tuple(r) for r in job.restore.collect())
    finally:
        job.unpersist()
    rows, lags = reference(ends, offsets)
    assert got == rows
    # One restore row per (process, task) with a known records_behind: an end offset sum
    # matched (the drawn offset sums are never negative).
    assert len(cached) == len({(r[1], r[2]) for r in rows if r[6] is not None})
    assert [c["id"] for c in document["clients"]] == sorted(ACTIVE, key=process_id_sort_key)
    assert {c["id"]: c["task_lags"] for c in document["clients"]} == lags
