"""What faust workers send at JoinGroup and receive at SyncGroup, with streams-assign's additions.

faust-streaming's ``PartitionAssignor`` (protocol name ``faust``, version 4) sends its
``ClientMetadata`` record as plain JSON in the subscription's user data::

    {"assignment": {"actives": {topic: [partition, ...]}, "standbys": {topic: [...]}},
     "url": "http://host:port", "changelog_distribution": {url: {topic: [...]}},
     "external_topic_distribution": {url: {topic: [...]}}, "topic_groups": {topic: group}}

and answers with the same record, zlib-compressed, in the assignment's user data. faust reads
these records with its ``Record.loads``, which keeps fields it does not know, so streams-assign
adds one object under :data:`EXTENSION_KEY` to each direction and a worker running faust's own
assignor ignores it (the rolling-upgrade case, ``docs/clients.md``):

* member -> leader: ``{"version": 1, "process_id": "<uuid>", "changelog_offsets":
  {topic: {"<partition>": next_offset}}}``: per changelog partition with local state in the
  worker's stores, the offset after the last record the store holds (records, so
  ``end offset - next_offset`` is its lag);
* leader -> member: ``{"version": 1, "assignor": name, "warmups": {topic: [partition, ...]},
  "acceptable_recovery_lag": records, "probing_deadline_ms": epoch ms or -1}``: which of the
  member's standbys are warmup replicas, and when it should rejoin for a probing rebalance
  (as soon as every warmup is within ``acceptable_recovery_lag`` of its changelog's end, at the
  deadline at the latest).

This module is plain JSON and zlib (no faust import); ``tests/clients/test_faust_codec.py``
checks it against faust's own ``ClientMetadata``.
"""

from __future__ import annotations

import json
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streams_assign.errors import CodecError

__all__ = [
    "EXTENSION_KEY",
    "EXTENSION_VERSION",
    "NO_PROBING",
    "AssignmentExtension",
    "FaustMember",
    "TopicPartitions",
    "decode_assignment_extension",
    "decode_member_metadata",
    "encode_assignment_user_data",
    "encode_member_metadata",
]

#: The key of streams-assign's object in faust's ``ClientMetadata`` JSON.
EXTENSION_KEY = "streams_assign"
#: The version of that object this code writes and reads.
EXTENSION_VERSION = 1
#: ``probing_deadline_ms`` of an assignment that asks for no probing rebalance.
NO_PROBING = -1

#: ``{topic: [partition, ...]}``, faust's ``TopicToPartitionMap``.
TopicPartitions = Mapping[str, list[int]]


@dataclass(frozen=True, slots=True)
class FaustMember:
    """One member's subscription user data, decoded.

    Attributes
    ----------
    faust:
        faust's ``ClientMetadata`` fields as JSON values (``assignment``, ``url``, ...),
        without the extension.
    process_id:
        The worker's process id (a UUID string) from the extension, or ``None`` for a worker
        running faust's own assignor.
    changelog_offsets:
        Per ``(changelog topic, partition)``, the offset after the last record the worker's
        store holds; empty without the extension.
    """

    faust: Mapping[str, Any]
    process_id: str | None = None
    changelog_offsets: Mapping[tuple[str, int], int] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The worker's ``web`` URL (faust's ``canonical_url``)."""
        return str(self.faust["url"])

    @property
    def actives(self) -> TopicPartitions:
        """The member's previous active partitions, per topic."""
        return dict(self.faust["assignment"]["actives"])

    @property
    def standbys(self) -> TopicPartitions:
        """The member's previous standby partitions (warmups included), per topic."""
        return dict(self.faust["assignment"]["standbys"])


@dataclass(frozen=True, slots=True)
class AssignmentExtension:
    """streams-assign's part of one member's assignment.

    Attributes
    ----------
    assignor:
        The registered assignor that decided.
    warmups:
        The member's standby changelog partitions that are warmup replicas, per topic.
    acceptable_recovery_lag:
        Records: a warmup within this of its changelog's end is caught up.
    probing_deadline_ms:
        Epoch milliseconds by which the member rejoins for a probing rebalance, or
        :data:`NO_PROBING`.
    """

    assignor: str
    warmups: TopicPartitions = field(default_factory=dict)
    acceptable_recovery_lag: int = 10_000
    probing_deadline_ms: int = NO_PROBING


def _partition_lists(value: Any, where: str) -> dict[str, list[int]]:
    if not isinstance(value, Mapping):
        raise CodecError(f"{where}: expected an object of topic -> partitions, got {value!r}")
    result: dict[str, list[int]] = {}
    for topic, partitions in value.items():
        if not isinstance(partitions, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in partitions
        ):
            raise CodecError(f"{where}.{topic}: expected a list of partitions, got {partitions!r}")
        result[str(topic)] = list(partitions)
    return result


