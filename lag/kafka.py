"""Kafka Streams constants and orderings the lag jobs follow (no Spark here).

Sentinels (reference section 1.4): ``Task.LATEST_OFFSET`` (-2),
``SubscriptionInfo.UNKNOWN_OFFSET_SUM`` (-3), ``OffsetCheckpoint.OFFSET_UNKNOWN`` (-4) and
``Long.MAX_VALUE`` for a pinned overflow. The core (``streams_assign.model``) defines the same
numbers; they are repeated here so the lag package can be read, and its parsers used, without
the core.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable

#: Java's ``Long.MAX_VALUE``: a pinned overflowed sum, or an unbounded acceptable.recovery.lag.
LONG_MAX = 9_223_372_036_854_775_807
#: ``Task.LATEST_OFFSET``: a running active task reports -2 for its changelogs and offset sum.
LATEST_OFFSET = -2
#: ``SubscriptionInfo.UNKNOWN_OFFSET_SUM``: the offset sum (or the end offset sum) is unknown.
UNKNOWN_OFFSET_SUM = -3
#: ``OffsetCheckpoint.OFFSET_UNKNOWN``: a checkpoint entry whose offset is unknown; not summed.
OFFSET_UNKNOWN = -4
#: Java's ``Integer.MAX_VALUE``: partitions and sub-topology ids are ints.
INT_MAX = 2**31 - 1

_TASK_ID = re.compile(r"^(?P<sub>\d+)_(?P<part>\d+)$")


def parse_task_id(text: str) -> tuple[int, int] | None:
    """``(sub-topology, partition)`` of an unnamed task id, as Kafka's ``TaskId.parse`` reads it.

    Parameters
    ----------
    text:
        ``"<sub>_<partition>"``, both Java ints.

    Returns
    -------
    tuple of int or None
        None for anything else, named-topology ids (``name__1_3``) included.
    """
    match = _TASK_ID.match(text)
    if match is None:
        return None
    sub, part = int(match["sub"]), int(match["part"])
    if sub > INT_MAX or part > INT_MAX:
        return None
    return sub, part


def task_sort_key(task_id: str) -> tuple[int, int]:
    """Sort key of ``"<sub>_<partition>"`` in ``TaskId.compareTo`` order (numeric: 0_2 < 0_10).

    Parameters
    ----------
    task_id:
        An unnamed task id.

    Returns
    -------
    tuple of int
        ``(sub-topology, partition)``.

    Raises
    ------
    ValueError
        When ``task_id`` is not ``<sub>_<partition>``.
    """
    parsed = parse_task_id(task_id)
    if parsed is None:
        raise ValueError(f"not a task id: {task_id!r}")
    return parsed


def sorted_task_ids(task_ids: Iterable[str]) -> list[str]:
    """Task ids in Kafka's ``TaskId`` order, duplicates removed.

    Parameters
    ----------
    task_ids:
        Unnamed task ids, any order.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        For a string that is not a task id.
    """
    return sorted(set(task_ids), key=task_sort_key)


def uuid_sort_key(process_id: str) -> tuple[int, int]:
    """Sort key of a UUID string in ``java.util.UUID.compareTo`` order.

    Parameters
    ----------
    process_id:
        A UUID string.

    Returns
    -------
    tuple of int
        The most and least significant 64 bits, each as a *signed* long, as Java compares them.

    Raises
    ------
    ValueError
        When ``process_id`` is not a UUID.
    """
    value = uuid.UUID(process_id).int
    high, low = value >> 64, value & (2**64 - 1)
    return (high - 2**64 if high >= 2**63 else high, low - 2**64 if low >= 2**63 else low)


def pin_sum(values: Iterable[int]) -> int:
    """Sum of non-negative offsets, pinned to ``Long.MAX_VALUE`` on overflow.

    Kafka adds offsets one by one and returns ``Long.MAX_VALUE`` the moment the running sum
    turns negative (``TaskManager.sumOfChangelogOffsets``,
    ``StreamsPartitionAssignor.computeEndOffsetSumsByTask``); for non-negative addends that is
    ``min(exact sum, Long.MAX_VALUE)``.

    Parameters
    ----------
    values:
        Offsets in records, each >= 0.

    Returns
    -------
    int
        The pinned sum, in records.
    """
    return min(sum(values), LONG_MAX)


def task_lag(offset_sum: int, end_offset_sum: int) -> int:
    """Kafka's ``ClientState.computeTaskLags`` rule for one task, in records.

    Parameters
    ----------
    offset_sum:
        The offset sum the client reported (-2 running active, -3 unknown, else >= 0).
    end_offset_sum:
        The task's changelog end offset sum (>= 0).

    Returns
    -------
    int
        -2 or -3 passed through; ``end_offset_sum`` when the offset sum is beyond the end (Kafka
        warns that the task is probably corrupted); otherwise ``end_offset_sum - offset_sum``.
    """
    if offset_sum in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
        return offset_sum
    if end_offset_sum < offset_sum:
        return end_offset_sum
    return end_offset_sum - offset_sum
