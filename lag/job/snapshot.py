"""The group leader's exact input from what an operator has, freshest source first (no Spark).

:func:`build_snapshot` turns a live group (:class:`lag.sources.live_cluster.LiveGroup`: members'
``SubscriptionInfo`` / ``AssignmentInfo`` and the changelogs' end offsets), scraped metrics
(:mod:`lag.sources.metrics`) and state directories (:mod:`lag.sources.checkpoints`) into one
cluster-state document, as ``StreamsPartitionAssignor`` builds its ``ClientState`` s:

- clients: one per process id (``SubscriptionInfo.processId``), capacity = its stream threads
  (members), ``tags`` = its ``client.tag.*`` (``SubscriptionInfo.clientTags``);
- previous tasks (``ClientState.initializePrevTasks``): the active tasks of the members'
  ``AssignmentInfo`` and offset sums of ``-2`` are previous actives, every other task with an
  offset sum a previous standby;
- offset sums per (process, task), **the freshest source winning**:

  ===============  ===================================================  =======================
  source           what                                                 as of
  ===============  ===================================================  =======================
  ``metrics``      end offset sum - restore consumer ``records-lag``    the scrape time
                   summed over the task's changelog partitions
  ``state-dir``    ``.checkpoint`` (or 4.3+ store) offsets, summed      the file's mtime
                   as ``TaskManager.getTaskOffsetSums`` does
  ``group``        ``SubscriptionInfo.taskOffsetSums``                  the last rebalance:
                                                                        scrape time -
                                                                        ``last-rebalance-
                                                                        seconds-ago``, else
                                                                        unknown (oldest)
  ===============  ===================================================  =======================

  A task the process runs as active is ``-2`` (``Task.LATEST_OFFSET``), as it reports;
- the end offset sum of every stateful task (``computeEndOffsetSumsByTask``) from
  ``ListOffsets``, and each lag by ``ClientState.computeTaskLags``.

Which sub-topology a changelog belongs to comes from the topology's text when given, else from
the metrics (``stream-state-metrics`` name each task's stores), else from the checkpoints
(each lists its task's changelog partitions).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lag.job.cluster_state import state_lag
from lag.job.layout import configs_json
from lag.kafka_rules import LATEST_OFFSET, process_id_sort_key, sorted_task_ids
from lag.sources.live_cluster import LiveGroup
from lag.sources.metrics import MetricsDump
from streams_assign.errors import LagInputError
from streams_assign.model import AssignmentConfigs

__all__ = ["Provenance", "Snapshot", "build_snapshot", "config_notes", "take_snapshot"]

_THREAD_CONSUMER = re.compile(r"-StreamThread-\d+-consumer$")
_RESTORE_CONSUMER = re.compile(r"-(?:StreamThread|StateUpdater)-\d+-restore-consumer$")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
#: Tie order when two sources are as fresh: the most direct reading first.
_RANK = {"metrics": 0, "state-dir": 1, "group": 2}


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where one (process, task) offset sum came from.

    Attributes
    ----------
    process_id, task:
        The client and the task (``1_3``).
    source:
        ``group``, ``metrics``, ``state-dir`` or ``group (running active)``.
    offset_sum:
        The offset sum used (records; -2 = running active).
    lag:
        The lag it gives (records; -2, or -3 when the end offset sum is unknown).
    as_of_ms:
        When the source saw it (epoch ms), None when unknown.
    where:
        The file or request it was read from.
    """

    process_id: str
    task: str
    source: str
    offset_sum: int
    lag: int
    as_of_ms: int | None
    where: str


@dataclass
class Snapshot:
    """The cluster state and how each of its offset sums was chosen.

    Attributes
    ----------
    document:
        The cluster-state document (``docs/scenario-format.md``).
    provenance:
        One row per (process, task) with local state.
    notes:
        Lines worth telling the user (left-out processes, unused metrics).
    time_ms:
        When the cluster was asked.
    """

    document: dict[str, Any]
    provenance: list[Provenance] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    time_ms: int = 0


@dataclass(frozen=True, slots=True)
class _Candidate:
    offset_sum: int
    as_of_ms: int | None
    source: str
    where: str

    def key(self) -> tuple[int, int]:
        return (self.as_of_ms if self.as_of_ms is not None else -1, -_RANK[self.source])


