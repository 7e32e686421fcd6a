"""The process-wide task bookkeeping both runtimes share (no client library imported here).

One :class:`TaskManager` per app process holds the stores, which task is active on which
member, which are standby or warmup replicas, and runs the app's function over a batch. The
aiokafka and kafka-python runtimes only move records between the clients and it. Every method
takes the manager's lock, so the standby reader and the members (threads under kafka-python)
never touch one store at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from streams_assign.clients.codec import AssignmentInfo
from streams_assign.clients.core import StreamsProcess
from streams_assign.clients.runtime.context import (
    PendingWrite,
    ProcessFn,
    RuntimeConfig,
    TaskContext,
)
from streams_assign.clients.state import KeyValueStore, StateDirectory
from streams_assign.clients.topology import EndOffsetFetcher, Topology
from streams_assign.errors import TopologyError
from streams_assign.model import TaskId, TopicPartition

__all__ = ["TaskManager"]

log = logging.getLogger(__name__)


class TaskManager:
    """Stores, roles and processing of one app process.

    Parameters
    ----------
    config:
        The process's settings.
    topology:
        The app's topology; a stateful sub-topology has exactly one changelog topic (one store
        per task).
    process_fn:
        The app's function, ``process(ctx, record)``.

    Raises
    ------
    TopologyError
        For a sub-topology with more than one changelog topic.
    """

    def __init__(self, config: RuntimeConfig, topology: Topology, process_fn: ProcessFn) -> None:
        for sub in topology.subtopologies:
            if len(sub.changelog_topics) > 1:
                raise TopologyError(
                    f"sub-topology {sub.id}: the runtime keeps one store per task, got "
                    f"changelog topics {list(sub.changelog_topics)}"
                )
        self.config = config
        self.topology = topology
        self.state = StateDirectory(
            config.state_dir, config.application_id, topology, config.store_factory()
        )
        self.process_id = self.state.process_id()
        self.lock = threading.RLock()
        #: task -> index of the member running it as active.
        self.active: dict[TaskId, int] = {}
        #: member index -> its standby and warmup tasks.
        self.replicas: dict[int, set[TaskId]] = {}
        self._fn = process_fn
        self._last_checkpoint = time.monotonic()

    # ------------------------------------------------------------------ wiring
    def emit(self, event: str, **fields: Any) -> None:
        """Pass an event to the config's ``on_event`` (with ``t`` and ``process``)."""
        if self.config.on_event is not None:
            record = {"t": time.time(), "event": event, "process": self.process_id, **fields}
            self.config.on_event(event, record)

    def streams_process(self, end_offsets: EndOffsetFetcher | None) -> StreamsProcess:
        """The :class:`StreamsProcess` every member's assignor shares."""

        def offset_sums() -> dict[TaskId, int]:
            with self.lock:
                return self.state.task_offset_sums()

        return StreamsProcess(
            self.topology,
            self.config.settings,
            process_id=self.process_id,
            offset_sums=offset_sums,
            end_offsets=end_offsets,
            endpoint=self.config.endpoint,
        )

    def changelog(self, task: TaskId) -> TopicPartition | None:
        """The task's changelog partition, ``None`` for a stateless task."""
        partitions = self.topology.changelog_partitions(task)
        return partitions[0] if partitions else None

    def tasks_of(self, partitions: Iterable[TopicPartition]) -> list[TaskId]:
        """The tasks of some source partitions, sorted."""
        tasks = {self.topology.task_of(tp) for tp in partitions}
        return sorted(t for t in tasks if t is not None)

    # ------------------------------------------------------------------ roles
    def set_replicas(self, index: int, info: AssignmentInfo) -> None:
        """Remember member ``index``'s standby and warmup tasks from its assignment."""
        with self.lock:
            self.replicas[index] = {*info.standby, *info.warmup}

    def replica_tasks(self) -> set[TaskId]:
        """Stateful tasks this process keeps as standby or warmup (none of them active here)."""
        with self.lock:
            wanted = set().union(*self.replicas.values()) if self.replicas else set()
            return {t for t in wanted - set(self.active) if self.changelog(t) is not None}

    def activate(self, index: int, tasks: Iterable[TaskId]) -> None:
        """Mark ``tasks`` active on member ``index``: the standby reader stops applying to them."""
        with self.lock:
            for task in tasks:
                self.active[task] = index

    def deactivate(self, tasks: Iterable[TaskId]) -> None:
        """Checkpoint and forget revoked actives (their stores stay open for a standby)."""
        with self.lock:
            for task in tasks:
                self.active.pop(task, None)
                if task in self.state.stores:
                    self.state.stores[task].checkpoint()

    def drop_replicas(self, kept: set[TaskId]) -> None:
        """Close the stores of tasks that are neither active here nor in ``kept``."""
        with self.lock:
            for task in list(self.state.stores):
                if task not in kept and task not in self.active:
                    self.state.close(task)

    def positions(self, tasks: Iterable[TaskId]) -> dict[TopicPartition, int]:
        """Per changelog partition of ``tasks``, the next offset its store lacks."""
        result: dict[TopicPartition, int] = {}
        with self.lock:
            for task in tasks:
                changelog = self.changelog(task)
                if changelog is not None:
                    result[changelog] = self.state.store(task).positions.get(changelog, 0)
        return result

    # ------------------------------------------------------------------ changelog records
    def apply(self, task: TaskId, changelog: TopicPartition, records: Iterable[Any]) -> int:
        """Apply changelog records to ``task``'s store; returns how many."""
        count = 0
        with self.lock:
            store = self.state.store(task)
            for record in records:
                store.apply(_text(record.key) or "", _text(record.value), changelog, record.offset)
                count += 1
        return count

    def apply_standby(self, changelog: TopicPartition, records: Iterable[Any]) -> None:
        """Apply standby records, unless their task turned active meanwhile (then its restore
        reads them)."""
        task = self.topology.task_of(changelog)
        with self.lock:
            if task is not None and task in self.replica_tasks():
                self.apply(task, changelog, records)

    def restored(
        self, task: TaskId, member: str, records: int, start: int, end: int, started: float
    ) -> None:
        """Checkpoint a restored task and emit ``restored``."""
        with self.lock:
            if self.changelog(task) is not None:
                self.state.store(task).checkpoint()
        self.emit(
            "restored",
            member=member,
            task=str(task),
            records=records,
            start=start,
            end=end,
            ms=round((time.monotonic() - started) * 1000, 1),
        )

    # ------------------------------------------------------------------ processing
    def process(
        self, batch: Mapping[TopicPartition, list[Any]]
    ) -> tuple[list[PendingWrite], dict[TopicPartition, int]]:
        """Run the app's function over a batch of source records.

        Returns
        -------
        writes:
            What the function wrote, to be sent and acknowledged before the commit.
        offsets:
            Per source partition, the offset to commit (one past its last record).
        """
        writes: list[PendingWrite] = []
        offsets: dict[TopicPartition, int] = {}
        with self.lock:
            for tp, records in batch.items():
                task = self.topology.task_of(tp)
                if task is None or not records:
                    continue
                changelog = self.changelog(task)
                store = None if changelog is None else self.state.store(task)
                ctx = TaskContext(task, store, changelog, self.process_id)
                for record in records:
                    ctx.record = record
                    self._fn(ctx, record)
                writes.extend(ctx.writes)
                offsets[tp] = records[-1].offset + 1
        return writes, offsets

    def acknowledged(self, write: PendingWrite, offset: int) -> None:
        """A changelog write is in the log at ``offset``: move its store's position past it."""
        if write.store is None:
            return
        position = (write.topic, write.partition if write.partition is not None else -1)
        with self.lock:
            write.store.positions[position] = max(
                write.store.positions.get(position, 0), offset + 1
            )

    def checkpoint_if_due(self, force: bool = False) -> None:
        """Write every open store's checkpoint every ``checkpoint_interval_s``."""
        now = time.monotonic()
        if not force and now - self._last_checkpoint < self.config.checkpoint_interval_s:
            return
        with self.lock:
            for store in self.state.stores.values():
                store.checkpoint()
        self._last_checkpoint = now

    def close(self) -> None:
        """Checkpoint and close every store."""
        with self.lock:
            self.state.close_all()


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8")


def store_of(manager: TaskManager, task: TaskId) -> KeyValueStore:
    """The open store of ``task`` (for tests and interactive queries), under the lock."""
    with manager.lock:
        return manager.state.store(task)
