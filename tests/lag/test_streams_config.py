"""The application's properties file (``--streams-config``): Java's properties syntax, the
assignment configs taken from it, flags over the file, Kafka's defaults said out loud, and a bad
file or value refused with exit 2 before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lag.cli import main
from lag.sources.streams_config import parse_properties, read_properties, resolve_configs
from streams_assign.errors import LagInputError

#: A Kafka Streams application's properties file as operators write them: comments of both
#: kinds, the three separators, blanks around them, continuations, a JAAS line over three lines.
APP_PROPERTIES = """\
# orders-app: Kafka Streams 4.2.1, deployed by the platform team
application.id=orders-app
bootstrap.servers=broker-1:9092,broker-2:9092,broker-3:9092
num.stream.threads = 3
num.standby.replicas: 2
acceptable.recovery.lag=1000
   probing.rebalance.interval.ms   60000
! max.warmup.replicas is left to Kafka
processing.guarantee=exactly_once_v2
state.dir=/var/lib/kafka-streams
rack.aware.assignment.tags=zone,\\
                           cluster
client.tag.zone=eu-west-1a
client.tag.cluster=k8s-1
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
    username="orders" \\
    password="s3cr3t";
"""

FLAGS_NONE = {
    "--acceptable-recovery-lag": None,
    "--max-warmup-replicas": None,
    "--num-standby-replicas": None,
    "--probing-rebalance-interval-ms": None,
    "--rack-aware-assignment-tags": None,
}


def test_a_real_looking_file_reads_as_java_properties() -> None:
    properties = parse_properties(APP_PROPERTIES)

    assert properties["application.id"] == "orders-app"
    assert properties["bootstrap.servers"] == "broker-1:9092,broker-2:9092,broker-3:9092"
    assert properties["num.stream.threads"] == "3"
    assert properties["num.standby.replicas"] == "2"
    assert properties["probing.rebalance.interval.ms"] == "60000"
    assert properties["rack.aware.assignment.tags"] == "zone,cluster"
    assert properties["sasl.jaas.config"] == (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="orders" password="s3cr3t";'
    )
    assert "max.warmup.replicas" not in properties  # a comment line
    assert not any(k.startswith(("#", "!")) for k in properties)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key=value", {"key": "value"}),
        ("key:value", {"key": "value"}),
        ("key value", {"key": "value"}),
        ("key   =   value  ", {"key": "value  "}),  # trailing blanks are kept, as in Java
        ("key=a=b:c", {"key": "a=b:c"}),
        ("key = = value", {"key": "= value"}),  # one separator only
        ("key", {"key": ""}),
        ("key=", {"key": ""}),
        (r"with\ space\:and\=eq = v", {"with space:and=eq": "v"}),
        (r"tab=a\tb\nc", {"tab": "a\tb\nc"}),
        (r"latin=caf\u00e9", {"latin": "café"}),
        (r"other=\q\\", {"other": "q\\"}),  # an unknown escape is the character itself
        ("a=1\r\nb=2\rc=3", {"a": "1", "b": "2", "c": "3"}),
        ("a=one\\\n  two\\\\\nb=3", {"a": "onetwo\\", "b": "3"}),  # even backslashes end it
        ("a=x\\\n\nb=2", {"a": "x", "b": "2"}),  # a blank line ends a continuation
        ("# c \\\nb=2", {"b": "2"}),  # a comment is never continued
        ("a=x\\\n# not a comment", {"a": "x# not a comment"}),
        ("a=1\na=2", {"a": "2"}),  # the later wins
        ("a=end\\", {"a": "end"}),  # the file ends inside a continuation
        ("\t\f  key=v", {"key": "v"}),
    ],
)
def test_java_properties_rules(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


def test_a_malformed_unicode_escape_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "app.properties"
    path.write_text("a=1\nb=\\u00zz\n")

    with pytest.raises(LagInputError, match=r"app\.properties: line 2: malformed \\uxxxx"):
        read_properties(path)


def test_the_file_is_read_as_iso_8859_1_like_kafkas_load_props(tmp_path: Path) -> None:
    path = tmp_path / "app.properties"
    path.write_bytes("client.tag.zone=zone-é\n".encode("iso-8859-1"))

    assert read_properties(path) == {"client.tag.zone": "zone-é"}


def test_configs_come_from_flags_then_the_file_then_kafkas_defaults(tmp_path: Path) -> None:
    path = tmp_path / "app.properties"
    path.write_text(APP_PROPERTIES)

    resolved = resolve_configs({**FLAGS_NONE, "--num-standby-replicas": 1}, str(path))

    assert resolved.values == {
        "acceptable_recovery_lag": 1000,
        "max_warmup_replicas": 2,
        "num_standby_replicas": 1,
        "probing_rebalance_interval_ms": 60_000,
        "rack_aware_assignment_tags": ("zone", "cluster"),
    }
    assert resolved.origins == {
        "acceptable.recovery.lag": str(path),
        "max.warmup.replicas": "Kafka's default",
        "num.standby.replicas": "flag --num-standby-replicas",
        "probing.rebalance.interval.ms": str(path),
        "rack.aware.assignment.tags": str(path),
    }
    notes = resolved.notes()
    assert notes[0] == "max.warmup.replicas = 2 (Kafka's default; not given)"
    assert len(notes) == 2 and "client.tag.cluster, client.tag.zone in" in notes[1]
    assert "cluster state carries no client tags" in notes[1]
    assert resolved.description() == (
        f"configs: acceptable.recovery.lag=1000 ({path}); max.warmup.replicas=2 (Kafka's "
        "default); num.standby.replicas=1 (flag --num-standby-replicas); "
        f"probing.rebalance.interval.ms=60000 ({path}); rack.aware.assignment.tags=zone,cluster "
        f"({path})"
    )


def test_without_file_or_flags_every_default_is_said() -> None:
    resolved = resolve_configs(FLAGS_NONE, None)

    assert resolved.notes() == [
        "acceptable.recovery.lag = 10000 (Kafka's default; not given)",
        "max.warmup.replicas = 2 (Kafka's default; not given)",
        "num.standby.replicas = 0 (Kafka's default; not given)",
        "probing.rebalance.interval.ms = 600000 (Kafka's default; not given)",
        "rack.aware.assignment.tags = (none) (Kafka's default; not given)",
    ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("num.standby.replicas=two", "num.standby.replicas = 'two': not an int"),
        ("acceptable.recovery.lag=-1", "acceptable.recovery.lag = '-1': must be between 0"),
        ("acceptable.recovery.lag=1e4", "acceptable.recovery.lag = '1e4': not a long"),
        ("max.warmup.replicas=0", "max.warmup.replicas = '0': must be between 1"),
        ("max.warmup.replicas=2147483648", "out of the range of a Java int"),
        (
            "probing.rebalance.interval.ms=1000",
            "probing.rebalance.interval.ms = '1000': must be between 60000",
        ),
        ("rack.aware.assignment.tags=a,b,c,d,e,f", "at most 5 tags are allowed, got 6"),
        ("rack.aware.assignment.tags=zone,,rack", "a tag name is empty"),
    ],
)
def test_a_bad_value_names_file_key_and_value(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "app.properties"
    path.write_text(f"application.id=orders-app\n{line}\n")

    with pytest.raises(LagInputError) as caught:
        resolve_configs(FLAGS_NONE, str(path))
    assert str(caught.value).startswith(f"--streams-config {path}: ")
    assert reason in str(caught.value)


def test_a_bad_value_the_flag_overrides_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "app.properties"
    path.write_text("num.standby.replicas=two\n")

    resolved = resolve_configs({**FLAGS_NONE, "--num-standby-replicas": 1}, str(path))
    assert resolved.values["num_standby_replicas"] == 1


@pytest.mark.parametrize("content", [None, "num.standby.replicas=-1\n", "a=\\uXYZW\n"])
def test_compute_with_a_bad_file_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    path = tmp_path / "app.properties"
    if content is not None:
        path.write_text(content)
    output = tmp_path / "cluster.json"
    args = ["compute", "--application-id", "orders-app", "--topology", "t", "--members", "m"]
    args += ["--end-offsets", "e", "--offsets", "o", "--output", str(output)]

    assert main([*args, "--streams-config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"streams-lag: error: --streams-config {path}")
    assert not output.exists()
    assert [p.name for p in tmp_path.iterdir()] == ([] if content is None else [path.name])


def test_the_description_round_trips_through_the_core() -> None:
    from streams_assign.formats.cluster_state import parse_cluster_state

    resolved = resolve_configs(FLAGS_NONE, None)
    document = {
        "name": "a",
        "description": resolved.description(),
        "configs": {"rack_aware_assignment_tags": ["zone"]},
        "stateful_tasks": ["0_0"],
        "stateless_tasks": [],
        "clients": [{"id": "11111111-1111-4111-8111-111111111111", "capacity": 1}],
    }
    state = parse_cluster_state(json.loads(json.dumps(document)))
    assert state.description == resolved.description()
    assert state.configs.rack_aware_assignment_tags == ("zone",)
