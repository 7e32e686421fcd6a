"""Shared fixtures: Kafka's recorded decisions (``tests/corpora``), the one Kafka broker and the
one Spark session of a test run, the hypothesis profiles of the test tiers, and the end-of-run
check that no process the tests started is still running and no temp file they made is left."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from devtools.paths import CORPORA

REPO = Path(__file__).resolve().parents[1]

# Hypothesis profiles of the test tiers (tests/tiers.py): "full" is hypothesis' defaults (make
# test, CI; loaded unless --hypothesis-profile names another); "fast" draws fewer examples (make
# test-fast passes --hypothesis-profile=fast). Neither checks wall time: hypothesis' 200 ms
# deadline per example and its too_slow health check (1 s to generate inputs) are assertions on
# wall time, which a shared 2-core machine under load breaks at random (a faust codec test failed
# too_slow at load average 44 in the flake hunt, docs/reliability.md).
WALL_TIME_OFF = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("full", WALL_TIME_OFF)
settings.register_profile("fast", WALL_TIME_OFF, max_examples=20)
settings.load_profile("full")


@pytest.fixture(scope="session")
def kafka_corpora() -> Path:
    """``tests/corpora``: Kafka's recorded decisions, one folder per corpus.

    FAILS (never skips) when the folder is missing (``tests/corpora/PROVENANCE.md``).
    """
    if not CORPORA.is_dir():
        pytest.fail(f"{CORPORA} is missing: Kafka's recorded decisions belong in the repository")
    return CORPORA


@pytest.fixture(scope="session")
def kafka_broker(  # type: ignore[no-untyped-def]
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
):
    """One real Kafka broker (KRaft, loopback) shared by every ``kafka`` test of the session.

    FAILS (never skips) with the reason when Kafka's jars or a JDK are missing (``make kafka``
    fetches them from Maven Central). Stopped at the end of the session; its logs are kept, and
    their folder printed, when a test failed: its folder is in pytest's ``tmp_path`` base
    (kept for pytest's last three runs, like a failed test's ``tmp_path``), not in the
    session's temp folder, whose leftovers fail the run.
    """
    from devtools.kafka.broker import KafkaBroker
    from devtools.kafka.java import KafkaJarsMissingError

    broker = KafkaBroker(tmp_path_factory.mktemp("kafka-broker"))
    try:
        broker.start()
    except KafkaJarsMissingError as exc:
        pytest.fail(f"the kafka tests need Apache Kafka's jars: {exc}", pytrace=False)
    try:
        yield broker
    finally:
        kept = broker.stop(keep_logs=request.session.testsfailed > 0)
        if kept is not None:
            print(f"\nKafka broker logs kept in {kept / 'logs'}")


#: Broker configs of the one Kafka 4.4 broker of a test run: streams groups (KIP-1071) with short
#: session timeouts (scenario B waits for one to expire), heartbeats every second, no initial
#: rebalance delay, Kafka's 1 s assignment interval, a long task-offset report interval, and
#: every streams-group target computation
#: logged (``org.apache.kafka.coordinator.group`` at DEBUG in ``server.log``).
KAFKA_44_CONFIGS = {
    "group.streams.min.session.timeout.ms": 1000,
    "group.streams.session.timeout.ms": 6000,
    "group.streams.min.heartbeat.interval.ms": 500,
    "group.streams.heartbeat.interval.ms": 1000,
    "group.streams.initial.rebalance.delay.ms": 0,
    # Members report task offsets when they join, whenever their reconciled assignment changed
    # and every interval (10 minutes here, so never within a test); the scenarios read every
    # report from the request log (KAFKA_44_LOG_LEVELS, docs/e2e.md).
    "group.streams.task.offset.interval.ms": 600_000,
    # Kafka's sticky assignor stays the default; a group may pick the plug-in (KIP-1357,
    # docs/plugins.md) with streams.assignor.name=lag_aware_sticky.
    "group.streams.assignors": "org.apache.kafka.coordinator.group.streams.assignor."
    "StickyTaskAssignor,io.streamsassign.assignor.LagAwareStickyGroupAssignor",
}
#: The coordinator's computations and members' states; the request logger writes every request
#: with its body (the streams heartbeats' task offsets, read by
#: ``lag.sources.streams_group_log.read_heartbeat_log``).
KAFKA_44_LOG_LEVELS = {
    "org.apache.kafka.coordinator.group": "DEBUG",
    "io.streamsassign": "DEBUG",
    "kafka.request.logger": "DEBUG",
}


@pytest.fixture(scope="session")
def kafka_broker_44(  # type: ignore[no-untyped-def]
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
):
    """One real Kafka 4.4.0 broker (``.kafka/lib-44``) with streams groups, shared by every test
    of the session that needs one (:data:`KAFKA_44_CONFIGS`, :data:`KAFKA_44_LOG_LEVELS`).

    FAILS (never skips) when the 4.4 jars or a JDK are missing (``make kafka``). Stopped at the
    end of the session; its logs are kept, and their folder printed, when a test failed (in
    pytest's ``tmp_path`` base, as :func:`kafka_broker`'s).
    """
    from devtools.kafka.broker import KafkaBroker
    from devtools.kafka.java import KafkaJarsMissingError
    from devtools.kafka.plugin_harness import plugin_jar

    broker = KafkaBroker(
        tmp_path_factory.mktemp("kafka-broker-44"),
        version="4.4",
        configs=KAFKA_44_CONFIGS,
        log_levels=KAFKA_44_LOG_LEVELS,
        extra_classpath=[plugin_jar()],
    )
    try:
        broker.start()
    except KafkaJarsMissingError as exc:
        pytest.fail(f"the kafka tests need Apache Kafka 4.4's jars: {exc}", pytrace=False)
    try:
        yield broker
    finally:
        kept = broker.stop(keep_logs=request.session.testsfailed > 0)
        if kept is not None:
            print(f"\nKafka 4.4 broker logs kept in {kept / 'logs'}")


#: Settings of the one Spark session of a test run, for small inputs on a shared 2-core machine:
#: two shuffle partitions, no UI, a 512 MB driver heap, no adaptive re-planning and no
#: whole-stage code generation (on inputs of a few hundred rows, compiling each stage costs more
#: than running it), and a JVM that only JIT-compiles with C1 and collects with one GC thread.
#: The job's results do not depend on any of these; they halve the CPU the lag tests take.
SPARK_TEST_CONFIGS = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "512m",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
}
SPARK_TEST_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one Spark session (``local[2]``, :data:`SPARK_TEST_CONFIGS`) of the whole test run.

    Every test that needs Spark (``tests/lag``) shares it,
    so one JVM starts per run; stopped at the end of the session. FAILS (never skips) when
    PySpark is missing (``pip install -e '.[lag]'``).
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        pytest.fail(f"the spark tests need PySpark (pip install -e '.[lag]'): {exc}", pytrace=False)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers (the lag job's mapInArrow) on this interpreter, not ``python3`` on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from lag.spark.session import LOG_CONFIG

    builder = SparkSession.builder.master("local[2]").appName("streams-assign-tests")
    for key, value in SPARK_TEST_CONFIGS.items():
        builder = builder.config(key, value)
    # java.io.tmpdir: the session's temp folder (the native libraries the JVM unpacks, such as
    # lz4's and snappy's, are counted and removed with it).
    java_options = " ".join(
        (
            f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}",
            f"-Djava.io.tmpdir={tempfile.gettempdir()}",
            *SPARK_TEST_JVM_OPTIONS,
        )
    )
    session = builder.config("spark.driver.extraJavaOptions", java_options).getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    try:
        yield session
    finally:
        session.stop()
        stop_spark_gateway()


def stop_spark_gateway(timeout: float = 30.0) -> None:
    """Stop PySpark's gateway JVM, which outlives ``SparkSession.stop()``.

    PySpark starts the JVM with a pipe on its stdin and keeps it (and its Python workers) until
    the interpreter exits; closing the pipe ends it. Waited for; killed after ``timeout``
    seconds. The next session would start a new gateway.
    """
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return
    gateway.shutdown()
    process = getattr(gateway, "proc", None)
    if process is not None:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    SparkContext._gateway = None
    SparkContext._jvm = None


#: Fixtures that start something heavy, and the marker their tests get (``make test-fast``
#: deselects ``spark``, ``kafka`` and ``slow``): a JVM-backed Spark session, a Kafka broker, and
#: the JVMs that run Kafka's own assignors on Kafka's jars (``kafka_reference``: the classic
#: Streams assignors, ``kafka_groups``: consumer and Connect assignors, ``kafka_sticky``: the
#: KIP-1071 ``StickyTaskAssignor``). ``make test-fast`` needs neither a JDK nor ``.kafka``.
HEAVY_FIXTURES = {
    "spark": "spark",
    "kafka_broker": "kafka",
    "kafka_broker_44": "kafka",
    "kafka_reference": "kafka",
    "kafka_groups": "kafka",
    "kafka_sticky": "kafka",
    "kafka_plugin": "kafka",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a heavy fixture, so no test forgets its tier marker."""
    for item in items:
        for fixture, marker in HEAVY_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)


