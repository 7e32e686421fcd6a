"""Kafka Streams constants and orderings of the lag jobs, taken from the core (no Spark here).

The task id, its order, the process-id (UUID) order, the lag rule and the sentinels ``-2``
(``Task.LATEST_OFFSET``) and ``-3`` (``SubscriptionInfo.UNKNOWN_OFFSET_SUM``) are the core's
(:mod:`streams_assign.model`); this module adds only what the core has no use for: the
checkpoint file's ``OffsetCheckpoint.OFFSET_UNKNOWN`` (-4) and Java's ``Integer.MAX_VALUE``, and
the task-id helpers the job's string columns need.
"""

from __future__ import annotations

from collections.abc import Iterable

from streams_assign.errors import InvalidTaskIdError
from streams_assign.model import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    TaskId,
    process_id_sort_key,
)

__all__ = [
    "INT_MAX",
    "LATEST_OFFSET",
    "LONG_MAX",
    "OFFSET_UNKNOWN",
    "UNKNOWN_OFFSET_SUM",
    "parse_task_id",
    "process_id_sort_key",
    "sorted_task_ids",
]

#: Java's ``Long.MAX_VALUE`` (the core's ``LONG_MAX_VALUE``): a pinned overflowed sum.
LONG_MAX = LONG_MAX_VALUE
#: ``OffsetCheckpoint.OFFSET_UNKNOWN``: a checkpoint entry whose offset is unknown; not summed.
OFFSET_UNKNOWN = -4
#: Java's ``Integer.MAX_VALUE``: partitions and sub-topology ids are ints.
INT_MAX = 2**31 - 1


def parse_task_id(text: str) -> TaskId | None:
    """The task id of a task directory name, as Kafka's ``TaskId.parse`` reads it (the core's).

    Parameters
    ----------
    text:
        ``"<sub>_<partition>"`` or ``"<name>__<sub>_<partition>"`` (named topologies).

    Returns
    -------
    streams_assign.model.TaskId or None
        None for anything else (Kafka ignores such folders beside the task folders, too).
    """
    try:
        return TaskId.parse(text)
    except InvalidTaskIdError:
        return None


def sorted_task_ids(task_ids: Iterable[str]) -> list[str]:
    """Task ids in Kafka's ``TaskId.compareTo`` order (``0_2 < 0_10``), duplicates removed.

    Parameters
    ----------
    task_ids:
        Task ids as text, any order, all named or all unnamed.

    Returns
    -------
    list of str

    Raises
    ------
    streams_assign.errors.InvalidTaskIdError
        For a string that is not a task id.
    """
    return [str(task) for task in sorted({TaskId.parse(t) for t in task_ids})]
