"""Ask a live cluster what a Kafka Streams group leader asks it: the group and the end offsets.

- :func:`admin_settings`: Kafka's client properties (``--command-config``, as the Kafka tools
  take them: ``security.protocol``, ``sasl.*``, ``ssl.*``) as kafka-python's settings;
- :func:`open_admin`: a kafka-python ``KafkaAdminClient`` with a time-out and a clear message;
- :func:`read_live_group`: the group's members (``DescribeGroups``, decoded by
  :mod:`lag.sources.streams_group_state`), the application's changelog topics and their end
  offsets (``ListOffsets`` latest, what ``StreamsPartitionAssignor.computeEndOffsetSumsByTask``
  fetches through ``Admin#listOffsets``), and the moment they were read.

Every failure is a :class:`~streams_assign.errors.LagInputError` (or ``CodecError`` for user
data) of one line naming what and where.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lag.sources.streams_group_state import StreamsMember, decode_members, describe_group
from streams_assign.errors import LagInputError, MissingExtraError

__all__ = [
    "LiveGroup",
    "admin_settings",
    "listed_group_type",
    "live_group_type",
    "open_admin",
    "read_live_group",
]

_JAAS = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
#: Kafka client properties with a kafka-python setting of the same meaning.
_DIRECT = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
    "ssl.key.password": "ssl_password",
    "client.id": "client_id",
}
#: Kafka client properties that change nothing the admin requests need.
_IGNORED_PREFIXES = ("bootstrap.servers", "request.timeout.ms", "default.api.timeout.ms")


@dataclass
class LiveGroup:
    """What the cluster answered.

    Attributes
    ----------
    application_id:
        The group id.
    members:
        The decoded stream threads.
    end_offsets:
        ``(changelog topic, partition)`` -> end offset, records.
    time_ms:
        When the answers were read (epoch ms).
    where:
        The bootstrap servers asked.
    """

    application_id: str
    members: list[StreamsMember]
    end_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    time_ms: int = 0
    where: str = ""


def admin_settings(properties: dict[str, str], source: str = "--command-config") -> dict[str, Any]:
    """kafka-python admin settings from Kafka's client properties.

    Parameters
    ----------
    properties:
        Key -> value of a Kafka client properties file.
    source:
        The file, for messages.

    Returns
    -------
    dict
        ``security_protocol``, ``sasl_*``, ``ssl_*``, ``client_id`` as kafka-python names them.

    Raises
    ------
    LagInputError
        For a setting kafka-python cannot honour (a JKS or PKCS12 store: give
        ``ssl.truststore.type=PEM`` / ``ssl.keystore.type=PEM``; an unparsable
        ``sasl.jaas.config``), naming the file, key and value.
    """
    settings: dict[str, Any] = {}
    for key, value in properties.items():
        if key in _DIRECT:
            settings[_DIRECT[key]] = value
        elif key == "sasl.jaas.config":
            found = dict(_JAAS.findall(value))
            if "username" in found and "password" in found:
                settings["sasl_plain_username"] = found["username"]
                settings["sasl_plain_password"] = found["password"]
            elif "OAuthBearer" not in value and "Krb5LoginModule" not in value:
                raise LagInputError(f"{source}: sasl.jaas.config: no username/password in it")
        elif key in ("ssl.truststore.location", "ssl.keystore.location"):
            kind = properties.get(key.replace("location", "type"), "JKS").upper()
            if kind != "PEM":
                raise LagInputError(
                    f"{source}: {key} = {value!r} is a {kind} store; Python's TLS reads PEM "
                    f"files: convert it and set {key.replace('location', 'type')}=PEM"
                )
            if key == "ssl.truststore.location":
                settings["ssl_cafile"] = value
            else:
                settings["ssl_certfile"] = settings["ssl_keyfile"] = value
        elif key == "ssl.endpoint.identification.algorithm":
            settings["ssl_check_hostname"] = value.strip().upper() == "HTTPS"
    if settings.get("sasl_mechanism") == "OAUTHBEARER":
        raise LagInputError(f"{source}: sasl.mechanism OAUTHBEARER needs a token provider")
    return settings


def open_admin(
    bootstrap: str, properties: dict[str, str] | None = None, timeout_ms: int = 30_000
) -> Any:
    """A kafka-python ``KafkaAdminClient`` for ``bootstrap`` with the given client properties.

    Raises
    ------
    LagInputError
        When no broker answers within ``timeout_ms`` (naming the bootstrap servers), or the
        properties cannot be honoured.
    MissingExtraError
        When kafka-python is not installed (the ``clients`` extra).
    """
    try:
        from kafka.admin import KafkaAdminClient
        from kafka.errors import KafkaError
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("reading a live cluster", "clients", "kafka") from exc
    settings = admin_settings(properties or {})
    try:
        return KafkaAdminClient(
            bootstrap_servers=bootstrap,
            request_timeout_ms=timeout_ms,
            bootstrap_timeout_ms=timeout_ms,
            **settings,
        )
    except KafkaError as exc:
        raise LagInputError(
            f"--bootstrap-server {bootstrap}: no broker answered within {timeout_ms} ms "
            f"({type(exc).__name__})"
        ) from None
    except (OSError, ValueError) as exc:
        raise LagInputError(f"--bootstrap-server {bootstrap}: cannot connect: {exc}") from None


def read_live_group(
    bootstrap: str,
    application_id: str,
    properties: dict[str, str] | None = None,
    timeout_ms: int = 30_000,
) -> LiveGroup:
    """The group's members and its changelogs' end offsets, read from the cluster now.

    Parameters
    ----------
    bootstrap:
        ``HOST:PORT[,HOST:PORT...]``.
    application_id:
        The Streams ``application.id`` (the group id, and the changelogs' prefix).
    properties:
        Kafka client properties (``--command-config``), or None for plaintext.
    timeout_ms:
        Time-out of each request, in milliseconds.

    Raises
    ------
    LagInputError
        No broker answers; no such group; a group without members; a group that is not a
        classic Kafka Streams group; a request that fails or times out.
    CodecError
        A member's user data cannot be decoded (naming group, member and field).
    """
    admin = open_admin(bootstrap, properties, timeout_ms)
    try:
        check_group_listed(admin, application_id, bootstrap)
        members = decode_members(describe_group(admin, application_id, timeout_ms))
        read_at = int(time.time() * 1000)
        end_offsets = changelog_end_offsets(admin, application_id, timeout_ms)
    finally:
        admin.close()
    return LiveGroup(application_id, members, end_offsets, read_at, bootstrap)


def listed_group_type(admin: Any, application_id: str, bootstrap: str) -> str:
    """The group's type as ``ListGroups`` (v5+, KIP-848) names it: ``classic``, ``consumer``,
    ``streams`` (KIP-1071) or ``share``; ``classic`` from a broker too old to say.

    Raises
    ------
    LagInputError
        When ``ListGroups`` fails, or no group has the id (one line naming the bootstrap servers
        and the application id).
    """
    from kafka.errors import KafkaError

    try:
        listed = {g["group_id"]: g for g in admin.list_groups()}
    except (KafkaError, TimeoutError, OSError) as exc:
        raise LagInputError(f"{bootstrap}: ListGroups failed: {type(exc).__name__}") from None
    group = listed.get(application_id)
    if group is None:
        raise LagInputError(
            f"no group {application_id!r} on the cluster at {bootstrap} (ListGroups): is the "
            f"application running, and is {application_id!r} its application.id?"
        )
    return str(group.get("group_type") or "classic")


def live_group_type(
    bootstrap: str,
    application_id: str,
    properties: dict[str, str] | None = None,
    timeout_ms: int = 30_000,
) -> str:
    """The type of the live group ``application_id`` (:func:`listed_group_type`), asked now.

    ``streams-lag snapshot`` and ``streams-assign``'s live mode read a ``classic`` group with
    :func:`read_live_group` and a ``streams`` group (``group.protocol=streams``) with
    :func:`lag.sources.streams_group_describe.read_live_streams_group`.

    Raises
    ------
    LagInputError
        No broker answers within ``timeout_ms``; no such group; ``ListGroups`` fails.
    """
    admin = open_admin(bootstrap, properties, timeout_ms)
    try:
        return listed_group_type(admin, application_id, bootstrap)
    finally:
        admin.close()


def check_group_listed(admin: Any, application_id: str, bootstrap: str) -> None:
    """Check with ``ListGroups`` that the group exists and is a classic group.

    Raises
    ------
    LagInputError
        When no group has the id, or it is a KIP-848 consumer group or a KIP-1071 streams group
        (``group.protocol=streams``), whose members ``DescribeGroups`` does not describe.
    """
    kind = listed_group_type(admin, application_id, bootstrap)
    if kind != "classic":
        raise LagInputError(
            f"group {application_id!r} at {bootstrap} is a {kind} group (KIP-848/KIP-1071), "
            "not a classic Kafka Streams group: DescribeGroups does not describe its members"
            + (
                " (a streams group: streams-lag snapshot / streams-lag streams-group read it)"
                if kind == "streams"
                else ""
            )
        )


def changelog_end_offsets(
    admin: Any, application_id: str, timeout_ms: int
) -> dict[tuple[str, int], int]:
    """End offsets (``ListOffsets`` latest) of every ``<application.id>-*-changelog`` topic.

    Raises
    ------
    LagInputError
        When listing, describing or ``ListOffsets`` fails or times out.
    """
    from kafka.admin import OffsetSpec
    from kafka.errors import KafkaError
    from kafka.structs import TopicPartition

    prefix = f"{application_id}-"
    try:
        topics = sorted(
            t for t in admin.list_topics() if t.startswith(prefix) and t.endswith("-changelog")
        )
        if not topics:
            return {}
        described = admin.describe_topics(topics)
        specs = {
            TopicPartition(d["name"], p["partition_index"]): OffsetSpec.LATEST
            for d in described
            for p in d["partitions"]
        }
        answer = admin.list_partition_offsets(specs, timeout_ms=timeout_ms)
    except (KafkaError, TimeoutError, OSError) as exc:
        raise LagInputError(
            f"changelogs of {application_id!r}: ListOffsets failed: {type(exc).__name__}: {exc}"
        ) from None
    return {(tp.topic, tp.partition): int(found.offset) for tp, found in answer.items()}


def read_command_config(path: str | Path | None) -> dict[str, str]:
    """Kafka client properties from ``--command-config`` (empty when None).

    Raises
    ------
    LagInputError
        When the file is missing or malformed.
    """
    if path is None:
        return {}
    from lag.sources.streams_config import parse_properties

    target = Path(path)
    try:
        text = target.read_bytes().decode("iso-8859-1")
    except OSError as exc:
        raise LagInputError(
            f"--command-config {path}: cannot read: {exc.strerror or exc}"
        ) from None
    properties = parse_properties(text, str(path))
    admin_settings(properties, f"--command-config {path}")
    return properties