def _process_of_members(live: LiveGroup) -> tuple[dict[str, str], dict[str, list[Any]]]:
    """Client-id prefix -> process id, and process id -> its members (stream threads)."""
    prefixes: dict[str, str] = {}
    members: dict[str, list[Any]] = defaultdict(list)
    for member in live.members:
        pid = str(member.subscription.process_id)
        members[pid].append(member)
        prefix = _THREAD_CONSUMER.sub("", member.client_id)
        if prefixes.setdefault(prefix, pid) != pid:
            prefixes[prefix] = ""  # two processes share client.id: not usable to match
    return prefixes, members


def _restore_owner(client_id: str, prefixes: dict[str, str], pids: set[str]) -> str | None:
    pid = prefixes.get(_RESTORE_CONSUMER.sub("", client_id))
    if pid:
        return pid
    found = [m for m in _UUID.findall(client_id) if m in pids]
    return found[0] if len(found) == 1 else None


def _changelog_subtopologies(
    application_id: str,
    end_offsets: dict[tuple[str, int], int],
    topology: Any,
    dumps: Sequence[MetricsDump],
    checkpoint_rows: Sequence[dict[str, Any]],
) -> dict[str, int]:
    """Changelog topic -> sub-topology, from the topology, the metrics or the checkpoints."""
    topics = {t for t, _ in end_offsets}
    found: dict[str, set[int]] = defaultdict(set)
    if topology is not None:
        for topic, (sub, _store) in topology.changelog_topics(application_id).items():
            found[topic].add(sub)
    for dump in dumps:
        for store, tasks in dump.store_tasks.items():
            for task in tasks:
                found[f"{application_id}-{store}-changelog"].add(int(task.split("_")[-2]))
    for row in checkpoint_rows:
        if row.get("topic") and row.get("task_id"):
            found[row["topic"]].add(int(row["task_id"].split("_")[-2]))
    unknown = sorted(t for t in topics if len(found.get(t, ())) != 1)
    if unknown:
        raise LagInputError(
            f"cannot tell which sub-topology changelog(s) {', '.join(unknown)} belong to: pass "
            "--topology (Topology#describe() text), --metrics (stream-state-metrics name each "
            "task's stores) or --state-dirs"
        )
    return {t: next(iter(found[t])) for t in topics}


def _checkpoint_candidates(
    rows: Sequence[dict[str, Any]], pids: set[str]
) -> dict[tuple[str, str], _Candidate]:
    """Offset sums of the checkpoints (``-4`` entries skipped), stamped with the file's mtime."""
    sums: dict[tuple[str, str], int] = defaultdict(int)
    times: dict[tuple[str, str], int] = {}
    where: dict[tuple[str, str], str] = {}
    for row in rows:
        key = (row["process_id"], row["task_id"])
        if key[0] not in pids:
            continue
        offset = row.get("offset")
        sums[key] += offset if offset is not None and offset >= 0 else 0
        source = row.get("source") or ""
        try:
            mtime = int(os.stat(source).st_mtime * 1000)
        except OSError:
            mtime = 0
        times[key] = max(times.get(key, 0), mtime)
        where[key] = os.path.dirname(source) or source
    return {k: _Candidate(sums[k], times[k] or None, "state-dir", where[k]) for k in sums}


