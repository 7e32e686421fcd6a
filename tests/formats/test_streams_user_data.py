"""Kafka Streams' SubscriptionInfo / AssignmentInfo decoder: every version's layout, errors.

The bytes here are built field by field from Kafka's layouts (``SubscriptionInfoData.json``,
``AssignmentInfo#encode``); the real bytes of running applications are in
``test_streams_user_data_corpus.py``.
"""

from __future__ import annotations

import struct
import uuid

import pytest

from streams_assign.errors import CodecError
from streams_assign.formats.streams_user_data import (
    LATEST_OFFSET,
    UNKNOWN,
    UNKNOWN_OFFSET_SUM,
    HostInfo,
    decode_assignment_info,
    decode_consumer_assignment,
    decode_consumer_subscription,
    decode_subscription_info,
)
from streams_assign.model import LONG_MAX_VALUE, TaskId

PID = uuid.UUID("8c2c6f4e-1d2b-4f4e-9a55-0123456789ab")


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def kbytes(b: bytes) -> bytes:
    return i32(len(b)) + b


def utf(s: str) -> bytes:
    raw = s.encode()
    return struct.pack(">H", len(raw)) + raw


def subscription(version: int, sums: dict[tuple[int, int], int]) -> bytes:
    """SubscriptionInfoData at ``version``: endpoint ``h:1``, unique 7, error 0, tag zone=a."""
    out = i32(version) + (i32(11) if version >= 3 else b"") + PID.bytes
    if version <= 6:
        prev = [t for t, s in sums.items() if s == LATEST_OFFSET]
        standby = [t for t, s in sums.items() if s != LATEST_OFFSET]
        for tasks in (prev, standby):
            out += i32(len(tasks)) + b"".join(i32(a) + i32(b) for a, b in tasks)
    if version >= 2:
        out += kbytes(b"h:1")
    if version >= 10:
        out += i32(len(sums))
        for (sub, part), offset in sums.items():
            out += i32(sub) + i32(part) + i64(offset) + i16(-1)
    elif version >= 7:
        groups: dict[int, list[tuple[int, int]]] = {}
        for (sub, part), offset in sums.items():
            groups.setdefault(sub, []).append((part, offset))
        out += i32(len(groups))
        for sub, parts in groups.items():
            out += i32(sub) + i32(len(parts)) + b"".join(i32(p) + i64(o) for p, o in parts)
    if version >= 8:
        out += i8(7)
    if version >= 9:
        out += i32(0)
    if version >= 11:
        out += i32(1) + kbytes(b"zone") + kbytes(b"a")
    return out


SUMS = {(0, 1): LATEST_OFFSET, (1, 0): LATEST_OFFSET, (1, 2): 1234}


@pytest.mark.parametrize("version", range(1, 12))
def test_subscription_of_every_version(version: int) -> None:
    info = decode_subscription_info(subscription(version, SUMS))
    assert info.version == version
    assert info.latest_supported_version == (11 if version >= 3 else UNKNOWN)
    assert info.process_id == PID
    assert info.previous_active == {TaskId(0, 1), TaskId(1, 0)}
    assert info.previous_standby == {TaskId(1, 2)}
    standby_sum = 1234 if version >= 7 else UNKNOWN_OFFSET_SUM
    assert info.task_offset_sums == {
        TaskId(0, 1): LATEST_OFFSET,
        TaskId(1, 0): LATEST_OFFSET,
        TaskId(1, 2): standby_sum,
    }
    assert info.user_endpoint == ("h:1" if version >= 2 else None)
    assert info.unique_field == (7 if version >= 8 else None)
    assert info.error_code == (0 if version >= 9 else None)
    assert info.client_tags == ({"zone": "a"} if version >= 11 else {})


def test_named_topology_task_in_version_10() -> None:
    data = i32(10) + i32(10) + PID.bytes + kbytes(b"") + i32(1)
    data += i32(2) + i32(3) + i64(-2) + i16(3) + b"abc" + i8(0) + i32(0)
    info = decode_subscription_info(data)
    assert info.task_offset_sums == {TaskId(2, 3, "abc"): -2}
    assert info.user_endpoint is None


