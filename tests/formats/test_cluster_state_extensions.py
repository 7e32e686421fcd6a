"""The format extensions are parsed once, into typed ClusterState fields."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from streams_assign.errors import InvalidScenarioError
from streams_assign.formats.cluster_state import cluster_state_to_json, parse_cluster_state

P1 = "00000000-0000-0000-0000-000000000001"
P2 = "00000000-0000-0000-0000-000000000002"

DOCUMENT: dict[str, Any] = {
    "configs": {"rack_aware_assignment_strategy": "min_traffic"},
    "stateful_tasks": ["0_0", "0_1"],
    "stateless_tasks": ["1_0"],
    "clients": [{"id": P1, "capacity": 1}, {"id": P2, "capacity": 1}],
    "client_racks": {P1: "r0", P2.upper(): "r1"},
    "task_partitions": {"0_0": [["in", 0], ["in", 0]], "0_1": [["in", 1]], "1_0": [["in", 0]]},
    "task_changelog_partitions": {"0_0": [["cl", 0]], "0_1": [["cl", 1]]},
    "partition_racks": {"in:0": ["r1"], "in:1": ["r0", None], "cl:0": ["r0", "r1"]},
    "leader": P2,
    "now_ms": 1_700_000_000_000,
}


def document() -> dict[str, Any]:
    return copy.deepcopy(DOCUMENT)


def test_extensions_become_typed_fields() -> None:
    cluster = parse_cluster_state(document())
    tasks = {str(t): t for t in cluster.stateful_tasks + cluster.stateless_tasks}
    assert cluster.task_partitions == {
        tasks["0_0"]: (("in", 0),),  # a Set<TopicPartition>: duplicates collapse
        tasks["0_1"]: (("in", 1),),
        tasks["1_0"]: (("in", 0),),  # read by two tasks: fine without revocation
    }
    assert cluster.task_changelog_partitions == {
        tasks["0_0"]: (("cl", 0),),
        tasks["0_1"]: (("cl", 1),),
    }
    assert cluster.partition_racks == {
        ("in", 0): frozenset({"r1"}),
        ("in", 1): frozenset(),  # a replica without rack
        ("cl", 0): frozenset({"r0", "r1"}),
    }
    assert cluster.client_racks == {P1: "r0", P2: "r1"}
    assert cluster.leader == P2
    assert cluster.now_ms == 1_700_000_000_000


def test_absent_extensions_are_none() -> None:
    bare = {k: v for k, v in document().items() if k in ("stateful_tasks", "clients")}
    cluster = parse_cluster_state(bare)
    assert (cluster.task_partitions, cluster.partition_racks, cluster.leader) == (None,) * 3
    assert (cluster.client_racks, cluster.now_ms, cluster.task_changelog_partitions) == (None,) * 3


@pytest.mark.parametrize(
    ("key", "value", "path"),
    [
        ("task_partitions", {"0_0": [["in", -1]]}, "task_partitions.0_0[0]"),
        ("task_partitions", {"x": []}, "task_partitions.x"),
        ("task_changelog_partitions", [], "task_changelog_partitions"),
        ("partition_racks", {"in-0": ["r0"]}, "partition_racks.in-0"),
        ("partition_racks", {"in:0": [""]}, "partition_racks.in:0"),
        ("client_racks", {"not-a-uuid": "r0"}, "client_racks.not-a-uuid"),
        ("client_racks", {P1: 3}, f"client_racks.{P1}"),
        ("leader", "someone-else", "leader"),
        ("now_ms", -1, "now_ms"),
        ("now_ms", True, "now_ms"),
    ],
)
def test_bad_extensions_fail_when_the_state_is_read(key: str, value: Any, path: str) -> None:
    bad = document()
    bad[key] = value
    with pytest.raises(InvalidScenarioError) as caught:
        parse_cluster_state(bad)
    assert caught.value.path == path


def test_a_shared_partition_is_refused_when_partitions_are_revoked() -> None:
    revoking = document()
    revoking["clients"][0] = {
        "id": P1,
        "consumers": [{"member_id": "m1", "owned_partitions": [["in", 1]]}],
    }
    with pytest.raises(InvalidScenarioError, match=r"also belongs to task 0_0"):
        parse_cluster_state(revoking)


def test_partitions_of_unknown_tasks_are_ignored_with_a_warning() -> None:
    extra = document()
    extra["task_partitions"]["7_7"] = [["other", 0]]
    cluster = parse_cluster_state(extra)
    assert all(str(t) != "7_7" for t in cluster.task_partitions or {})
    assert any("task_partitions.7_7" in w for w in cluster.warnings)


def test_extensions_are_written_back_as_given() -> None:
    source = document()
    assert {
        k: v
        for k, v in cluster_state_to_json(parse_cluster_state(source)).items()
        if k in ("client_racks", "task_partitions", "leader", "now_ms", "partition_racks")
    } == {
        k: source[k]
        for k in ("client_racks", "task_partitions", "leader", "now_ms", "partition_racks")
    }
