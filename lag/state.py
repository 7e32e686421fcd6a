"""The cluster state at a moment, built from per-(process, task) aggregates.

The group leader pairs the end offsets it fetches with the offset sums the members reported.
Here each process contributes its latest snapshot at or before the latest complete end-offset
moment (:func:`state_moment`), found by one aggregation per (process, task) over the offset sums
and a window per process (:func:`replicas_at`), not by reading the cached per-snapshot table:
the driver collects at most tasks x processes rows plus the per-task end offset sums, however
many snapshots the history holds. Lags follow the core's ``compute_task_lag``
(``ClientState.computeTaskLags``); the document's orders are the core's ``TaskId`` and
``process_id_sort_key`` (``java.util.UUID.compareTo``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from lag.error_rows import ErrorRow
from lag.kafka import (
    LATEST_OFFSET,
    LONG_MAX,
    UNKNOWN_OFFSET_SUM,
    process_id_sort_key,
    sorted_task_ids,
)
from lag.keys import LONG_MIN, member_process_keys, scan_process_keys, with_task
from lag.layout import configs_json
from streams_assign.model import compute_task_lag

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lag.job import LagJob


def state_moment(job: LagJob, at: int | None = None) -> int | None:
    """The moment a cluster state for ``at`` describes: its latest end-offset snapshot.

    Parameters
    ----------
    at:
        Epoch ms, or None for the latest.

    The group leader fetches end offsets *after* the members sent their subscriptions, so
    the cluster state pairs the latest complete end offsets at or before ``at`` with each
    process's latest snapshot at or before *their* time. Without timed end offsets (a
    ``kafka-get-offsets.sh`` file) the moment is ``at`` itself (None = the latest).

    Returns
    -------
    int or None
        Epoch ms, or None for "the latest snapshot of each process".
    """
    from pyspark.sql import functions as F

    ends = job.end_sums.filter(F.col("complete"))
    if at is not None:
        ends = ends.filter(F.col("time_key") <= at)
    latest = ends.agg(F.max("time_key").alias("t")).first()
    moment = latest["t"] if latest is not None else None
    if moment is None or moment == LONG_MIN:
        return at
    return int(moment)


def cluster_state(job: LagJob, at: int | None = None, native: bool = False) -> dict[str, Any]:
    """The cluster-state document as the group leader would see it at time ``at``.

    Parameters
    ----------
    at:
        Epoch milliseconds; None = the latest moment in the data. The end offset sum of each
        task is its latest complete one at or before ``at``; each process contributes its
        latest snapshot at or before that end-offset moment (:meth:`state_moment`);
        snapshots without a time always count, as "now".
    native:
        Write Kafka's raw numbers instead of lags: per client ``task_offset_sums`` (what the
        subscription carries) and the top-level ``changelog_end_offset_sums``; the core turns
        them into lags with the same ``computeTaskLags`` rule. Without it, per client
        ``task_lags``.

    Returns
    -------
    dict
        The cluster-state document (``scenario-format.md``): ``configs``, ``stateful_tasks``,
        ``stateless_tasks`` and one client per member process with ``id``, ``capacity``,
        ``prev_active``, ``prev_standby`` and ``task_lags`` (or ``task_offset_sums``), task
        ids in Kafka's TaskId order, clients in UUID order. A stateful task without any end
        offsets gets lag -3 (unknown) on clients with local state, and an error row.

    Notes
    -----
    Built from per-(process, task) aggregates of the offset sums (their latest snapshot at or
    before the moment), not from the cached per-snapshot table: the driver collects at most
    tasks x clients rows and the per-task end offset sums, whatever the number of snapshots.
    """
    cutoff = state_moment(job, at)
    replicas, names = replicas_at(job, cutoff)
    end_sums = {
        f"{r['sub']}_{r['part']}": r["end_offset_sum"] for r in end_sums_at(job, at).collect()
    }

    stateful = job.layout.stateful_tasks()
    stateless = job.layout.stateless_tasks()
    known_stateful = set(stateful)
    for task in stateful:
        if task not in end_sums:
            job.python_errors.append(
                ErrorRow(
                    "end-offsets",
                    None,
                    task,
                    "no end offsets: no complete end offsets for this task; lag -3 (unknown)",
                )
            )

    capacity = job.membership.capacity()
    stateful_subs = job.layout.stateful_subtopologies
    local: dict[str, dict[str, int]] = defaultdict(dict)
    for pkey, task_key, offset_sum in replicas:
        process_id = names[pkey]
        if process_id not in capacity:
            continue  # not a group member: listed by non_member_processes
        task = f"{task_key >> 32}_{task_key & 0xFFFF_FFFF}"
        if task not in known_stateful:
            job.python_errors.append(
                ErrorRow(
                    "offsets",
                    None,
                    f"{process_id} {task}",
                    "unknown task: beyond the partitions of its changelogs",
                )
            )
            continue
        local[process_id][task] = offset_sum

    clients = []
    for process_id in sorted(capacity, key=process_id_sort_key):
        reported = dict(local.get(process_id, {}))
        owned = {f"{s}_{p}" for s, p in job.actives.get(process_id, set())}
        # A running active reports Task.LATEST_OFFSET for its stateful tasks.
        for task in owned:
            if int(task.split("_")[0]) in stateful_subs:
                reported[task] = LATEST_OFFSET
        # ClientState.initializePrevTasks: owned partitions first, then offset sums of -2.
        active = owned | {t for t, v in reported.items() if v == LATEST_OFFSET}
        standby = {t for t in reported if t not in active}
        client: dict[str, Any] = {
            "id": process_id,
            "capacity": capacity[process_id],
            "prev_active": sorted_task_ids(active),
            "prev_standby": sorted_task_ids(standby),
        }
        ordered = sorted_task_ids(reported)
        if native:
            client["task_offset_sums"] = {t: reported[t] for t in ordered if t in end_sums}
        else:
            client["task_lags"] = {t: state_lag(reported[t], end_sums.get(t)) for t in ordered}
        clients.append(client)

    document: dict[str, Any] = {
        "name": job.application_id,
        "configs": configs_json(job.configs),
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
    }
    if native:
        document["changelog_end_offset_sums"] = {t: end_sums[t] for t in stateful if t in end_sums}
    document["clients"] = clients
    return document


def non_member_processes(job: LagJob, at: int | None = None) -> list[str]:
    """Processes with local state that are not group members (left out of the state).

    Parameters
    ----------
    at:
        Epoch ms, or None for the latest; as for :meth:`cluster_state`.

    Returns
    -------
    list of str
        Process ids, sorted.
    """
    replicas, names = replicas_at(job, state_moment(job, at))
    members = set(job.membership.processes())
    return sorted({names[pkey] for pkey, _task, _sum in replicas} - members)


def replicas_at(
    job: LagJob, cutoff: int | None
) -> tuple[list[tuple[int, int, int]], dict[int, str]]:
    """Each process's latest snapshot at or before ``cutoff``: (pkey, task_key, offset sum).

    One aggregation per (process, task) over the offset sums (latest time and the sum then),
    then a window per process keeps the tasks of its latest snapshot. Collects at most
    tasks x processes rows; memoised per cutoff. Also returns the process ids by key.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    memo = job._replica_memo.get(cutoff)
    if memo is not None:
        return memo
    sums = job.sums
    if cutoff is not None:
        sums = sums.filter((F.col("time_key") <= cutoff) | (F.col("time_key") == LONG_MAX))
    per_task = sums.groupBy("pkey", "task_key").agg(
        F.max("time_key").alias("t"), F.max_by("offset_sum", "time_key").alias("offset_sum")
    )
    latest = F.max("t").over(Window.partitionBy("pkey"))
    rows = (
        per_task.select("*", latest.alias("latest"))
        .filter(F.col("t") == F.col("latest"))
        .select("pkey", "task_key", "offset_sum")
        .collect()
    )
    replicas = [(int(r["pkey"]), int(r["task_key"]), int(r["offset_sum"])) for r in rows]
    members = member_keys(job)
    seen = {pkey for pkey, _task, _sum in replicas}
    names = members if seen <= members.keys() else scan_process_keys(job.offsets)
    result = (replicas, names)
    job._replica_memo[cutoff] = result
    return result


def member_keys(job: LagJob) -> dict[int, str]:
    if job._member_key_memo is None:
        job._member_key_memo = member_process_keys(job.spark, job.membership)
    return job._member_key_memo


def end_sums_at(job: LagJob, at: int | None) -> DataFrame:
    from pyspark.sql import functions as F

    ends = job.end_sums.filter(F.col("complete"))
    if at is not None:
        ends = ends.filter(F.col("time_key") <= at)
    return (
        with_task(ends)
        .groupBy("sub", "part")
        .agg(
            F.max_by("offset_sum", "time_key").alias("end_offset_sum"),
            F.max("time_key").alias("end_offset_time"),
        )
    )


def state_lag(reported: int, end_offset_sum: int | None) -> int:
    """The lag a cluster state carries: Kafka's rule, -3 when the end offset sum is unknown."""
    if reported in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
        return reported
    if end_offset_sum is None:
        return UNKNOWN_OFFSET_SUM
    return compute_task_lag(reported, end_offset_sum)
