"""Capture the ``DescribeGroups`` bytes of a real classic Kafka Streams group, for the corpus.

Runs the repository's Streams application (:mod:`devtools.kafka.streams_app`) against a fresh
broker: two instances of two threads (``client.tag.zone`` ``a`` / ``b``, an
``application.server`` each, one standby), records until every task has state, then a third
instance of one thread (zone ``c``). After each stable assignment the group is described and
every member's raw metadata and assignment are written as hex beside what the application
itself reports (its process id file, each thread's tasks, its store positions), so the tests can
check the decoded bytes against facts that do not come from the decoder.

Usage (from the repository root)::

    python -m devtools.kafka.streams_user_data OUT.json [--kafka 4.2|4.3|4.4]

``4.3`` runs Kafka Streams of ``.kafka/lib-next``; ``4.4`` needs kafka-streams 4.4.0 in the
local Maven repository (``mvn dependency:get -Dartifact=org.apache.kafka:kafka-streams:4.4.0``)
and the kafka-clients 4.4.0 of ``.kafka/lib-gc``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from devtools.kafka.broker import running_broker
from devtools.kafka.java import kafka_lib
from devtools.kafka.streams_app import (
    StreamsCluster,
    StreamsInstance,
    app_classpath,
    app_classpath_next,
)
from lag.sources.streams_group_state import decode_members, describe_group

APPLICATION_ID = "userdata-app"
RECORDS = 400


def classpath_44() -> str:
    """The application on kafka-streams 4.4.0 (local Maven repository) and kafka-clients 4.4.0
    (``.kafka/lib-gc``), then ``.kafka/lib`` without its own kafka-streams / kafka-clients."""
    compiled = app_classpath().split(os.pathsep, 1)[0]
    streams = (
        Path.home() / ".m2/repository/org/apache/kafka/kafka-streams/4.4.0/kafka-streams-4.4.0.jar"
    )
    clients = kafka_lib("lib-gc") / "kafka-clients-4.4.0.jar"
    for jar in (streams, clients):
        if not jar.is_file():
            raise FileNotFoundError(f"{jar} is missing (see this module's docstring)")
    replaced = ("kafka-streams-", "kafka-clients-")
    base = [j for j in sorted(kafka_lib("lib").glob("*.jar")) if not j.name.startswith(replaced)]
    return os.pathsep.join([compiled, str(streams), str(clients), *map(str, base)])


def _thread_tasks(instance: StreamsInstance) -> dict[str, dict[str, list[str]]]:
    current = instance.assignment()
    assert current is not None
    return {
        name: {"active": sorted(active), "standby": sorted(standby)}
        for name, (active, standby) in current.threads.items()
    }


def snapshot(cluster: StreamsCluster, label: str) -> dict[str, Any]:
    """Describe the group once the application is stable and its reports are quiet."""
    cluster.wait_stable(timeout=300, quiet_ms=5000)
    before = {i.name: _thread_tasks(i) for i in cluster.running_instances()}
    group = describe_group(cluster.broker.bootstrap_servers, cluster.application_id, 30_000)
    after = {i.name: _thread_tasks(i) for i in cluster.running_instances()}
    if before != after or group.state != "Stable":
        raise RuntimeError(f"{label}: the group moved while it was described")
    decode_members(group)  # every member decodes (the tests check what to)
    return {
        "label": label,
        "group_state": group.state,
        "protocol_type": group.protocol_type,
        "protocol": group.protocol,
        "members": [
            {
                "member_id": m.member_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "metadata_hex": m.metadata.hex(),
                "assignment_hex": m.assignment.hex(),
            }
            for m in group.members
        ],
        "app_reports": {
            i.name: {
                "threads": after[i.name],
                "positions": {
                    store: {str(p): list(v) for p, v in parts.items()}
                    for store, parts in i.positions().items()
                },
            }
            for i in cluster.running_instances()
        },
    }


def capture(kafka: str) -> dict[str, Any]:
    """Run the scenario of this module's docstring on the given Kafka Streams line."""
    cp = {"4.2": None, "4.3": app_classpath_next, "4.4": classpath_44}[kafka]
    with running_broker() as broker:
        cluster = StreamsCluster(
            broker, APPLICATION_ID, standbys=1, cp=None if cp is None else cp()
        )
        with cluster:
            cluster.create_input_topics()
            cluster.produce(RECORDS)
            for n, zone in enumerate(("a", "b"), start=1):
                cluster.add_instance(
                    threads=2,
                    configs={"client.tag.zone": zone, "application.server": f"host-{n}:{7000 + n}"},
                )
            first = snapshot(cluster, "two instances")
            cluster.add_instance(
                threads=1, configs={"client.tag.zone": "c", "application.server": "host-3:7003"}
            )
            time.sleep(2)
            second = snapshot(cluster, "after a third instance joined")
            instances = [
                {
                    "name": i.name,
                    "threads": i.threads,
                    "configs": i.configs,
                    "process_metadata_file": json.loads(
                        (
                            i.state_dir / APPLICATION_ID / "kafka-streams-process-metadata"
                        ).read_text()
                    ),
                }
                for i in cluster.instances
            ]
            topology = cluster.topology_file.read_text()
            jars = cluster.cp
    version = next(j.name for j in _jars(jars) if j.name.startswith("kafka-streams-"))
    return {
        "kafka_streams_jar": version,
        "application_id": APPLICATION_ID,
        "records_per_input_topic": RECORDS,
        "standbys": 1,
        "instances": instances,
        "topology": topology,
        "snapshots": [first, second],
    }


def _jars(cp: str) -> list[Path]:
    """The jars of a class path in order, ``dir/*`` entries expanded."""
    out: list[Path] = []
    for entry in cp.split(os.pathsep):
        path = Path(entry)
        out += sorted(path.parent.glob("*.jar")) if path.name == "*" else [path]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--kafka", choices=("4.2", "4.3", "4.4"), default="4.2")
    args = parser.parse_args()
    doc = capture(args.kafka)
    args.out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
