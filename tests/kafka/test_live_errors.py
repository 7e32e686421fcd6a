"""``streams-lag snapshot`` and ``streams-assign plan/assign/compare --bootstrap-server`` on
groups that cannot give a cluster state, against the session's real broker: exit 2, one line
naming what and where, nothing written."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devtools.kafka.broker import KafkaBroker, free_port

pytestmark = pytest.mark.kafka


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _snapshot(bootstrap: str, app: str, out: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return _run(
        "lag.cli",
        "snapshot",
        "--bootstrap-server",
        bootstrap,
        "--application-id",
        app,
        "--out",
        str(out),
        "--timeout-ms",
        "5000",
        *more,
    )


def _assert_one_line(result: subprocess.CompletedProcess[str], *words: str) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def members(kafka_broker: KafkaBroker) -> Iterator[dict[str, Any]]:
    """Two live groups that are not Kafka Streams groups: a plain consumer group (protocol
    ``range``), and one whose member says it runs Kafka Streams' ``stream`` protocol but sends
    user data that is no ``SubscriptionInfo``."""
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    from kafka import KafkaConsumer

    class GarbageStream(RangePartitionAssignor):  # type: ignore[misc]
        name = "stream"

        @classmethod
        def metadata(cls, topics: Any) -> Any:
            return ConsumerProtocolSubscription(0, list(topics), b"\x00\x00\x00\x63garbage")

    kafka_broker.create_topic("live-errors-input", partitions=2)
    consumers = {
        "plain": KafkaConsumer(
            "live-errors-input",
            bootstrap_servers=kafka_broker.bootstrap_servers,
            group_id="live-errors-plain",
        ),
        "garbage": KafkaConsumer(
            "live-errors-input",
            bootstrap_servers=kafka_broker.bootstrap_servers,
            group_id="live-errors-garbage",
            partition_assignment_strategy=[GarbageStream],
        ),
    }
    try:
        deadline = time.monotonic() + 60
        while any(not c.assignment() for c in consumers.values()):
            assert time.monotonic() < deadline, "the consumers never got an assignment"
            for consumer in consumers.values():
                consumer.poll(timeout_ms=200)
        yield consumers
    finally:
        for consumer in consumers.values():
            consumer.close()


def test_no_such_group(kafka_broker: KafkaBroker, members: Any, tmp_path: Path) -> None:
    out = tmp_path / "cluster.json"
    line = _assert_one_line(
        _snapshot(kafka_broker.bootstrap_servers, "no-such-app", out), "no-such-app", "no"
    )
    assert kafka_broker.bootstrap_servers in line
    assert not out.exists()


def test_not_a_streams_group(kafka_broker: KafkaBroker, members: Any, tmp_path: Path) -> None:
    out = tmp_path / "cluster.json"
    _assert_one_line(
        _snapshot(kafka_broker.bootstrap_servers, "live-errors-plain", out),
        "live-errors-plain",
        "not a classic Kafka Streams group",
        "'range'",
    )
    assert not out.exists()


def test_undecodable_user_data(kafka_broker: KafkaBroker, members: Any, tmp_path: Path) -> None:
    out = tmp_path / "cluster.json"
    line = _assert_one_line(
        _snapshot(kafka_broker.bootstrap_servers, "live-errors-garbage", out),
        "live-errors-garbage",
        "member",
    )
    assert "SubscriptionInfo" in line or "version" in line
    assert not out.exists()


def test_broker_that_does_not_answer(tmp_path: Path) -> None:
    out = tmp_path / "cluster.json"
    where = f"127.0.0.1:{free_port()}"
    _assert_one_line(_snapshot(where, "any-app", out), where, "no broker answered")
    assert not out.exists()


@pytest.mark.parametrize("command", ["plan", "assign", "compare"])
def test_streams_assign_live_mode_says_the_same(
    kafka_broker: KafkaBroker, members: Any, command: str
) -> None:
    result = _run(
        "streams_assign.cli",
        command,
        "--bootstrap-server",
        kafka_broker.bootstrap_servers,
        "--application-id",
        "live-errors-plain",
        "--timeout-ms",
        "5000",
    )
    _assert_one_line(result, "live-errors-plain", "not a classic Kafka Streams group")
