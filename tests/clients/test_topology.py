"""The topology description: tasks, partitions, errors; the package surface."""

from __future__ import annotations

import pytest

import streams_assign.clients as clients
from streams_assign.clients.topology import Topology
from streams_assign.errors import TopologyError
from streams_assign.model import Subtopology, TaskId


def test_public_names_are_pinned() -> None:
    assert sorted(clients.__all__) == [
        "AssignmentInfo",
        "CodecError",
        "MemberState",
        "PROTOCOL_NAME",
        "StreamsProcess",
        "StreamsSettings",
        "SubscriptionInfo",
        "Subtopology",
        "Topology",
        "TopologyError",
        "decide",
    ]


def test_partition_p_of_every_source_topic_is_task_sub_p() -> None:
    topology = Topology.from_dict(
        {
            "0": {"source_topics": ["orders", "payments"], "changelog_topics": ["app-s-changelog"]},
            "1": {"source_topics": ["clicks"]},
        }
    )
    tasks = topology.tasks({"orders": 2, "payments": 2, "clicks": 1})
    assert tasks == {TaskId(0, 0): True, TaskId(0, 1): True, TaskId(1, 0): False}
    assert topology.source_partitions(TaskId(0, 1)) == (("orders", 1), ("payments", 1))
    assert topology.changelog_partitions(TaskId(0, 1)) == (("app-s-changelog", 1),)
    assert topology.task_of(("app-s-changelog", 1)) == TaskId(0, 1)
    assert topology.task_of(("elsewhere", 0)) is None


def test_source_topics_that_are_not_copartitioned_are_refused() -> None:
    topology = Topology((Subtopology(0, ("a", "b")),))
    with pytest.raises(TopologyError, match="not co-partitioned"):
        topology.tasks({"a": 3, "b": 4})


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"x": {"source_topics": ["a"]}}, "'x'"),
        ({"0": {"source_topics": "a"}}, "0.source_topics"),
        ({"0": {"source_topics": []}}, "source_topics: empty"),
        ({"0": {"source_topics": ["a"]}, "1": {"source_topics": ["a"]}}, "also belongs"),
    ],
)
def test_bad_topology_documents_name_the_field(document: dict, message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        Topology.from_dict(document)
