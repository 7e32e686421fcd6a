"""A real Kafka Streams application, run as separate JVM instances against a real broker.

The Java sources are in ``kafka/streams-app/src`` (``streamsassign.app.OrdersApp``), compiled with
``javac`` against ``.kafka/lib`` (Kafka 4.2) or ``.kafka/lib-44`` (Kafka 4.4, where
``group.protocol=streams`` makes it a member of a streams group, KIP-1071) on first use.
Topology (``OrdersApp#topology``)::

    sub-topology 0  orders -> filter -> selectKey(customer) -> orders-by-customer-repartition
    sub-topology 1  repartition -> aggregate into store order-totals -> customer-totals
    sub-topology 2  payments -> count into store payment-counts -> payment-counts-out

Each instance appends JSON lines to its ``assignment.jsonl``: a line of kind ``assignment``
whenever ``KafkaStreams#metadataForLocalThreads()`` or the instance's state changes (active and
standby tasks per stream thread; warmup replicas are standby tasks there), a line of kind
``positions`` whenever the changelog positions of its local stores change
(``KafkaStreams#allLocalStorePartitionLags()``), and ``stopped`` on a clean close; its
``restores.jsonl`` holds what it restored and loaded (:mod:`devtools.kafka.restores`).

:class:`StreamsCluster` starts, stops (SIGTERM: ``KafkaStreams#close``, which checkpoints) and
kills (SIGKILL) instances, and always cleans up: every JVM is killed and the folder removed when
the ``with`` block ends, also on an exception or at interpreter exit.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devtools.kafka.apps import (
    CLICKS_APP,
    LOG4J,
    ORDERS_APP,
    STORES,
    AppSpec,
)
from devtools.kafka.broker import KAFKA_VERSIONS, KafkaBroker, free_port
from devtools.kafka.java import classpath, compile_java, java_executable, kafka_lib, tmpdir_option
from devtools.kafka.restores import Restore, StandbyLoad, read_restores, read_standby_loads
from devtools.paths import BUILD, KAFKA_SOURCES
from streams_assign.errors import StreamsAssignError

__all__ = [
    "APP_SOURCES", "CLICKS_APP", "ORDERS_APP", "STORES", "AppSpec", "INPUT_PARTITIONS",
    "ProcessAssignment", "StreamsAppError", "StreamsCluster", "StreamsInstance",
    "app_classpath", "app_classpath_next",
]  # fmt: skip

APP_SOURCES = KAFKA_SOURCES / "streams-app" / "src"
#: Partitions of ``orders`` and ``payments``: 4 tasks in each of the 3 sub-topologies.
INPUT_PARTITIONS = 4
BUILD_DIR = BUILD / "streams-app"


class StreamsAppError(StreamsAssignError, RuntimeError):
    """An instance of the Streams application failed, or did not reach the awaited state."""


def app_classpath(kafka_version: str = "4.2", extra_classpath: Sequence[str | Path] = ()) -> str:
    """Class path of the compiled application followed by the jars of one Kafka line.

    Parameters
    ----------
    kafka_version:
        ``"4.2"`` (``.kafka/lib``) or ``"4.4"`` (``.kafka/lib-44``); the application is
        compiled against that line's jars into its own build folder (compiles if needed).
    extra_classpath:
        Jars or class folders put after the application and before Kafka's jars (a plug-in a
        config of the application names).

    Raises
    ------
    ValueError
        When ``kafka_version`` is not a key of :data:`~devtools.kafka.broker.KAFKA_VERSIONS`.
    KafkaJarsMissingError
        When that line's jar folder holds no jar (``make kafka``).
    """
    if kafka_version not in KAFKA_VERSIONS:
        raise ValueError(f"Kafka version {kafka_version!r} is not one of {sorted(KAFKA_VERSIONS)}")
    jars = KAFKA_VERSIONS[kafka_version]
    cp = classpath(jars)
    build = BUILD_DIR if jars == "lib" else BUILD / f"streams-app-{jars}"
    compiled = compile_java(APP_SOURCES, build, cp)
    return os.pathsep.join([str(compiled), *map(str, extra_classpath), cp])


def app_classpath_next() -> str:
    """Class path running the same application on Kafka Streams 4.3 (``.kafka/lib-next``).

    The compiled application (built against ``.kafka/lib``; 4.3 keeps the API it uses), then
    kafka-streams and kafka-clients 4.3.x from ``.kafka/lib-next``, then every other jar of
    ``.kafka/lib`` (RocksDB, compression, logging) without its own kafka-streams and
    kafka-clients, so no class of 4.2 can shadow or mix with 4.3's.

    Raises
    ------
    KafkaJarsMissingError
        When ``.kafka/lib`` or ``.kafka/lib-next`` holds no jar (``make kafka``).
    """
    compiled = app_classpath().split(os.pathsep, 1)[0]
    next_jars = sorted(kafka_lib("lib-next").glob("*.jar"))
    replaced = ("kafka-streams-", "kafka-clients-")
    base_jars = [
        jar for jar in sorted(kafka_lib("lib").glob("*.jar")) if not jar.name.startswith(replaced)
    ]
    return os.pathsep.join([compiled, *map(str, next_jars), *map(str, base_jars)])


@dataclass(frozen=True)
class ProcessAssignment:
    """What one Kafka Streams process (client) runs, summed over its stream threads.

    Attributes
    ----------
    active, standby:
        Task ids written ``1_3``; warmup replicas are among ``standby``, as Kafka Streams
        reports them.
    threads:
        Thread name -> (active, standby) task ids of that thread.
    """

    active: frozenset[str]
    standby: frozenset[str]
    threads: dict[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)


_LIVE: weakref.WeakSet[StreamsCluster] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for cluster in list(_LIVE):
        cluster.close()


class StreamsInstance:
    """One JVM running ``OrdersApp`` with its own ``state.dir`` (a Kafka Streams process).

    Parameters
    ----------
    cluster:
        The owning :class:`StreamsCluster`.
    name:
        Folder name of the instance (``instance-1`` ...).
    threads:
        ``num.stream.threads`` (the process's capacity).
    process_id:
        Written into ``<state.dir>/<application.id>/kafka-streams-process-metadata`` before the
        first start, so the process id is known before the instance joins (Kafka Streams 4.x
        keeps the process id there, ``StateDirectory#initializeProcessId``).
    configs:
        More Kafka Streams configs of this instance (``client.tag.zone``,
        ``application.server``), passed to the JVM as ``config.<name>=<value>``.
    """

    def __init__(
        self,
        cluster: StreamsCluster,
        name: str,
        threads: int,
        process_id: str,
        configs: dict[str, str] | None = None,
    ) -> None:
        self.cluster = cluster
        self.configs = dict(configs or {})
        self.name = name
        self.threads = threads
        self.process_id = process_id
        self.root = cluster.root / name
        self.state_dir = self.root / "state"
        self.out = self.root / "assignment.jsonl"
        self.restores_file = self.root / "restores.jsonl"
        self.log = self.root / "instance.log"
        app_dir = self.state_dir / cluster.application_id
        app_dir.mkdir(parents=True)
        (app_dir / "kafka-streams-process-metadata").write_text(
            json.dumps({"processId": process_id}, separators=(",", ":"))
        )
        self._process: subprocess.Popen[bytes] | None = None
        self._log_file: Any = None
        self.starts = 0
        #: JMX port of the running JVM (loopback, no authentication) when the cluster has
        #: ``jmx=True``, for Kafka's ``JmxTool``; a new free port at each start.
        self.jmx_port: int | None = None

    @property
    def running(self) -> bool:
        """Whether the JVM is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> StreamsInstance:
        """Start the JVM (it appends to ``assignment.jsonl`` and ``instance.log``)."""
        if self.running:
            return self
        c = self.cluster
        args = {
            "bootstrap": c.broker.bootstrap_servers,
            "app.id": c.application_id,
            "state.dir": self.state_dir,
            "threads": self.threads,
            "standbys": c.standbys,
            "commit.ms": c.commit_interval_ms,
            "out": self.out,
            "restores.out": self.restores_file,
            "topology.out": c.root / "topology.txt",
            "acceptable.recovery.lag": c.acceptable_recovery_lag,
            "max.warmup.replicas": c.max_warmup_replicas,
            "probing.ms": c.probing_rebalance_interval_ms,
            "session.timeout.ms": c.session_timeout_ms,
            "heartbeat.ms": c.heartbeat_interval_ms,
            "topics.prefix": c.topics_prefix,
        }
        jmx: list[str] = []
        if c.jmx:
            self.jmx_port = free_port()
            jmx = [f"-Dcom.sun.management.jmxremote.{k}={v}" for k, v in (
                ("port", self.jmx_port), ("rmi.port", self.jmx_port), ("host", "127.0.0.1"),
                ("authenticate", "false"), ("ssl", "false"),
            )] + ["-Djava.rmi.server.hostname=127.0.0.1"]  # fmt: skip
        command = [
            java_executable(),
            c.heap,
            *jmx,
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            # RocksDB unpacks its native library into java.io.tmpdir and a killed JVM leaves
            # it there (15 MB): keep it inside the instance's folder, removed on close.
            f"-Djava.io.tmpdir={self.root}",
            f"-Dlog4j.configuration=file:{c.log4j}",
            "-cp",
            c.cp,
            c.app.main_class,
            *(f"{key}={value}" for key, value in args.items()),
            *(f"config.{key}={value}" for key, value in {**c.configs, **self.configs}.items()),
        ]
        self._log_file = open(self.log, "ab")  # noqa: SIM115 (closed in _reap)
        self._process = subprocess.Popen(
            command,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.starts += 1
        return self

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM: ``KafkaStreams#close()`` (checkpoints every store, keeps the group
        membership until the session times out, as Kafka Streams does); SIGKILL after
        ``timeout`` seconds."""
        self._signal(signal.SIGTERM, timeout)

    def kill(self) -> None:
        """SIGKILL (``kill -9``): no close, no checkpoint, no LeaveGroup."""
        self._signal(signal.SIGKILL, 10.0)

    def _signal(self, sig: signal.Signals, timeout: float) -> None:
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self._process = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    # ------------------------------------------------------------------ what it wrote
    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The JSON lines written so far (of one ``kind`` when given); a torn last line is
        ignored."""
        if not self.out.exists():
            return []
        lines = []
        for text in self.out.read_text().splitlines():
            try:
                record = json.loads(text)
            except json.JSONDecodeError:
                continue
            if kind is None or record.get("kind") == kind:
                lines.append(record)
        return lines

    def assignment(self) -> ProcessAssignment | None:
        """Tasks of the last ``assignment`` line, or None when there is none."""
        lines = self.records("assignment")
        if not lines:
            return None
        return _assignment_of(lines[-1])

    def state(self) -> str | None:
        """``KafkaStreams.State`` of the last ``assignment`` line (``RUNNING`` ...)."""
        lines = self.records("assignment")
        return lines[-1]["state"] if lines else None

    def positions(self) -> dict[str, dict[int, tuple[int, int]]]:
        """Store -> partition -> (current offset position, end offset position), records."""
        lines = self.records("positions")
        if not lines:
            return {}
        return {
            store: {int(p): (int(v[0]), int(v[1])) for p, v in parts.items()}
            for store, parts in lines[-1]["positions"].items()
        }

    def restores(self, since_ms: int = 0) -> list[Restore]:
        """Active tasks' store restores ended at or after ``since_ms`` (epoch ms)."""
        return read_restores(self.restores_file, since_ms)

    def standby_loads(self, since_ms: int = 0) -> list[StandbyLoad]:
        """Batches its standby tasks loaded at or after ``since_ms``, oldest first."""
        return read_standby_loads(self.restores_file, since_ms)

    def log_lines(self, needle: str) -> list[str]:
        """Lines of ``instance.log`` that contain ``needle``."""
        if not self.log.exists():
            return []
        return [
            line for line in self.log.read_text(errors="replace").splitlines() if needle in line
        ]


def _assignment_of(line: dict[str, Any]) -> ProcessAssignment:
    threads = {
        t["name"]: (frozenset(t["active"]), frozenset(t["standby"])) for t in line["threads"]
    }
    active = frozenset().union(*(a for a, _ in threads.values()))
    standby = frozenset().union(*(s for _, s in threads.values()))
    return ProcessAssignment(active, standby, threads)


class StreamsCluster:
    """Several instances of the Streams application against one broker, cleaned up on exit.

    Parameters
    ----------
    broker:
        A running :class:`~devtools.kafka.broker.KafkaBroker`.
    application_id:
        ``application.id`` (also the consumer group and the internal topics' prefix).
    standbys:
        ``num.standby.replicas``.
    commit_interval_ms, acceptable_recovery_lag, max_warmup_replicas,
    probing_rebalance_interval_ms, session_timeout_ms, heartbeat_interval_ms:
        The Kafka Streams / consumer configs of those names (milliseconds; records for
        ``acceptable.recovery.lag``).
    work_dir:
        Parent of the cluster's temporary folder.
    heap:
        ``-Xmx`` of each instance.
    topics_prefix:
        Put before ``orders``, ``payments`` and the output topics (default
        ``<application.id>.``), so applications on one broker never share input.
    cp:
        Class path of the instances (default :func:`app_classpath` of ``kafka_version`` and
        ``extra_classpath``; :func:`app_classpath_next` runs Kafka Streams 4.3).
    jmx:
        Open a loopback JMX port on every instance (:attr:`StreamsInstance.jmx_port`), as an
        operator's monitoring does, so Kafka's ``JmxTool`` can read its metrics.
    app:
        The application (:data:`ORDERS_APP`, :data:`CLICKS_APP`).
    kafka_version:
        Kafka line of the instances' jars when ``cp`` is not given: ``"4.2"`` or ``"4.4"``.
    extra_classpath:
        Plug-in jars or class folders on the instances' class path when ``cp`` is not given.
    configs:
        Kafka Streams configs of every instance (``group.protocol=streams`` ...), passed as
        ``config.<name>=<value>``; an instance's own ``configs`` override them.
    partitions:
        Partitions of ``orders`` and ``payments`` (so tasks per sub-topology) that
        :meth:`create_input_topics` and :meth:`produce` use by default and :meth:`is_stable`
        expects.

    Raises
    ------
    KafkaJarsMissingError
        When ``.kafka/lib`` or a JDK is missing.
    JavaError
        When the application does not compile.
    """

    def __init__(
        self,
        broker: KafkaBroker,
        application_id: str,
        *,
        standbys: int = 1,
        commit_interval_ms: int = 200,
        acceptable_recovery_lag: int = 10_000,
        max_warmup_replicas: int = 2,
        probing_rebalance_interval_ms: int = 60_000,
        session_timeout_ms: int = 6_000,
        heartbeat_interval_ms: int = 1_000,
        work_dir: str | Path | None = None,
        heap: str = "-Xmx256m",
        topics_prefix: str | None = None,
        cp: str | None = None,
        jmx: bool = False,
        app: AppSpec = ORDERS_APP,
        kafka_version: str = "4.2",
        extra_classpath: Sequence[str | Path] = (),
        configs: Mapping[str, object] | None = None,
        partitions: int = INPUT_PARTITIONS,
    ) -> None:
        self.app = app
        self.broker = broker
        self.jmx = jmx
        self.application_id = application_id
        self.standbys = standbys
        self.commit_interval_ms = commit_interval_ms
        self.acceptable_recovery_lag = acceptable_recovery_lag
        self.max_warmup_replicas = max_warmup_replicas
        self.probing_rebalance_interval_ms = probing_rebalance_interval_ms
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.heap = heap
        self.topics_prefix = f"{application_id}." if topics_prefix is None else topics_prefix
        self.kafka_version = kafka_version
        self.partitions = partitions
        self.configs = {key: str(value) for key, value in (configs or {}).items()}
        self.cp = app_classpath(kafka_version, extra_classpath) if cp is None else cp
        if work_dir is not None:
            Path(work_dir).mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix=f"streams-{application_id}-", dir=work_dir))
        self.log4j = self.root / "log4j.properties"
        self.log4j.write_text(LOG4J)
        self.instances: list[StreamsInstance] = []
        _LIVE.add(self)

    # ------------------------------------------------------------------ set-up
    def create_input_topics(self, partitions: int | None = None) -> None:
        """Create this application's input and output topics when missing (Kafka's Admin)."""
        self.produce(0, partitions=partitions)

    def produce(
        self,
        count: int,
        customers: int = 64,
        start: int = 0,
        partitions: int | None = None,
    ) -> None:
        """Write ``count`` records to ``<prefix>orders`` and to ``<prefix>payments``
        (acknowledged), creating the topics first when missing."""
        result = subprocess.run(
            [
                java_executable(),
                *("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", tmpdir_option()),
                f"-Dlog4j.configuration=file:{self.log4j}",
                "-cp",
                self.cp,
                *self.app.produce,
                self.broker.bootstrap_servers,
                self.topics_prefix,
                str(count),
                str(customers),
                str(start),
                str(self.partitions if partitions is None else partitions),
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if result.returncode != 0:
            raise StreamsAppError(f"producing failed:\n{result.stderr[-2000:]}")

    def add_instance(
        self,
        threads: int = 2,
        process_id: str | None = None,
        start: bool = True,
        configs: dict[str, str] | None = None,
    ) -> StreamsInstance:
        """A new instance (its own ``state.dir``, more Streams ``configs`` if given), started
        unless ``start=False``."""
        instance = StreamsInstance(
            self,
            f"instance-{len(self.instances) + 1}",
            threads,
            process_id or str(uuid.uuid4()),
            configs,
        )
        self.instances.append(instance)
        return instance.start() if start else instance

    @property
    def topology_file(self) -> Path:
        """``Topology#describe()`` text, written by every instance at start."""
        return self.root / "topology.txt"

    def changelog_topics(self) -> list[str]:
        """``<application.id>-<store>-changelog`` of every store."""
        return [f"{self.application_id}-{store}-changelog" for store in self.app.stores]

    # ------------------------------------------------------------------ waiting
    def running_instances(self) -> list[StreamsInstance]:
        """Instances whose JVM is alive."""
        return [i for i in self.instances if i.running]

    def wait_until(
        self, condition: Callable[[], bool], timeout: float, what: str, poll: float = 0.5
    ) -> None:
        """Poll ``condition`` until true; raise :class:`StreamsAppError` naming ``what`` after
        ``timeout`` seconds, or as soon as a running instance's JVM has died."""
        deadline = time.monotonic() + timeout
        while True:
            for instance in self.instances:
                process = instance._process
                if process is not None and process.poll() is not None:
                    raise StreamsAppError(
                        f"{instance.name} exited with status {process.returncode} while "
                        f"waiting for {what}; log tail:\n{self._tail(instance)}"
                    )
            if condition():
                return
            if time.monotonic() > deadline:
                raise StreamsAppError(f"timed out after {timeout:.0f} s waiting for {what}")
            time.sleep(poll)

    @staticmethod
    def _tail(instance: StreamsInstance, lines: int = 30) -> str:
        if not instance.log.exists():
            return ""
        return "\n".join(instance.log.read_text(errors="replace").splitlines()[-lines:])

    def assignments(self) -> dict[str, ProcessAssignment]:
        """Process id -> what it runs now, for every running instance with an assignment."""
        out = {}
        for instance in self.running_instances():
            current = instance.assignment()
            if current is not None:
                out[instance.process_id] = current
        return out

    def is_stable(self, quiet_ms: int = 3000) -> bool:
        """Every running instance is ``RUNNING``, its last assignment line is at least
        ``quiet_ms`` old, every task runs as active exactly once, and standbys are where
        ``num.standby.replicas`` asks (never beside their active)."""
        now = time.time() * 1000
        running = self.running_instances()
        if not running:
            return False
        active: list[str] = []
        for instance in running:
            lines = instance.records("assignment")
            if not lines or lines[-1]["state"] != "RUNNING":
                return False
            if now - lines[-1]["time_ms"] < quiet_ms:
                return False
            if any(t["state"] != "RUNNING" for t in lines[-1]["threads"]):
                return False
            current = _assignment_of(lines[-1])
            if current.active & current.standby:
                return False
            active += current.active
        return len(active) == len(set(active)) == self.app.subtopologies * self.partitions

    def wait_stable(self, timeout: float = 180.0, quiet_ms: int = 3000) -> dict[str, Any]:
        """Wait for :meth:`is_stable`; return the assignments (process id -> tasks)."""
        self.wait_until(lambda: self.is_stable(quiet_ms), timeout, "a stable assignment")
        return self.assignments()

    def restored_records(self, since_ms: int = 0) -> int:
        """Records all instances (running or not) restored since ``since_ms`` (epoch ms)."""
        return sum(r.records for i in self.instances for r in i.restores(since_ms))

    def close(self, keep: bool = False) -> None:
        """Kill every instance and remove the folder (unless ``keep``); idempotent."""
        for instance in self.instances:
            instance.kill()
        _LIVE.discard(self)
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> StreamsCluster:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close()
