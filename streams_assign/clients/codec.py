"""The subscription and assignment user data of the streams-assign consumer-group protocol.

A compact, versioned binary layout carried in the ``user_data`` of the consumer protocol's
JoinGroup metadata (subscription) and SyncGroup assignment, playing the part of Kafka Streams'
``SubscriptionInfo`` and ``AssignmentInfo``. The layout is documented byte by byte in
``docs/clients.md``; in short, every message starts with the same header
``uvarint version, uvarint latest_supported_version`` (a subscription then always has the
16-byte process id), so a reader of any version can read the header of any other version, and
version probing works as Kafka's (``StreamsPartitionAssignor`` since KIP-268):

* a leader that receives older subscriptions encodes every assignment at the lowest version used
  in the group;
* a subscription of a version newer than the leader's is read up to its process id only, and
  is answered at the leader's version; the member then downgrades and rejoins.

Versions: 1 (process id, previous active / standby tasks, task offset sums, endpoint; in the
assignment active, standby and endpoint map, next probing time), 2 (adds client tags to the
subscription, warmup tasks apart from standbys to the assignment).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from streams_assign.errors import CodecError
from streams_assign.model import LONG_MAX_VALUE, TaskId

__all__ = [
    "EARLIEST_SUPPORTED_VERSION",
    "LATEST_SUPPORTED_VERSION",
    "NO_ERROR",
    "NO_PROBING",
    "VERSION_PROBING",
    "AssignmentInfo",
    "SubscriptionInfo",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
    "read_header",
]


#: The version this code writes by default, and the highest it reads.
LATEST_SUPPORTED_VERSION = 2
#: The oldest version still decoded.
EARLIEST_SUPPORTED_VERSION = 1
#: ``error_code`` of an assignment that only tells the member to rejoin at ``version``.
NO_ERROR = 0
VERSION_PROBING = 1
#: Next probing time of an assignment that asks for no probing rebalance.
NO_PROBING = -1

_MAX_ITEMS = 1 << 20  # no list in a real group is near this; guards against fuzzed lengths
_MAX_INT31 = 2**31 - 1


@dataclass(frozen=True, slots=True)
class SubscriptionInfo:
    """What one member (stream thread) tells the leader at JoinGroup.

    Attributes
    ----------
    process_id:
        The process (Kafka Streams client) id, a canonical lower-case UUID string; every member
        of one process sends the same id.
    prev_active, prev_standby:
        Tasks this member ran as active / standby (warmups included) before this rebalance.
    task_offset_sums:
        Per stateful task the process has local state for, the sum of its checkpointed
        changelog offsets in records; ``-2`` (``Task.LATEST_OFFSET``) for a task running as
        active, ``-3`` (``UNKNOWN_OFFSET_SUM``) when unknown.
    endpoint:
        ``host:port`` of the process's interactive-query endpoint (``application.server``),
        or ``None``.
    client_tags:
        ``client.tag.*`` values (KIP-708); sent from version 2 on.
    version, latest_supported_version:
        The version this message is encoded in and the highest the sender can read.
    """

    process_id: str
    prev_active: tuple[TaskId, ...] = ()
    prev_standby: tuple[TaskId, ...] = ()
    task_offset_sums: Mapping[TaskId, int] = field(default_factory=dict)
    endpoint: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    version: int = LATEST_SUPPORTED_VERSION
    latest_supported_version: int = LATEST_SUPPORTED_VERSION


@dataclass(frozen=True, slots=True)
class AssignmentInfo:
    """What the leader tells one member at SyncGroup.

    Attributes
    ----------
    active:
        The member's active tasks (their source partitions are also the protocol's assigned
        partitions).
    standby:
        Its standby tasks, warmups excluded (the app keeps them up to date from the changelogs).
    warmup:
        Its warmup replicas (standbys placed to catch up before an active task moves). In a
        version-1 assignment they are sent among ``standby`` and this is empty.
    endpoints:
        Per ``host:port`` endpoint, the active tasks of that process (the partition -> endpoint
        map of Kafka's ``partitionsByHost``, by task; see :func:`partitions_by_endpoint`).
    next_probing_ms:
        Epoch milliseconds at which the member should rejoin for a probing rebalance, or
        ``NO_PROBING`` (-1).
    error_code:
        ``NO_ERROR``, or ``VERSION_PROBING``: the assignment is empty, rejoin at ``version``.
    version, latest_supported_version:
        The version this message is encoded in and the highest the leader can read.
    """

    active: tuple[TaskId, ...] = ()
    standby: tuple[TaskId, ...] = ()
    warmup: tuple[TaskId, ...] = ()
    endpoints: Mapping[str, tuple[TaskId, ...]] = field(default_factory=dict)
    next_probing_ms: int = NO_PROBING
    error_code: int = NO_ERROR
    version: int = LATEST_SUPPORTED_VERSION
    latest_supported_version: int = LATEST_SUPPORTED_VERSION


# --- primitives -----------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self.buf = bytearray()

    def uvarint(self, value: int) -> None:
        if value < 0:
            raise CodecError(f"cannot encode negative {value} as an unsigned varint")
        while True:
            byte = value & 0x7F
            value >>= 7
            if value:
                self.buf.append(byte | 0x80)
            else:
                self.buf.append(byte)
                return

    def svarint(self, value: int) -> None:
        if not -(2**63) <= value <= LONG_MAX_VALUE:
            raise CodecError(f"{value} is outside Java's long range")
        self.uvarint((value << 1) ^ (value >> 63) if value < 0 else value << 1)

    def string(self, text: str) -> None:
        data = text.encode("utf-8")
        self.uvarint(len(data))
        self.buf += data

    def tasks(self, tasks: Iterable[TaskId]) -> list[TaskId]:
        """Tasks grouped by subtopology, partitions delta-coded; returns them in written order."""
        ordered = sorted(set(tasks))
        for task in ordered:
            if task.topology_name is not None:
                raise CodecError(f"named topologies are not supported by the codec: {task}")
        groups: dict[int, list[int]] = {}
        for task in ordered:
            groups.setdefault(task.subtopology, []).append(task.partition)
        self.uvarint(len(groups))
        for sub, partitions in groups.items():
            self.uvarint(sub)
            self.uvarint(len(partitions))
            previous = 0
            for partition in partitions:
                self.uvarint(partition - previous)
                previous = partition
        return ordered


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.pos = 0

    def uvarint(self) -> int:
        result = 0
        shift = 0
        while True:
            if self.pos >= len(self.data):
                raise CodecError(f"truncated varint at byte {self.pos}")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise CodecError(f"varint longer than 10 bytes at byte {self.pos}")

    def svarint(self) -> int:
        raw = self.uvarint()
        value = (raw >> 1) ^ -(raw & 1)
        if not -(2**63) <= value <= LONG_MAX_VALUE:
            raise CodecError(f"value {value} at byte {self.pos} is outside Java's long range")
        return value

    def count(self, what: str) -> int:
        value = self.uvarint()
        if value > _MAX_ITEMS or value > len(self.data) - self.pos:
            raise CodecError(f"{what} count {value} exceeds the {len(self.data)}-byte message")
        return value

    def raw(self, size: int) -> bytes:
        if self.pos + size > len(self.data):
            raise CodecError(f"truncated: needed {size} bytes at byte {self.pos}")
        chunk = bytes(self.data[self.pos : self.pos + size])
        self.pos += size
        return chunk

    def string(self) -> str:
        size = self.count("string length")
        try:
            return self.raw(size).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CodecError(f"string at byte {self.pos - size} is not UTF-8: {exc}") from None

    def int31(self, what: str) -> int:
        value = self.uvarint()
        if value > _MAX_INT31:
            raise CodecError(f"{what} {value} exceeds Java's int range")
        return value

    def tasks(self) -> tuple[TaskId, ...]:
        result: list[TaskId] = []
        for _ in range(self.count("subtopology")):
            sub = self.int31("subtopology")
            partition = 0
            for _ in range(self.count("partition")):
                partition += self.uvarint()
                if partition > _MAX_INT31:
                    raise CodecError(f"partition {partition} exceeds Java's int range")
                result.append(TaskId(sub, partition))
        if len(set(result)) != len(result):
            raise CodecError("a task is listed twice")
        return tuple(sorted(result))

    def end(self) -> None:
        if self.pos != len(self.data):
            raise CodecError(f"{len(self.data) - self.pos} trailing bytes after the message")


def _check_version(version: int, what: str) -> None:
    if not EARLIEST_SUPPORTED_VERSION <= version <= LATEST_SUPPORTED_VERSION:
        raise CodecError(
            f"cannot encode a {what} at version {version}; supported: "
            f"{EARLIEST_SUPPORTED_VERSION}..{LATEST_SUPPORTED_VERSION}"
        )


# --- subscription ---------------------------------------------------------------------------


def encode_subscription(info: SubscriptionInfo) -> bytes:
    """Encode a subscription at ``info.version``.

    Returns
    -------
    bytes
        The user data (layout in ``docs/clients.md``); client tags are dropped at version 1.

    Raises
    ------
    CodecError
        For an unsupported version, a named-topology task, a bad process id, or an offset sum
        outside Java's long range.
    """
    _check_version(info.version, "subscription")
    out = _Writer()
    out.uvarint(info.version)
    out.uvarint(info.latest_supported_version)
    try:
        out.buf += uuid.UUID(info.process_id).bytes
    except (ValueError, AttributeError, TypeError):
        raise CodecError(f"process id {info.process_id!r} is not a UUID") from None
    out.tasks(info.prev_active)
    out.tasks(info.prev_standby)
    for task in out.tasks(info.task_offset_sums):
        out.svarint(info.task_offset_sums[task])
    out.string(info.endpoint or "")
    if info.version >= 2:
        out.uvarint(len(info.client_tags))
        for key in sorted(info.client_tags):
            out.string(key)
            out.string(info.client_tags[key])
    return bytes(out.buf)


def read_header(data: bytes) -> tuple[int, int]:
    """``(version, latest_supported_version)`` of any message of any version.

    Raises
    ------
    CodecError
        When the header itself is truncated or malformed.
    """
    reader = _Reader(data)
    return reader.uvarint(), reader.uvarint()


def decode_subscription(data: bytes) -> SubscriptionInfo:
    """Decode a subscription of any supported version.

    A subscription of a future version (above :data:`LATEST_SUPPORTED_VERSION`) is read up to
    its process id: the result has no previous tasks and no offset sums, and keeps the sender's
    ``version``, so the leader can answer it at its own version (Kafka's version probing).

    Raises
    ------
    CodecError
        For truncated, malformed or trailing bytes, or a version below
        :data:`EARLIEST_SUPPORTED_VERSION`.
    """
    reader = _Reader(data)
    version = reader.uvarint()
    latest = reader.uvarint()
    if version < EARLIEST_SUPPORTED_VERSION:
        raise CodecError(f"subscription version {version} is older than any supported")
    if latest < version:
        raise CodecError(f"latest supported version {latest} is below the used version {version}")
    process_id = str(uuid.UUID(bytes=reader.raw(16)))
    if version > LATEST_SUPPORTED_VERSION:
        return SubscriptionInfo(process_id, version=version, latest_supported_version=latest)
    prev_active = reader.tasks()
    prev_standby = reader.tasks()
    sums_tasks = reader.tasks()
    sums = {task: reader.svarint() for task in sums_tasks}
    for task, value in sums.items():
        if value < 0 and value not in (-2, -3):
            raise CodecError(f"offset sum {value} of task {task} is neither >= 0, -2 nor -3")
    endpoint = reader.string() or None
    tags: dict[str, str] = {}
    if version >= 2:
        for _ in range(reader.count("client tag")):
            key = reader.string()
            tags[key] = reader.string()
    reader.end()
    return SubscriptionInfo(
        process_id, prev_active, prev_standby, sums, endpoint, tags, version, latest
    )


# --- assignment -----------------------------------------------------------------------------


def encode_assignment(info: AssignmentInfo) -> bytes:
    """Encode an assignment at ``info.version``; at version 1 warmups travel as standbys.

    Raises
    ------
    CodecError
        For an unsupported version or a named-topology task.
    """
    _check_version(info.version, "assignment")
    out = _Writer()
    out.uvarint(info.version)
    out.uvarint(info.latest_supported_version)
    out.uvarint(info.error_code)
    out.tasks(info.active)
    if info.version >= 2:
        out.tasks(info.standby)
        out.tasks(info.warmup)
    else:
        out.tasks((*info.standby, *info.warmup))
    out.uvarint(len(info.endpoints))
    for endpoint in sorted(info.endpoints):
        out.string(endpoint)
        out.tasks(info.endpoints[endpoint])
    out.svarint(info.next_probing_ms)
    return bytes(out.buf)


def decode_assignment(data: bytes) -> AssignmentInfo:
    """Decode an assignment of any supported version.

    Raises
    ------
    CodecError
        For truncated, malformed or trailing bytes, or an unsupported version.
    """
    reader = _Reader(data)
    version = reader.uvarint()
    latest = reader.uvarint()
    if not EARLIEST_SUPPORTED_VERSION <= version <= LATEST_SUPPORTED_VERSION:
        raise CodecError(f"assignment version {version} is not supported")
    error_code = reader.uvarint()
    if error_code not in (NO_ERROR, VERSION_PROBING):
        raise CodecError(f"unknown assignment error code {error_code}")
    active = reader.tasks()
    standby = reader.tasks()
    warmup = reader.tasks() if version >= 2 else ()
    endpoints: dict[str, tuple[TaskId, ...]] = {}
    for _ in range(reader.count("endpoint")):
        endpoint = reader.string()
        endpoints[endpoint] = reader.tasks()
    next_probing_ms = reader.svarint()
    reader.end()
    return AssignmentInfo(
        active, standby, warmup, endpoints, next_probing_ms, error_code, version, latest
    )
