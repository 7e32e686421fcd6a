"""The task runtime on kafka-python 3.x: a thread per member, one standby reader thread.

kafka-python 3.x calls the rebalance listener and the assignor's ``on_assignment`` on the
client's IO thread, where blocking consumer calls (commit, another consumer's poll) are refused
and waiting for a lock holds up heartbeats. The listener therefore only pauses what was
assigned and queues the work; the member's poll loop restores, commits and checkpoints. The
loop commits after each batch, once the batch's writes are acknowledged; a commit refused
because the group rebalanced meanwhile is dropped, and the next owner handles those records
again (the at-least-once window).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from kafka.consumer.group import KafkaConsumer
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.errors import KafkaError
from kafka.producer.kafka import KafkaProducer
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KafkaPartition

from streams_assign.clients.codec import AssignmentInfo
from streams_assign.clients.kafka_python_adapter import (
    KafkaPythonStreamsAssignor,
    subscribe_with_metadata,
)
from streams_assign.clients.offsets import KafkaEndOffsets
from streams_assign.clients.runtime.context import PendingWrite, ProcessFn, RuntimeConfig
from streams_assign.clients.runtime.tasks import TaskManager
from streams_assign.clients.topology import Topology
from streams_assign.model import TaskId, TopicPartition

__all__ = ["SyncStreamsApp"]

log = logging.getLogger(__name__)


def _tp(tp: TopicPartition) -> KafkaPartition:
    return KafkaPartition(tp[0], tp[1])


class _Member:
    """One group member (stream thread) of the process, on a thread of its own."""

    def __init__(self, app: SyncStreamsApp, index: int) -> None:
        self.app = app
        self.index = index
        self.mine: set[TaskId] = set()
        #: Listener work for the poll loop: ("revoke", tasks) / ("assign", member, tasks, tps).
        self.pending: list[tuple[Any, ...]] = []
        config = app.config
        if config.client_assignor is None:
            self.assignor: Any = KafkaPythonStreamsAssignor(
                app.process, self.on_assignment, cooperative=config.cooperative
            )
        else:
            self.assignor = config.client_assignor
        self.consumer = KafkaConsumer(
            bootstrap_servers=config.bootstrap_servers,
            group_id=config.application_id,
            client_id=f"{config.application_id}-{app.manager.process_id}-StreamThread-"
            f"{index + 1}-consumer",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=config.session_timeout_ms,
            heartbeat_interval_ms=max(100, config.session_timeout_ms // 6),
            partition_assignment_strategy=[self.assignor],
            **config.consumer_config,
        )
        self.restorer = KafkaConsumer(
            bootstrap_servers=config.bootstrap_servers,
            enable_auto_commit=False,
            **config.consumer_config,
        )

    def on_assignment(self, info: AssignmentInfo) -> None:
        """The assignor's callback (IO thread): every generation, also a cooperative one that
        added or revoked nothing."""
        member_id = self.consumer._coordinator._generation.member_id
        generation = self.assignor.generation
        self.emit_assigned(member_id, generation, list(info.active), info)
        self.app.manager.replicas[self.index] = {*info.standby, *info.warmup}  # no lock here
        for task in sorted(self.mine & set(info.active)):  # kept: no restore needed
            self.app.manager.emit("kept", member=member_id, task=str(task), generation=generation)

    def emit_assigned(
        self, member_id: str, generation: int, tasks: list[TaskId], info: AssignmentInfo | None
    ) -> None:
        self.app.manager.emit(
            "assigned",
            member=member_id,
            index=self.index,
            generation=generation,
            active=[str(t) for t in tasks],
            standby=[str(t) for t in info.standby] if info else [],
            warmup=[str(t) for t in info.warmup] if info else [],
            next_probing_ms=info.next_probing_ms if info else -1,
        )

    def restore(self, task: TaskId, member_id: str) -> None:
        """Read the task's changelog from its store's position to the end."""
        started = time.monotonic()
        manager = self.app.manager
        changelog = manager.changelog(task)
        if changelog is None:
            manager.restored(task, member_id, 0, 0, 0, started)
            return
        start = manager.positions([task])[changelog]
        tp = _tp(changelog)
        end = self.restorer.end_offsets([tp])[tp]
        restored, position = 0, start
        if end > start:
            self.restorer.assign([tp])
            self.restorer.seek(tp, start)
            while position < end:
                records = self.restorer.poll(timeout_ms=500).get(tp, [])
                restored += manager.apply(task, changelog, records)
                position = manager.positions([task])[changelog]
            self.restorer.unsubscribe()
        manager.restored(task, member_id, restored, start, end, started)

    def handle_pending(self) -> None:
        manager = self.app.manager
        while self.pending:
            work = self.pending.pop(0)
            if work[0] == "revoke":
                manager.deactivate(work[1])
                continue
            _, member_id, tasks, partitions = work
            manager.activate(self.index, tasks)
            for task in tasks:
                self.restore(task, member_id)
                self.mine.add(task)
            self.consumer.resume(*partitions)

    def process(self, batch: dict[KafkaPartition, list[Any]]) -> None:
        ready: dict[TopicPartition, list[Any]] = {}
        for tp, records in batch.items():
            if self.app.topology.task_of((tp.topic, tp.partition)) in self.mine:
                ready[(tp.topic, tp.partition)] = records
            else:  # fetched before the pause: read again after the restore
                self.consumer.seek(tp, records[0].offset)
        if not ready:
            return
        writes, offsets = self.app.manager.process(ready)
        self.app.send_all(writes)
        try:
            self.consumer.commit(
                {_tp(tp): OffsetAndMetadata(o, "", -1) for tp, o in offsets.items()}
            )
        except KafkaError as exc:
            log.warning(
                "member %d: commit failed (%r); records will be processed again", self.index, exc
            )

    def run(self) -> None:
        try:
            self.serve()
        except BaseException as exc:
            self.app.failures.append(exc)
            raise

    def serve(self) -> None:
        subscribe_with_metadata(self.consumer, self.app.topology.source_topics, _Listener(self))
        try:
            while not self.app.stopping.is_set():
                batch = self.consumer.poll(timeout_ms=200)
                self.handle_pending()
                self.process(batch)
                if isinstance(self.assignor, KafkaPythonStreamsAssignor):
                    self.assignor.maybe_rejoin(self.consumer)
                self.app.manager.checkpoint_if_due()
        finally:
            self.consumer.close()
            self.restorer.close()


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    """Runs on kafka-python's IO thread: pauses and queues, never blocks."""

    def __init__(self, member: _Member) -> None:
        self.member = member

    def on_partitions_revoked(self, revoked: Any) -> None:
        # Eager: everything; cooperative: only the partitions that move away.
        tasks = set(self.member.app.manager.tasks_of((tp.topic, tp.partition) for tp in revoked))
        self.member.mine.difference_update(tasks)
        self.member.pending.append(("revoke", tasks))

    def on_partitions_assigned(self, assigned: Any) -> None:
        # Eager: the whole assignment; cooperative: only what was added.
        member = self.member
        tasks = member.app.manager.tasks_of((tp.topic, tp.partition) for tp in assigned)
        generation = member.consumer._coordinator._generation
        if not isinstance(member.assignor, KafkaPythonStreamsAssignor):
            owned = member.consumer.assignment()
            owned_tasks = member.app.manager.tasks_of((tp.topic, tp.partition) for tp in owned)
            member.emit_assigned(generation.member_id, generation.generation_id, owned_tasks, None)
        if assigned:
            member.consumer.pause(*assigned)
            member.pending.append(("assign", generation.member_id, tasks, list(assigned)))


