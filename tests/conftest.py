"""Shared fixtures: Kafka's recorded decisions (``tests/corpora``), the one Kafka broker and the
one Spark session of a test run, the hypothesis profiles of the test tiers."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from devtools.paths import CORPORA

REPO = Path(__file__).resolve().parents[1]

# Hypothesis profiles of the test tiers (tests/tiers.py): "full" is hypothesis' defaults (make
# test, CI); "fast" draws fewer examples (make test-fast passes --hypothesis-profile=fast).
settings.register_profile("full", settings())
settings.register_profile("fast", max_examples=20)


@pytest.fixture(scope="session")
def kafka_corpora() -> Path:
    """``tests/corpora``: Kafka's recorded decisions, one folder per corpus.

    FAILS (never skips) when the folder is missing (``tests/corpora/PROVENANCE.md``).
    """
    if not CORPORA.is_dir():
        pytest.fail(f"{CORPORA} is missing: Kafka's recorded decisions belong in the repository")
    return CORPORA


@pytest.fixture(scope="session")
def kafka_broker(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """One real Kafka broker (KRaft, loopback) shared by every ``kafka`` test of the session.

    FAILS (never skips) with the reason when Kafka's jars or a JDK are missing (``make kafka``
    fetches them from Maven Central). Stopped at the end of the session; its logs are kept, and
    their folder printed, when a test failed.
    """
    from devtools.kafka.broker import KafkaBroker
    from devtools.kafka.java import KafkaJarsMissingError

    broker = KafkaBroker()
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
#: rebalance delay, Kafka's 1 s assignment interval, and every streams-group target computation
#: logged (``org.apache.kafka.coordinator.group`` at DEBUG in ``server.log``).
KAFKA_44_CONFIGS = {
    "group.streams.min.session.timeout.ms": 1000,
    "group.streams.session.timeout.ms": 6000,
    "group.streams.min.heartbeat.interval.ms": 500,
    "group.streams.heartbeat.interval.ms": 1000,
    "group.streams.initial.rebalance.delay.ms": 0,
    # Kafka's sticky assignor stays the default; a group may pick the plug-in (KIP-1357,
    # docs/plugins.md) with streams.assignor.name=lag_aware_sticky.
    "group.streams.assignors": "org.apache.kafka.coordinator.group.streams.assignor."
    "StickyTaskAssignor,io.streamsassign.assignor.LagAwareStickyGroupAssignor",
}
KAFKA_44_LOG_LEVELS = {"org.apache.kafka.coordinator.group": "DEBUG", "io.streamsassign": "DEBUG"}


@pytest.fixture(scope="session")
def kafka_broker_44(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """One real Kafka 4.4.0 broker (``.kafka/lib-44``) with streams groups, shared by every test
    of the session that needs one (:data:`KAFKA_44_CONFIGS`, :data:`KAFKA_44_LOG_LEVELS`).

    FAILS (never skips) when the 4.4 jars or a JDK are missing (``make kafka``). Stopped at the
    end of the session; its logs are kept, and their folder printed, when a test failed.
    """
    from devtools.kafka.broker import KafkaBroker
    from devtools.kafka.java import KafkaJarsMissingError
    from devtools.kafka.plugin_harness import plugin_jar

    broker = KafkaBroker(
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

    Every test that needs Spark (``tests/lag``, the end-to-end checks' ``e2e_spark``) shares it,
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
    java_options = " ".join(
        (f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}", *SPARK_TEST_JVM_OPTIONS)
    )
    session = builder.config("spark.driver.extraJavaOptions", java_options).getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    try:
        yield session
    finally:
        session.stop()


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
