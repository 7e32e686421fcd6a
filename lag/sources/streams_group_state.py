"""Read a classic Kafka Streams group's own state through the admin API (``DescribeGroups``).

Every member of a classic-protocol Kafka Streams group (protocol type ``consumer``, protocol
``stream``) is one stream thread. ``DescribeGroups`` returns, for each, the metadata it joined
with (Kafka's ``ConsumerProtocolSubscription``, whose user data is Kafka Streams'
``SubscriptionInfo``: process id, task offset sums, client tags, endpoint) and the assignment
the leader gave it (``ConsumerProtocolAssignment`` carrying ``AssignmentInfo``: active and
standby tasks). These are the leader's exact inputs and outputs at the group's last rebalance;
:mod:`streams_assign.formats.streams_user_data` decodes them.

:func:`read_streams_members` asks the cluster; :func:`decode_members` turns one group
description into members and needs no cluster. Both raise one-line errors naming the group,
the member and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from streams_assign.errors import CodecError, LagInputError, MissingExtraError
from streams_assign.formats.streams_user_data import (
    StreamsAssignmentInfo,
    StreamsSubscription,
    decode_assignment_info,
    decode_consumer_assignment,
    decode_consumer_subscription,
    decode_subscription_info,
)
from streams_assign.model import TaskId

__all__ = [
    "GroupDescription",
    "RawMember",
    "StreamsMember",
    "decode_members",
    "describe_group",
    "member_document",
    "read_streams_members",
]

#: The protocol type and name of a classic Kafka Streams group (``StreamsPartitionAssignor``).
PROTOCOL_TYPE = "consumer"
PROTOCOL_NAME = "stream"


@dataclass(frozen=True, slots=True)
class RawMember:
    """One member of a ``DescribeGroups`` answer, its metadata and assignment as raw bytes."""

    member_id: str
    client_id: str
    client_host: str
    group_instance_id: str | None
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupDescription:
    """One group of a ``DescribeGroups`` answer (``protocol`` is Kafka's ``protocolData``)."""

    group_id: str
    error_code: int
    state: str
    protocol_type: str
    protocol: str
    members: tuple[RawMember, ...]


@dataclass(frozen=True, slots=True)
class StreamsMember:
    """One stream thread of the group, decoded.

    Attributes
    ----------
    member_id, client_id, client_host, group_instance_id:
        As the group coordinator reports them.
    topics:
        The topics the thread subscribed to.
    subscription:
        Its ``SubscriptionInfo``.
    assignment:
        Its ``AssignmentInfo``, None while the group rebalances (an empty assignment).
    assigned_partitions:
        The partitions of its consumer assignment, ``(topic, partition)``.
    """

    member_id: str
    client_id: str
    client_host: str
    group_instance_id: str | None
    topics: tuple[str, ...]
    subscription: StreamsSubscription
    assignment: StreamsAssignmentInfo | None
    assigned_partitions: tuple[tuple[str, int], ...]


def decode_members(group: GroupDescription) -> list[StreamsMember]:
    """Decode every member of a classic Kafka Streams group's description.

    Raises
    ------
    LagInputError
        When the group does not exist (``Dead`` without members, or Kafka's
        ``GROUP_ID_NOT_FOUND``), has no members (``Empty``: no instance runs), or is not a
        Kafka Streams group (protocol type not ``consumer`` or protocol not ``stream``).
    CodecError
        When a member's metadata or assignment cannot be decoded: one line naming the group,
        the member and the field.
    """
    name = group.group_id
    if group.error_code == 69 or (group.state == "Dead" and not group.members):
        raise LagInputError(f"group {name!r}: no such group (no Kafka Streams app joined it)")
    if group.error_code:
        raise LagInputError(f"group {name!r}: DescribeGroups failed with error {group.error_code}")
    if not group.members:
        raise LagInputError(f"group {name!r} has no members (state {group.state})")
    if group.protocol_type != PROTOCOL_TYPE or group.protocol != PROTOCOL_NAME:
        raise LagInputError(
            f"group {name!r} is not a classic Kafka Streams group: protocol type "
            f"{group.protocol_type!r}, protocol {group.protocol!r} (expected "
            f"{PROTOCOL_TYPE!r} / {PROTOCOL_NAME!r})"
        )
    return [_decode_member(name, member) for member in group.members]


def _decode_member(group: str, member: RawMember) -> StreamsMember:
    where = f"group {group!r} member {member.member_id!r}"
    try:
        envelope = decode_consumer_subscription(member.metadata)
        if envelope.user_data is None:
            raise CodecError("ConsumerProtocolSubscription: userData is null")
        subscription = decode_subscription_info(envelope.user_data)
        assignment = None
        partitions: tuple[tuple[str, int], ...] = ()
        if member.assignment:
            assigned = decode_consumer_assignment(member.assignment)
            partitions = assigned.partitions
            if assigned.user_data:
                assignment = decode_assignment_info(assigned.user_data)
    except CodecError as exc:
        raise CodecError(f"{where}: {exc}") from None
    return StreamsMember(
        member_id=member.member_id,
        client_id=member.client_id,
        client_host=member.client_host,
        group_instance_id=member.group_instance_id,
        topics=envelope.topics,
        subscription=subscription,
        assignment=assignment,
        assigned_partitions=partitions,
    )


def _order(task: TaskId) -> tuple[str, int, int]:
    return (task.topology_name or "", task.subtopology, task.partition)


def member_document(member: StreamsMember) -> dict[str, Any]:
    """One member as JSON-ready values (task ids written ``1_3``, sorted)."""
    sub, asg = member.subscription, member.assignment
    return {
        "member_id": member.member_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "group_instance_id": member.group_instance_id,
        "subscription": {
            "version": sub.version,
            "latest_supported_version": sub.latest_supported_version,
            "process_id": str(sub.process_id),
            "user_endpoint": sub.user_endpoint,
            "client_tags": dict(sorted(sub.client_tags.items())),
            "task_offset_sums": {
                str(t): sub.task_offset_sums[t] for t in sorted(sub.task_offset_sums, key=_order)
            },
            "unique_field": sub.unique_field,
            "error_code": sub.error_code,
        },
        "assignment": None
        if asg is None
        else {
            "version": asg.version,
            "commonly_supported_version": asg.commonly_supported_version,
            "active_tasks": [str(t) for t in sorted(set(asg.active_tasks), key=_order)],
            "standby_tasks": [str(t) for t in sorted(asg.standby_tasks, key=_order)],
            "error_code": asg.error_code,
            "next_rebalance_ms": asg.next_rebalance_ms,
        },
    }


def read_streams_members(
    admin_or_bootstrap: Any, application_id: str, timeout_ms: int = 30_000
) -> list[StreamsMember]:
    """The decoded members of the classic Kafka Streams group ``application_id``.

    Parameters
    ----------
    admin_or_bootstrap:
        A kafka-python ``KafkaAdminClient`` (its security settings are used), or
        ``"HOST:PORT"`` for a plaintext client made and closed here.
    application_id:
        The Streams ``application.id``, which is the group id.
    timeout_ms:
        Time-out of each request, in milliseconds.

    Raises
    ------
    LagInputError
        A missing or non-Streams group, or a cluster that does not answer in time.
    CodecError
        Undecodable user data (names group, member and field).
    MissingExtraError
        When kafka-python is not installed (the ``clients`` extra).
    """
    return decode_members(describe_group(admin_or_bootstrap, application_id, timeout_ms))


def describe_group(admin_or_bootstrap: Any, group_id: str, timeout_ms: int) -> GroupDescription:
    """Send ``DescribeGroups`` for one group to its coordinator; members' bytes kept raw.

    kafka-python's ``describe_groups`` turns the user data into text, losing bytes, so the
    request is sent through the admin client's connection manager with kafka-python's own
    protocol classes.
    """
    try:
        from kafka.admin import KafkaAdminClient
        from kafka.errors import KafkaError
        from kafka.protocol.admin import DescribeGroupsRequest
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("reading a Streams group", "clients", "kafka") from exc
    own = isinstance(admin_or_bootstrap, str)
    try:
        admin = (
            KafkaAdminClient(bootstrap_servers=admin_or_bootstrap, request_timeout_ms=timeout_ms)
            if own
            else admin_or_bootstrap
        )
    except KafkaError as exc:
        raise LagInputError(f"bootstrap {admin_or_bootstrap}: no answer: {exc}") from None
    request = DescribeGroupsRequest(groups=[group_id], include_authorized_operations=False)

    async def ask() -> Any:
        coordinators = await admin._find_coordinator_ids([group_id])
        return await admin._manager.send(
            request, node_id=coordinators[group_id], request_timeout_ms=timeout_ms
        )

    try:
        response = admin._manager.run(ask)
    except (TimeoutError, KafkaError, OSError) as exc:
        raise LagInputError(f"group {group_id!r}: DescribeGroups failed: {exc!r}") from None
    finally:
        if own:
            admin.close()
    return _description(response.groups, group_id)


def _description(groups: Sequence[Any], group_id: str) -> GroupDescription:
    for group in groups:
        if group.group_id == group_id:
            return GroupDescription(
                group_id=group.group_id,
                error_code=group.error_code,
                state=group.group_state,
                protocol_type=group.protocol_type,
                protocol=group.protocol_data,
                members=tuple(
                    RawMember(
                        member_id=m.member_id,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        group_instance_id=m.group_instance_id,
                        metadata=bytes(m.member_metadata or b""),
                        assignment=bytes(m.member_assignment or b""),
                    )
                    for m in group.members
                ),
            )
    raise LagInputError(f"group {group_id!r}: DescribeGroups answered without it")