class SyncStreamsApp:
    """A Kafka Streams-style app process on kafka-python 3.x: its function plus the runtime.

    Parameters and the at-least-once contract are those of
    :class:`~streams_assign.clients.runtime.aio.StreamsApp`; :meth:`run` blocks until
    :meth:`stop` is called or a member thread dies.
    """

    def __init__(self, config: RuntimeConfig, topology: Topology, process: ProcessFn) -> None:
        self.config = config
        self.topology = topology
        self.manager = TaskManager(config, topology, process)
        self.end_offsets = KafkaEndOffsets(config.bootstrap_servers, **config.consumer_config)
        self.process = self.manager.streams_process(self.end_offsets)
        self.stopping = threading.Event()
        self.producer: KafkaProducer | None = None
        #: Exceptions that ended a member or the standby reader thread.
        self.failures: list[BaseException] = []

    def send_all(self, writes: list[PendingWrite]) -> None:
        """Send writes in order and wait for every acknowledgement."""
        assert self.producer is not None
        futures = [
            (
                w,
                self.producer.send(
                    w.topic, key=w.key, value=w.value, partition=w.partition, headers=w.headers
                ),
            )
            for w in writes
        ]
        for write, future in futures:
            self.manager.acknowledged(write, future.get(timeout=30).offset)

    def standby_reader(self) -> None:
        """Keep the stores of this process's standby and warmup tasks at the changelog's end."""
        try:
            self.follow_replicas()
        except BaseException as exc:
            self.failures.append(exc)
            raise

    def follow_replicas(self) -> None:
        manager = self.manager
        reader = KafkaConsumer(
            bootstrap_servers=self.config.bootstrap_servers,
            enable_auto_commit=False,
            **self.config.consumer_config,
        )
        assigned: set[TaskId] = set()
        try:
            while not self.stopping.is_set():
                wanted = manager.replica_tasks()
                if wanted != assigned:
                    manager.drop_replicas(wanted)
                    positions = manager.positions(sorted(wanted))
                    reader.assign([_tp(tp) for tp in positions])
                    for tp, offset in positions.items():
                        reader.seek(_tp(tp), offset)
                    assigned = wanted
                if not assigned:
                    time.sleep(0.1)
                    continue
                for tp, records in reader.poll(timeout_ms=100).items():
                    manager.apply_standby((tp.topic, tp.partition), records)
                manager.checkpoint_if_due()
        finally:
            reader.close()

    def stop(self) -> None:
        """Ask :meth:`run` to return (members leave the group, stores are checkpointed)."""
        self.stopping.set()

    def run(self) -> None:
        """Run the process until :meth:`stop` or a thread dies; closes what it opened.

        Raises
        ------
        RuntimeError
            When a member or the standby reader thread died, chained to its exception.
        """
        self.producer = KafkaProducer(
            bootstrap_servers=self.config.bootstrap_servers,
            linger_ms=5,
            acks="all",
            **self.config.producer_config,
        )
        self.manager.emit("started", consumers=self.config.consumers)
        threads = [
            threading.Thread(target=_Member(self, i).run, daemon=True, name=f"member-{i}")
            for i in range(self.config.consumers)
        ]
        threads.append(threading.Thread(target=self.standby_reader, daemon=True, name="standby"))
        for thread in threads:
            thread.start()
        try:
            while not self.stopping.is_set() and all(t.is_alive() for t in threads):
                time.sleep(0.2)
        finally:
            self.stopping.set()
            for thread in threads:
                thread.join(timeout=10)
            self.producer.close()
            self.manager.close()
            self.end_offsets.close()
        if self.failures:
            raise RuntimeError("a runtime thread died") from self.failures[0]
