"""Kafka Streams' consumer-protocol user data: ``SubscriptionInfo`` and ``AssignmentInfo``.

A classic-protocol Kafka Streams group (protocol type ``consumer``, protocol name ``stream``)
carries, in the ``user_data`` of each member's consumer subscription, Kafka Streams'
``SubscriptionInfo`` (``org.apache.kafka.streams.processor.internals.assignment``), and in each
member's assignment its ``AssignmentInfo``. ``DescribeGroups`` returns both for every member.
This module turns those bytes into values; it does no I/O.

Layouts, big-endian, as Kafka defines them:

* ``SubscriptionInfo`` is the generated message ``SubscriptionInfoData``
  (``streams/src/main/resources/common/message/SubscriptionInfoData.json``, versions 1-11, no
  flexible versions) written at its own version: ``int32 version``, ``int32
  latestSupportedVersion`` (3+), ``uuid processId``, ``[]TaskId prevTasks`` and ``[]TaskId
  standbyTasks`` (1-6), ``bytes userEndPoint`` (2+), ``[]TaskOffsetSum taskOffsetSums`` (7+;
  grouped by subtopology with a nested ``[]PartitionToOffsetSum`` in 7-9, one entry per task
  with a nullable named topology in 10+), ``int8 uniqueField`` (8+), ``int32 errorCode`` (9+),
  ``[]ClientTag clientTags`` (11+). Arrays are an ``int32`` count then the items; ``bytes`` an
  ``int32`` length; a nullable string an ``int16`` length (``-1`` for null).
* ``AssignmentInfo`` is written by hand (``AssignmentInfo#encode``): ``int32 version``, ``int32
  commonlySupportedVersion`` (3+), active tasks, standby tasks with their partitions, the
  partitions by host (2+; with a topic-name dictionary 5+, standby partitions by host 6+),
  ``int32 errorCode`` (4+), ``int64 nextRebalanceMs`` (7+). Strings are Java's
  ``DataOutput#writeUTF`` (``uint16`` length, modified UTF-8); a task id is ``int32
  subtopology, int32 partition`` and, in 10+, the named topology as an ``int32`` count of
  UTF-16 chars (``ConsumerProtocolUtils#writeTaskIdTo``).

The consumer-protocol envelopes around them, Kafka's ``ConsumerProtocolSubscription`` and
``ConsumerProtocolAssignment`` (``int16`` version prefix, versions 0-3), are decoded here too,
so the members' bytes of a ``DescribeGroups`` answer go in unchanged.

Kafka Streams 4.2, 4.3 and 4.4 send version 11 of both (``StreamsAssignmentProtocolVersions``
``LATEST_SUPPORTED_VERSION``, checked on captured bytes), and decode versions 1-11. A newer
version cannot be decoded: the version-probing header (``int32 version, int32
latestSupportedVersion``, present from version 3) is read and
:class:`~streams_assign.errors.CodecError` names both. Truncated or malformed bytes raise
``CodecError`` naming the message, its version, the field and the byte offset.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from streams_assign.errors import CodecError
from streams_assign.model import LONG_MAX_VALUE, TaskId

__all__ = [
    "CONSUMER_PROTOCOL_LATEST",
    "LATEST_OFFSET",
    "LATEST_SUPPORTED_VERSION",
    "UNKNOWN",
    "UNKNOWN_OFFSET_SUM",
    "ConsumerAssignment",
    "ConsumerSubscription",
    "HostInfo",
    "StreamsAssignmentInfo",
    "StreamsSubscription",
    "decode_assignment_info",
    "decode_consumer_assignment",
    "decode_consumer_subscription",
    "decode_subscription_info",
]

#: ``StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION``: the highest version decoded.
LATEST_SUPPORTED_VERSION = 11
#: Kafka's ``UNKNOWN`` latest / commonly supported version of versions 1 and 2 (not sent).
UNKNOWN = -1
#: ``Task.LATEST_OFFSET``: the offset sum a client reports for a task it runs as active.
LATEST_OFFSET = -2
#: ``SubscriptionInfo.UNKNOWN_OFFSET_SUM``: the offset sum of a standby task of versions 1-6.
UNKNOWN_OFFSET_SUM = -3
#: First version whose subscription carries task offset sums instead of task sets.
_MIN_OFFSET_SUM_VERSION = 7
#: First version with named topologies in task ids (``MIN_NAMED_TOPOLOGY_VERSION``).
_MIN_NAMED_TOPOLOGY_VERSION = 10


@dataclass(frozen=True, slots=True)
class HostInfo:
    """Kafka Streams' ``HostInfo``: the ``application.server`` endpoint of a client."""

    host: str
    port: int