def _metrics_candidates(
    dumps: Sequence[MetricsDump],
    prefixes: dict[str, str],
    pids: set[str],
    topic_sub: dict[str, int],
    end_offsets: dict[tuple[str, int], int],
    notes: list[str],
) -> dict[tuple[str, str], _Candidate]:
    """Offset sums of the restore consumers: end offset sum - the partitions' ``records-lag``."""
    normalised = {t.replace(".", "_"): t for t in topic_sub}
    lags: dict[tuple[str, str], dict[tuple[str, int], int]] = defaultdict(dict)
    stamp: dict[tuple[str, str], tuple[int, str]] = {}
    for dump in dumps:
        for lag in dump.restore_lags:
            pid = _restore_owner(lag.client_id, prefixes, pids)
            topic = lag.topic if lag.topic in topic_sub else normalised.get(lag.topic)
            if pid is None:
                notes.append(f"{dump.source}: restore consumer {lag.client_id} is no member's")
                continue
            if topic is None:
                continue
            key = (pid, f"{topic_sub[topic]}_{lag.partition}")
            lags[key][(topic, lag.partition)] = lag.records_lag
            stamp[key] = (dump.time_ms or 0, dump.source)
    partitions: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for topic, part in end_offsets:
        if topic in topic_sub:
            partitions[f"{topic_sub[topic]}_{part}"].append((topic, part))
    out = {}
    for key, seen in lags.items():
        needed = partitions.get(key[1], [])
        if not needed or any(tp not in seen for tp in needed):
            continue  # a task is read from metrics only when every changelog partition is there
        offset_sum = sum(max(end_offsets[tp] - seen[tp], 0) for tp in needed)
        out[key] = _Candidate(offset_sum, stamp[key][0], "metrics", stamp[key][1])
    return out


def _group_time(members: list[Any], dumps: Sequence[MetricsDump]) -> int | None:
    """When the process's threads last rebalanced, from ``last-rebalance-seconds-ago``."""
    client_ids = {m.client_id for m in members}
    moments = [
        (dump.time_ms or 0) - int(seconds * 1000)
        for dump in dumps
        for client, seconds in dump.last_rebalance_s.items()
        if client in client_ids
    ]
    return max(moments) if moments else None


def _group_candidates(
    members: dict[str, list[Any]], dumps: Sequence[MetricsDump]
) -> tuple[dict[tuple[str, str], list[_Candidate]], dict[str, set[str]], set[str]]:
    """The group's offset sums per (process, task), each process's active tasks, every task."""
    candidates: dict[tuple[str, str], list[_Candidate]] = defaultdict(list)
    owned: dict[str, set[str]] = defaultdict(set)
    every_task: set[str] = set()
    for pid, threads in members.items():
        as_of = _group_time(threads, dumps)
        for member in threads:
            every_task.update(str(t) for t in member.assignment.active_tasks)
            every_task.update(str(t) for t in member.assignment.standby_tasks)
            owned[pid].update(str(t) for t in member.assignment.active_tasks)
            for task, offset_sum in member.subscription.task_offset_sums.items():
                if offset_sum == LATEST_OFFSET:
                    owned[pid].add(str(task))
                where = f"SubscriptionInfo of {member.member_id}"
                candidates[(pid, str(task))].append(_Candidate(offset_sum, as_of, "group", where))
    return candidates, owned, every_task