# -- every process the tests start is stopped -------------------------------------------------
#: Set in this process's environment when the session starts, so every process the tests start
#: (brokers, JVMs, Spark and its Python workers, app processes) inherits it, and can be found at
#: the end even when it was re-parented.
SESSION_MARK = "STREAMS_ASSIGN_TEST_SESSION"
#: Helpers of the Python runtime that end with pytest itself (not started by a test).
RUNTIME_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")
#: How long processes already told to stop may take to exit after the last test, seconds
#: (``STREAMS_ASSIGN_EXIT_GRACE_S`` sets another; the check's own test uses a short one).
EXIT_GRACE_S = float(os.environ.get("STREAMS_ASSIGN_EXIT_GRACE_S", "10"))


#: Set to the session's own temp folder when the session starts (see :func:`use_session_tmp`).
SESSION_TMP = "STREAMS_ASSIGN_TEST_TMPDIR"


def pytest_configure(config: pytest.Config) -> None:
    os.environ[SESSION_MARK] = f"{os.getpid()}-{uuid.uuid4().hex}"
    use_session_tmp()


def use_session_tmp() -> Path:
    """Give the session its own temp folder, so that what the tests leave there is this run's.

    A fresh ``streams-assign-tests-*`` folder in the system's temp folder becomes ``TMPDIR``
    (inherited by every program the tests start: Python helpers, app processes, Chromium) and
    Python's :data:`tempfile.tempdir`; ``SPARK_LOCAL_DIRS`` points Spark's ``blockmgr-*`` and
    ``spark-*`` folders there, and the JVMs the project's helpers start get it (or their own
    folder) as ``java.io.tmpdir``. pytest's own ``tmp_path`` base stays where pytest keeps it
    (``PYTEST_DEBUG_TEMPROOT`` is set to the system's temp folder): pytest manages it (it keeps
    the last three runs' folders) and it is not checked. Other sessions on the machine have
    folders of their own, so the check at the end counts only this run's.
    """
    system = os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()
    os.environ["PYTEST_DEBUG_TEMPROOT"] = system
    folder = Path(tempfile.mkdtemp(prefix="streams-assign-tests-", dir=system))
    os.environ[SESSION_TMP] = os.environ["TMPDIR"] = os.environ["SPARK_LOCAL_DIRS"] = str(folder)
    tempfile.tempdir = str(folder)
    return folder


