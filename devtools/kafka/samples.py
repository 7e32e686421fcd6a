"""Regenerate the real tool samples: Kafka's own tools run against a real Streams application.

``python -m devtools.kafka.samples DEST`` starts a broker and three instances of the
Streams application (:mod:`.streams_app`, application id ``orders-app``, 2 stream threads and
1 standby each, fixed process ids), produces input, waits until the assignment is stable and
every standby has caught up, stops one instance cleanly (so its ``.checkpoint`` files are
written) and writes into ``DEST``:

==================================  ==========================================================
``consumer-groups-members-verbose``  ``kafka-consumer-groups.sh --describe --members --verbose``
``consumer-groups-members.txt``      ``kafka-consumer-groups.sh --describe --members``
``consumer-groups-describe.txt``     ``kafka-consumer-groups.sh --describe`` (offsets view)
``get-offsets-changelogs.txt``       ``kafka-get-offsets.sh --topic 'orders-app-.*-changelog'``
``topology.txt``                     ``Topology#describe()``
``state/``                           the stopped instance's state directory (checkpoints and
                                     ``kafka-streams-process-metadata``; RocksDB files left out)
``VERSION``                          the Kafka version of the jars that produced them
==================================  ==========================================================

The group views are taken while all three instances run (before the clean stop).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from devtools.kafka.broker import running_broker
from devtools.kafka.e2e import CONSUMER_GROUPS, _get_offsets_text, wait_caught_up
from devtools.kafka.java import kafka_lib
from devtools.kafka.streams_app import StreamsCluster

__all__ = ["APPLICATION_ID", "PROCESS_IDS", "kafka_version", "main", "write_samples"]

APPLICATION_ID = "orders-app"
PROCESS_IDS = (
    "1c0ffee0-0000-4000-8000-000000000001",
    "1c0ffee0-0000-4000-8000-000000000002",
    "1c0ffee0-0000-4000-8000-000000000003",
)


def kafka_version() -> str:
    """Version of ``kafka-streams`` in ``.kafka/lib`` (from the jar's name)."""
    jars = sorted(kafka_lib().glob("kafka-streams-[0-9]*.jar"))
    return jars[0].name.removeprefix("kafka-streams-").removesuffix(".jar") if jars else "?"


def write_samples(dest: Path, records: int = 2000) -> list[Path]:
    """Produce every sample into ``dest`` (created; existing files replaced); return them."""
    dest.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def save(name: str, text: str) -> None:
        path = dest / name
        path.write_text(text)
        written.append(path)

    with running_broker() as broker:
        cluster = StreamsCluster(broker, APPLICATION_ID, topics_prefix="")
        try:
            cluster.create_input_topics()
            for process_id in PROCESS_IDS:
                cluster.add_instance(threads=2, process_id=process_id)
            cluster.wait_stable(240)
            cluster.produce(records)
            cluster.wait_stable(240)
            wait_caught_up(cluster)
            cluster.wait_stable(60)
            group = [
                "--bootstrap-server",
                broker.bootstrap_servers,
                "--describe",
                "--group",
                APPLICATION_ID,
            ]
            save(
                "consumer-groups-members-verbose.txt",
                broker.run_tool(CONSUMER_GROUPS, *group, "--members", "--verbose").stdout,
            )
            save(
                "consumer-groups-members.txt",
                broker.run_tool(CONSUMER_GROUPS, *group, "--members").stdout,
            )
            save("consumer-groups-describe.txt", broker.run_tool(CONSUMER_GROUPS, *group).stdout)
            save("get-offsets-changelogs.txt", _get_offsets_text(cluster))
            save("topology.txt", cluster.topology_file.read_text())
            stopped = cluster.instances[0]
            stopped.stop()
            state = dest / "state"
            shutil.rmtree(state, ignore_errors=True)
            shutil.copytree(
                stopped.state_dir,
                state,
                ignore=shutil.ignore_patterns("rocksdb", "*.lock", ".lock"),
            )
            written.append(state)
        finally:
            cluster.close()
    save("VERSION", f"Apache Kafka {kafka_version()} (jars from Maven Central, kafka/pom.xml)\n")
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m devtools.kafka.samples DEST``."""
    parser = argparse.ArgumentParser(prog="refresh-samples", description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--records", type=int, default=2000)
    args = parser.parse_args(argv)
    for path in write_samples(args.dest, args.records):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