def test_newer_version_names_the_probing_header() -> None:
    with pytest.raises(CodecError, match=r"version 12 \(sender's latest supported 13\)"):
        decode_subscription_info(i32(12) + i32(13) + b"\x00" * 40)
    with pytest.raises(CodecError, match="AssignmentInfo: version 14"):
        decode_assignment_info(i32(14) + i32(14))


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", r"SubscriptionInfo: version at byte 0: truncated, needs 4 bytes, 0 left"),
        (i32(0), r"v0: version at byte 0: 0 is not a version"),
        (i32(11) + i32(11) + PID.bytes[:5], r"v11: processId at byte 8: truncated"),
        (i32(11) + i32(4), r"v11: latest supported version at byte 4: 4 is below version 11"),
        (
            i32(11) + i32(11) + PID.bytes + i32(0) + i32(1_000_000),
            r"v11: taskOffsetSums at byte 28: count 1000000 exceeds",
        ),
        (i32(11) + i32(11) + PID.bytes + i32(-5), r"userEndPoint at byte 24: negative count -5"),
        (
            i32(11) + i32(11) + PID.bytes + i32(0) + i32(1) + i32(0) + i32(0) + i64(5) + i16(-7),
            r"taskOffsetSums\[0\].namedTopology at byte 48: negative length -7",
        ),
    ],
)
def test_bad_subscription_names_field_and_offset(data: bytes, match: str) -> None:
    with pytest.raises(CodecError, match=match):
        decode_subscription_info(data)


def task(sub: int, part: int, version: int) -> bytes:
    return i32(sub) + i32(part) + (i32(0) if version >= 10 else b"")


def assignment(version: int) -> bytes:
    """AssignmentInfo at ``version``: active 0_0 1_0, standby 1_1 (t-1-changelog 1), host h:1."""
    out = i32(version) + (i32(11) if version >= 3 else b"")
    out += i32(2) + task(0, 0, version) + task(1, 0, version)
    out += i32(1) + task(1, 1, version) + i32(1) + utf("t-1-changelog") + i32(1)
    if 2 <= version <= 4:
        out += i32(1) + utf("h") + i32(1) + i32(1) + utf("in") + i32(0)
    elif version >= 5:
        out += i32(2) + i32(0) + utf("in") + i32(1) + utf("t-1-changelog")
        out += i32(1) + utf("h") + i32(1) + i32(1) + i32(0) + i32(0)
        if version >= 6:
            out += i32(1) + utf("h") + i32(1) + i32(1) + i32(1) + i32(1)
    if version >= 4:
        out += i32(0)
    if version >= 7:
        out += i64(1_700_000_000_000)
    return out


@pytest.mark.parametrize("version", range(1, 12))
def test_assignment_of_every_version(version: int) -> None:
    info = decode_assignment_info(assignment(version))
    assert info.version == version
    assert info.commonly_supported_version == (11 if version >= 3 else UNKNOWN)
    assert info.active_tasks == (TaskId(0, 0), TaskId(1, 0))
    assert info.standby_tasks == {TaskId(1, 1): frozenset({("t-1-changelog", 1)})}
    host = HostInfo("h", 1)
    assert info.partitions_by_host == ({host: frozenset({("in", 0)})} if version >= 2 else {})
    assert info.standby_partitions_by_host == (
        {host: frozenset({("t-1-changelog", 1)})} if version >= 6 else {}
    )
    assert info.error_code == 0
    assert info.next_rebalance_ms == (1_700_000_000_000 if version >= 7 else LONG_MAX_VALUE)


def test_assignment_topic_index_missing_from_dictionary() -> None:
    data = i32(11) + i32(11) + i32(0) + i32(0) + i32(0) + i32(1) + utf("h") + i32(1)
    data += i32(1) + i32(3) + i32(0)
    with pytest.raises(CodecError, match=r"partitionsByHost\[0\].partitions\[0\].topicIndex at "):
        decode_assignment_info(data)


def test_truncated_assignment_names_field() -> None:
    data = assignment(11)
    with pytest.raises(CodecError, match=r"AssignmentInfo v11: nextRebalanceMs at byte \d+"):
        decode_assignment_info(data[:-3])


def test_consumer_protocol_envelopes() -> None:
    user = b"\x01\x02"
    sub = i16(3) + i32(2) + i16(1) + b"a" + i16(1) + b"b" + kbytes(user)
    sub += i32(1) + i16(1) + b"a" + i32(2) + i32(0) + i32(4) + i32(9) + i16(-1)
    decoded = decode_consumer_subscription(sub)
    assert decoded.topics == ("a", "b")
    assert decoded.user_data == user
    assert decoded.owned_partitions == (("a", 0), ("a", 4))
    assert decoded.generation_id == 9
    assert decoded.rack_id is None
    asg = i16(3) + i32(1) + i16(1) + b"a" + i32(1) + i32(2) + i32(-1)
    assert decode_consumer_assignment(asg).partitions == (("a", 2),)
    assert decode_consumer_assignment(asg).user_data is None
    with pytest.raises(CodecError, match=r"ConsumerProtocolSubscription v9: version at byte 0"):
        decode_consumer_subscription(i16(9))