def _json_object(data: bytes, what: str) -> dict[str, Any]:
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CodecError(f"{what} is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise CodecError(f"{what} is not a JSON object: {type(document).__name__}")
    return document


def encode_member_metadata(
    faust_metadata: bytes, process_id: str, changelog_offsets: Mapping[tuple[str, int], int]
) -> bytes:
    """faust's ``ClientMetadata`` JSON with streams-assign's extension added.

    Parameters
    ----------
    faust_metadata:
        ``ClientMetadata.dumps()`` of the worker.
    process_id:
        The worker's process id (UUID string).
    changelog_offsets:
        Per ``(changelog topic, partition)``, the offset after the store's last record (>= 0).

    Raises
    ------
    CodecError
        When ``faust_metadata`` is not a JSON object, the process id is not a UUID, or an
        offset is negative.
    """
    document = _json_object(faust_metadata, "faust metadata")
    try:
        process = str(uuid.UUID(process_id))
    except (ValueError, AttributeError, TypeError):
        raise CodecError(f"process id {process_id!r} is not a UUID") from None
    offsets: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(changelog_offsets.items()):
        if offset < 0:
            raise CodecError(f"changelog offset of {topic}-{partition} is negative: {offset}")
        offsets.setdefault(topic, {})[str(partition)] = int(offset)
    document[EXTENSION_KEY] = {
        "version": EXTENSION_VERSION,
        "process_id": process,
        "changelog_offsets": offsets,
    }
    return json.dumps(document, sort_keys=True).encode()


def _check_faust_fields(document: Mapping[str, Any]) -> None:
    if not isinstance(document.get("url"), str):
        raise CodecError(f"faust metadata: url must be a string, got {document.get('url')!r}")
    assignment = document.get("assignment")
    if not isinstance(assignment, Mapping):
        raise CodecError(f"faust metadata: assignment must be an object, got {assignment!r}")
    for key in ("actives", "standbys"):
        _partition_lists(assignment.get(key), f"assignment.{key}")


def _extension_offsets(extension: Mapping[str, Any]) -> dict[tuple[str, int], int]:
    raw = extension.get("changelog_offsets", {})
    if not isinstance(raw, Mapping):
        raise CodecError(f"{EXTENSION_KEY}.changelog_offsets: expected an object, got {raw!r}")
    offsets: dict[tuple[str, int], int] = {}
    for topic, partitions in raw.items():
        if not isinstance(partitions, Mapping):
            raise CodecError(f"{EXTENSION_KEY}.changelog_offsets.{topic}: expected an object")
        for partition, offset in partitions.items():
            if not str(partition).isdigit() or not isinstance(offset, int) or offset < 0:
                raise CodecError(
                    f"{EXTENSION_KEY}.changelog_offsets.{topic}.{partition}: bad offset {offset!r}"
                )
            offsets[(str(topic), int(partition))] = offset
    return offsets


def decode_member_metadata(data: bytes) -> FaustMember:
    """A member's subscription user data: faust's fields and, when present, the extension.

    A subscription without the extension (a worker on faust's own assignor) decodes with
    ``process_id`` ``None`` and no offsets; one whose extension is unreadable or of another
    version decodes the same way (the faust part still counts).

    Raises
    ------
    CodecError
        When the faust part itself is unreadable: not a JSON object, no string ``url``, or an
        ``assignment`` that is not ``{"actives": {topic: [int]}, "standbys": {...}}``.
    """
    document = _json_object(data, "member metadata")
    extension = document.pop(EXTENSION_KEY, None)
    _check_faust_fields(document)
    if not isinstance(extension, Mapping) or extension.get("version") != EXTENSION_VERSION:
        return FaustMember(document)
    try:
        process_id = str(uuid.UUID(str(extension.get("process_id"))))
        offsets = _extension_offsets(extension)
    except (ValueError, CodecError):
        return FaustMember(document)
    return FaustMember(document, process_id, offsets)


def encode_assignment_user_data(
    client_metadata: bytes, extension: AssignmentExtension | None
) -> bytes:
    """The zlib-compressed assignment user data faust's ``on_assignment`` reads.

    Parameters
    ----------
    client_metadata:
        ``ClientMetadata(...).dumps()`` for the member (faust's exact record).
    extension:
        streams-assign's part, or ``None`` for none.

    Raises
    ------
    CodecError
        When ``client_metadata`` is not a JSON object.
    """
    document = _json_object(client_metadata, "client metadata")
    if extension is not None:
        document[EXTENSION_KEY] = {
            "version": EXTENSION_VERSION,
            "assignor": extension.assignor,
            "warmups": {t: sorted(ps) for t, ps in sorted(extension.warmups.items())},
            "acceptable_recovery_lag": extension.acceptable_recovery_lag,
            "probing_deadline_ms": extension.probing_deadline_ms,
        }
    return zlib.compress(json.dumps(document).encode())


def decode_assignment_extension(user_data: bytes) -> AssignmentExtension | None:
    """streams-assign's part of an assignment's user data; ``None`` when absent.

    An assignment made by faust's own assignor (a leader without the setting) has none.

    Raises
    ------
    CodecError
        When the user data is not zlib-compressed JSON, or the extension is malformed.
    """
    try:
        raw = zlib.decompress(user_data)
    except zlib.error as exc:
        raise CodecError(f"assignment user data is not zlib-compressed: {exc}") from None
    extension = _json_object(raw, "assignment").get(EXTENSION_KEY)
    if extension is None:
        return None
    if not isinstance(extension, Mapping) or extension.get("version") != EXTENSION_VERSION:
        raise CodecError(f"{EXTENSION_KEY}: unsupported extension {extension!r}")
    lag = extension.get("acceptable_recovery_lag")
    deadline = extension.get("probing_deadline_ms")
    if not isinstance(lag, int) or lag < 0 or not isinstance(deadline, int):
        raise CodecError(f"{EXTENSION_KEY}: bad lag {lag!r} or deadline {deadline!r}")
    return AssignmentExtension(
        assignor=str(extension.get("assignor")),
        warmups=_partition_lists(extension.get("warmups", {}), f"{EXTENSION_KEY}.warmups"),
        acceptable_recovery_lag=lag,
        probing_deadline_ms=deadline,
    )
