"""A live streams group (KIP-1071) on the Kafka 4.4 broker: describe it, set its configs, record
real tool outputs into ``tests/corpora/tool-samples/streams-group-4.4/``.

:func:`describe` runs the Admin-API dumper
``kafka/streams-group-describe/DescribeStreamsGroup.java`` on ``.kafka/lib-44`` through
:func:`lag.sources.streams_group_describe.describe_streams_group`;
:func:`describe_text` runs Kafka's ``StreamsGroupCommand`` (``kafka-streams-groups.sh``);
:func:`set_group_configs` runs Kafka's ``ConfigCommand`` on the group (``--entity-type groups``).

``python -m devtools.kafka.streams_group_live`` starts a 4.4 broker and a small application
(2 instances x 2 threads, 6 partitions, 1 standby) and rewrites the samples.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from devtools.kafka.broker import KafkaBroker, running_broker
from devtools.kafka.java import java_executable, kafka_lib, tmpdir_option
from devtools.paths import CORPORA, KAFKA_SOURCES
from lag.sources.streams_group_describe import (
    DUMPER_FILE,
    DescribedGroup,
    describe_streams_group,
    parse_describe_json,
)

__all__ = [
    "DUMPER",
    "SAMPLES",
    "DescribeWatcher",
    "describe",
    "describe_json",
    "describe_text",
    "set_group_configs",
]

DUMPER = KAFKA_SOURCES / "streams-group-describe" / DUMPER_FILE
SAMPLES = CORPORA / "tool-samples" / "streams-group-4.4"
STREAMS_GROUPS = "org.apache.kafka.tools.streams.StreamsGroupCommand"
CONFIGS = "org.apache.kafka.tools.ConfigCommand"


def describe(broker: KafkaBroker, group: str) -> DescribedGroup:
    """The group through Kafka 4.4's Admin client (raises ``LagInputError`` for a bad group)."""
    return describe_streams_group(
        broker.bootstrap_servers,
        group,
        kafka_jars=kafka_lib("lib-44"),
        dumper=DUMPER,
        java=java_executable(),
    )


def describe_json(broker: KafkaBroker, group: str) -> str:
    """The dumper's raw JSON line for ``group`` (an ``error`` document for a bad group)."""
    result = subprocess.run(
        [
            java_executable(),
            "-Xmx128m",
            tmpdir_option(),
            "-cp",
            str(kafka_lib("lib-44") / "*"),
            str(DUMPER),
            broker.bootstrap_servers,
            group,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return [line for line in result.stdout.splitlines() if line.startswith("{")][-1]


def describe_text(broker: KafkaBroker, group: str) -> str:
    """``kafka-streams-groups.sh --describe --group G --members --verbose`` output."""
    return broker.run_tool(
        STREAMS_GROUPS,
        "--bootstrap-server",
        broker.bootstrap_servers,
        "--describe",
        "--group",
        group,
        "--members",
        "--verbose",
    ).stdout


def set_group_configs(broker: KafkaBroker, group: str, configs: Mapping[str, object]) -> None:
    """Set group configs (``streams.num.standby.replicas`` ...) with Kafka's ``ConfigCommand``;
    the group need not exist yet."""
    broker.run_tool(
        CONFIGS,
        "--bootstrap-server",
        broker.bootstrap_servers,
        "--alter",
        "--entity-type",
        "groups",
        "--entity-name",
        group,
        "--add-config",
        ",".join(f"{k}={v}" for k, v in configs.items()),
    )


def record_samples(out: Path = SAMPLES) -> None:
    """Start a 4.4 broker and a streams-protocol application; write the describe outputs."""
    from devtools.kafka.streams_app import StreamsCluster

    out.mkdir(parents=True, exist_ok=True)
    group = "orders-sg"
    with running_broker(version="4.4") as broker:
        set_group_configs(broker, group, {"streams.num.standby.replicas": 1})
        with StreamsCluster(
            broker,
            group,
            kafka_version="4.4",
            configs={"group.protocol": "streams", "client.tag.zone": "z1"},
            partitions=6,
        ) as cluster:
            cluster.produce(600)
            for _ in range(2):
                cluster.add_instance(threads=2)
            cluster.wait_stable(timeout=180)
            doc = json.loads(describe_json(broker, group))
            (out / "admin-describe.json").write_text(json.dumps(doc, indent=1) + "\n")
            (out / "describe-members-verbose.txt").write_text(describe_text(broker, group))
            (out / "admin-describe-unknown-group.json").write_text(
                json.dumps(json.loads(describe_json(broker, "no-such-group")), indent=1) + "\n"
            )


def main(argv: list[str] | None = None) -> int:
    """``python -m devtools.kafka.streams_group_live [--out DIR]``: record the samples."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SAMPLES)
    record_samples(parser.parse_args(argv).out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


class DescribeWatcher:
    """The dumper in watch mode: a description of ``group`` every ``period_ms`` while the block
    runs, kept in a file; :meth:`descriptions` parses them (error documents are skipped: the
    group does not exist before its first member joins)."""

    def __init__(self, broker: KafkaBroker, group: str, path: Path, period_ms: int = 300) -> None:
        self.command = [
            java_executable(),
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            tmpdir_option(),
            "-Dlog4j.configuration=file:/dev/null",
            "-cp",
            str(kafka_lib("lib-44") / "*"),
            str(DUMPER),
            broker.bootstrap_servers,
            group,
            "30000",
            str(period_ms),
        ]
        self.path = path
        self._process: subprocess.Popen[bytes] | None = None
        self._out: Any = None

    def __enter__(self) -> DescribeWatcher:
        self._out = open(self.path, "wb")  # noqa: SIM115 (closed in __exit__)
        self._process = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=self._out, stderr=subprocess.DEVNULL
        )
        return self

    def __exit__(self, *exc: object) -> None:
        process, self._process = self._process, None
        if process is not None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._out is not None:
            self._out.close()

    def descriptions(self) -> list[DescribedGroup]:
        """Every description taken, in order (``observed_at_ms`` ascending)."""
        out = []
        for line in self.path.read_text().splitlines():
            if line.startswith("{") and '"error"' not in line[:12]:
                out.append(parse_describe_json(line, source=f"{self.path}"))
        return out
