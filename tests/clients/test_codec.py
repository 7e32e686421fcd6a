"""The subscription / assignment codec: round trips, older versions, fuzzed bytes."""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams_assign.clients.codec import (
    EARLIEST_SUPPORTED_VERSION,
    LATEST_SUPPORTED_VERSION,
    AssignmentInfo,
    SubscriptionInfo,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    read_header,
)
from streams_assign.clients.core import (
    MemberSubscription,
    StreamsProcess,
    StreamsSettings,
    decide,
)
from streams_assign.clients.topology import Topology
from streams_assign.errors import CodecError
from streams_assign.model import Subtopology, TaskId
from tests.tiers import examples

DATA = Path(__file__).parent / "data"
VERSIONS = range(EARLIEST_SUPPORTED_VERSION, LATEST_SUPPORTED_VERSION + 1)

tasks = st.frozensets(
    st.builds(TaskId, st.integers(0, 40), st.integers(0, 2**31 - 1)), max_size=30
).map(lambda s: tuple(sorted(s)))
offset_sums = st.dictionaries(
    st.builds(TaskId, st.integers(0, 5), st.integers(0, 300)),
    st.one_of(st.sampled_from([-2, -3]), st.integers(0, 2**63 - 1)),
    max_size=30,
)
texts = st.text(max_size=20)


@st.composite
def subscriptions(draw: st.DrawFn) -> SubscriptionInfo:
    version = draw(st.sampled_from(list(VERSIONS)))
    return SubscriptionInfo(
        process_id=str(draw(st.uuids())),
        prev_active=draw(tasks),
        prev_standby=draw(tasks),
        task_offset_sums=draw(offset_sums),
        endpoint=draw(st.one_of(st.none(), texts.filter(bool))),
        client_tags=draw(st.dictionaries(texts, texts, max_size=5)),
        version=version,
        latest_supported_version=draw(st.integers(version, 50)),
    )


@st.composite
def assignments(draw: st.DrawFn) -> AssignmentInfo:
    version = draw(st.sampled_from(list(VERSIONS)))
    return AssignmentInfo(
        active=draw(tasks),
        standby=draw(tasks),
        warmup=draw(tasks),
        endpoints=draw(st.dictionaries(texts, tasks, max_size=4)),
        next_probing_ms=draw(st.one_of(st.just(-1), st.integers(0, 2**62))),
        error_code=draw(st.sampled_from([0, 1])),
        version=version,
        latest_supported_version=draw(st.integers(version, 50)),
    )


@settings(deadline=None)  # a shared 2-core machine: no per-example deadline
@given(subscriptions())
def test_subscription_round_trips_at_its_version(info: SubscriptionInfo) -> None:
    decoded = decode_subscription(encode_subscription(info))
    expected_tags = dict(info.client_tags) if info.version >= 2 else {}
    assert decoded.process_id == info.process_id
    assert decoded.prev_active == info.prev_active
    assert decoded.prev_standby == info.prev_standby
    assert dict(decoded.task_offset_sums) == dict(info.task_offset_sums)
    assert decoded.endpoint == info.endpoint
    assert dict(decoded.client_tags) == expected_tags
    assert (decoded.version, decoded.latest_supported_version) == (
        info.version,
        info.latest_supported_version,
    )


@settings(deadline=None)  # a shared 2-core machine: no per-example deadline
@given(assignments())
def test_assignment_round_trips_at_its_version(info: AssignmentInfo) -> None:
    decoded = decode_assignment(encode_assignment(info))
    assert decoded.active == info.active
    if info.version >= 2:
        assert (decoded.standby, decoded.warmup) == (info.standby, info.warmup)
    else:  # version 1 has no warmup list: warmups travel as standbys
        assert decoded.standby == tuple(sorted({*info.standby, *info.warmup}))
        assert decoded.warmup == ()
    assert {k: v for k, v in decoded.endpoints.items()} == dict(info.endpoints)
    assert decoded.next_probing_ms == info.next_probing_ms
    assert decoded.error_code == info.error_code


