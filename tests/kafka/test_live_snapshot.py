"""``streams-lag snapshot`` and ``streams-assign assign/plan --bootstrap-server`` against a real
Kafka Streams application on the session's broker: two instances of one thread each, one
standby, JMX on loopback scraped by Kafka's JmxTool, as an operator would."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.e2e import _stable_now, scrape_metrics, wait_caught_up
from devtools.kafka.streams_app import StreamsCluster

pytestmark = pytest.mark.kafka


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.fixture(scope="module")
def app(
    kafka_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("live")
    cluster = StreamsCluster(
        kafka_broker, "live-snapshot", standbys=1, acceptable_recovery_lag=100, jmx=True
    )
    try:
        cluster.create_input_topics()
        for _ in range(2):
            cluster.add_instance(threads=1)
        _stable_now(cluster, 2, 240)
        cluster.produce(400)
        _stable_now(cluster, 2, 240)
        wait_caught_up(cluster)
        _stable_now(cluster, 2, 60)
        metrics = scrape_metrics(cluster, folder)
        (folder / "app.properties").write_text(
            "num.standby.replicas=1\nacceptable.recovery.lag=100\nsession.timeout.ms=12000\n"
        )
        out = folder / "cluster.json"
        snapshot = _run(
            "lag.cli", "snapshot",
            "--bootstrap-server", kafka_broker.bootstrap_servers,
            "--application-id", "live-snapshot",
            "--streams-config", str(folder / "app.properties"),
            "--metrics", *map(str, metrics),
            "--state-dirs", *(str(i.state_dir) for i in cluster.instances),
            "--out", str(out),
        )  # fmt: skip
        assign = _run(
            "streams_assign.cli", "assign", "--json",
            "--bootstrap-server", kafka_broker.bootstrap_servers,
            "--application-id", "live-snapshot",
            "--streams-config", str(folder / "app.properties"),
            "--metrics", *map(str, metrics),
        )  # fmt: skip
        victim = cluster.instances[0].process_id
        plan = _run(
            "streams_assign.cli", "plan", "--json", "--assignor", "high_availability",
            "--kill", victim,
            "--bootstrap-server", kafka_broker.bootstrap_servers,
            "--application-id", "live-snapshot",
            "--streams-config", str(folder / "app.properties"),
            "--metrics", *map(str, metrics),
        )  # fmt: skip
        yield {
            "cluster": cluster,
            "snapshot": snapshot,
            "out": out,
            "assign": assign,
            "plan": plan,
            "own": {i.process_id: i.assignment() for i in cluster.running_instances()},
        }
    finally:
        cluster.close()


def test_snapshot_is_the_groups_state(app: dict[str, Any]) -> None:
    assert app["snapshot"].returncode == 0, app["snapshot"].stderr
    document = json.loads(app["out"].read_text())
    own = app["own"]
    assert {c["id"] for c in document["clients"]} == set(own)
    stateful = set(document["stateful_tasks"])
    assert stateful == {f"{s}_{p}" for s in (1, 2) for p in range(4)}
    for client in document["clients"]:
        reported = own[client["id"]]
        assert client["capacity"] == 1
        assert set(client["prev_active"]) == set(reported.active)
        assert set(client["prev_standby"]) == set(reported.standby) & stateful
        for task in reported.standby & stateful:
            assert client["task_lags"][task] == 0  # caught up, read from the restore consumer
    assert document["configs"]["num_standby_replicas"] == 1
    assert document["configs"]["acceptable_recovery_lag"] == 100
    assert "max.warmup.replicas=2 (Kafka's default)" in document["description"]
    assert "max.warmup.replicas = 2 (Kafka's default; not given)" in app["snapshot"].stderr
    assert "metrics" in app["snapshot"].stderr  # the provenance table names its sources


def test_assign_from_the_live_cluster_equals_assign_from_the_snapshot(
    app: dict[str, Any],
) -> None:
    assert app["assign"].returncode == 0, app["assign"].stderr
    from_file = _run("streams_assign.cli", "assign", "--json", str(app["out"]))
    assert from_file.returncode == 0, from_file.stderr
    live = json.loads(app["assign"].stdout)
    assert live["clients"] == json.loads(from_file.stdout)["clients"]


def test_plan_from_the_live_cluster(app: dict[str, Any]) -> None:
    assert app["plan"].returncode == 0, app["plan"].stderr
    plan = json.loads(app["plan"].stdout)
    assert "live-snapshot@" in json.dumps(plan)
    # The crash is detected after the application's session.timeout.ms, from its properties.
    assert '"detection_ms": 12000' in json.dumps(plan)
