"""lag_aware_sticky's streams-group form (the broker plug-in's decision) in Python."""

from __future__ import annotations

import pytest

from streams_assign.assignors import assign_group
from streams_assign.assignors.lag_aware_sticky.streams_group import group_cluster_state
from streams_assign.errors import InvalidStreamsGroupError, UnknownAssignorError
from streams_assign.formats.streams_group import parse_streams_group

P1 = "00000000-0000-0000-0000-000000000001"
P2 = "00000000-0000-0000-0000-000000000002"


def _group(offsets: dict, ends: dict) -> dict:
    return {
        "configs": {"num.standby.replicas": 1},
        "topology": {"0": {"partitions": 2, "stateful": True}},
        "members": [
            {"member_id": "a", "process_id": P1, "active_tasks": {"0": [0, 1]}},
            {
                "member_id": "b",
                "process_id": P2,
                "task_offsets": offsets,
                "task_end_offsets": ends,
            },
        ],
    }


def test_two_ids_of_one_number_are_refused_when_only_one_is_stateful() -> None:
    # "1" and "01" are both TaskId subtopology 1: as the jar's GroupDecision does, the Python
    # form refuses them when their tasks would be both stateful and stateless (it placed
    # them twice before), and lets them share the number's tasks otherwise.
    group = _group({}, {})
    group["topology"] = {
        "1": {"partitions": 2, "stateful": True},
        "01": {"partitions": 2, "stateful": False},
    }
    group["members"][0]["active_tasks"] = {"1": [0, 1]}
    with pytest.raises(InvalidStreamsGroupError, match="ids 01 and 1 .* only one is stateful"):
        group_cluster_state(parse_streams_group(group))
    group["topology"]["01"]["stateful"] = True
    cluster = group_cluster_state(parse_streams_group(group))
    assert [str(t) for t in cluster.stateful_tasks] == ["1_0", "1_1"]


def test_a_caught_up_standby_takes_an_active_at_once() -> None:
    decided = assign_group(_group({"0": {"1": 95}}, {"0": {"1": 100}}), "lag_aware_sticky")
    assert decided.to_json()["members"]["b"]["active"] == {"0": [1]}


def test_a_task_stays_on_its_owner_while_the_other_process_restores() -> None:
    decided = assign_group(_group({"0": {"1": 5}}, {"0": {"1": 50_000}}), "lag_aware_sticky")
    members = decided.to_json()["members"]
    assert members["a"]["active"] == {"0": [0, 1]}
    assert members["b"]["standby"] == {"0": [0, 1]} and members["b"]["warmup"] == {}


def test_an_offset_without_end_offset_is_state_of_unknown_size() -> None:
    cluster = group_cluster_state(parse_streams_group(_group({"0": {"1": 5}}, {})))
    lags = {str(t): lag for t, lag in cluster.clients[1].task_lags.items()}
    assert lags == {"0_1": -3}
    assert cluster.changelog_end_offset_sums is None


def test_each_thread_of_a_process_is_a_unit_of_capacity() -> None:
    document = _group({}, {})
    document["members"].append({"member_id": "c", "process_id": P2})
    cluster = group_cluster_state(parse_streams_group(document))
    assert [c.capacity for c in cluster.clients] == [1, 2]


def test_an_unknown_streams_group_assignor_is_refused() -> None:
    with pytest.raises(UnknownAssignorError, match="unknown streams-group assignor 'nope'"):
        assign_group(_group({}, {}), "nope")
