"""The real Kafka broker helper: KRaft start, topics, Kafka's tools, clean stop."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from devtools.kafka.broker import KafkaBroker, KafkaToolError
from devtools.kafka.java import KafkaJarsMissingError

pytestmark = pytest.mark.kafka

TOPICS = "org.apache.kafka.tools.TopicCommand"
OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
PERF = "org.apache.kafka.tools.ProducerPerformance"


def test_created_topic_has_its_partitions_and_configs(kafka_broker: KafkaBroker) -> None:
    kafka_broker.create_topic(
        "broker-test-compacted", partitions=3, configs={"cleanup.policy": "compact"}
    )
    out = kafka_broker.run_tool(
        TOPICS,
        "--bootstrap-server",
        kafka_broker.bootstrap_servers,
        "--describe",
        "--topic",
        "broker-test-compacted",
    ).stdout
    assert "PartitionCount: 3" in out
    assert "cleanup.policy=compact" in out
    assert len(re.findall(r"Partition: \d+\s+Leader: 1", out)) == 3


def test_get_offsets_counts_the_records_produced(kafka_broker: KafkaBroker) -> None:
    kafka_broker.create_topic("broker-test-offsets", partitions=1)
    kafka_broker.run_tool(
        PERF,
        "--topic",
        "broker-test-offsets",
        "--num-records",
        "25",
        "--record-size",
        "8",
        "--throughput",
        "-1",
        "--producer-props",
        f"bootstrap.servers={kafka_broker.bootstrap_servers}",
        "acks=all",
    )
    out = kafka_broker.run_tool(
        OFFSETS,
        "--bootstrap-server",
        kafka_broker.bootstrap_servers,
        "--topic",
        "broker-test-offsets",
    ).stdout
    assert out.split() == ["broker-test-offsets:0:25"]


def test_failing_tool_raises_with_its_output(kafka_broker: KafkaBroker) -> None:
    with pytest.raises(KafkaToolError, match="no-such-topic"):
        kafka_broker.run_tool(
            TOPICS,
            "--bootstrap-server",
            kafka_broker.bootstrap_servers,
            "--describe",
            "--topic",
            "no-such-topic",
        )


def test_missing_jars_fail_with_make_kafka_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMS_ASSIGN_KAFKA_HOME", str(tmp_path))
    broker = KafkaBroker(tmp_path)
    with pytest.raises(KafkaJarsMissingError, match="make kafka"):
        broker.start()
    assert not broker.running
    assert list(tmp_path.iterdir()) == []


def test_stop_kills_the_jvm_and_keeps_only_logs_when_asked(tmp_path: Path) -> None:
    broker = KafkaBroker(tmp_path).start()
    pid = broker._process.pid  # type: ignore[union-attr]
    assert broker.running
    kept = broker.stop(keep_logs=True)
    assert kept is not None and (kept / "logs" / "server.log").stat().st_size > 0
    assert not (kept / "data").exists()
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    assert broker.stop() is None  # idempotent: nothing left to stop
    assert not broker.running
