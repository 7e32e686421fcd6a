"""The merge as-of join's Arrow forward fill against a plain-Python as-of lookup.

``lag.job.asof_join.merge_as_of_join`` sorts the offset sums and the complete end-offset sums of
each task into one stream and carries the latest end-offset row forward in ``mapInArrow`` batches.
Spark cuts a partition into batches anywhere, also inside a task's rows, so this test cuts random
sorted streams into random batch sizes (one-row batches included) and checks every snapshot row
against the latest end row of its task at or before its time. No Spark needed: the fill is numpy
over pyarrow batches.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from lag.job.asof_join import _forward_fill

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1

#: (task, time, end row?, sum); pkey is drawn for snapshot rows only.
rows_strategy = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.sampled_from([LONG_MIN, 10, 20, 30, 40, LONG_MAX]),
        st.booleans(),
        st.integers(0, 2**62),
        st.integers(-(2**63), 2**63 - 1),
    ),
    max_size=60,
)


def stream(drawn: list[tuple[int, int, bool, int, int]]) -> list[dict[str, Any]]:
    """Rows as the merge sorts them: one end row per (task, time), ends first at equal time."""
    seen: set[tuple[int, int]] = set()
    rows = []
    for task, time, is_end, total, pkey in drawn:
        if is_end:
            if (task, time) in seen or time == LONG_MAX:
                continue
            seen.add((task, time))
        rows.append(
            {
                "time_key": time,
                "pkey": None if is_end else pkey,
                "task_key": task,
                "n_partitions": None if is_end else 2,
                "offset_sum": total,
            }
        )
    rows.sort(key=lambda r: (r["task_key"], r["time_key"], r["pkey"] is not None))
    return rows


def expected(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Each snapshot row with the latest end row of its task at or before its time."""
    out = []
    for r in rows:
        if r["pkey"] is None:
            continue
        before = [
            (e["time_key"], e["offset_sum"])
            for e in rows
            if e["pkey"] is None
            and e["task_key"] == r["task_key"]
            and e["time_key"] <= r["time_key"]
        ]
        end_time, end_sum = max(before) if before else (None, None)
        out.append((r["time_key"], r["pkey"], r["task_key"], 2, r["offset_sum"], end_sum, end_time))
    return out


@settings(max_examples=200, deadline=None)
@given(drawn=rows_strategy, cuts=st.lists(st.integers(1, 7), min_size=1, max_size=60))
def test_forward_fill_equals_an_as_of_lookup_across_any_batch_cuts(
    drawn: list[tuple[int, int, bool, int, int]], cuts: list[int]
) -> None:
    rows = stream(drawn)
    schema = pa.schema(
        [(name, pa.int64()) for name in ("time_key", "pkey", "task_key", "n_partitions")]
        + [("offset_sum", pa.int64())]
    )
    batches, start, i = [], 0, 0
    while start < len(rows):
        size = cuts[i % len(cuts)]
        batches.append(pa.RecordBatch.from_pylist(rows[start : start + size], schema=schema))
        start, i = start + size, i + 1
    got = [
        tuple(row.values()) for batch in _forward_fill()(iter(batches)) for row in batch.to_pylist()
    ]
    assert got == expected(rows)
