"""Kafka 4.4.0 beside 4.2.1: the 4.4 broker fixture and its tools (the Streams app on
``group.protocol=streams`` runs in ``tests/e2e/test_streams_group.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.java import KafkaJarsMissingError
from devtools.kafka.streams_app import app_classpath

pytestmark = pytest.mark.kafka

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
