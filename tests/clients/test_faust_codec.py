"""The faust metadata and assignment codec, checked against faust's own records."""

from __future__ import annotations

import json
import uuid
import zlib

import pytest
from faust.assignor.client_assignment import ClientAssignment, ClientMetadata
from faust.assignor.partition_assignor import PartitionAssignor
from hypothesis import given
from hypothesis import strategies as st

from streams_assign.clients.faust.metadata import (
    EXTENSION_KEY,
    AssignmentExtension,
    decode_assignment_extension,
    decode_member_metadata,
    encode_assignment_user_data,
    encode_member_metadata,
)
from streams_assign.errors import CodecError

PROCESS = "4a8f5a52-1a52-4c3b-9a0e-6c1a2b3c4d5e"


def faust_metadata(actives: dict[str, list[int]], standbys: dict[str, list[int]]) -> bytes:
    return ClientMetadata(
        assignment=ClientAssignment(actives=actives, standbys=standbys),
        url="http://worker-1:6066",
        changelog_distribution={"http://worker-1:6066": {"app-counts-changelog": [0]}},
        topic_groups={"orders": 0, "app-counts-changelog": 0},
    ).dumps()


offsets_strategy = st.dictionaries(
    st.tuples(st.sampled_from(["app-a-changelog", "app-b-changelog"]), st.integers(0, 63)),
    st.integers(0, 2**62),
    max_size=8,
)


@given(offsets_strategy)
def test_member_metadata_round_trips_the_offsets(offsets: dict[tuple[str, int], int]) -> None:
    data = encode_member_metadata(faust_metadata({"orders": [0]}, {}), PROCESS, offsets)
    member = decode_member_metadata(data)
    assert member.process_id == PROCESS
    assert dict(member.changelog_offsets) == offsets
    assert member.actives == {"orders": [0]}


def test_fausts_own_leader_reads_the_extended_metadata() -> None:
    data = encode_member_metadata(
        faust_metadata({"orders": [1]}, {"app-counts-changelog": [2]}),
        PROCESS,
        {("app-counts-changelog", 2): 40},
    )
    # What faust's leader calls on every member's user data.
    record = PartitionAssignor._get_client_metadata(
        type("M", (), {"user_data": data})()  # ConsumerProtocolMemberMetadata's one field used
    )
    assert record.url == "http://worker-1:6066"
    assert record.assignment.actives == {"orders": [1]}
    assert record.assignment.standbys == {"app-counts-changelog": [2]}
    assert record.topic_groups == {"orders": 0, "app-counts-changelog": 0}


def test_fausts_plain_metadata_decodes_as_a_member_without_state() -> None:
    member = decode_member_metadata(faust_metadata({"orders": [3]}, {}))
    assert member.process_id is None
    assert member.changelog_offsets == {}
    assert member.actives == {"orders": [3]} and member.url == "http://worker-1:6066"


def test_an_unreadable_extension_leaves_the_faust_part() -> None:
    document = json.loads(faust_metadata({"orders": [3]}, {}))
    document[EXTENSION_KEY] = {"version": 1, "process_id": "nope", "changelog_offsets": {}}
    member = decode_member_metadata(json.dumps(document).encode())
    assert member.process_id is None and member.actives == {"orders": [3]}


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00\x01garbage",
        b"[1, 2]",
        b'{"url": 7, "assignment": {"actives": {}, "standbys": {}}}',
        b'{"url": "http://x", "assignment": {"actives": {"t": ["a"]}, "standbys": {}}}',
        b'{"url": "http://x"}',
    ],
)
def test_undecodable_member_metadata_raises_codec_error(data: bytes) -> None:
    with pytest.raises(CodecError):
        decode_member_metadata(data)


def test_encoding_rejects_a_bad_process_id_and_negative_offsets() -> None:
    with pytest.raises(CodecError, match="not a UUID"):
        encode_member_metadata(faust_metadata({}, {}), "worker-1", {})
    with pytest.raises(CodecError, match="negative"):
        encode_member_metadata(faust_metadata({}, {}), PROCESS, {("c", 0): -1})


def test_fausts_on_assignment_reads_the_extended_assignment() -> None:
    record = ClientMetadata(
        assignment=ClientAssignment(
            actives={"orders": [0], "app-counts-changelog": [0]},
            standbys={"orders": [1], "app-counts-changelog": [1]},
        ),
        url="http://worker-1:6066",
        changelog_distribution={},
        topic_groups={"orders": 0, "app-counts-changelog": 0},
    )
    extension = AssignmentExtension(
        "high_availability", {"app-counts-changelog": [1]}, 25, 1_700_000_000_000
    )
    user_data = encode_assignment_user_data(record.dumps(), extension)
    # faust's on_assignment: ClientMetadata.loads(zlib.decompress(user_data)).
    loaded = ClientMetadata.loads(PartitionAssignor._decompress(user_data))
    assert loaded.assignment.actives == record.assignment.actives
    assert loaded.assignment.standbys == record.assignment.standbys
    assert loaded.url == record.url and loaded.topic_groups == record.topic_groups
    assert decode_assignment_extension(user_data) == extension


def test_an_assignment_of_fausts_own_leader_has_no_extension() -> None:
    record = ClientMetadata(
        assignment=ClientAssignment(actives={}, standbys={}),
        url="http://x",
        changelog_distribution={},
    )
    assert decode_assignment_extension(PartitionAssignor._compress(record.dumps())) is None


@pytest.mark.parametrize(
    "extension",
    [
        {"version": 2},
        {"version": 1, "acceptable_recovery_lag": -1, "probing_deadline_ms": -1},
        {"version": 1, "acceptable_recovery_lag": 5, "probing_deadline_ms": "soon"},
        {"version": 1, "acceptable_recovery_lag": 5, "probing_deadline_ms": -1, "warmups": [1]},
    ],
)
def test_a_malformed_assignment_extension_raises_codec_error(extension: dict[str, object]) -> None:
    data = zlib.compress(json.dumps({"url": "x", EXTENSION_KEY: extension}).encode())
    with pytest.raises(CodecError):
        decode_assignment_extension(data)


def test_assignment_user_data_that_is_not_zlib_raises_codec_error() -> None:
    with pytest.raises(CodecError, match="zlib"):
        decode_assignment_extension(b'{"url": "x"}')


def test_process_ids_are_canonical_uuids() -> None:
    upper = str(uuid.UUID(PROCESS)).upper()
    member = decode_member_metadata(encode_member_metadata(faust_metadata({}, {}), upper, {}))
    assert member.process_id == PROCESS
