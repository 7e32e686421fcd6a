"""``streams-lag snapshot`` and ``streams-assign assign|plan --bootstrap-server`` against a live
streams group (KIP-1071) on the session's Kafka 4.4 broker: the project's Streams app on
``group.protocol=streams``, three instances of one thread, one standby (one thread each: the
sessions of a killed instance's threads can expire apart under load, 257 ms apart in one run,
each expiry its own computation, which ``plan --kill`` does not model). The snapshot equals what
``streams-lag streams-group`` writes, ``assign`` equals the twin on it, and ``plan --kill``'s
first computation equals the broker's target after the kill; then a stopped application (no
members) and an unknown application id exit 2 with one line and write nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.java import java_executable
from devtools.kafka.streams_app import StreamsCluster
from devtools.kafka.streams_group_live import describe, set_group_configs
from lag.sources.streams_group_describe import DescribedGroup
from streams_assign.assignors import assign_group
from streams_assign.formats.streams_group import load_streams_group

pytestmark = pytest.mark.kafka

APP = "snapshot-streams-group"
ROOT = Path(__file__).resolve().parents[2]


def _run(cwd: Path, module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, from a folder of its own (the reader finds Kafka 4.4's
    jars and its dumper in the checkout), with the JDK the fixtures use on ``PATH``."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(java_executable()).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
        env=env,
    )


def _stable(broker: KafkaBroker, processes: set[str], after_epoch: int = -1) -> DescribedGroup:
    """The group once the broker has it Stable on a target newer than ``after_epoch``, with the
    members of exactly ``processes`` holding their targets."""
    deadline = time.monotonic() + 120
    while True:
        group = describe(broker, APP)
        if (
            group.state == "Stable"
            and group.target_assignment_epoch > after_epoch
            and {m.process_id for m in group.members} == processes
            and all(m.assignment == m.target_assignment for m in group.members)
        ):
            return group
        if time.monotonic() > deadline:
            raise AssertionError(f"group {APP} not stable on the broker: {group}")
        time.sleep(0.5)


def _without_moments(document: dict[str, Any]) -> dict[str, Any]:
    """A streams-group state less the moment it was described (two reads differ only there)."""
    meta = dict(document["meta"])
    meta.pop("observed_at_ms")
    meta["offsets_report"] = {
        m: {k: v for k, v in r.items() if k != "unchanged_since_ms"}
        for m, r in meta["offsets_report"].items()
    }
    return {**document, "meta": meta}


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_one_command_each_on_a_live_streams_group(
    kafka_broker_44: KafkaBroker, tmp_path: Path
) -> None:
    live = ["--bootstrap-server", kafka_broker_44.bootstrap_servers, "--application-id", APP]
    set_group_configs(
        kafka_broker_44,
        APP,
        {"streams.num.standby.replicas": 1, "streams.session.timeout.ms": 6000},
    )
    with StreamsCluster(
        kafka_broker_44,
        APP,
        kafka_version="4.4",
        configs={"group.protocol": "streams"},
        partitions=4,
    ) as cluster:
        cluster.produce(200)
        for _ in range(3):
            cluster.add_instance(threads=1)
        cluster.wait_stable(timeout=240, quiet_ms=2000)
        before = _stable(kafka_broker_44, {i.process_id for i in cluster.running_instances()})

        snapshot = _run(tmp_path, "lag.cli", "snapshot", *live, "--out", "snapshot.json")
        assert snapshot.returncode == 0, snapshot.stderr
        assert "a streams-group state (KIP-1071" in snapshot.stderr
        reader = _run(tmp_path, "lag.cli", "streams-group", *live, "--out", "reader.json")
        assert reader.returncode == 0, reader.stderr
        written = json.loads((tmp_path / "snapshot.json").read_text())
        assert _without_moments(written) == _without_moments(
            json.loads((tmp_path / "reader.json").read_text())
        )
        state = load_streams_group(tmp_path / "snapshot.json")
        assert {m.member_id for m in state.members} == {m.member_id for m in before.members}

        assign = _run(tmp_path, "streams_assign.cli", "assign", "--json", *live)
        assert assign.returncode == 0, assign.stderr
        assert json.loads(assign.stdout) == assign_group(state, "streams_group_sticky").to_json()

        victim = cluster.instances[0]
        plan = _run(
            tmp_path, "streams_assign.cli", "plan", "--json", *live, "--kill", victim.process_id
        )
        assert plan.returncode == 0, plan.stderr
        predicted = json.loads(plan.stdout)["computations"][0]["target"]
        victim.kill()
        survivors = {i.process_id for i in cluster.running_instances()}
        after = _stable(kafka_broker_44, survivors, before.target_assignment_epoch)
        real = {
            m.member_id: {
                "active": {s: list(p) for s, p in m.target_assignment.active.items()},
                "standby": {s: list(p) for s, p in m.target_assignment.standby.items()},
            }
            for m in after.members
        }
        assert {
            m: {"active": t["active"], "standby": t["standby"]} for m, t in predicted.items()
        } == real
        for instance in cluster.running_instances():  # a clean close leaves the group at once
            instance.stop()
        deadline = time.monotonic() + 60
        while describe(kafka_broker_44, APP).members:
            assert time.monotonic() < deadline, "the stopped members did not leave"
            time.sleep(0.5)

    empty = _run(tmp_path, "lag.cli", "snapshot", *live, "--out", "empty.json")
    assert f"streams group {APP!r}" in _one_error_line(empty) and "has no members" in empty.stderr
    assert not (tmp_path / "empty.json").exists()
    unknown = live[:-1] + ["no-such-application"]
    missing = _run(tmp_path, "lag.cli", "snapshot", *unknown, "--out", "missing.json")
    assert "no group 'no-such-application'" in _one_error_line(missing)
    assert not (tmp_path / "missing.json").exists()