def _proc_table() -> dict[int, tuple[int, str, bytes, str]]:
    """pid -> (parent pid, state, environment, command line) of every process readable."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        fields = stat.rsplit(")", 1)[1].split()
        command = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
        table[int(entry.name)] = (int(fields[1]), fields[0], environ, command)
    return table


def leftover_processes(mark: str, root: int) -> dict[int, str]:
    """Live processes started under this session: pid -> command line.

    A process counts when its environment holds ``SESSION_MARK=mark`` (every program started
    from the session inherits it) or it descends from ``root`` (children forked without a new
    program); ``root`` itself, exited ones awaiting their parent (zombies) and
    :data:`RUNTIME_HELPERS` do not.
    """
    table = _proc_table()
    marker = f"{SESSION_MARK}={mark}".encode()

    def descends(pid: int) -> bool:
        seen = set()
        while pid in table and pid not in seen:
            seen.add(pid)
            pid = table[pid][0]
            if pid == root:
                return True
        return False

    found = {}
    for pid, (_, state, environ, command) in table.items():
        if pid == root or state == "Z" or any(h in command for h in RUNTIME_HELPERS):
            continue
        if marker in environ.split(b"\0") or descends(pid):
            found[pid] = command
    return found


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run, naming them, when processes the tests started still run at the end, or
    when they left anything in the session's temp folder.

    Every session fixture has been torn down by now. Processes go first (a running process may
    still write its files): see :func:`check_processes`; then :func:`check_temp_folder`.
    """
    problems = check_processes() + check_temp_folder()
    if not problems:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("\n".join(problems), red=True)
    else:
        print("\n".join(problems), file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def leftover_temp(folder: Path) -> list[str]:
    """What is left in ``folder``: one line per entry, with the files a folder holds."""
    lines = []
    for entry in sorted(folder.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            files = sum(1 for f in entry.rglob("*") if not f.is_dir())
            lines.append(f"{entry.name}/ ({files} files)")
        else:
            lines.append(entry.name)
    return lines


def check_temp_folder() -> list[str]:
    """Lines naming what the tests left in the session's temp folder (none: nothing left).

    The folder (:func:`use_session_tmp`) is removed either way, so the run leaves nothing in
    the system's temp folder.
    """
    folder = os.environ.get(SESSION_TMP)
    if folder is None or not Path(folder).is_dir():
        return []
    left = leftover_temp(Path(folder))
    shutil.rmtree(folder, ignore_errors=True)
    if not left:
        return []
    return [
        f"{len(left)} temp file(s)/folder(s) left by the tests in {folder} (now removed):",
        *(f"  {line}" for line in left),
    ]


def check_processes() -> list[str]:
    """Lines naming the processes the tests started that still run (none: all stopped).

    Processes get :data:`EXIT_GRACE_S` to finish exiting; those still running are listed and
    killed (by their process ids) so that they do not outlive the run.
    """
    mark = os.environ.get(SESSION_MARK)
    if mark is None:
        return []
    deadline = time.monotonic() + EXIT_GRACE_S
    left = leftover_processes(mark, os.getpid())
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = leftover_processes(mark, os.getpid())
    if not left:
        return []
    lines = [f"{len(left)} process(es) started by the tests still running at the end:"]
    lines += [f"  pid {pid}: {command[:300]}" for pid, command in sorted(left.items())]
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return lines