@dataclass(frozen=True, slots=True)
class StreamsSubscription:
    """A decoded ``SubscriptionInfo``: what one stream thread (consumer) tells the leader.

    Attributes
    ----------
    version:
        The version the message is written at.
    latest_supported_version:
        The highest version the sender can read (:data:`UNKNOWN` in versions 1 and 2).
    process_id:
        The client's process id (``ProcessId``), shared by every thread of one instance.
    task_offset_sums:
        Task -> offset sum, as ``SubscriptionInfo#taskOffsetSums``: sent in version 7+
        (:data:`LATEST_OFFSET`, ``-2``, for a task the thread runs as active); in versions 1-6
        derived from the task sets, ``-2`` for previous active and :data:`UNKNOWN_OFFSET_SUM`
        for standby tasks. A task sent twice keeps its last value, as Kafka's ``HashMap``.
    previous_active, previous_standby:
        ``prevTasks`` / ``standbyTasks`` as sent in versions 1-6; in 7+ derived from the offset
        sums as Kafka does (``-2`` is active, any other value standby).
    user_endpoint:
        ``application.server`` (``host:port``), None when empty or before version 2.
    unique_field:
        The byte that makes each subscription differ (version 8+), else None.
    error_code:
        ``AssignorError`` code (version 9+), else None.
    client_tags:
        ``client.tag.*`` configs, key -> value (version 11+; empty before).
    """

    version: int
    latest_supported_version: int
    process_id: uuid.UUID
    task_offset_sums: Mapping[TaskId, int]
    previous_active: frozenset[TaskId]
    previous_standby: frozenset[TaskId]
    user_endpoint: str | None
    unique_field: int | None
    error_code: int | None
    client_tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StreamsAssignmentInfo:
    """A decoded ``AssignmentInfo``: what the leader assigns one stream thread (consumer).

    Attributes
    ----------
    version:
        The version the message is written at.
    commonly_supported_version:
        The highest version every member supports (:data:`UNKNOWN` in versions 1 and 2).
    active_tasks:
        Active tasks in the order sent (one per assigned partition, parallel to the
        consumer assignment's partitions sorted by topic and partition, so a task repeats).
    standby_tasks:
        Standby task -> its topic partitions (warmup replicas are among them).
    partitions_by_host, standby_partitions_by_host:
        Endpoint -> the partitions of its active / standby tasks (2+ / 6+; empty before).
    error_code:
        ``AssignorError`` code (4+; 0 before).
    next_rebalance_ms:
        Wall-clock time of the next probing rebalance (7+; Java's ``Long.MAX_VALUE`` for none
        and before 7).
    """

    version: int
    commonly_supported_version: int
    active_tasks: tuple[TaskId, ...]
    standby_tasks: Mapping[TaskId, frozenset[tuple[str, int]]]
    partitions_by_host: Mapping[HostInfo, frozenset[tuple[str, int]]]
    standby_partitions_by_host: Mapping[HostInfo, frozenset[tuple[str, int]]]
    error_code: int
    next_rebalance_ms: int


