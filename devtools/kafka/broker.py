"""A real single-node Apache Kafka broker (KRaft) on loopback, and Kafka's command-line tools.

:class:`KafkaBroker` runs ``kafka.Kafka`` from the jars that ``kafka/pom.xml`` fetches into
``.kafka/lib`` (Kafka 4.2.1) or ``.kafka/lib-44`` (Kafka 4.4.0, ``version="4.4"``; ``make kafka``
fetches both): one combined broker + controller (``process.roles=broker,
controller``) whose storage is formatted in a fresh temporary folder by Kafka's
``kafka.tools.StorageTool`` (what ``kafka-storage.sh format`` runs), listening on two free
``127.0.0.1`` ports. :meth:`KafkaBroker.run_tool` runs the main classes behind Kafka's shell
scripts from the same jars (``kafka-consumer-groups.sh`` is
``org.apache.kafka.tools.consumer.group.ConsumerGroupCommand``, ``kafka-get-offsets.sh`` is
``org.apache.kafka.tools.GetOffsetShell``, ``kafka-topics.sh`` is
``org.apache.kafka.tools.TopicCommand``).

Every broker started here is stopped at interpreter exit too, so an interrupted test run leaves
no JVM behind.

Examples
--------
A broker takes tens of seconds to start, so this is not a doctest (``tests/kafka`` runs it)::

    from devtools.kafka.broker import running_broker

    with running_broker() as broker:
        broker.create_topic("words", partitions=3)
        out = broker.run_tool("org.apache.kafka.tools.TopicCommand",
                              "--bootstrap-server", broker.bootstrap_servers, "--list").stdout
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from devtools.kafka.java import classpath, java_executable
from devtools.kafka.net import api_versions_answer, free_port, random_cluster_id
from streams_assign.errors import StreamsAssignError

__all__ = [
    "KafkaBroker",
    "KafkaBrokerError",
    "KafkaToolError",
    "KAFKA_VERSIONS",
    "free_port",
    "running_broker",
]

#: JVM heap of the broker (the machine is shared: keep it capped).
BROKER_HEAP = "-Xmx512m"
#: JVM heap of one run of a command-line tool.
TOOL_HEAP = "-Xmx256m"

#: Kafka line -> the ``.kafka`` folder of its broker, tools and Kafka Streams jars.
KAFKA_VERSIONS = {"4.2": "lib", "4.4": "lib-44"}

_LOG4J = """\
log4j.rootLogger={level}, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.Target=System.err
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
{loggers}"""


class KafkaBrokerError(StreamsAssignError, RuntimeError):
    """The broker could not be formatted or started, or stopped answering."""


class KafkaToolError(StreamsAssignError, RuntimeError):
    """One of Kafka's command-line tools exited with a non-zero status or timed out."""


_LIVE: weakref.WeakSet[KafkaBroker] = weakref.WeakSet()


@atexit.register
def _stop_all_brokers() -> None:
    for broker in list(_LIVE):
        broker.stop()


