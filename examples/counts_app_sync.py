"""The counts app of ``counts_app.py`` on kafka-python 3.x: one thread per group member.

Same topology, store, changelog, events and options as the aiokafka app; here every consumer
(stream thread) is a ``KafkaConsumer`` on a thread of its own, the standby updater is one
more thread, and the stores are shared under one lock. With ``--assignor roundrobin``
kafka-python's own ``RoundRobinPartitionAssignor`` is the baseline.
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from counts_app import WRITER_HEADER, Events, _text, parse_args
from kafka.structs import TopicPartition

from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer
from streams_assign.clients.codec import AssignmentInfo
from streams_assign.clients.core import StreamsProcess, StreamsSettings
from streams_assign.clients.kafka_python_adapter import (
    KafkaPythonStreamsAssignor,
    subscribe_with_metadata,
)
from streams_assign.clients.offsets import KafkaEndOffsets
from streams_assign.clients.state import StateDirectory
from streams_assign.clients.topology import Topology
from streams_assign.model import Subtopology, TaskId

log = logging.getLogger("counts_app_sync")
CHECKPOINT_INTERVAL_S = 0.2


class SyncCountsProcess:
    """One app process: member threads, the standby updater thread, shared stores."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.changelog = f"{args.application_id}-counts-changelog"
        self.topology = Topology((Subtopology(0, (args.input_topic,), (self.changelog,)),))
        self.state = StateDirectory(args.state_dir, args.application_id, self.topology)
        self.lock = threading.RLock()  # guards the stores and the task maps
        self.process_id = self.state.process_id()
        self.events = Events(args.events, self.process_id)
        self.events_lock = threading.Lock()
        self.end_offsets = KafkaEndOffsets(args.bootstrap_servers)
        settings = StreamsSettings(
            num_standby_replicas=args.num_standby_replicas,
            acceptable_recovery_lag=args.acceptable_recovery_lag,
            max_warmup_replicas=args.max_warmup_replicas,
            probing_rebalance_interval_ms=args.probing_interval_ms,
        )

        def offset_sums() -> dict[TaskId, int]:
            with self.lock:
                return self.state.task_offset_sums()

        self.process = StreamsProcess(
            self.topology,
            settings,
            process_id=self.process_id,
            offset_sums=offset_sums,
            end_offsets=self.end_offsets,
            endpoint=args.endpoint,
        )
        self.active: dict[TaskId, int] = {}
        self.replicas: dict[int, set[TaskId]] = {}
        self.producer = KafkaProducer(bootstrap_servers=args.bootstrap_servers, linger_ms=5)
        self.stopping = threading.Event()

    def emit(self, event: str, **fields: Any) -> None:
        with self.events_lock:
            self.events.emit(event, **fields)

    def replica_tasks(self) -> set[TaskId]:
        with self.lock:
            everything = set().union(*self.replicas.values()) if self.replicas else set()
            return everything - set(self.active)

    def restore(self, task: TaskId, member: str, restorer: KafkaConsumer) -> None:
        started = time.monotonic()
        tp = TopicPartition(self.changelog, task.partition)
        key = (tp.topic, tp.partition)
        with self.lock:
            store = self.state.store(task)
            start = store.positions.get(key, 0)
        end = restorer.end_offsets([tp])[tp]
        restored = 0
        if end > start:
            restorer.assign([tp])
            restorer.seek(tp, start)
            while True:
                with self.lock:
                    if store.positions[key] >= end:
                        break
                batch = restorer.poll(timeout_ms=500)
                with self.lock:
                    for record in batch.get(tp, []):
                        store.apply(_text(record.key), _text(record.value), key, record.offset)
                        restored += 1
            restorer.unsubscribe()
        with self.lock:
            store.checkpoint()
        self.emit(
            "restored",
            member=member,
            task=str(task),
            records=restored,
            start=start,
            end=end,
            ms=round((time.monotonic() - started) * 1000, 1),
        )

    def standby_updater(self) -> None:
        reader = KafkaConsumer(
            bootstrap_servers=self.args.bootstrap_servers, enable_auto_commit=False
        )
        assigned: set[TaskId] = set()
        last_checkpoint = time.monotonic()
        try:
            while not self.stopping.is_set():
                wanted = self.replica_tasks()
                if wanted != assigned:
                    assigned = wanted
                    tps = [TopicPartition(self.changelog, t.partition) for t in sorted(assigned)]
                    reader.assign(tps)
                    with self.lock:
                        for task, tp in zip(sorted(assigned), tps, strict=True):
                            reader.seek(
                                tp, self.state.store(task).positions[(tp.topic, tp.partition)]
                            )
                if not assigned:
                    time.sleep(0.1)
                    continue
                batch = reader.poll(timeout_ms=100)
                with self.lock:
                    live = self.replica_tasks()
                    for tp, records in batch.items():
                        task = TaskId(0, tp.partition)
                        if task not in live:
                            continue
                        store = self.state.store(task)
                        for record in records:
                            store.apply(
                                _text(record.key),
                                _text(record.value),
                                (tp.topic, tp.partition),
                                record.offset,
                            )
                    if time.monotonic() - last_checkpoint > CHECKPOINT_INTERVAL_S:
                        for task in live & assigned:
                            self.state.store(task).checkpoint()
                        last_checkpoint = time.monotonic()
        finally:
            reader.close()

    def run_member(self, index: int) -> None:
        args = self.args
        assignor: Any
        mine: set[TaskId] = set()
        if args.assignor == "streams":

            def on_assignment(info: AssignmentInfo) -> None:
                # Every generation, also when (cooperative) nothing was added or revoked.
                member_id = consumer._coordinator._generation.member_id
                self.emit(
                    "assigned",
                    member=member_id,
                    index=index,
                    generation=assignor.generation,
                    active=[str(t) for t in info.active],
                    standby=[str(t) for t in info.standby],
                    warmup=[str(t) for t in info.warmup],
                    next_probing_ms=info.next_probing_ms,
                )
                # On the IO thread: no process lock here (a blocked IO thread misses heartbeats).
                self.replicas[index] = {*info.standby, *info.warmup}
                for task in sorted(mine & set(info.active)):  # kept: no restore needed
                    self.emit(
                        "kept", member=member_id, task=str(task), generation=assignor.generation
                    )

            assignor = KafkaPythonStreamsAssignor(
                self.process, on_assignment, cooperative=args.cooperative
            )
        elif args.assignor == "roundrobin":
            from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

            assignor = RoundRobinPartitionAssignor
        else:
            from kafka.coordinator.assignors.sticky.sticky_assignor import (
                StickyPartitionAssignor,
            )

            assignor = StickyPartitionAssignor
        consumer = KafkaConsumer(
            bootstrap_servers=args.bootstrap_servers,
            group_id=args.application_id,
            client_id=f"{args.application_id}-{self.process_id}-StreamThread-{index + 1}-consumer",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=args.session_timeout_ms,
            heartbeat_interval_ms=max(100, args.session_timeout_ms // 6),
            partition_assignment_strategy=[assignor],
        )
        restorer = KafkaConsumer(bootstrap_servers=args.bootstrap_servers, enable_auto_commit=False)
        # Listener work deferred to the poll loop: ("revoke", tasks) / ("assign", member, tasks,
        # partitions). kafka-python 3.x calls listeners on its IO thread, where blocking calls
        # are refused and waiting for a lock would hold up heartbeats.
        pending: list[tuple[Any, ...]] = []
        app = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            # kafka-python 3.x calls listeners on its IO thread, where blocking consumer
            # calls are refused: commits and restores happen in the poll loop instead.
            def on_partitions_revoked(self, revoked: Any) -> None:
                # Eager: everything; cooperative: only the partitions that move away.
                tasks = {TaskId(0, tp.partition) for tp in revoked}
                mine.difference_update(tasks)
                pending.append(("revoke", tasks))

            def on_partitions_assigned(self, assigned: Any) -> None:
                # Eager: the whole assignment; cooperative: only what was added.
                tasks = sorted({TaskId(0, tp.partition) for tp in assigned})
                generation = consumer._coordinator._generation
                if not isinstance(assignor, KafkaPythonStreamsAssignor):
                    owned = sorted({TaskId(0, tp.partition) for tp in consumer.assignment()})
                    app.emit(
                        "assigned",
                        member=generation.member_id,
                        index=index,
                        generation=generation.generation_id,
                        active=[str(t) for t in owned],
                        standby=[],
                        warmup=[],
                        next_probing_ms=-1,
                    )
                if assigned:
                    consumer.pause(*assigned)
                    pending.append(("assign", generation.member_id, tasks, list(assigned)))

        # Join only once the metadata holds the input topic: see subscribe_with_metadata.
        subscribe_with_metadata(consumer, self.topology.source_topics, listener=Listener())
        last_checkpoint = time.monotonic()
        try:
            while not self.stopping.is_set():
                batch = consumer.poll(timeout_ms=200)
                while pending:
                    work = pending.pop(0)
                    if work[0] == "revoke":
                        with self.lock:
                            for task in work[1]:
                                self.active.pop(task, None)
                                self.state.store(task).checkpoint()
                        continue
                    _, member_id, tasks, partitions = work
                    with self.lock:
                        for task in tasks:
                            self.active[task] = index
                    for task in tasks:
                        self.restore(task, member_id, restorer)
                        mine.add(task)
                    consumer.resume(*partitions)
                for tp in list(batch):
                    if TaskId(0, tp.partition) not in mine:
                        consumer.seek(tp, batch.pop(tp)[0].offset)
                if batch:
                    self.process_batch(batch)
                    consumer.commit()
                if isinstance(assignor, KafkaPythonStreamsAssignor):
                    assignor.maybe_rejoin(consumer)
                if time.monotonic() - last_checkpoint > CHECKPOINT_INTERVAL_S:
                    with self.lock:
                        for task in list(mine):
                            self.state.store(task).checkpoint()
                    last_checkpoint = time.monotonic()
        finally:
            consumer.close()
            restorer.close()

    def process_batch(self, batch: dict[TopicPartition, list[Any]]) -> None:
        pending = []
        with self.lock:
            for tp, records in batch.items():
                task = TaskId(0, tp.partition)
                store = self.state.store(task)
                for record in records:
                    key = _text(record.key) or ""
                    count = int(store.get(key) or 0) + 1
                    store.put(key, str(count), (self.changelog, tp.partition), -1)
                    future = self.producer.send(
                        self.changelog,
                        key=key.encode(),
                        value=str(count).encode(),
                        partition=tp.partition,
                        headers=[(WRITER_HEADER, self.process_id.encode())],
                    )
                    pending.append((store, tp.partition, future))
        for store, partition, future in pending:
            metadata = future.get(timeout=30)
            with self.lock:
                position = (self.changelog, partition)
                store.positions[position] = max(
                    store.positions.get(position, 0), metadata.offset + 1
                )

    def run(self) -> None:
        self.emit("started", consumers=self.args.consumers)
        threads = [
            threading.Thread(target=self.run_member, args=(i,), daemon=True)
            for i in range(self.args.consumers)
        ]
        if self.args.assignor == "streams":
            threads.append(threading.Thread(target=self.standby_updater, daemon=True))
        for thread in threads:
            thread.start()
        try:
            while all(t.is_alive() for t in threads):
                time.sleep(0.2)
        finally:
            self.stopping.set()
            for thread in threads:
                thread.join(timeout=10)
            self.producer.close()
            with self.lock:
                self.state.close_all()
            self.end_offsets.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    # `kill -USR1 <pid>` writes every thread's stack to stderr (the test harness does on a
    # time-out): where a member thread waits shows in the app's log.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    Path(args.state_dir).mkdir(parents=True, exist_ok=True)
    try:
        SyncCountsProcess(args).run()
    except KeyboardInterrupt:
        return 0
    return 1  # a member thread died


if __name__ == "__main__":
    sys.exit(main())