def build_snapshot(
    live: LiveGroup,
    configs: AssignmentConfigs,
    *,
    dumps: Sequence[MetricsDump] = (),
    checkpoint_rows: Sequence[dict[str, Any]] = (),
    topology: Any = None,
    description: str | None = None,
) -> Snapshot:
    """The cluster state the group leader would build now, and where each number came from.

    Parameters
    ----------
    live:
        The group and end offsets as the cluster answered.
    configs:
        The assignment configs (``--streams-config``, flags, Kafka's defaults).
    dumps:
        Scraped metrics of running instances.
    checkpoint_rows:
        Offset rows of the instances' state directories (``collect_state_dirs``).
    topology:
        A parsed ``Topology#describe()`` (:class:`lag.sources.topology.Topology`), or None.
    description:
        Written first in the document's ``description`` (where the configs came from).

    Returns
    -------
    Snapshot

    Raises
    ------
    LagInputError
        When a member has no assignment yet (the group is rebalancing), or a changelog's
        sub-topology cannot be told.
    """
    app = live.application_id
    for member in live.members:
        if member.assignment is None:
            raise LagInputError(
                f"group {app!r} is rebalancing (member {member.member_id!r} has no assignment "
                "yet): ask again once it is stable"
            )
    prefixes, members = _process_of_members(live)
    pids = set(members)
    topic_sub = _changelog_subtopologies(app, live.end_offsets, topology, dumps, checkpoint_rows)
    end_sums: dict[str, int] = defaultdict(int)
    for (topic, part), offset in live.end_offsets.items():
        end_sums[f"{topic_sub[topic]}_{part}"] += offset
    stateful = sorted_task_ids(end_sums)
    notes: list[str] = []
    candidates, owned, every_task = _group_candidates(members, dumps)
    for source in (
        _checkpoint_candidates(checkpoint_rows, pids),
        _metrics_candidates(dumps, prefixes, pids, topic_sub, live.end_offsets, notes),
    ):
        for key, candidate in source.items():
            candidates[key].append(candidate)
    left_out = sorted({r["process_id"] for r in checkpoint_rows} - pids)
    if left_out:
        notes.append(f"state of non-member process(es) left out: {', '.join(left_out)}")
    clients, provenance = [], []
    for pid in sorted(pids, key=process_id_sort_key):
        chosen: dict[str, _Candidate] = {}
        for (owner, task), found in candidates.items():
            if owner == pid and task in end_sums:
                chosen[task] = max(found, key=_Candidate.key)
        for task in owned[pid] & set(end_sums):
            group = [c for c in candidates.get((pid, task), []) if c.source == "group"]
            as_of = group[0].as_of_ms if group else _group_time(members[pid], dumps)
            chosen[task] = _Candidate(LATEST_OFFSET, as_of, "group", "running active")
        lags = {t: state_lag(c.offset_sum, end_sums.get(t)) for t, c in chosen.items()}
        tags: dict[str, str] = {}
        for member in members[pid]:
            tags.update(member.subscription.client_tags)
        client: dict[str, Any] = {
            "id": pid,
            "capacity": len(members[pid]),
            "prev_active": sorted_task_ids(owned[pid]),
            "prev_standby": sorted_task_ids(set(chosen) - owned[pid]),
            "task_lags": {t: lags[t] for t in sorted_task_ids(lags)},
        }
        if tags:
            client["tags"] = dict(sorted(tags.items()))
        client["consumers"] = _consumers(members[pid])
        clients.append(client)
        for task in sorted_task_ids(chosen):
            c = chosen[task]
            label = "group (running active)" if c.where == "running active" else c.source
            provenance.append(
                Provenance(pid, task, label, c.offset_sum, lags[task], c.as_of_ms, c.where)
            )
    document: dict[str, Any] = {
        "name": app,
        "description": _description(description, provenance, live),
        "configs": configs_json(configs),
        "stateful_tasks": stateful,
        "stateless_tasks": sorted_task_ids(every_task - set(end_sums)),
        "changelog_end_offset_sums": {t: end_sums[t] for t in stateful},
        "clients": clients,
    }
    task_partitions = _task_partitions(live.members)
    if task_partitions:
        document["task_partitions"] = task_partitions
    return Snapshot(document, provenance, notes, live.time_ms)


def _consumers(threads: Sequence[Any]) -> list[dict[str, Any]]:
    """One entry per member (stream thread) of a process, by member id: the active and standby
    tasks its last ``AssignmentInfo`` gave it and the partitions it owns, which the leader's
    thread-level assignment keeps sticky (``StreamsPartitionAssignor#assignTasksToThreads``)."""
    consumers = []
    for member in sorted(threads, key=lambda m: m.member_id):
        info = member.assignment
        consumers.append(
            {
                "member_id": member.member_id,
                "prev_active": sorted_task_ids({str(t) for t in info.active_tasks}),
                "prev_standby": sorted_task_ids({str(t) for t in info.standby_tasks}),
                "owned_partitions": [list(p) for p in sorted(member.assigned_partitions)],
            }
        )
    return consumers


def _task_partitions(members: Sequence[Any]) -> dict[str, list[list[Any]]]:
    """Task -> its source partitions, from the members' assignments: ``AssignmentInfo``'s active
    tasks are listed in the order of the assignment's partitions sorted by topic and partition
    (``StreamsPartitionAssignor#onAssignment``), one task per partition."""
    partitions: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for member in members:
        owned = sorted(member.assigned_partitions)
        tasks = member.assignment.active_tasks
        if not owned:  # the partitions are not known (a member described without them)
            continue
        if len(owned) != len(tasks):
            raise LagInputError(
                f"member {member.member_id!r}: its assignment lists {len(tasks)} active tasks "
                f"for {len(owned)} partitions"
            )
        for partition, task in zip(owned, tasks, strict=True):
            partitions[str(task)].add(partition)
    return {
        task: [list(p) for p in sorted(partitions[task])] for task in sorted_task_ids(partitions)
    }