def _exit_on_sigterm() -> None:
    """Turn SIGTERM into ``SystemExit`` (when nobody handles it yet), so ``finally`` blocks and
    the ``atexit`` hooks stop every JVM when a run is terminated (a CI time-out, ``kill``)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:

        def terminate(signum: int, frame: object) -> None:
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, terminate)


class KafkaBroker:
    """One Apache Kafka broker + KRaft controller in a single JVM on loopback ports.

    Follows Kafka's combined mode (``process.roles=broker,controller``, KIP-500 / KIP-631) with
    a static voter set of one (``controller.quorum.voters``). All replication factors are 1.

    Parameters
    ----------
    work_dir:
        Folder under which a fresh ``kafka-broker-*`` folder is made (the system's temporary
        folder by default). That folder holds ``server.properties``, ``data/`` (Kafka's
        ``log.dirs``) and ``logs/`` (the broker's own log, ``server.log``), and is removed by
        :meth:`stop`.
    group_initial_rebalance_delay_ms:
        ``group.initial.rebalance.delay.ms`` (milliseconds; Kafka's default is 3000, 0 here so
        the first rebalance of a classic group is not held back). The streams-group twin
        ``group.streams.initial.rebalance.delay.ms`` gets the same value.
    configs:
        More broker configs (``server.properties`` keys), applied last, so they override ours
        (``group.streams.num.standby.replicas``, ``group.streams.assignors``, ...).
    heap:
        The JVM's ``-Xmx`` option.
    startup_timeout:
        Seconds to wait for the broker to answer an ``ApiVersions`` request.
    version:
        Kafka line of the broker and of :meth:`run_tool`: ``"4.2"`` (``.kafka/lib``) or
        ``"4.4"`` (``.kafka/lib-44``). On 4.4 ``group.coordinator.rebalance.protocols`` lists
        ``streams`` explicitly (streams groups, KIP-1071).
    extra_classpath:
        Jars or class folders put before Kafka's on the broker's class path (a streams-group
        assignor named in ``group.streams.assignors``, KIP-1357).
    log_levels:
        Logger name -> log4j level in the broker's ``server.log`` (for example
        ``{"org.apache.kafka.coordinator.group": "DEBUG"}``, which logs each streams-group
        target computation).

    Raises
    ------
    ValueError
        When ``version`` is not a key of :data:`KAFKA_VERSIONS`.
    KafkaJarsMissingError
        From :meth:`start` when the version's jar folder holds no jar or no ``java`` is found.
    KafkaBrokerError
        From :meth:`start` when formatting fails, the JVM exits, or it does not answer in time;
        the message carries the tail of the broker's log.
    """

    def __init__(
        self,
        work_dir: str | Path | None = None,
        *,
        group_initial_rebalance_delay_ms: int = 0,
        configs: Mapping[str, object] | None = None,
        heap: str = BROKER_HEAP,
        startup_timeout: float = 120.0,
        version: str = "4.2",
        extra_classpath: Sequence[str | Path] = (),
        log_levels: Mapping[str, str] | None = None,
    ) -> None:
        if version not in KAFKA_VERSIONS:
            raise ValueError(
                f"Kafka version {version!r} is not one of {sorted(KAFKA_VERSIONS)} (kafka/pom.xml)"
            )
        self.version = version
        self.jars = KAFKA_VERSIONS[version]
        self.extra_classpath = tuple(Path(p) for p in extra_classpath)
        self.log_levels = dict(log_levels or {})
        self._work_parent = Path(work_dir) if work_dir is not None else None
        self.group_initial_rebalance_delay_ms = group_initial_rebalance_delay_ms
        self.extra_configs = dict(configs or {})
        self.heap = heap
        self.startup_timeout = startup_timeout
        self.port = 0
        self.controller_port = 0
        self.root: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log_file: object | None = None
        self._jvm: list[str] | None = None

    # ------------------------------------------------------------------ paths and properties
    @property
    def bootstrap_servers(self) -> str:
        """``"127.0.0.1:PORT"``, the broker's PLAINTEXT listener (after :meth:`start`)."""
        if not self.port:
            raise KafkaBrokerError("the broker has not been started")
        return f"127.0.0.1:{self.port}"

    @property
    def log_dir(self) -> Path:
        """Folder of the broker's own log (``server.log``), not Kafka's data ``log.dirs``."""
        if self.root is None:
            raise KafkaBrokerError("the broker has not been started")
        return self.root / "logs"

    @property
    def data_dir(self) -> Path:
        """Kafka's ``log.dirs``: the partitions' segment files and the KRaft metadata log."""
        if self.root is None:
            raise KafkaBrokerError("the broker has not been started")
        return self.root / "data"

    @property
    def running(self) -> bool:
        """Whether the broker's JVM is alive."""
        return self._process is not None and self._process.poll() is None

    def server_properties(self) -> dict[str, str]:
        """The ``server.properties`` this broker runs with (ports filled in by :meth:`start`)."""
        delay = str(self.group_initial_rebalance_delay_ms)
        props: dict[str, object] = {
            "process.roles": "broker,controller",
            "node.id": 1,
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": (
                f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}"
            ),
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.data_dir),
            "num.partitions": 1,
            "default.replication.factor": 1,
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 1,
            "share.coordinator.state.topic.replication.factor": 1,
            "share.coordinator.state.topic.min.isr": 1,
            "group.initial.rebalance.delay.ms": delay,
            "group.streams.initial.rebalance.delay.ms": delay,
            # Tests use short session timeouts (scenario B waits for one to expire).
            "group.min.session.timeout.ms": 1000,
            "group.consumer.min.session.timeout.ms": 1000,
            "group.consumer.min.heartbeat.interval.ms": 500,
            "group.streams.min.session.timeout.ms": 1000,
            "group.streams.min.heartbeat.interval.ms": 500,
            "log.segment.bytes": 8 * 1024 * 1024,
        }
        if self.version != "4.2":
            props["group.coordinator.rebalance.protocols"] = "classic,consumer,streams"
        props.update(self.extra_configs)
        return {key: str(value) for key, value in props.items()}

    # ------------------------------------------------------------------ life cycle
    def start(self) -> KafkaBroker:
        """Format a fresh KRaft storage folder and start the broker; return once it answers.

        Idempotent while the broker runs. On failure everything made so far is stopped and the
        folder removed (the log tail is in the error message).
        """
        if self.running:
            return self
        _exit_on_sigterm()
        cp = classpath(self.jars, extra=self.extra_classpath)
        java = java_executable()
        if self._work_parent is not None:
            self._work_parent.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix="kafka-broker-", dir=self._work_parent))
        try:
            self._start(java, cp)
        except BaseException:
            self.stop()
            raise
        _LIVE.add(self)
        return self

    def _start(self, java: str, cp: str) -> None:
        assert self.root is not None
        self.port = free_port()
        self.controller_port = free_port()
        while self.controller_port == self.port:
            self.controller_port = free_port()
        self.log_dir.mkdir()
        self.data_dir.mkdir()
        log4j = self.root / "log4j.properties"
        loggers = "".join(f"log4j.logger.{name}={lvl}\n" for name, lvl in self.log_levels.items())
        log4j.write_text(_LOG4J.format(level="INFO", loggers=loggers))
        props = self.root / "server.properties"
        props.write_text(
            "".join(f"{key}={value}\n" for key, value in self.server_properties().items())
        )
        # java.io.tmpdir in the broker's folder: the native libraries the JVM unpacks (lz4,
        # snappy, zstd for compressed batches) go with the folder even when the JVM is killed.
        jvm = [
            java, self.heap, "-Xss1m", f"-Dlog4j.configuration=file:{log4j}",
            f"-Djava.io.tmpdir={self.root}", "-cp", cp,
        ]  # fmt: skip
        fmt = subprocess.run(
            [
                *jvm,
                "kafka.tools.StorageTool",
                "format",
                "--ignore-formatted",
                "--cluster-id",
                random_cluster_id(),
                "--config",
                str(props),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if fmt.returncode != 0:
            raise KafkaBrokerError(
                f"kafka-storage format failed (status {fmt.returncode}):\n"
                f"{(fmt.stdout + fmt.stderr)[-3000:]}"
            )
        self._jvm = jvm
        self._launch()

    def _launch(self) -> None:
        """Start the JVM on the formatted folder and return once it answers ``ApiVersions``."""
        assert self.root is not None and self._jvm is not None
        props = self.root / "server.properties"
        log = open(self.log_dir / "server.log", "ab")  # noqa: SIM115 (closed in stop())
        self._log_file = log
        self._process = subprocess.Popen(
            [*self._jvm, "-XX:+UseSerialGC", "kafka.Kafka", str(props)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise KafkaBrokerError(
                    f"the broker exited with status {self._process.returncode} while starting:"
                    f"\n{self.log_tail()}"
                )
            if api_versions_answer("127.0.0.1", self.port, timeout=2.0):
                return
            time.sleep(0.25)
        raise KafkaBrokerError(
            f"the broker did not answer on {self.bootstrap_servers} within "
            f"{self.startup_timeout:.0f} s:\n{self.log_tail()}"
        )

    def restart(
        self, *, kill: bool = False, while_down: Callable[[], None] | None = None
    ) -> KafkaBroker:
        """Stop the JVM and start it again on the same ports, data and log; return once it answers.

        Parameters
        ----------
        kill:
            SIGKILL (a crash) instead of SIGTERM (a controlled shutdown, waited for 20 s, then
            SIGKILL).
        while_down:
            Called once the JVM has exited and before it starts again.

        Raises
        ------
        KafkaBrokerError
            When the broker was not started, or does not come back (as :meth:`start`).
        """
        if self.root is None or self._jvm is None:
            raise KafkaBrokerError("the broker has not been started")
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL if kill else signal.SIGTERM)
            try:
                process.wait(timeout=20.0)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log, self._log_file = self._log_file, None
        if log is not None:
            log.close()  # type: ignore[attr-defined]
        if while_down is not None:
            while_down()
        self._launch()
        return self

    def log_tail(self, lines: int = 60) -> str:
        """The last ``lines`` lines of the broker's ``server.log`` (empty when there is none)."""
        if self.root is None:
            return ""
        path = self.log_dir / "server.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, keep_logs: bool = False, timeout: float = 20.0) -> Path | None:
        """Stop the broker and remove its folder; idempotent.

        The JVM gets SIGTERM (a controlled shutdown) and is killed with SIGKILL when it has not
        exited after ``timeout`` seconds.

        Parameters
        ----------
        keep_logs:
            Keep ``logs/`` (and ``server.properties``) instead of removing them; the data is
            removed either way.
        timeout:
            Seconds to wait after SIGTERM.

        Returns
        -------
        Path or None
            The folder that still holds the logs when ``keep_logs``, otherwise None.
        """
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log, self._log_file = self._log_file, None
        if log is not None:
            log.close()  # type: ignore[attr-defined]
        _LIVE.discard(self)
        root = self.root
        if root is None:
            return None
        if keep_logs:
            shutil.rmtree(root / "data", ignore_errors=True)
            return root
        shutil.rmtree(root, ignore_errors=True)
        self.root = None
        return None

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ tools
    def run_tool(
        self,
        main_class: str,
        *args: str,
        timeout: float = 60,
        check: bool = True,
        jvm_args: Sequence[str] = (),
    ) -> subprocess.CompletedProcess[str]:
        """Run one of Kafka's command-line tools from this broker's Kafka line in its own JVM.

        Parameters
        ----------
        main_class:
            The tool's main class, for example
            ``org.apache.kafka.tools.consumer.group.ConsumerGroupCommand``
            (``kafka-consumer-groups.sh``), ``org.apache.kafka.tools.GetOffsetShell``
            (``kafka-get-offsets.sh``) or ``org.apache.kafka.tools.TopicCommand``
            (``kafka-topics.sh``).
        *args:
            Its arguments, exactly as on the shell script's command line (pass
            :attr:`bootstrap_servers` yourself).
        timeout:
            Seconds before the tool is killed.
        check:
            Raise :class:`KafkaToolError` when the tool exits with a non-zero status.
        jvm_args:
            Extra JVM options (``-D...``) before the main class.

        Returns
        -------
        subprocess.CompletedProcess
            With text ``stdout`` (what the tool prints for a user) and ``stderr`` (its log,
            WARN and above).

        Raises
        ------
        KafkaToolError
            On a time-out, a non-zero exit status when ``check``, or when the broker has no
            folder (not started, or stopped: the tools' files live in its folder).
        """
        if self.root is None:
            raise KafkaToolError(f"{main_class}: the broker is not started")
        cp = classpath(self.jars)
        # The tools' files live in the broker's folder (removed with it): their log4j config
        # and whatever a JVM unpacks into java.io.tmpdir.
        log4j = self.root / "tools-log4j.properties"
        if not log4j.exists():
            log4j.write_text(_LOG4J.format(level="WARN", loggers="").replace("=INFO", "=WARN"))
        command = [
            java_executable(),
            TOOL_HEAP,
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            f"-Dlog4j.configuration=file:{log4j}",
            f"-Djava.io.tmpdir={self.root}",
            *jvm_args,
            "-cp",
            cp,
            main_class,
            *args,
        ]
        try:
            result = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise KafkaToolError(
                f"{main_class} {' '.join(args)} did not finish within {timeout} s"
            ) from exc
        if check and result.returncode != 0:
            raise KafkaToolError(
                f"{main_class} {' '.join(args)} exited with status {result.returncode}:\n"
                f"{(result.stdout + result.stderr)[-3000:]}"
            )
        return result

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        configs: Mapping[str, object] | None = None,
    ) -> None:
        """Create a topic (replication factor 1) with Kafka's ``TopicCommand``.

        Parameters
        ----------
        name:
            Topic name.
        partitions:
            Number of partitions.
        configs:
            Topic configs (``cleanup.policy`` and so on).

        Raises
        ------
        KafkaToolError
            When the topic cannot be created (it exists already, a bad config, ...).
        """
        args = [
            "--bootstrap-server",
            self.bootstrap_servers,
            "--create",
            "--topic",
            name,
            "--partitions",
            str(partitions),
            "--replication-factor",
            "1",
        ]
        for key, value in (configs or {}).items():
            args += ["--config", f"{key}={value}"]
        self.run_tool("org.apache.kafka.tools.TopicCommand", *args)


@contextlib.contextmanager
def running_broker(work_dir: str | Path | None = None, **options: object) -> Iterator[KafkaBroker]:
    """A started :class:`KafkaBroker`, stopped (and its folder removed) when the block exits.

    Parameters
    ----------
    work_dir:
        Parent of the broker's folder (the system's temporary folder by default).
    **options:
        Keyword arguments of :class:`KafkaBroker` (``configs``, ``heap``, ...).

    Yields
    ------
    KafkaBroker
        The running broker. Its logs are kept (and their folder named in the exception notes)
        when the block raises.
    """
    broker = KafkaBroker(work_dir, **options)  # type: ignore[arg-type]
    broker.start()
    try:
        yield broker
    except BaseException as exc:
        kept = broker.stop(keep_logs=True)
        if kept is not None:
            exc.add_note(f"Kafka broker logs kept in {kept / 'logs'}")
        raise
    else:
        broker.stop()
