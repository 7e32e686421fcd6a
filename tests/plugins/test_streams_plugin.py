"""The KIP-924 plug-in inside a real Kafka Streams application on the session's 4.2 broker.

Three instances of the project's Streams app (2 stream threads each, 1 standby) run with
``task.assignor.class`` set to the plug-in and its decision log on; one is killed with
``kill -9``. The group leader's plug-in must have decided every rebalance (its log line, no
fallback), each logged decision must equal the Python reference's on the logged input, and what
the processes run once the group is stable must be the last decision.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.plugin_harness import disagreements, plugin_jar, python_decision
from devtools.kafka.streams_app import StreamsCluster, app_classpath
from streams_assign.formats.cluster_state import parse_cluster_state

PLUGIN = "io.streamsassign.assignor.LagAwareStickyTaskAssignor"
LINE = re.compile(
    r"^\[(?P<time>[^\]]+)\] INFO .*lag_aware_sticky (?P<kind>input|decision): (?P<doc>\{.*\}) \("
)


def _logged(cluster: StreamsCluster) -> list[tuple[str, dict, dict]]:
    """(time, input, decision) of every decision any instance logged, oldest first."""
    found = []
    for instance in cluster.instances:
        pending: dict | None = None
        for text in instance.log_lines("lag_aware_sticky "):
            match = LINE.match(text)
            if match is None:
                continue
            doc = json.loads(match["doc"])
            if match["kind"] == "input":
                pending = doc
            elif pending is not None:
                found.append((match["time"], pending, doc))
                pending = None
    return sorted(found, key=lambda row: row[0])


def test_plugin_decides_every_rebalance_as_the_python_reference(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    cp = f"{plugin_jar()}{os.pathsep}{app_classpath()}"
    configs = {"task.assignor.class": PLUGIN, "lag.aware.sticky.log.decisions": "true"}
    with StreamsCluster(kafka_broker, "plugin-kip924", standbys=1, work_dir=tmp_path, cp=cp) as app:
        app.create_input_topics()
        app.produce(1500)
        for _ in range(3):
            app.add_instance(threads=2, configs=configs)
        app.wait_stable(timeout=240)
        app.instances[1].kill()
        stable = app.wait_stable(timeout=240)
        logs = [line for i in app.instances for line in i.log_lines("lag_aware_sticky")]
        decisions = _logged(app)
    assert not [line for line in logs if "falling back" in line], "the plug-in fell back"
    assert [line for line in logs if "lag_aware_sticky assigned" in line], "the plug-in never ran"
    assert decisions, "no decision was logged"
    print(f"{len(decisions)} plug-in decisions logged, each checked against the reference")
    for _, given, decided in decisions:
        problems = disagreements(python_decision(parse_cluster_state(given)), decided)
        assert problems == [], problems
    last = decisions[-1][2]["clients"]
    assert set(stable) == set(last) and len(stable) == 2
    for pid, runs in stable.items():
        assert sorted(runs.active) == sorted(last[pid]["active"])
        assert sorted(runs.standby) == sorted(last[pid]["standby"])
