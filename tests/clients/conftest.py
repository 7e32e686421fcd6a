"""A harness that runs the example apps as real OS processes against the shared broker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
PARTITIONS = 12
#: Longest wait for any one condition (seconds); a time-out fails the test with its reason.
WAIT_S = 300.0


@dataclass
class AppProcess:
    """One app process started by the harness."""

    name: str
    popen: subprocess.Popen[bytes]
    state_dir: Path
    events_path: Path
    log_path: Path
    killed_at: float | None = None

    @property
    def alive(self) -> bool:
        return self.killed_at is None and self.popen.poll() is None

    def events(self) -> list[dict[str, Any]]:
        if not self.events_path.exists():
            return []
        result = []
        for line in self.events_path.read_text().splitlines():
            if line.endswith("}"):
                result.append(json.loads(line))
        return result

    def process_id(self) -> str | None:
        for event in self.events():
            return str(event["process"])
        return None


@dataclass
class AppCluster:
    """Processes of one application on the broker, with helpers to wait, produce and measure."""

    bootstrap: str
    root: Path
    script: str
    app_args: list[str]
    application_id: str = field(default_factory=lambda: f"app-{uuid.uuid4().hex[:8]}")
    processes: dict[str, AppProcess] = field(default_factory=dict)

    @property
    def input_topic(self) -> str:
        return f"{self.application_id}-in"

    @property
    def changelog(self) -> str:
        return f"{self.application_id}-counts-changelog"

    def create_topics(self) -> None:
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        try:
            admin.create_topics(
                [NewTopic(self.input_topic, PARTITIONS, 1), NewTopic(self.changelog, PARTITIONS, 1)]
            )
        finally:
            admin.close()

    def start(self, name: str) -> AppProcess:
        state_dir = self.root / name
        state_dir.mkdir(parents=True, exist_ok=True)
        events = self.root / f"{name}.jsonl"
        log_path = self.root / f"{name}.log"
        command = [
            sys.executable,
            str(EXAMPLES / self.script),
            "--bootstrap-servers",
            self.bootstrap,
            "--application-id",
            self.application_id,
            "--input-topic",
            self.input_topic,
            "--state-dir",
            str(state_dir),
            "--events",
            str(events),
            *self.app_args,
        ]
        with open(log_path, "wb") as log:
            popen = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=REPO,
            )
        process = AppProcess(name, popen, state_dir, events, log_path)
        self.processes[name] = process
        return process

    def kill(self, name: str) -> float:
        """``kill -9`` the process; returns the time of the kill (epoch seconds)."""
        process = self.processes[name]
        os.kill(process.popen.pid, signal.SIGKILL)
        process.killed_at = time.time()
        process.popen.wait(timeout=30)
        return process.killed_at

    def stop_all(self) -> None:
        for process in self.processes.values():
            if process.popen.poll() is None:
                os.killpg(process.popen.pid, signal.SIGKILL)
                process.popen.wait(timeout=30)

    def live(self) -> list[AppProcess]:
        return [p for p in self.processes.values() if p.alive]

    def logs(self, tail: int = 2000) -> str:
        parts = []
        for process in self.processes.values():
            text = process.log_path.read_text(errors="replace") if process.log_path.exists() else ""
            parts.append(f"--- {process.name} (exit {process.popen.poll()}):\n{text[-tail:]}")
        return "\n".join(parts)

    def dump_stacks(self) -> None:
        """Have every live app write its threads' stacks to its log (SIGUSR1, faulthandler)."""
        for process in self.live():
            os.kill(process.popen.pid, signal.SIGUSR1)
        time.sleep(1.0)  # faulthandler writes from the signal handler; let it finish

    def wait_until(self, what: str, condition: Callable[[], Any], timeout: float = WAIT_S) -> Any:
        """Poll ``condition`` until it returns something truthy; fail with ``what`` on time-out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process in self.processes.values():
                if process.killed_at is None and process.popen.poll() is not None:
                    pytest.fail(
                        f"app {process.name} exited while waiting for {what}:\n{self.logs()}"
                    )
            value = condition()
            if value:
                return value
            time.sleep(0.2)
        self.dump_stacks()
        pytest.fail(
            f"timed out after {timeout:.0f} s waiting for {what}:\n{self.logs(tail=12_000)}"
        )

    # ---------------------------------------------------------------- the group's state
    def latest_assignments(self) -> dict[str, dict[str, Any]]:
        """Per member id of the live processes, its latest ``assigned`` event."""
        latest: dict[str, dict[str, Any]] = {}
        for process in self.live():
            by_index: dict[int, dict[str, Any]] = {}
            for event in process.events():
                if event["event"] == "assigned":
                    by_index[event["index"]] = event
            for event in by_index.values():
                latest[event["member"]] = event
        return latest

    def latest_assignments_before(self, moment: float) -> dict[str, dict[str, Any]]:
        """Per member id of the live processes, its last ``assigned`` event before ``moment``."""
        latest: dict[str, dict[str, Any]] = {}
        for process in self.live():
            for event in process.events():
                if event["event"] == "assigned" and event["t"] < moment:
                    latest[f"{event['process']}-{event['index']}"] = event
        return latest

    def stable(self, members: int, since: float = 0.0) -> dict[str, dict[str, Any]] | None:
        """The latest assignments when the group is settled, else ``None``.

        Settled: ``members`` members of the live processes report one generation (after
        ``since``), every task is active on exactly one of them, and each of those actives
        has been restored since (processing resumed).
        """
        latest = self.latest_assignments()
        if len(latest) != members or any(e["t"] < since for e in latest.values()):
            return None
        if len({e["generation"] for e in latest.values()}) != 1:
            return None
        actives = sorted(t for e in latest.values() for t in e["active"])
        if actives != sorted(f"0_{p}" for p in range(PARTITIONS)):
            return None
        restored = [  # a task kept across a cooperative rebalance needs no restore
            e for p in self.live() for e in p.events() if e["event"] in ("restored", "kept")
        ]
        for event in latest.values():
            for task in event["active"]:
                if not any(
                    r["member"] == event["member"] and r["task"] == task and r["t"] >= event["t"]
                    for r in restored
                ):
                    return None
        return latest

    # ---------------------------------------------------------------- data
    def produce(self, records: int, start: int = 0) -> None:
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=5)
        try:
            for i in range(start, start + records):
                producer.send(
                    self.input_topic,
                    key=f"k{i % 97}".encode(),
                    value=b"1",
                    partition=i % PARTITIONS,
                )
            producer.flush()
        finally:
            producer.close()

    def end_offsets(self, topic: str) -> dict[int, int]:
        from kafka import KafkaConsumer, TopicPartition

        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap)
        try:
            answer = consumer.end_offsets([TopicPartition(topic, p) for p in range(PARTITIONS)])
        finally:
            consumer.close()
        return {tp.partition: offset for tp, offset in answer.items()}

    def changelog_writers(self, partitions: list[int]) -> dict[int, list[str | None]]:
        """Per changelog partition, the ``writer`` header of each record, in offset order.

        Read from the beginning to the end offset of each partition at the call.
        """
        from kafka import KafkaConsumer, TopicPartition

        tps = [TopicPartition(self.changelog, p) for p in partitions]
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False)
        try:
            ends = consumer.end_offsets(tps)
            consumer.assign(tps)
            consumer.seek_to_beginning(*tps)
            writers: dict[int, list[str | None]] = {p: [] for p in partitions}
            while any(consumer.position(tp) < ends[tp] for tp in tps):
                for tp, records in consumer.poll(timeout_ms=500).items():
                    for record in records:
                        if record.offset >= ends[tp]:
                            continue
                        assert record.offset == len(writers[tp.partition]), record
                        headers = dict(record.headers or [])
                        writer = headers.get("writer")
                        writers[tp.partition].append(None if writer is None else writer.decode())
        finally:
            consumer.close()
        return writers

    def end_of_writes(self, process_id: str, partitions: list[int]) -> dict[int, int] | None:
        """Per partition, one past the last changelog record ``process_id`` wrote (0 if none),
        once every partition holds a record of another writer after it; else ``None``.

        For a killed process this is the changelog a new owner has to restore, exactly, however
        late the broker appends the produce requests the process had sent before it died (a
        request already on the wire is appended after ``kill`` returns; a non-transactional
        producer cannot be fenced): the records are told apart by their ``writer`` header, not
        by when they were read. A survivor writes to a task's partition only after it was
        assigned the task and restored it to the end offset, so once a survivor's record
        follows the killed process's last one, the new owner's restore started after every
        record of the killed process before it; one landing later still would raise this end
        past what the new owner restored, and the test comparing them fails.
        """
        writers = self.changelog_writers(partitions)
        ends: dict[int, int] = {}
        for partition, column in writers.items():
            mine = [offset for offset, writer in enumerate(column) if writer == process_id]
            end = mine[-1] + 1 if mine else 0
            if not any(writer not in (None, process_id) for writer in column[end:]):
                return None
            ends[partition] = end
        return ends

    def checkpoint_offset(self, process: AppProcess, task: str) -> int:
        """The changelog offset in ``process``'s checkpoint of ``task`` (0 without one)."""
        path = process.state_dir / self.application_id / task / ".checkpoint"
        if not path.exists():
            return 0
        lines = path.read_text().splitlines()
        return sum(int(line.split(" ")[2]) for line in lines[2:] if line.strip())

    def by_process_id(self, process_id: str) -> AppProcess:
        for process in self.processes.values():
            if process.process_id() == process_id:
                return process
        raise KeyError(process_id)


