"""The decoder on real bytes: ``DescribeGroups`` of running Kafka Streams applications.

``tests/corpora/streams-user-data/`` (README.md there says how they were captured) holds every
member's metadata and assignment of a real group, beside what the application reported itself.
Each decoded value is checked against those independent facts: the process id in the state
directory's ``kafka-streams-process-metadata``, each stream thread's tasks
(``KafkaStreams#metadataForLocalThreads``), the configs the instances were started with, the
changelog end offsets, and the topology. Fuzzing: arbitrary and mutated bytes decode or raise
``CodecError``, nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lag.sources.streams_group_state import (
    GroupDescription,
    RawMember,
    StreamsMember,
    decode_members,
)
from streams_assign.errors import CodecError, LagInputError
from streams_assign.formats.streams_user_data import (
    LATEST_OFFSET,
    HostInfo,
    decode_assignment_info,
    decode_consumer_assignment,
    decode_consumer_subscription,
    decode_subscription_info,
)
from streams_assign.model import TaskId

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "streams-user-data"
FILES = sorted(CORPUS.glob("kafka-*.json"))
#: Kafka Streams' ``LATEST_SUPPORTED_VERSION`` (StreamsAssignmentProtocolVersions), 4.2 to 4.4.
LATEST = 11
#: Source topic of each sub-topology of ``OrdersApp`` (its topology), by task subtopology.
SOURCES = {0: "{app}.orders", 1: "{app}-orders-by-customer-repartition", 2: "{app}.payments"}
#: Store (changelog) of each stateful sub-topology.
STORES = {1: "order-totals", 2: "payment-counts"}


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def group_of(snapshot: dict[str, Any]) -> GroupDescription:
    return GroupDescription(
        group_id="userdata-app",
        error_code=0,
        state=snapshot["group_state"],
        protocol_type=snapshot["protocol_type"],
        protocol=snapshot["protocol"],
        members=tuple(
            RawMember(
                m["member_id"],
                m["client_id"],
                m["client_host"],
                None,
                bytes.fromhex(m["metadata_hex"]),
                bytes.fromhex(m["assignment_hex"]),
            )
            for m in snapshot["members"]
        ),
    )


def thread_of(doc: dict[str, Any], snapshot: dict[str, Any], member: StreamsMember) -> Any:
    """(instance record, that thread's tasks) of the application's own report."""
    for name, report in snapshot["app_reports"].items():
        for thread, tasks in report["threads"].items():
            if member.client_id == f"{thread}-consumer":
                instance = next(i for i in doc["instances"] if i["name"] == name)
                return instance, tasks
    raise AssertionError(f"no thread of the app reports {member.client_id}")


def ids(tasks: list[str]) -> set[TaskId]:
    return {TaskId.parse(t) for t in tasks}


def test_corpus_has_the_kafka_lines() -> None:
    names = {load(p)["kafka_streams_jar"] for p in FILES}
    assert "kafka-streams-4.2.1.jar" in names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_members_decode_to_what_the_application_reports(path: Path) -> None:
    doc = load(path)
    app = doc["application_id"]
    for snapshot in doc["snapshots"]:
        members = decode_members(group_of(snapshot))
        threads = sum(len(r["threads"]) for r in snapshot["app_reports"].values())
        assert len(members) == threads
        for member in members:
            instance, tasks = thread_of(doc, snapshot, member)
            sub, asg = member.subscription, member.assignment
            assert asg is not None
            assert (sub.version, sub.latest_supported_version) == (LATEST, LATEST)
            assert (asg.version, asg.commonly_supported_version) == (LATEST, LATEST)
            assert str(sub.process_id) == instance["process_metadata_file"]["processId"]
            assert sub.client_tags == {"zone": instance["configs"]["client.tag.zone"]}
            assert sub.user_endpoint == instance["configs"]["application.server"]
            assert sub.error_code == 0 and asg.error_code == 0
            assert set(asg.active_tasks) == ids(tasks["active"])
            assert set(asg.standby_tasks) == ids(tasks["standby"])
            for task, partitions in asg.standby_tasks.items():
                source = SOURCES[task.subtopology].format(app=app)
                assert partitions == {(source, task.partition)}
            assert set(member.assigned_partitions) == {
                (SOURCES[t.subtopology].format(app=app), t.partition) for t in asg.active_tasks
            }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_offset_sums_follow_kafkas_sentinels(path: Path) -> None:
    doc = load(path)
    # End offset of each changelog partition, as the application reported its stores after
    # processing every record (nothing was produced later).
    ends = {
        (store, int(p)): end
        for report in doc["snapshots"][0]["app_reports"].values()
        for store, parts in report["positions"].items()
        for p, (_, end) in parts.items()
    }
    assert len(ends) == len(STORES) * 4
    for snapshot in doc["snapshots"]:
        running_somewhere = False
        for member in decode_members(group_of(snapshot)):
            _, tasks = thread_of(doc, snapshot, member)
            sums = member.subscription.task_offset_sums
            running = {t for t, s in sums.items() if s == LATEST_OFFSET}
            running_somewhere |= bool(running)
            # A task the thread ran as active at its last join (-2) stays with it: the group
            # is stable, so the leader revoked nothing at that join.
            assert running <= ids(tasks["active"])
            assert member.subscription.previous_active == running
            assert member.subscription.previous_standby == set(sums) - running
            for task, offset_sum in sums.items():
                assert task.subtopology in STORES, f"stateless {task} has an offset sum"
                if offset_sum != LATEST_OFFSET:
                    assert 0 <= offset_sum <= ends[(STORES[task.subtopology], task.partition)]
        if snapshot is doc["snapshots"][-1]:
            # The third instance joined a group whose threads all ran tasks.
            assert running_somewhere


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_partitions_by_host_cover_every_input_partition(path: Path) -> None:
    doc = load(path)
    app = doc["application_id"]
    for snapshot in doc["snapshots"]:
        running = set(snapshot["app_reports"])
        servers = [
            i["configs"]["application.server"].rsplit(":", 1)
            for i in doc["instances"]
            if i["name"] in running
        ]
        hosts = {HostInfo(host, int(port)) for host, port in servers}
        for member in decode_members(group_of(snapshot)):
            asg = member.assignment
            assert asg is not None
            assert set(asg.partitions_by_host) == hosts
            every = set().union(*asg.partitions_by_host.values())
            assert every == {
                (topic.format(app=app), p) for topic in SOURCES.values() for p in range(4)
            }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_non_streams_protocol_is_refused(path: Path) -> None:
    snapshot = load(path)["snapshots"][0]
    group = group_of(snapshot)
    other = GroupDescription(group.group_id, 0, "Stable", "consumer", "range", group.members)
    with pytest.raises(LagInputError, match=r"not a classic Kafka Streams group.*'range'"):
        decode_members(other)


def test_a_group_that_does_not_exist_is_named() -> None:
    with pytest.raises(LagInputError, match=r"group 'nope': no such group"):
        decode_members(GroupDescription("nope", 0, "Dead", "", "", ()))


def test_undecodable_user_data_names_group_member_and_field() -> None:
    snapshot = load(FILES[0])["snapshots"][1]
    good = group_of(snapshot).members[0]
    envelope = decode_consumer_subscription(good.metadata)
    assert envelope.user_data is not None
    cut = len(envelope.user_data) - 6
    broken = good.metadata.replace(envelope.user_data, envelope.user_data[:cut])
    broken = broken.replace(
        len(envelope.user_data).to_bytes(4, "big") + envelope.user_data[:cut],
        cut.to_bytes(4, "big") + envelope.user_data[:cut],
    )
    member = RawMember(good.member_id, "c", "h", None, broken, good.assignment)
    group = GroupDescription("userdata-app", 0, "Stable", "consumer", "stream", (member,))
    with pytest.raises(CodecError) as info:
        decode_members(group)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"group 'userdata-app' member '{good.member_id}': SubscriptionInfo")
    assert "at byte" in message


def _payloads() -> list[tuple[str, bytes]]:
    out = []
    for path in FILES:
        for snapshot in load(path)["snapshots"]:
            for m in snapshot["members"]:
                meta = bytes.fromhex(m["metadata_hex"])
                asg = bytes.fromhex(m["assignment_hex"])
                out += [("metadata", meta), ("assignment", asg)]
                sub_data = decode_consumer_subscription(meta).user_data
                asg_data = decode_consumer_assignment(asg).user_data
                assert sub_data is not None and asg_data is not None
                out += [("subscription", sub_data), ("assignment_info", asg_data)]
    return out


PAYLOADS = _payloads()
DECODERS = {
    "metadata": decode_consumer_subscription,
    "assignment": decode_consumer_assignment,
    "subscription": decode_subscription_info,
    "assignment_info": decode_assignment_info,
}


def _decode_or_codec_error(kind: str, data: bytes) -> None:
    try:
        DECODERS[kind](data)
    except CodecError as exc:
        assert "\n" not in str(exc)


@given(kind=st.sampled_from(sorted(DECODERS)), data=st.binary(max_size=300))
def test_arbitrary_bytes_decode_or_raise_codec_error(kind: str, data: bytes) -> None:
    _decode_or_codec_error(kind, data)


@given(
    payload=st.sampled_from(PAYLOADS),
    edits=st.lists(
        st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), max_size=6
    ),
    cut=st.integers(min_value=0),
)
def test_mutated_real_payloads_decode_or_raise_codec_error(
    payload: tuple[str, bytes], edits: list[tuple[int, int]], cut: int
) -> None:
    kind, data = payload
    mutated = bytearray(data)
    for at, value in edits:
        mutated[at % len(mutated)] = value
    _decode_or_codec_error(kind, bytes(mutated[: len(mutated) - cut % (len(mutated) + 1)]))