def _description(configs: str | None, provenance: list[Provenance], live: LiveGroup) -> str:
    """One line: the configs' origins, then how many offset sums each source gave and how old."""
    by_source: dict[str, list[int | None]] = defaultdict(list)
    for row in provenance:
        by_source[row.source].append(row.as_of_ms)
    parts = []
    for source in sorted(by_source):
        ages = [(live.time_ms - t) / 1000 for t in by_source[source] if t is not None]
        age = f"{min(ages):.0f}-{max(ages):.0f} s old" if ages else "age unknown (last rebalance)"
        parts.append(f"{source} {len(by_source[source])} ({age})")
    sources = "offset sums: " + ", ".join(parts) if parts else "offset sums: none"
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(live.time_ms / 1000, UTC).isoformat(timespec="seconds")
    head = (
        f"snapshot of group {live.application_id} at {live.where}, {moment}; "
        f"end offsets from ListOffsets; {sources}"
    )
    return f"{configs}; {head}" if configs else head


def config_notes(resolved: Any) -> list[str]:
    """The configs' stderr notes for a snapshot: each value that is Kafka's default.

    ``ResolvedConfigs.notes`` also says that a properties file's ``client.tag.*`` cannot be
    given to any process; a snapshot carries every process's own tags (``SubscriptionInfo``),
    so that note is left out.
    """
    return [n for n in resolved.notes() if "carries no client tags" not in n]


def take_snapshot(
    bootstrap: str,
    application_id: str,
    *,
    command_config: str | None = None,
    streams_config: str | None = None,
    metrics: Sequence[str] = (),
    state_dirs: Sequence[str] = (),
    topology: str | None = None,
    timeout_ms: int = 30_000,
    flags: dict[str, Any] | None = None,
) -> tuple[Snapshot, Any]:
    """Ask the cluster, read the operator's files, and build the snapshot.

    Parameters
    ----------
    bootstrap, application_id:
        ``--bootstrap-server`` and the Streams ``application.id``.
    command_config:
        Kafka client properties file (SASL/SSL), or None.
    streams_config:
        The application's properties file (assignment configs), or None.
    metrics:
        JmxTool outputs or Prometheus expositions of the running instances.
    state_dirs:
        The instances' ``state.dir`` (or ``<state.dir>/<application.id>``) folders.
    topology:
        ``Topology#describe()`` text file, or None.
    timeout_ms:
        Time-out of each request, milliseconds.
    flags:
        Config flag (``--num-standby-replicas``) -> value or None; a given flag wins over the
        properties file.

    Returns
    -------
    (Snapshot, lag.sources.streams_config.ResolvedConfigs)

    Raises
    ------
    LagInputError
        For any unusable input or unanswered request (one line naming what and where).
    CodecError
        For undecodable user data in the group.
    """
    from pathlib import Path

    from lag.sources.checkpoints import collect_state_dirs
    from lag.sources.live_cluster import read_command_config, read_live_group
    from lag.sources.metrics import read_metrics
    from lag.sources.streams_config import resolve_configs
    from lag.sources.topology import parse_topology

    resolved = resolve_configs(dict(flags or {}), streams_config)
    properties = read_command_config(command_config)
    dumps = [read_metrics(path) for path in metrics]
    parsed = None
    if topology is not None:
        try:
            parsed = parse_topology(Path(topology).read_text(encoding="utf-8"), topology)
        except OSError as exc:
            raise LagInputError(f"--topology {topology}: cannot read: {exc.strerror}") from None
    rows = list(collect_state_dirs(list(state_dirs), application_id).rows) if state_dirs else []
    live = read_live_group(bootstrap, application_id, properties, timeout_ms)
    snapshot = build_snapshot(
        live,
        AssignmentConfigs(**resolved.values),
        dumps=dumps,
        checkpoint_rows=rows,
        topology=parsed,
        description=resolved.description(),
    )
    return snapshot, resolved