class _Reader:
    """Big-endian reads over one message; every failure is a ``CodecError`` naming the field."""

    def __init__(self, data: bytes, message: str) -> None:
        self.data = bytes(data)
        self.pos = 0
        self.message = message

    def fail(self, what: str, reason: str, at: int | None = None) -> CodecError:
        where = self.pos if at is None else at
        return CodecError(f"{self.message}: {what} at byte {where}: {reason}")

    def take(self, size: int, what: str) -> bytes:
        left = len(self.data) - self.pos
        if size > left:
            raise self.fail(what, f"truncated, needs {size} bytes, {left} left")
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def unpack(self, fmt: str, what: str) -> int:
        value: int = struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]
        return value

    def int8(self, what: str) -> int:
        return self.unpack(">b", what)

    def int16(self, what: str) -> int:
        return self.unpack(">h", what)

    def int32(self, what: str) -> int:
        return self.unpack(">i", what)

    def int64(self, what: str) -> int:
        return self.unpack(">q", what)

    def uuid(self, what: str) -> uuid.UUID:
        return uuid.UUID(bytes=self.take(16, what))

    def count(self, what: str, item_size: int) -> int:
        """An ``int32`` element count, checked against the bytes left (``item_size`` each)."""
        at = self.pos
        value = self.int32(what)
        if value < 0:
            raise self.fail(what, f"negative count {value}", at)
        if value * item_size > len(self.data) - self.pos:
            raise self.fail(
                what, f"count {value} exceeds the {len(self.data) - self.pos} bytes left", at
            )
        return value

    def text(self, raw: bytes, what: str, at: int) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(what, f"not UTF-8 ({exc.reason})", at) from None

    def bytes_field(self, what: str) -> bytes:
        """Kafka's non-nullable ``bytes``: ``int32`` length, then the bytes."""
        size = self.count(what, 1)
        return self.take(size, what)

    def nullable_string(self, what: str) -> str | None:
        """Kafka's nullable ``string`` of a non-flexible version: ``int16`` length or -1."""
        at = self.pos
        size = self.int16(what)
        if size == -1:
            return None
        if size < 0:
            raise self.fail(what, f"negative length {size}", at)
        return self.text(self.take(size, what), what, at)

    def java_utf(self, what: str) -> str:
        """Java's ``DataInput#readUTF``: ``uint16`` length, then modified UTF-8."""
        at = self.pos
        size = self.unpack(">H", what)
        raw = self.take(size, what).replace(b"\xc0\x80", b"\x00")
        try:
            text = raw.decode("utf-8", errors="surrogatepass")
            return text.encode("utf-16-be", errors="surrogatepass").decode("utf-16-be")
        except UnicodeError as exc:
            raise self.fail(what, f"not modified UTF-8 ({exc})", at) from None

    def java_chars(self, what: str) -> str:
        """An ``int32`` count of Java chars, then each as UTF-16 (``DataOutput#writeChars``)."""
        at = self.pos
        size = self.count(what, 2)
        try:
            return self.take(2 * size, what).decode("utf-16-be", errors="surrogatepass")
        except UnicodeError as exc:
            raise self.fail(what, f"not UTF-16 ({exc})", at) from None


def _task(subtopology: int, partition: int, name: str | None = None) -> TaskId:
    return TaskId(subtopology, partition, name or None)


def _header(r: _Reader, kind: str) -> tuple[int, int]:
    """``int32 version`` and, from version 3, ``int32 latestSupportedVersion``."""
    version = r.int32("version")
    r.message = f"{kind} v{version}"
    if version < 1:
        raise r.fail("version", f"{version} is not a version (Kafka's are 1-11)", 0)
    if version > LATEST_SUPPORTED_VERSION:
        latest = r.int32("latest supported version")
        raise CodecError(
            f"{kind}: version {version} (sender's latest supported {latest}) is newer than "
            f"{LATEST_SUPPORTED_VERSION}, the latest this decoder reads"
        )
    if version < 3:
        return version, UNKNOWN
    return version, r.int32("latest supported version")


