"""The KIP-1357 plug-in inside a real Kafka 4.4 broker (the session's ``kafka_broker_44``).

The broker lists Kafka's ``StickyTaskAssignor`` first (the default of every other group) and
the plug-in second; this group picks the plug-in (``streams.assignor.name``). Three instances
of the project's Streams app (``group.protocol=streams``, one stream thread each, 1 standby)
run; one is killed with ``kill -9``. The plug-in must have computed the group's targets (its log
line in ``server.log``), each decision it logged must equal the Python streams-group form's on
the logged input, and what the processes run once stable must be the last decision.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.plugin_harness import group_disagreements, python_group_decision
from devtools.kafka.streams_app import StreamsCluster

GROUP = "plugin-kip1357"
CONFIG_COMMAND = "org.apache.kafka.tools.ConfigCommand"
LINE = re.compile(r"lag_aware_sticky group (?P<kind>input|decision): (?P<doc>\{.*\}) \(")


def _decisions(broker: KafkaBroker, processes: set[str]) -> list[tuple[dict, dict]]:
    """(input, decision) pairs the plug-in logged for a group of these processes, in order."""
    found, pending = [], None
    for text in (broker.log_dir / "server.log").read_text(errors="replace").splitlines():
        match = LINE.search(text)
        if match is None:
            continue
        doc = json.loads(match["doc"])
        if match["kind"] == "input":
            mine = {m["process_id"] for m in doc["members"]} <= processes
            pending = doc if mine and doc["members"] else None
        elif pending is not None:
            found.append((pending, doc))
            pending = None
    return found


def test_broker_plugin_decides_as_the_python_streams_group_form(
    kafka_broker_44: KafkaBroker, tmp_path: Path
) -> None:
    kafka_broker_44.run_tool(
        CONFIG_COMMAND,
        "--bootstrap-server",
        kafka_broker_44.bootstrap_servers,
        "--entity-type",
        "groups",
        "--entity-name",
        GROUP,
        "--alter",
        "--add-config",
        "streams.assignor.name=lag_aware_sticky",
    )
    with StreamsCluster(
        kafka_broker_44,
        GROUP,
        kafka_version="4.4",
        configs={"group.protocol": "streams"},
        partitions=2,
        standbys=1,
        work_dir=tmp_path,
    ) as app:
        app.create_input_topics()
        app.produce(600)
        for _ in range(3):
            app.add_instance(threads=1)
        app.wait_stable(timeout=180, quiet_ms=2000)
        app.instances[0].kill()
        stable = app.wait_stable(timeout=180, quiet_ms=2000)
        processes = {i.process_id for i in app.instances}
    decisions = _decisions(kafka_broker_44, processes)
    assert decisions, "the plug-in logged no decision for the group"
    print(f"{len(decisions)} broker plug-in decisions, each checked against the reference")
    for given, decided in decisions:
        assert group_disagreements(python_group_decision(given), decided) == []
    last_input, last = decisions[-1]
    process_of = {m["member_id"]: m["process_id"] for m in last_input["members"]}
    assert set(process_of.values()) == set(stable)
    for pid, runs in stable.items():
        members = [m for m, p in process_of.items() if p == pid]

        def tasks(kind: str, members: list[str] = members) -> list[str]:
            decided = [last["members"][m][kind] for m in members]
            return sorted(f"{s}_{p}" for one in decided for s, ps in one.items() for p in ps)

        assert sorted(runs.active) == tasks("active")
        assert sorted(runs.standby) == tasks("standby")
