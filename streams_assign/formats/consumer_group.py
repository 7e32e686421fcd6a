"""The consumer-group state format (``kafka-consumer/input/*.json``): load and validate.

The format is described in ``tests/corpora/kafka-consumer/FORMAT.md``; every bad value
raises :class:`~streams_assign.errors.InvalidConsumerStateError` naming its JSON path and the
value found.
"""

from __future__ import annotations

import json
import os
from typing import Any

from streams_assign.consumer.model import (
    ASSIGNOR_NAMES,
    ConsumerGroupState,
    MemberSubscription,
    TopicPartition,
)
from streams_assign.errors import InvalidConsumerStateError
from streams_assign.formats.json_file import read_json_file

__all__ = [
    "assignment_to_json",
    "load_consumer_state",
    "parse_consumer_state",
]


def _fail(path: str, message: str) -> InvalidConsumerStateError:
    return InvalidConsumerStateError(path, message)


def _expect_str(value: Any, path: str, *, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        kind = "a string or null" if nullable else "a string"
        raise _fail(path, f"must be {kind}, got {json.dumps(value)}")
    return value


def _expect_int(value: Any, path: str, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"must be an integer, got {json.dumps(value)}")
    if minimum is not None and value < minimum:
        raise _fail(path, f"must be >= {minimum}, got {value}")
    return value


def _expect_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(path, f"must be a list, got {json.dumps(value)}")
    return value


def _parse_member(doc: Any, path: str) -> MemberSubscription:
    if not isinstance(doc, dict):
        raise _fail(path, f"must be an object, got {json.dumps(doc)}")
    if "member_id" not in doc:
        raise _fail(f"{path}.member_id", "is missing")
    member_id = _expect_str(doc["member_id"], f"{path}.member_id")
    assert member_id is not None
    if not member_id:
        raise _fail(f"{path}.member_id", 'must not be empty, got ""')
    instance = _expect_str(doc.get("group_instance_id"), f"{path}.group_instance_id", nullable=True)
    topics = tuple(
        str(_expect_str(t, f"{path}.topics[{i}]"))
        for i, t in enumerate(_expect_list(doc.get("topics", []), f"{path}.topics"))
    )
    owned: list[TopicPartition] = []
    for i, item in enumerate(
        _expect_list(doc.get("owned_partitions", []), f"{path}.owned_partitions")
    ):
        item_path = f"{path}.owned_partitions[{i}]"
        if not isinstance(item, list) or len(item) != 2:
            raise _fail(item_path, f"must be [topic, partition], got {json.dumps(item)}")
        topic = _expect_str(item[0], f"{item_path}[0]")
        assert topic is not None
        owned.append(TopicPartition(topic, _expect_int(item[1], f"{item_path}[1]", minimum=0)))
    generation_doc = doc.get("generation")
    generation = (
        None if generation_doc is None else _expect_int(generation_doc, f"{path}.generation")
    )
    rack = _expect_str(doc.get("rack"), f"{path}.rack", nullable=True)
    return MemberSubscription(member_id, instance, topics, tuple(owned), generation, rack)


def parse_consumer_state(doc: Any) -> ConsumerGroupState:
    """Validate a parsed consumer-group state document.

    Parameters
    ----------
    doc:
        The JSON document: ``assignor``, ``topics`` (name -> partition count >= 0),
        ``members`` (at least one, unique ``member_id``) and the optional ``partition_racks``
        (name -> one list of replica racks per partition).

    Returns
    -------
    ConsumerGroupState

    Raises
    ------
    InvalidConsumerStateError
        A missing or ill-typed field, an unknown assignor, a duplicate member id; the message
        names the JSON path and the value.
    """
    if not isinstance(doc, dict):
        raise _fail("", f"the document must be a JSON object, got {type(doc).__name__}")
    assignor = doc.get("assignor")
    if assignor not in ASSIGNOR_NAMES:
        raise _fail(
            "assignor", f"must be one of {', '.join(ASSIGNOR_NAMES)}, got {json.dumps(assignor)}"
        )
    topics_doc = doc.get("topics")
    if not isinstance(topics_doc, dict):
        raise _fail(
            "topics", f"must be an object of partition counts, got {json.dumps(topics_doc)}"
        )
    topics = {name: _expect_int(n, f"topics.{name}", minimum=0) for name, n in topics_doc.items()}
    members_doc = _expect_list(doc.get("members"), "members")
    if not members_doc:
        raise _fail("members", "must list at least one member, got []")
    members = tuple(_parse_member(m, f"members[{i}]") for i, m in enumerate(members_doc))
    seen: dict[str, int] = {}
    for i, member in enumerate(members):
        if member.member_id in seen:
            raise _fail(
                f"members[{i}].member_id",
                f"duplicates members[{seen[member.member_id]}], got {json.dumps(member.member_id)}",
            )
        seen[member.member_id] = i
    racks_doc = doc.get("partition_racks", {})
    if not isinstance(racks_doc, dict):
        raise _fail("partition_racks", f"must be an object, got {json.dumps(racks_doc)}")
    partition_racks: dict[str, tuple[frozenset[str], ...]] = {}
    for topic, per_partition in racks_doc.items():
        path = f"partition_racks.{topic}"
        if topic not in topics:
            raise _fail(path, f"names a topic missing from topics, got {json.dumps(topic)}")
        lists = _expect_list(per_partition, path)
        if len(lists) != topics[topic]:
            raise _fail(path, f"must list {topics[topic]} partitions, got {len(lists)}")
        partition_racks[topic] = tuple(
            frozenset(
                str(_expect_str(r, f"{path}[{p}][{j}]"))
                for j, r in enumerate(_expect_list(racks, f"{path}[{p}]"))
            )
            for p, racks in enumerate(lists)
        )
    return ConsumerGroupState(str(assignor), topics, members, partition_racks)


def load_consumer_state(path: str | os.PathLike[str]) -> ConsumerGroupState:
    """Read and validate a consumer-group state file.

    Raises
    ------
    InvalidConsumerStateError
        Not JSON, or a bad field (see :func:`parse_consumer_state`).
    OSError
        The file cannot be read.
    """
    return parse_consumer_state(read_json_file(path, InvalidConsumerStateError))


def assignment_to_json(assignment: dict[str, list[TopicPartition]]) -> dict[str, Any]:
    """The expected-file document: ``{"assignment": {member_id: [[topic, partition], ...]}}``.

    Members sorted by member id, each member's partitions sorted, as the expected files.
    """
    return {
        "assignment": {
            member: [[tp.topic, tp.partition] for tp in sorted(assignment[member])]
            for member in sorted(assignment)
        }
    }
