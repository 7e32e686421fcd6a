"""The format extensions of the cluster state, parsed once into typed values.

``docs/formats.md`` documents the optional top-level fields this project adds to
``docs/scenario-format.md``: the source and changelog partitions of each task and the racks of
partitions and clients (KIP-925 rack-aware assignment), and the group leader and its clock
(cooperative revocation in ``StreamsPartitionAssignor``). :func:`parse_extensions` checks them
with one set of rules and returns an :class:`Extensions`, which
:func:`~streams_assign.formats.cluster_state.parse_cluster_state` stores on the
``ClusterState``; the assignors read those fields and parse nothing themselves.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streams_assign.errors import InvalidScenarioError, InvalidTaskIdError
from streams_assign.model import LONG_MAX_VALUE, ClientState, TaskId, TopicPartition

__all__ = ["EXTENSION_KEYS", "Extensions", "parse_extensions"]

#: The optional top-level fields of the format extensions.
EXTENSION_KEYS = frozenset(
    {
        "leader",
        "task_partitions",
        "task_changelog_partitions",
        "partition_racks",
        "client_racks",
        "now_ms",
    }
)


@dataclass(frozen=True, slots=True)
class Extensions:
    """The typed extension fields of one cluster state (``None``: the field is absent).

    Attributes
    ----------
    task_partitions:
        Per task, its source partitions ``(topic, partition)``, without duplicates, in input
        order (Kafka's ``Set<TopicPartition>``). When a consumer lists ``owned_partitions``
        (cooperative revocation) a partition belongs to one task; rack-aware assignment alone
        accepts a partition read by several tasks, as Kafka's does.
    task_changelog_partitions:
        Per stateful task, its changelog partitions, same shape.
    partition_racks:
        Per partition, the racks of its replicas; empty when a replica has no rack (Kafka then
        cannot use the partition for rack-aware assignment).
    client_racks:
        Process id -> ``client.rack``, for clients given without their stream threads.
    leader:
        The process id of the group leader's client (``leader`` names it or one of its members).
    now_ms:
        The leader's clock, in milliseconds since the epoch.
    """

    task_partitions: Mapping[TaskId, tuple[TopicPartition, ...]] | None = None
    task_changelog_partitions: Mapping[TaskId, tuple[TopicPartition, ...]] | None = None
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None
    client_racks: Mapping[str, str] | None = None
    leader: str | None = None
    now_ms: int | None = None


def parse_extensions(
    document: Mapping[str, Any],
    known: frozenset[TaskId],
    clients: Sequence[ClientState],
    warnings: list[str],
) -> Extensions:
    """Check and type the extension fields of a cluster-state document.

    Parameters
    ----------
    document:
        The whole document (only the :data:`EXTENSION_KEYS` are read).
    known:
        Every stateful and stateless task: partitions of other tasks are ignored with a warning.
    clients:
        The parsed clients, to resolve ``leader``.
    warnings:
        Appended with one sentence per ignored entry.

    Raises
    ------
    InvalidScenarioError
        Naming the JSON path and the value: a malformed map or pair, a partition claimed by
        two tasks when partitions are revoked, a rack that is not a non-empty string, a
        ``leader`` that is neither a client nor a member id, a ``now_ms`` outside
        ``[0, Long.MAX_VALUE]``.
    """
    # Cooperative revocation maps each owned partition back to one task; rack-aware assignment
    # accepts a partition read by several tasks (Kafka's RackAwareTaskAssignorTest does that).
    revoking = any(c.owned_partitions for client in clients for c in client.consumers or ())
    return Extensions(
        task_partitions=_task_partitions(document, "task_partitions", known, warnings, revoking),
        task_changelog_partitions=_task_partitions(
            document, "task_changelog_partitions", known, warnings, False
        ),
        partition_racks=_partition_racks(document),
        client_racks=_client_racks(document),
        leader=_leader(document, clients),
        now_ms=_now_ms(document),
    )


def _task_partitions(
    document: Mapping[str, Any],
    path: str,
    known: frozenset[TaskId],
    warnings: list[str],
    one_owner: bool,
) -> dict[TaskId, tuple[TopicPartition, ...]] | None:
    if path not in document:
        return None
    raw = document[path]
    if not isinstance(raw, dict):
        raise InvalidScenarioError(
            path, f"must be an object of task id to [[topic, partition], ...], got {raw!r}"
        )
    result: dict[TaskId, tuple[TopicPartition, ...]] = {}
    claimed: dict[TopicPartition, str] = {}
    for text, pairs in raw.items():
        where = f"{path}.{text}"
        try:
            task = TaskId.parse(text)
        except InvalidTaskIdError as exc:
            raise InvalidTaskIdError(where, exc.reason) from None
        if not isinstance(pairs, list):
            raise InvalidScenarioError(
                where, f"must be a list of [topic, partition] pairs, got {pairs!r}"
            )
        # A Set<TopicPartition> in Kafka: duplicates collapse.
        partitions = tuple(
            dict.fromkeys(_topic_partition(p, f"{where}[{i}]") for i, p in enumerate(pairs))
        )
        for i, partition in enumerate(partitions):
            owner = claimed.setdefault(partition, text)
            if one_owner and owner != text:
                raise InvalidScenarioError(
                    f"{where}[{i}]", f"partition {list(partition)!r} also belongs to task {owner}"
                )
        if task in known:
            result[task] = partitions
        else:
            warnings.append(f"{where}: task {task} is in neither task list; ignored")
    return result


def _topic_partition(pair: Any, where: str) -> TopicPartition:
    if (
        not isinstance(pair, list)
        or len(pair) != 2
        or not isinstance(pair[0], str)
        or not pair[0]
        or isinstance(pair[1], bool)
        or not isinstance(pair[1], int)
        or pair[1] < 0
    ):
        raise InvalidScenarioError(where, f"must be a [topic, partition >= 0] pair, got {pair!r}")
    return (pair[0], pair[1])


def _partition_racks(document: Mapping[str, Any]) -> dict[TopicPartition, frozenset[str]] | None:
    path = "partition_racks"
    if path not in document:
        return None
    raw = document[path]
    if not isinstance(raw, dict):
        raise InvalidScenarioError(
            path, f'must be an object of "topic:partition" to rack list, got {raw!r}'
        )
    result: dict[TopicPartition, frozenset[str]] = {}
    for key, racks in raw.items():
        where = f"{path}.{key}"
        topic, sep, number = key.rpartition(":")
        if not sep or not topic or not number.isdigit():
            raise InvalidScenarioError(where, f'key must be "<topic>:<partition>", got {key!r}')
        if not isinstance(racks, list) or not all(
            r is None or (isinstance(r, str) and r) for r in racks
        ):
            raise InvalidScenarioError(
                where, f"must be a list of rack names (null: a replica without rack), got {racks!r}"
            )
        # A replica on a broker without rack makes the partition unusable, as in Kafka.
        result[(topic, int(number))] = frozenset() if None in racks else frozenset(racks)
    return result


def _client_racks(document: Mapping[str, Any]) -> dict[str, str] | None:
    path = "client_racks"
    if path not in document:
        return None
    raw = document[path]
    if not isinstance(raw, dict):
        raise InvalidScenarioError(path, f"must be an object of process id to rack, got {raw!r}")
    result: dict[str, str] = {}
    for key, rack in raw.items():
        where = f"{path}.{key}"
        try:
            process_id = str(uuid.UUID(key))
        except ValueError:
            raise InvalidScenarioError(where, f"not a UUID: {key!r}") from None
        if not isinstance(rack, str) or not rack:
            raise InvalidScenarioError(where, f"must be a rack name, got {rack!r}")
        result[process_id] = rack
    return result


def _leader(document: Mapping[str, Any], clients: Sequence[ClientState]) -> str | None:
    if "leader" not in document:
        return None
    leader = document["leader"]
    if not isinstance(leader, str):
        raise InvalidScenarioError("leader", f"must be a process id or member id, got {leader!r}")
    for client in clients:
        if client.id == leader.lower() or any(
            c.member_id == leader for c in client.consumers or ()
        ):
            return client.id
    raise InvalidScenarioError("leader", f"is neither a client id nor a member id: {leader!r}")


def _now_ms(document: Mapping[str, Any]) -> int | None:
    if "now_ms" not in document:
        return None
    now_ms = document["now_ms"]
    if isinstance(now_ms, bool) or not isinstance(now_ms, int) or not 0 <= now_ms <= LONG_MAX_VALUE:
        raise InvalidScenarioError(
            "now_ms", f"must be a non-negative integer (epoch ms), got {now_ms!r}"
        )
    return now_ms
