"""Kafka 4.4.0 beside 4.2.1: the 4.4 broker fixture, its tools, and the Streams app on
``group.protocol=streams`` (a member of a streams group, KIP-1071)."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.java import KafkaJarsMissingError
from devtools.kafka.streams_app import StreamsCluster, app_classpath

pytestmark = pytest.mark.kafka

STREAMS_GROUPS = "org.apache.kafka.tools.streams.StreamsGroupCommand"
FEATURES = "org.apache.kafka.tools.FeatureCommand"


def test_the_44_broker_runs_kafka_440_with_streams_groups(kafka_broker_44: KafkaBroker) -> None:
    log = (kafka_broker_44.log_dir / "server.log").read_text(errors="replace")
    assert "Kafka version: 4.4.0" in log
    props = kafka_broker_44.server_properties()
    assert props["group.coordinator.rebalance.protocols"] == "classic,consumer,streams"
    assert props["group.streams.session.timeout.ms"] == "6000"
    out = kafka_broker_44.run_tool(
        FEATURES, "--bootstrap-server", kafka_broker_44.bootstrap_servers, "describe"
    ).stdout
    streams = [line for line in out.splitlines() if line.startswith("Feature: streams.version")]
    assert len(streams) == 1 and "FinalizedVersionLevel: 1" in streams[0]


def test_an_unknown_kafka_version_is_refused() -> None:
    with pytest.raises(ValueError, match="'4.3'"):
        KafkaBroker(version="4.3")
    with pytest.raises(ValueError, match="'3.9'"):
        app_classpath("3.9")


def test_missing_44_jars_fail_with_make_kafka_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lib").mkdir()
    monkeypatch.setenv("STREAMS_ASSIGN_KAFKA_HOME", str(tmp_path))
    broker = KafkaBroker(tmp_path, version="4.4")
    with pytest.raises(KafkaJarsMissingError, match=r"lib-44.*make kafka"):
        broker.start()
    assert not broker.running


def test_the_app_on_44_jars_joins_a_streams_group(kafka_broker_44: KafkaBroker) -> None:
    with StreamsCluster(
        kafka_broker_44,
        "sg-broker44-app",
        kafka_version="4.4",
        configs={"group.protocol": "streams"},
        partitions=2,
    ) as cluster:
        assert cluster.cp.endswith("/.kafka/lib-44/*")
        cluster.create_input_topics()
        instance = cluster.add_instance(threads=1)
        running = cluster.wait_stable(timeout=120, quiet_ms=1000)
        assert sorted(running[instance.process_id].active) == [
            "0_0",
            "0_1",
            "1_0",
            "1_1",
            "2_0",
            "2_1",
        ]
        out = kafka_broker_44.run_tool(
            STREAMS_GROUPS,
            "--bootstrap-server",
            kafka_broker_44.bootstrap_servers,
            "--describe",
            "--group",
            "sg-broker44-app",
            "--members",
        ).stdout
        members = [line for line in out.splitlines() if line.startswith("sg-broker44-app ")]
        assert len(members) == 1 and instance.process_id in members[0]
        assert members[0].split(maxsplit=4)[4].rstrip() == "ACTIVE: 0:[0,1]; 1:[0,1]; 2:[0,1];"