def decode_subscription_info(data: bytes) -> StreamsSubscription:
    """Decode Kafka Streams' ``SubscriptionInfo`` (versions 1-11) from a subscription's user data.

    Parameters
    ----------
    data:
        The ``user_data`` of one member's consumer-protocol subscription.

    Returns
    -------
    StreamsSubscription
        The decoded message; trailing bytes are ignored, as Kafka's reader does.

    Raises
    ------
    CodecError
        For a version other than 1-11 (a newer one is named with the sender's latest supported
        version), a latest supported version below the version, or bytes that end early or
        hold an impossible value (names the field and the byte offset).
    """
    r = _Reader(data, "SubscriptionInfo")
    version, latest = _header(r, "SubscriptionInfo")
    if latest != UNKNOWN and latest < version:
        raise r.fail("latest supported version", f"{latest} is below version {version}", 4)
    process_id = r.uuid("processId")
    prev: set[TaskId] = set()
    standby: set[TaskId] = set()
    if version < _MIN_OFFSET_SUM_VERSION:
        prev = _task_set(r, "prevTasks")
        standby = _task_set(r, "standbyTasks")
    endpoint = ""
    if version >= 2:
        at = r.pos
        endpoint = r.text(r.bytes_field("userEndPoint"), "userEndPoint", at)
    sums: dict[TaskId, int] = {}
    if version >= _MIN_NAMED_TOPOLOGY_VERSION:
        sums = _task_offset_sums(r)
    elif version >= _MIN_OFFSET_SUM_VERSION:
        sums = _grouped_offset_sums(r)
    else:
        sums = {task: LATEST_OFFSET for task in prev}
        sums.update({task: UNKNOWN_OFFSET_SUM for task in standby if task not in prev})
    unique = r.int8("uniqueField") if version >= 8 else None
    error = r.int32("errorCode") if version >= 9 else None
    tags = _client_tags(r) if version >= 11 else {}
    if version >= _MIN_OFFSET_SUM_VERSION:
        prev = {task for task, offset in sums.items() if offset == LATEST_OFFSET}
        standby = set(sums) - prev
    return StreamsSubscription(
        version=version,
        latest_supported_version=latest,
        process_id=process_id,
        task_offset_sums=sums,
        previous_active=frozenset(prev),
        previous_standby=frozenset(standby),
        user_endpoint=endpoint or None,
        unique_field=unique,
        error_code=error,
        client_tags=tags,
    )


def _task_set(r: _Reader, what: str) -> set[TaskId]:
    """``[]TaskId`` of versions 1-6: ``int32 topicGroupId, int32 partition`` each."""
    tasks = set()
    for i in range(r.count(what, 8)):
        subtopology = r.int32(f"{what}[{i}].topicGroupId")
        tasks.add(_task(subtopology, r.int32(f"{what}[{i}].partition")))
    return tasks


def _grouped_offset_sums(r: _Reader) -> dict[TaskId, int]:
    """``[]TaskOffsetSum`` of versions 7-9: per subtopology, ``[]PartitionToOffsetSum``."""
    sums: dict[TaskId, int] = {}
    for i in range(r.count("taskOffsetSums", 8)):
        what = f"taskOffsetSums[{i}]"
        subtopology = r.int32(f"{what}.topicGroupId")
        for j in range(r.count(f"{what}.partitionToOffsetSum", 12)):
            partition = r.int32(f"{what}.partitionToOffsetSum[{j}].partition")
            sums[_task(subtopology, partition)] = r.int64(
                f"{what}.partitionToOffsetSum[{j}].offsetSum"
            )
    return sums


def _task_offset_sums(r: _Reader) -> dict[TaskId, int]:
    """``[]TaskOffsetSum`` of versions 10+: subtopology, partition, offset sum, named topology."""
    sums: dict[TaskId, int] = {}
    for i in range(r.count("taskOffsetSums", 18)):
        what = f"taskOffsetSums[{i}]"
        subtopology = r.int32(f"{what}.topicGroupId")
        partition = r.int32(f"{what}.partition")
        offset = r.int64(f"{what}.offsetSum")
        name = r.nullable_string(f"{what}.namedTopology")
        sums[_task(subtopology, partition, name)] = offset
    return sums


def _client_tags(r: _Reader) -> dict[str, str]:
    """``[]ClientTag`` of versions 11+: ``bytes key, bytes value`` (UTF-8) each."""
    tags = {}
    for i in range(r.count("clientTags", 8)):
        at = r.pos
        key = r.text(r.bytes_field(f"clientTags[{i}].key"), f"clientTags[{i}].key", at)
        at = r.pos
        tags[key] = r.text(r.bytes_field(f"clientTags[{i}].value"), f"clientTags[{i}].value", at)
    return tags


