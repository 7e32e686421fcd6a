"""Count records per key: a stateful stream app on aiokafka with Kafka Streams-style assignment.

One process runs ``--consumers`` group members (stream threads) over the input topic. Task
``0_p`` is partition ``p`` of the input; its state (count per key) is a sqlite store backed by
partition ``p`` of ``<application.id>-counts-changelog``. With ``--assignor streams`` the
group uses streams-assign: the process keeps its standby and warmup tasks up to date from the
changelog, and a promoted task restores only what its store lacks. With ``roundrobin`` or
``sticky`` (aiokafka's own assignors, the baseline) a task restores from whatever state the
process happens to have, usually nothing.

Run several processes with the same ``--application-id``; each writes JSON lines events
(``assigned``, ``restored``) to ``--events`` for tests and measurements; every changelog
record carries a ``writer`` header with the id of the process that wrote it::

    python examples/counts_app.py --bootstrap-servers 127.0.0.1:9092 \\
        --application-id counts --input-topic words --state-dir /tmp/p1 --events /tmp/p1.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import faulthandler
import json
import logging
import signal
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka.structs import TopicPartition

from streams_assign.clients.aiokafka_adapter import AiokafkaStreamsAssignor
from streams_assign.clients.codec import AssignmentInfo
from streams_assign.clients.core import StreamsProcess, StreamsSettings
from streams_assign.clients.offsets import KafkaEndOffsets
from streams_assign.clients.state import StateDirectory
from streams_assign.clients.topology import Topology
from streams_assign.model import Subtopology, TaskId

log = logging.getLogger("counts_app")
CHECKPOINT_INTERVAL_S = 0.2
#: Header on every changelog record naming the process id that wrote it: the test harness tells
#: a killed process's records from its successor's by it.
WRITER_HEADER = "writer"


class Events:
    """JSON lines, one event per line, flushed at once (read by tests while the app runs)."""

    def __init__(self, path: str | None, process_id: str) -> None:
        self.out: TextIO | None = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self.process_id = process_id

    def emit(self, event: str, **fields: Any) -> None:
        record = {"t": time.time(), "event": event, "process": self.process_id, **fields}
        if self.out is not None:
            self.out.write(json.dumps(record) + "\n")
            self.out.flush()


class CountsProcess:
    """One app process: its consumers, the state directory and the standby updater."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.changelog = f"{args.application_id}-counts-changelog"
        self.topology = Topology((Subtopology(0, (args.input_topic,), (self.changelog,)),))
        self.state = StateDirectory(args.state_dir, args.application_id, self.topology)
        self.process_id = self.state.process_id()
        self.events = Events(args.events, self.process_id)
        self.end_offsets = KafkaEndOffsets(args.bootstrap_servers)
        settings = StreamsSettings(
            num_standby_replicas=args.num_standby_replicas,
            acceptable_recovery_lag=args.acceptable_recovery_lag,
            max_warmup_replicas=args.max_warmup_replicas,
            probing_rebalance_interval_ms=args.probing_interval_ms,
        )
        self.process = StreamsProcess(
            self.topology,
            settings,
            process_id=self.process_id,
            offset_sums=self.state.task_offset_sums,
            end_offsets=self.end_offsets,
            endpoint=args.endpoint,
        )
        self.active: dict[TaskId, int] = {}  # task -> member index running it
        self.replicas: dict[int, set[TaskId]] = {}  # member index -> standby + warmup tasks
        self.replicas_changed = asyncio.Event()
        self.producer: AIOKafkaProducer | None = None

    def changelog_partition(self, task: TaskId) -> TopicPartition:
        return TopicPartition(self.changelog, task.partition)

    def replica_tasks(self) -> set[TaskId]:
        everything = set().union(*self.replicas.values()) if self.replicas else set()
        return everything - set(self.active)

    def on_assignment(self, index: int, info: AssignmentInfo) -> None:
        self.replicas[index] = {*info.standby, *info.warmup}
        self.replicas_changed.set()

    async def restore(self, task: TaskId, member: str, restorer: AIOKafkaConsumer) -> None:
        """Bring the task's store to the changelog's end before processing resumes."""
        started = time.monotonic()
        store = self.state.store(task)
        tp = self.changelog_partition(task)
        start = store.positions.get((tp.topic, tp.partition), 0)
        end = (await restorer.end_offsets([tp]))[tp]
        restored = 0
        if end > start:
            restorer.assign([tp])
            restorer.seek(tp, start)
            while store.positions[(tp.topic, tp.partition)] < end:
                batch = await restorer.getmany(tp, timeout_ms=500)
                for record in batch.get(tp, []):
                    store.apply(
                        _text(record.key),
                        _text(record.value),
                        (tp.topic, tp.partition),
                        record.offset,
                    )
                    restored += 1
            restorer.unsubscribe()
        store.checkpoint()
        self.events.emit(
            "restored",
            member=member,
            task=str(task),
            records=restored,
            start=start,
            end=end,
            ms=round((time.monotonic() - started) * 1000, 1),
        )

    async def standby_updater(self) -> None:
        """Keep the stores of this process's standby and warmup tasks at the changelog's end."""
        reader = AIOKafkaConsumer(
            bootstrap_servers=self.args.bootstrap_servers, enable_auto_commit=False
        )
        await reader.start()
        assigned: set[TaskId] = set()
        last_checkpoint = time.monotonic()
        try:
            while True:
                if self.replicas_changed.is_set():
                    self.replicas_changed.clear()
                    wanted = self.replica_tasks()
                    if wanted != assigned:
                        for task in assigned - wanted:
                            if task not in self.active:
                                self.state.close(task)
                        assigned = wanted
                        tps = [self.changelog_partition(t) for t in sorted(assigned)]
                        reader.assign(tps)
                        for task, tp in zip(sorted(assigned), tps, strict=True):
                            position = self.state.store(task).positions[(tp.topic, tp.partition)]
                            reader.seek(tp, position)
                if not assigned:
                    await asyncio.sleep(0.1)
                    continue
                batch = await reader.getmany(timeout_ms=100)
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
            await reader.stop()

    async def run_member(self, index: int) -> None:
        """One stream thread: a group member processing its active tasks."""
        args = self.args
        if args.assignor == "streams":
            assignor: Any = AiokafkaStreamsAssignor(
                self.process, lambda info: self.on_assignment(index, info)
            )
        elif args.assignor == "roundrobin":
            from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

            assignor = RoundRobinPartitionAssignor
        else:
            from aiokafka.coordinator.assignors.sticky.sticky_assignor import (
                StickyPartitionAssignor,
            )

            assignor = StickyPartitionAssignor
        consumer = AIOKafkaConsumer(
            bootstrap_servers=args.bootstrap_servers,
            group_id=args.application_id,
            client_id=f"{args.application_id}-{self.process_id}-StreamThread-{index + 1}-consumer",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=args.session_timeout_ms,
            heartbeat_interval_ms=max(100, args.session_timeout_ms // 6),
            partition_assignment_strategy=(assignor,),
        )
        restorer = AIOKafkaConsumer(
            bootstrap_servers=args.bootstrap_servers, enable_auto_commit=False
        )
        mine: set[TaskId] = set()
        app = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_revoked(self, revoked: Any) -> None:
                if app.producer is not None:
                    await app.producer.flush()
                if mine:
                    await consumer.commit()
                for task in mine:
                    app.active.pop(task, None)
                    app.state.store(task).checkpoint()
                mine.clear()
                app.replicas_changed.set()

            async def on_partitions_assigned(self, assigned: Any) -> None:
                tasks = sorted({TaskId(0, tp.partition) for tp in assigned})
                member = consumer._coordinator.member_id if consumer._coordinator else ""
                info = getattr(assignor, "member", None)
                info = info.assignment if info is not None else None
                app.events.emit(
                    "assigned",
                    member=member,
                    index=index,
                    generation=consumer._coordinator.generation if consumer._coordinator else -1,
                    active=[str(t) for t in tasks],
                    standby=[str(t) for t in info.standby] if info else [],
                    warmup=[str(t) for t in info.warmup] if info else [],
                    next_probing_ms=info.next_probing_ms if info else -1,
                )
                for task in tasks:
                    app.active[task] = index
                app.replicas_changed.set()
                # Processing of a task waits until its store is restored.
                consumer.pause(*assigned)
                for task in tasks:
                    await app.restore(task, member, restorer)
                    mine.add(task)
                consumer.resume(*assigned)

        await restorer.start()
        await consumer.start()
        consumer.subscribe([args.input_topic], listener=Listener())
        watcher = None
        if isinstance(assignor, AiokafkaStreamsAssignor):
            watcher = asyncio.create_task(assignor.watch_probing(consumer))
        last_checkpoint = time.monotonic()
        try:
            while True:
                batch = await consumer.getmany(timeout_ms=200)
                for tp in list(batch):
                    if TaskId(0, tp.partition) not in mine:  # fetched before the pause
                        consumer.seek(tp, batch.pop(tp)[0].offset)
                if batch:
                    await self.process_batch(batch)
                    await consumer.commit()
                if time.monotonic() - last_checkpoint > CHECKPOINT_INTERVAL_S:
                    for task in list(mine):
                        self.state.store(task).checkpoint()
                    last_checkpoint = time.monotonic()
        finally:
            if watcher is not None:
                watcher.cancel()
            await consumer.stop()
            await restorer.stop()

    async def process_batch(self, batch: dict[TopicPartition, list[Any]]) -> None:
        """Count each record's key; write the counts to the store and the changelog."""
        assert self.producer is not None
        pending = []
        for tp, records in batch.items():
            task = TaskId(0, tp.partition)
            store = self.state.store(task)
            changelog = self.changelog_partition(task)
            for record in records:
                key = _text(record.key) or ""
                count = int(store.get(key) or 0) + 1
                store.put(key, str(count), (changelog.topic, changelog.partition), -1)
                future = await self.producer.send(
                    changelog.topic,
                    key=key.encode(),
                    value=str(count).encode(),
                    partition=changelog.partition,
                    headers=[(WRITER_HEADER, self.process_id.encode())],
                )
                pending.append((store, changelog, future))
        for store, changelog, future in pending:
            metadata = await future
            position = (changelog.topic, changelog.partition)
            store.positions[position] = max(store.positions.get(position, 0), metadata.offset + 1)

    async def run(self) -> None:
        self.producer = AIOKafkaProducer(
            bootstrap_servers=self.args.bootstrap_servers, linger_ms=5, acks=1
        )
        await self.producer.start()
        self.events.emit("started", consumers=self.args.consumers)
        tasks = [asyncio.create_task(self.run_member(i)) for i in range(self.args.consumers)]
        if self.args.assignor == "streams":
            tasks.append(asyncio.create_task(self.standby_updater()))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await self.producer.stop()
            self.state.close_all()
            self.end_offsets.close()


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--application-id", required=True)
    parser.add_argument("--input-topic", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--events")
    parser.add_argument("--consumers", type=int, default=2)
    parser.add_argument(
        "--assignor", choices=("streams", "roundrobin", "sticky"), default="streams"
    )
    parser.add_argument("--num-standby-replicas", type=int, default=1)
    parser.add_argument("--acceptable-recovery-lag", type=int, default=10_000)
    parser.add_argument("--max-warmup-replicas", type=int, default=2)
    parser.add_argument("--probing-interval-ms", type=int, default=600_000)
    parser.add_argument("--session-timeout-ms", type=int, default=3_000)
    parser.add_argument("--endpoint")
    parser.add_argument(
        "--cooperative",
        action="store_true",
        help="kafka-python only: the cooperative protocol (KIP-429)",
    )
    return parser.parse_args(argv)


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
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(CountsProcess(args).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