class Trickle:
    """A background producer: a few records per 100 ms to every input partition."""

    def __init__(self, cluster: AppCluster, per_tick: int = 24) -> None:
        self.cluster = cluster
        self.per_tick = per_tick
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.sent = 0

    def _run(self) -> None:
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=self.cluster.bootstrap, linger_ms=5)
        try:
            while not self._stop.is_set():
                for i in range(self.per_tick):
                    producer.send(
                        self.cluster.input_topic,
                        key=f"t{i % 31}".encode(),
                        value=b"1",
                        partition=i % PARTITIONS,
                    )
                self.sent += self.per_tick
                producer.flush()
                self._stop.wait(0.1)
        finally:
            producer.close()

    def __enter__(self) -> Trickle:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


@pytest.fixture(scope="module")
def app_cluster(
    kafka_broker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str, list[str]], AppCluster]]:
    """Make :class:`AppCluster` objects; every process they started is killed at teardown."""
    made: list[AppCluster] = []

    def make(script: str, app_args: list[str]) -> AppCluster:
        root = tmp_path_factory.mktemp("apps")
        cluster = AppCluster(kafka_broker.bootstrap_servers, root, script, app_args)
        cluster.create_topics()
        made.append(cluster)
        return cluster

    try:
        yield make
    finally:
        for cluster in made:
            cluster.stop_all()


@pytest.fixture(scope="module")
def trickle() -> type[Trickle]:
    """The :class:`Trickle` background producer class."""
    return Trickle
