"""The task runtime on aiokafka: members as asyncio tasks, one standby reader, one producer.

aiokafka runs the rebalance listener in its coordinator task, in the middle of whatever the
member's loop awaits (a batch's sends, its commit). Each member therefore processes a batch,
awaits its writes and commits under its own ``asyncio.Lock``; ``on_partitions_revoked`` takes
the same lock, so a rebalance waits for the batch and its commit in the generation that
fetched it, then commits what is left before the member rejoins. Without it a commit sent
during the rebalance fails with ``IllegalGenerationError`` and asks for one more rebalance.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka.errors import CommitFailedError, KafkaError
from aiokafka.structs import TopicPartition as KafkaPartition

from streams_assign.clients.aiokafka_adapter import AiokafkaStreamsAssignor
from streams_assign.clients.offsets import KafkaEndOffsets
from streams_assign.clients.runtime.context import ProcessFn, RuntimeConfig
from streams_assign.clients.runtime.tasks import TaskManager
from streams_assign.clients.topology import Topology
from streams_assign.model import TaskId, TopicPartition

__all__ = ["StreamsApp"]

log = logging.getLogger(__name__)


def _tp(tp: TopicPartition) -> KafkaPartition:
    return KafkaPartition(tp[0], tp[1])


class _Member:
    """One group member (stream thread) of the process."""

    def __init__(self, app: StreamsApp, index: int) -> None:
        self.app = app
        self.index = index
        self.lock = asyncio.Lock()
        #: Bumped at each assignment: a batch fetched before it may hold records of
        #: partitions that were paused for a restore meanwhile.
        self.epoch = 0
        self.mine: set[TaskId] = set()
        self.uncommitted: dict[KafkaPartition, int] = {}
        config = app.config
        if config.client_assignor is None:
            self.assignor: Any = AiokafkaStreamsAssignor(
                app.process, lambda info: app.manager.set_replicas(index, info)
            )
        else:
            self.assignor = config.client_assignor
        self.consumer = AIOKafkaConsumer(
            bootstrap_servers=config.bootstrap_servers,
            group_id=config.application_id,
            client_id=f"{config.application_id}-{app.manager.process_id}-StreamThread-"
            f"{index + 1}-consumer",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=config.session_timeout_ms,
            heartbeat_interval_ms=max(100, config.session_timeout_ms // 6),
            partition_assignment_strategy=(self.assignor,),
            **config.consumer_config,
        )
        self.restorer = AIOKafkaConsumer(
            bootstrap_servers=config.bootstrap_servers,
            enable_auto_commit=False,
            **config.consumer_config,
        )

    @property
    def member_id(self) -> str:
        coordinator = self.consumer._coordinator
        return coordinator.member_id if coordinator is not None else ""

    async def commit(self) -> None:
        """Commit the processed offsets; a commit refused by a rebalance keeps them for
        :meth:`on_revoked`, and what that cannot commit the next owner processes again (the
        at-least-once window)."""
        if not self.uncommitted:
            return
        try:
            await self.consumer.commit(dict(self.uncommitted))
        except (CommitFailedError, KafkaError) as exc:
            log.warning("member %d: commit failed (%r)", self.index, exc)
            return  # kept: on_partitions_revoked tries once more
        self.uncommitted.clear()

    async def on_revoked(self, revoked: Any) -> None:
        async with self.lock:
            await self.commit()
            if self.uncommitted:
                log.warning(
                    "member %d: offsets %s left uncommitted: the next owner processes "
                    "those records again",
                    self.index,
                    self.uncommitted,
                )
                self.uncommitted.clear()
            self.app.manager.deactivate(self.mine)
            self.mine.clear()
            self.app.replicas_changed.set()

    async def on_assigned(self, assigned: Any) -> None:
        async with self.lock:
            self.epoch += 1
            manager = self.app.manager
            tasks = manager.tasks_of((tp.topic, tp.partition) for tp in assigned)
            self.emit_assigned(tasks)
            manager.activate(self.index, tasks)
            self.app.replicas_changed.set()
            self.consumer.pause(*assigned)  # processing waits for each task's restore
            for task in tasks:
                await self.restore(task)
                self.mine.add(task)
            self.consumer.resume(*assigned)

    def emit_assigned(self, tasks: list[TaskId]) -> None:
        info = getattr(self.assignor, "member", None)
        info = info.assignment if info is not None else None
        coordinator = self.consumer._coordinator
        self.app.manager.emit(
            "assigned",
            member=self.member_id,
            index=self.index,
            generation=coordinator.generation if coordinator is not None else -1,
            active=[str(t) for t in tasks],
            standby=[str(t) for t in info.standby] if info else [],
            warmup=[str(t) for t in info.warmup] if info else [],
            next_probing_ms=info.next_probing_ms if info else -1,
        )

    async def restore(self, task: TaskId) -> None:
        """Read the task's changelog from its store's position to the end."""
        started = time.monotonic()
        manager = self.app.manager
        changelog = manager.changelog(task)
        if changelog is None:
            manager.restored(task, self.member_id, 0, 0, 0, started)
            return
        start = manager.positions([task])[changelog]
        tp = _tp(changelog)
        end = (await self.restorer.end_offsets([tp]))[tp]
        restored, position = 0, start
        if end > start:
            self.restorer.assign([tp])
            self.restorer.seek(tp, start)
            while position < end:
                batch = await self.restorer.getmany(tp, timeout_ms=500)
                records = batch.get(tp, [])
                restored += manager.apply(task, changelog, records)
                position = manager.positions([task])[changelog]
            self.restorer.unsubscribe()
        manager.restored(task, self.member_id, restored, start, end, started)

    async def run(self) -> None:
        await self.restorer.start()
        await self.consumer.start()
        self.consumer.subscribe(self.app.topology.source_topics, listener=_Listener(self))
        watcher = None
        if isinstance(self.assignor, AiokafkaStreamsAssignor):
            watcher = asyncio.create_task(self.assignor.watch_probing(self.consumer))
        try:
            while True:
                epoch = self.epoch
                batch = await self.consumer.getmany(timeout_ms=200)
                async with self.lock:
                    await self.process(batch, epoch)
                self.app.manager.checkpoint_if_due()
        finally:
            if watcher is not None:
                watcher.cancel()
            await self.consumer.stop()
            await self.restorer.stop()

    async def process(self, batch: dict[KafkaPartition, list[Any]], epoch: int) -> None:
        """Process, send, await every write, then commit: all in one generation."""
        ready: dict[TopicPartition, list[Any]] = {}
        for tp, records in batch.items():
            task = self.app.topology.task_of((tp.topic, tp.partition))
            if epoch == self.epoch and task in self.mine:
                ready[(tp.topic, tp.partition)] = records
            elif tp in self.consumer.assignment():  # fetched before a pause: read again
                self.consumer.seek(tp, records[0].offset)
        if not ready:
            return
        writes, offsets = self.app.manager.process(ready)
        await self.app.send_all(writes)
        self.uncommitted.update({_tp(tp): offset for tp, offset in offsets.items()})
        await self.commit()


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, member: _Member) -> None:
        self.member = member

    async def on_partitions_revoked(self, revoked: Any) -> None:
        await self.member.on_revoked(revoked)

    async def on_partitions_assigned(self, assigned: Any) -> None:
        await self.member.on_assigned(assigned)


class StreamsApp:
    """A Kafka Streams-style app process on aiokafka: its function plus the task runtime.

    Parameters
    ----------
    config:
        The process's settings (:class:`~streams_assign.clients.runtime.RuntimeConfig`).
    topology:
        The app's topology (one changelog topic per stateful sub-topology).
    process:
        ``process(ctx, record)``, called for each input record of an active task
        (:class:`~streams_assign.clients.runtime.TaskContext`).

    Notes
    -----
    At-least-once, as Kafka Streams' ``processing.guarantee=at_least_once``: a batch's input
    offsets are committed only after every changelog and sink write of the batch was
    acknowledged, so no input record is lost; the records a process handled after its last
    commit before it died (at most one batch per source partition) are handled again by the
    next owner, so their effects can be applied twice. Follows Kafka Streams' ``TaskManager``,
    ``StoreChangelogReader`` (restore, standby updates) and ``ProcessorStateManager``
    (checkpoints).
    """

    def __init__(self, config: RuntimeConfig, topology: Topology, process: ProcessFn) -> None:
        self.config = config
        self.topology = topology
        self.manager = TaskManager(config, topology, process)
        self.end_offsets = KafkaEndOffsets(config.bootstrap_servers, **config.consumer_config)
        self.process = self.manager.streams_process(self.end_offsets)
        self.replicas_changed = asyncio.Event()
        self.producer: AIOKafkaProducer | None = None

    async def send_all(self, writes: list[Any]) -> None:
        """Send writes in order and wait for every acknowledgement."""
        assert self.producer is not None
        futures = []
        for write in writes:
            future = await self.producer.send(
                write.topic,
                key=write.key,
                value=write.value,
                partition=write.partition,
                headers=write.headers,
            )
            futures.append((write, future))
        for write, future in futures:
            metadata = await future
            self.manager.acknowledged(write, metadata.offset)

    async def standby_reader(self) -> None:
        """Keep the stores of this process's standby and warmup tasks at the changelog's end.

        One reader per process; a task that turns active leaves it at once (its restore reads
        the rest).
        """
        manager = self.manager
        reader = AIOKafkaConsumer(
            bootstrap_servers=self.config.bootstrap_servers,
            enable_auto_commit=False,
            **self.config.consumer_config,
        )
        await reader.start()
        assigned: set[TaskId] = set()
        try:
            while True:
                if self.replicas_changed.is_set():
                    self.replicas_changed.clear()
                    assigned = self._follow(reader, assigned)
                if not assigned:
                    await asyncio.sleep(0.1)
                    continue
                batch = await reader.getmany(timeout_ms=100)
                for tp, records in batch.items():
                    manager.apply_standby((tp.topic, tp.partition), records)
                manager.checkpoint_if_due()
        finally:
            await reader.stop()

    def _follow(self, reader: AIOKafkaConsumer, assigned: set[TaskId]) -> set[TaskId]:
        wanted = self.manager.replica_tasks()
        if wanted == assigned:
            return assigned
        self.manager.drop_replicas(wanted)
        positions = self.manager.positions(sorted(wanted))
        reader.assign([_tp(tp) for tp in positions])
        for tp, offset in positions.items():
            reader.seek(_tp(tp), offset)
        return wanted

    async def run(self) -> None:
        """Run the process until cancelled; closes everything it opened."""
        self.producer = AIOKafkaProducer(
            bootstrap_servers=self.config.bootstrap_servers,
            linger_ms=5,
            acks="all",
            **self.config.producer_config,
        )
        await self.producer.start()
        self.manager.emit("started", consumers=self.config.consumers)
        members = [_Member(self, i) for i in range(self.config.consumers)]
        tasks = [asyncio.create_task(m.run()) for m in members]
        tasks.append(asyncio.create_task(self.standby_reader()))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*tasks, return_exceptions=True)
            await self.producer.stop()
            self.manager.close()
            self.end_offsets.close()