def decode_assignment_info(data: bytes) -> StreamsAssignmentInfo:
    """Decode Kafka Streams' ``AssignmentInfo`` (versions 1-11) from an assignment's user data.

    Parameters
    ----------
    data:
        The ``user_data`` of one member's consumer-protocol assignment.

    Returns
    -------
    StreamsAssignmentInfo
        The decoded message; trailing bytes are ignored, as ``AssignmentInfo#decode`` does.

    Raises
    ------
    CodecError
        For a version other than 1-11, or bytes that end early or hold an impossible value (a
        negative count, a topic index missing from the dictionary): names the field and offset.
    """
    r = _Reader(data, "AssignmentInfo")
    version, common = _header(r, "AssignmentInfo")
    active = tuple(
        _assigned_task(r, version, f"activeTasks[{i}]") for i in range(r.count("activeTasks", 8))
    )
    standby: dict[TaskId, frozenset[tuple[str, int]]] = {}
    for i in range(r.count("standbyTasks", 12)):
        task = _assigned_task(r, version, f"standbyTasks[{i}]")
        standby[task] = _named_partitions(r, f"standbyTasks[{i}].partitions")
    by_host: dict[HostInfo, frozenset[tuple[str, int]]] = {}
    standby_by_host: dict[HostInfo, frozenset[tuple[str, int]]] = {}
    if 2 <= version <= 4:
        by_host = _hosts(r, "partitionsByHost", None)
    elif version >= 5:
        topics = _topic_dictionary(r)
        by_host = _hosts(r, "partitionsByHost", topics)
        if version >= 6:
            standby_by_host = _hosts(r, "standbyPartitionsByHost", topics)
    error = r.int32("errorCode") if version >= 4 else 0
    next_rebalance = r.int64("nextRebalanceMs") if version >= 7 else LONG_MAX_VALUE
    return StreamsAssignmentInfo(
        version=version,
        commonly_supported_version=common,
        active_tasks=active,
        standby_tasks=standby,
        partitions_by_host=by_host,
        standby_partitions_by_host=standby_by_host,
        error_code=error,
        next_rebalance_ms=next_rebalance,
    )


def _assigned_task(r: _Reader, version: int, what: str) -> TaskId:
    """A task id of ``ConsumerProtocolUtils#readTaskIdFrom``."""
    subtopology = r.int32(f"{what}.subtopology")
    partition = r.int32(f"{what}.partition")
    name = r.java_chars(f"{what}.namedTopology") if version >= _MIN_NAMED_TOPOLOGY_VERSION else ""
    return _task(subtopology, partition, name)


def _named_partitions(r: _Reader, what: str) -> frozenset[tuple[str, int]]:
    """``int32`` count, then ``UTF topic, int32 partition`` each."""
    partitions = set()
    for i in range(r.count(what, 6)):
        topic = r.java_utf(f"{what}[{i}].topic")
        partitions.add((topic, r.int32(f"{what}[{i}].partition")))
    return frozenset(partitions)


def _topic_dictionary(r: _Reader) -> dict[int, str]:
    """Versions 5+: ``int32`` count, then ``int32 index, UTF topic`` each."""
    topics = {}
    for i in range(r.count("topicDictionary", 6)):
        index = r.int32(f"topicDictionary[{i}].index")
        topics[index] = r.java_utf(f"topicDictionary[{i}].topic")
    return topics


def _hosts(
    r: _Reader, what: str, topics: dict[int, str] | None
) -> dict[HostInfo, frozenset[tuple[str, int]]]:
    """Host -> partitions: ``UTF host, int32 port`` then the partitions, named (versions 2-4)
    or by topic index (5+)."""
    hosts = {}
    for i in range(r.count(what, 10)):
        host = HostInfo(r.java_utf(f"{what}[{i}].host"), r.int32(f"{what}[{i}].port"))
        if topics is None:
            hosts[host] = _named_partitions(r, f"{what}[{i}].partitions")
            continue
        partitions = set()
        for j in range(r.count(f"{what}[{i}].partitions", 8)):
            at = r.pos
            index = r.int32(f"{what}[{i}].partitions[{j}].topicIndex")
            if index not in topics:
                raise r.fail(
                    f"{what}[{i}].partitions[{j}].topicIndex", f"{index} not in the dictionary", at
                )
            partitions.add((topics[index], r.int32(f"{what}[{i}].partitions[{j}].partition")))
        hosts[host] = frozenset(partitions)
    return hosts


