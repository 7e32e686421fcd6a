"""The cluster state at a moment, built from per-(process, task) aggregates.

The group leader pairs the end offsets it fetches with the offset sums the members reported.
Here each process contributes its latest snapshot at or before the latest complete end-offset
moment (:meth:`ClusterStateBuilder.state_moment`), found by one aggregation per (process, task)
over the offset sums and a window per process (:meth:`ClusterStateBuilder.replicas_at`), not by
reading the cached per-snapshot table: the driver collects at most tasks x processes rows plus
the per-task end offset sums, however many snapshots the history holds. Lags follow the core's
``compute_task_lag`` (``ClientState.computeTaskLags``); the document's orders are the core's
``TaskId`` and ``process_id_sort_key`` (``java.util.UUID.compareTo``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lag.error_rows import ErrorRow
from lag.job.layout import TaskLayout, configs_json
from lag.job.row_keys import LONG_MIN, member_process_keys, scan_process_keys, with_task
from lag.kafka_rules import (
    LATEST_OFFSET,
    LONG_MAX,
    UNKNOWN_OFFSET_SUM,
    process_id_sort_key,
    sorted_task_ids,
)
from lag.sources.members import Membership
from streams_assign.model import AssignmentConfigs, compute_task_lag

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class ClusterStateBuilder:
    """Builds cluster-state documents at chosen moments from the job's offset and end-offset sums.

    Attributes
    ----------
    spark:
        The session.
    application_id:
        Kafka Streams' ``application.id`` (the document's ``name``).
    layout:
        Stateful and stateless tasks and their changelogs.
    membership:
        The group's Kafka Streams members (the document's clients and their capacity).
    actives:
        Process id -> tasks it runs as active now, as (sub-topology, partition).
    configs:
        Configs written into the document.
    sums:
        Offset sums per (``time_key``, ``pkey``, ``task_key``), before the as-of join.
    end_sums:
        End offset sums per (``time_key``, ``task_key``) with their completeness.
    offsets:
        The offset rows as read (for the exact scan of their process ids, when needed).
    python_errors:
        The job's Python-side error rows; the builder appends the rows it finds.
    """

    spark: SparkSession
    application_id: str
    layout: TaskLayout
    membership: Membership
    actives: dict[str, set[tuple[int, int]]]
    configs: AssignmentConfigs
    sums: DataFrame
    end_sums: DataFrame
    offsets: DataFrame
    python_errors: list[ErrorRow]
    _replica_memo: dict[int | None, tuple[list[tuple[int, int, int]], dict[int, str]]] = field(
        default_factory=dict, repr=False
    )
    _member_key_memo: dict[int, str] | None = field(default=None, repr=False)

    def state_moment(self, at: int | None = None) -> int | None:
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

        ends = self.end_sums.filter(F.col("complete"))
        if at is not None:
            ends = ends.filter(F.col("time_key") <= at)
        latest = ends.agg(F.max("time_key").alias("t")).first()
        moment = latest["t"] if latest is not None else None
        if moment is None or moment == LONG_MIN:
            return at
        return int(moment)

    def cluster_state(self, at: int | None = None) -> dict[str, Any]:
        """The cluster-state document as the group leader would see it at time ``at``.

        Parameters
        ----------
        at:
            Epoch milliseconds; None = the latest moment in the data. The end offset sum of each
            task is its latest complete one at or before ``at``; each process contributes its
            latest snapshot at or before that end-offset moment (:meth:`state_moment`);
            snapshots without a time always count, as "now".

        Returns
        -------
        dict
            The cluster-state document (``docs/scenario-format.md``): ``configs``,
            ``stateful_tasks``, ``stateless_tasks``, the top-level ``changelog_end_offset_sums``
            and one client per member process with ``id``, ``capacity``, ``prev_active``,
            ``prev_standby`` and ``task_lags``, task ids in Kafka's TaskId order, clients in UUID
            order. A stateful task without any end offsets gets lag -3 (unknown) on clients with
            local state, no end offset sum, and an error row.

        Notes
        -----
        The document carries what Kafka's group leader uses: the end offset sum of every task
        (``StreamsPartitionAssignor.computeEndOffsetSumsByTask``) beside the lags it computes
        from the reported offset sums (``ClientState.computeTaskLags``). A client that reported
        no offset sum for a task has, in Kafka, the lag ``end offset sum - 0`` (``computeTaskLags``
        reads a missing sum as 0), and the core reads the same from ``changelog_end_offset_sums``;
        without it the core would give such a client ``Long.MAX_VALUE``, and ties between
        clients would break differently from Kafka's.

        Built from per-(process, task) aggregates of the offset sums (their latest snapshot at or
        before the moment), not from the cached per-snapshot table: the driver collects at most
        tasks x clients rows and the per-task end offset sums, whatever the number of snapshots.
        """
        end_sums = {
            f"{r['sub']}_{r['part']}": r["end_offset_sum"] for r in self.end_sums_at(at).collect()
        }
        stateful = self.layout.stateful_tasks()
        for task in stateful:
            if task not in end_sums:
                self.python_errors.append(
                    ErrorRow(
                        "end-offsets",
                        None,
                        task,
                        "no end offsets: no complete end offsets for this task; lag -3 (unknown)",
                    )
                )
        local = self.member_offset_sums(at)
        capacity = self.membership.capacity()
        clients = [
            self.client_entry(process_id, capacity[process_id], local, end_sums)
            for process_id in sorted(capacity, key=process_id_sort_key)
        ]
        return {
            "name": self.application_id,
            "configs": configs_json(self.configs),
            "stateful_tasks": stateful,
            "stateless_tasks": self.layout.stateless_tasks(),
            "changelog_end_offset_sums": {t: end_sums[t] for t in stateful if t in end_sums},
            "clients": clients,
        }

    def member_offset_sums(self, at: int | None) -> dict[str, dict[str, int]]:
        """Each member's offset sums per stateful task at the moment of ``at``.

        Processes that are not members are left out (:meth:`non_member_processes` lists them);
        a task beyond the partitions of its changelogs is an error row.

        Parameters
        ----------
        at:
            Epoch ms, or None for the latest; as for :meth:`cluster_state`.

        Returns
        -------
        dict
            Process id -> task id -> offset sum of its latest snapshot at or before the moment.
        """
        replicas, names = self.replicas_at(self.state_moment(at))
        capacity = self.membership.capacity()
        known_stateful = set(self.layout.stateful_tasks())
        local: dict[str, dict[str, int]] = defaultdict(dict)
        for pkey, task_key, offset_sum in replicas:
            process_id = names[pkey]
            if process_id not in capacity:
                continue  # not a group member: listed by non_member_processes
            task = f"{task_key >> 32}_{task_key & 0xFFFF_FFFF}"
            if task not in known_stateful:
                self.python_errors.append(
                    ErrorRow(
                        "offsets",
                        None,
                        f"{process_id} {task}",
                        "unknown task: beyond the partitions of its changelogs",
                    )
                )
                continue
            local[process_id][task] = offset_sum
        return local

    def client_entry(
        self,
        process_id: str,
        capacity: int,
        local: dict[str, dict[str, int]],
        end_sums: dict[str, int],
    ) -> dict[str, Any]:
        """One client of the document: previous tasks by ``ClientState.initializePrevTasks``.

        Parameters
        ----------
        process_id:
            The member's process id.
        capacity:
            Its stream threads.
        local:
            Offset sums per process and task (:meth:`member_offset_sums`).
        end_sums:
            End offset sum per task id at the moment.

        Returns
        -------
        dict
            ``id``, ``capacity``, ``prev_active``, ``prev_standby`` and ``task_lags``.
        """
        reported = dict(local.get(process_id, {}))
        owned = {f"{s}_{p}" for s, p in self.actives.get(process_id, set())}
        # A running active reports Task.LATEST_OFFSET for its stateful tasks.
        for task in owned:
            if int(task.split("_")[0]) in self.layout.stateful_subtopologies:
                reported[task] = LATEST_OFFSET
        # ClientState.initializePrevTasks: owned partitions first, then offset sums of -2.
        active = owned | {t for t, v in reported.items() if v == LATEST_OFFSET}
        standby = {t for t in reported if t not in active}
        client: dict[str, Any] = {
            "id": process_id,
            "capacity": capacity,
            "prev_active": sorted_task_ids(active),
            "prev_standby": sorted_task_ids(standby),
        }
        client["task_lags"] = {
            t: state_lag(reported[t], end_sums.get(t)) for t in sorted_task_ids(reported)
        }
        return client

    def non_member_processes(self, at: int | None = None) -> list[str]:
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
        replicas, names = self.replicas_at(self.state_moment(at))
        members = set(self.membership.processes())
        return sorted({names[pkey] for pkey, _task, _sum in replicas} - members)

    def replicas_at(self, cutoff: int | None) -> tuple[list[tuple[int, int, int]], dict[int, str]]:
        """Each process's latest snapshot at or before ``cutoff``: (pkey, task_key, offset sum).

        One aggregation per (process, task) over the offset sums (latest time and the sum then),
        then a window per process keeps the tasks of its latest snapshot. Collects at most
        tasks x processes rows; memoised per cutoff. Also returns the process ids by key.
        """
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        memo = self._replica_memo.get(cutoff)
        if memo is not None:
            return memo
        sums = self.sums
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
        members = self.member_keys()
        seen = {pkey for pkey, _task, _sum in replicas}
        names = members if seen <= members.keys() else scan_process_keys(self.offsets)
        result = (replicas, names)
        self._replica_memo[cutoff] = result
        return result

    def member_keys(self) -> dict[int, str]:
        if self._member_key_memo is None:
            self._member_key_memo = member_process_keys(self.spark, self.membership)
        return self._member_key_memo

    def end_sums_at(self, at: int | None) -> DataFrame:
        from pyspark.sql import functions as F

        ends = self.end_sums.filter(F.col("complete"))
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