@pytest.mark.parametrize("version", list(VERSIONS))
def test_every_older_version_decodes_from_its_recorded_bytes(version: int) -> None:
    """Bytes written by each version (kept in data files) still decode to the same content."""
    sub = decode_subscription(bytes.fromhex((DATA / f"subscription-v{version}.hex").read_text()))
    assert sub.version == version
    assert sub.process_id == "0f9c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f"
    assert [str(t) for t in sub.prev_active] == ["0_1", "1_1"]
    assert [str(t) for t in sub.prev_standby] == ["0_2"]
    assert {str(t): v for t, v in sub.task_offset_sums.items()} == {"0_1": -2, "0_2": 4711}
    assert sub.endpoint == "10.0.0.1:8080"
    assert dict(sub.client_tags) == ({"zone": "eu-1a"} if version >= 2 else {})
    asg = decode_assignment(bytes.fromhex((DATA / f"assignment-v{version}.hex").read_text()))
    assert asg.version == version
    assert [str(t) for t in asg.active] == ["0_1", "1_1"]
    standby_and_warmup = sorted(str(t) for t in (*asg.standby, *asg.warmup))
    assert standby_and_warmup == ["0_0", "0_2"]
    assert [str(t) for t in asg.warmup] == (["0_0"] if version >= 2 else [])
    assert {k: [str(t) for t in v] for k, v in asg.endpoints.items()} == {
        "10.0.0.1:8080": ["0_1", "1_1"]
    }
    assert asg.next_probing_ms == 1_700_000_000_000


def test_recorded_bytes_match_what_the_encoder_writes_today() -> None:
    """The layout is a contract: today's encoder writes the recorded bytes at each version."""
    for version in VERSIONS:
        sub = decode_subscription(
            bytes.fromhex((DATA / f"subscription-v{version}.hex").read_text())
        )
        assert encode_subscription(sub).hex() == (
            (DATA / f"subscription-v{version}.hex").read_text().strip()
        )


def test_future_version_is_read_up_to_its_process_id() -> None:
    process = uuid.uuid4()
    data = bytes([9, 9]) + process.bytes + b"\x07unknown future fields"
    info = decode_subscription(data)
    assert (info.process_id, info.version, info.prev_active) == (str(process), 9, ())
    assert read_header(data) == (9, 9)


@pytest.mark.parametrize(
    "data",
    [b"", b"\x02", b"\x00\x00" + bytes(16), b"\x02\x01" + bytes(16), b"\x02\x02" + bytes(5)],
)
def test_broken_subscriptions_raise_codec_error(data: bytes) -> None:
    with pytest.raises(CodecError):
        decode_subscription(data)


@settings(deadline=None)  # a shared 2-core machine: no per-example deadline
@given(st.binary(max_size=200))
def test_fuzzed_bytes_raise_only_codec_error(data: bytes) -> None:
    for decode in (decode_subscription, decode_assignment):
        with contextlib.suppress(CodecError):
            decode(data)


@settings(deadline=None)  # a shared 2-core machine: no per-example deadline
@given(subscriptions(), st.data())
def test_mutated_subscriptions_raise_only_codec_error(
    info: SubscriptionInfo, data: st.DataObject
) -> None:
    encoded = bytearray(encode_subscription(info))
    index = data.draw(st.integers(0, len(encoded) - 1))
    encoded[index] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(encoded)))
    with contextlib.suppress(CodecError):
        decode_subscription(bytes(encoded[:cut]))


TOPOLOGY = Topology((Subtopology(0, ("in",), ("app-store-changelog",)),))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=60), min_size=1, max_size=4))
def test_fuzzed_user_data_never_raises_out_of_the_leader(garbage: list[bytes]) -> None:
    process = StreamsProcess(
        TOPOLOGY,
        StreamsSettings(num_standby_replicas=1),
        end_offsets=lambda parts: {p: 10 for p in parts},
    )
    good = SubscriptionInfo(str(uuid.uuid4()))
    members = [MemberSubscription("good", ["in"], encode_subscription(good))]
    members += [MemberSubscription(f"bad-{i}", ["in"], g) for i, g in enumerate(garbage)]
    decision = decide(process, members, {"in": 6})
    assert set(decision) == {m.member_id for m in members}
    actives = [t for a in decision.values() for t in a.info.active]
    assert sorted(actives) == [TaskId(0, p) for p in range(6)]