# ---------------------------------------------------------------------- the consumer protocol
#: Highest ``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment`` version decoded.
CONSUMER_PROTOCOL_LATEST = 3


@dataclass(frozen=True, slots=True)
class ConsumerSubscription:
    """Kafka's ``ConsumerProtocolSubscription``: a member's metadata in a ``consumer`` group.

    Attributes
    ----------
    version:
        ``int16`` version prefix (0-3; Kafka 4.x sends 3).
    topics:
        Subscribed topics.
    user_data:
        The assignor's bytes (Kafka Streams' ``SubscriptionInfo``), None when null.
    owned_partitions:
        Partitions the member owns (1+), ``(topic, partition)``.
    generation_id:
        The generation the owned partitions are from (2+; -1 when absent).
    rack_id:
        ``client.rack`` (3+), None when unset.
    """

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None
    owned_partitions: tuple[tuple[str, int], ...] = ()
    generation_id: int = -1
    rack_id: str | None = None


@dataclass(frozen=True, slots=True)
class ConsumerAssignment:
    """Kafka's ``ConsumerProtocolAssignment``: a member's assignment in a ``consumer`` group."""

    version: int
    partitions: tuple[tuple[str, int], ...]
    user_data: bytes | None


def _string(r: _Reader, what: str) -> str:
    value = r.nullable_string(what)
    if value is None:
        raise r.fail(what, "null in a non-nullable string", r.pos - 2)
    return value


def _nullable_bytes(r: _Reader, what: str) -> bytes | None:
    at = r.pos
    size = r.int32(what)
    if size == -1:
        return None
    r.pos = at
    return r.bytes_field(what)


def _topic_partitions(r: _Reader, what: str) -> tuple[tuple[str, int], ...]:
    out = []
    for i in range(r.count(what, 6)):
        topic = _string(r, f"{what}[{i}].topic")
        for j in range(r.count(f"{what}[{i}].partitions", 4)):
            out.append((topic, r.int32(f"{what}[{i}].partitions[{j}]")))
    return tuple(out)


def _consumer_version(r: _Reader) -> int:
    version = r.int16("version")
    r.message = f"{r.message} v{version}"
    if not 0 <= version <= CONSUMER_PROTOCOL_LATEST:
        raise r.fail("version", f"{version} is not 0-{CONSUMER_PROTOCOL_LATEST}", 0)
    return version


def decode_consumer_subscription(data: bytes) -> ConsumerSubscription:
    """Decode a ``ConsumerProtocolSubscription`` (``ConsumerProtocol#deserializeSubscription``).

    Layout: ``int16 version``, ``[]string topics``, nullable ``bytes userData``, then
    ``[]TopicPartition ownedPartitions`` (1+), ``int32 generationId`` (2+), nullable ``string
    rackId`` (3+).

    Raises
    ------
    CodecError
        For a version other than 0-3, or bytes that end early (names the field and offset).
    """
    r = _Reader(data, "ConsumerProtocolSubscription")
    version = _consumer_version(r)
    topics = tuple(_string(r, f"topics[{i}]") for i in range(r.count("topics", 2)))
    user_data = _nullable_bytes(r, "userData")
    owned = _topic_partitions(r, "ownedPartitions") if version >= 1 else ()
    generation = r.int32("generationId") if version >= 2 else -1
    rack = r.nullable_string("rackId") if version >= 3 else None
    return ConsumerSubscription(version, topics, user_data, owned, generation, rack)


def decode_consumer_assignment(data: bytes) -> ConsumerAssignment:
    """Decode a ``ConsumerProtocolAssignment`` (``ConsumerProtocol#deserializeAssignment``).

    Layout: ``int16 version``, ``[]TopicPartition assignedPartitions``, nullable ``bytes
    userData``.

    Raises
    ------
    CodecError
        For a version other than 0-3, or bytes that end early (names the field and offset).
    """
    r = _Reader(data, "ConsumerProtocolAssignment")
    version = _consumer_version(r)
    partitions = _topic_partitions(r, "assignedPartitions")
    return ConsumerAssignment(version, partitions, _nullable_bytes(r, "userData"))
