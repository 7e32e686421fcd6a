"""lag_aware_sticky's streams-group form (the broker plug-in's decision) in Python."""

from __future__ import annotations

import pytest

from streams_assign.assignors import assign_group
from streams_assign.assignors.lag_aware_sticky.streams_group import group_cluster_state
from streams_assign.errors import InvalidStreamsGroupError, UnknownAssignorError
from streams_assign.formats.streams_group import parse_streams_group
from streams_assign.model import LONG_MAX_VALUE, UNKNOWN_OFFSET_SUM, TaskId

P1 = "00000000-0000-0000-0000-000000000001"
P2 = "00000000-0000-0000-0000-000000000002"
P3 = "00000000-0000-0000-0000-000000000003"


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


def _member(member_id: str, process: str, active: list[int], standby: list[int]) -> dict:
    """One stream thread of subtopology ``0``'s group that has sent no offsets report."""
    return {
        "member_id": member_id,
        "process_id": process,
        "active_tasks": {"0": active},
        "standby_tasks": {"0": standby},
    }


def _survivors(report: dict | None = None) -> dict:
    """Three processes of one thread after the kill of the one that ran ``0_0``.

    ``c`` (P3) holds the standby of ``0_0`` and has not reported since it got it; ``a`` (P1,
    first in UUID order) has no state of ``0_0``; ``b`` (P2) runs two tasks, the upper bound
    of 5 tasks over 3 threads, and sends ``report`` when given.
    """
    b = _member("b", P2, [2, 4], [3])
    if report is not None:
        b.update(report)
    return {
        "configs": {"num.standby.replicas": 1},
        "topology": {"0": {"partitions": 5, "stateful": True}},
        "members": [_member("a", P1, [1], [2]), b, _member("c", P3, [3], [0, 4])],
    }


def test_after_a_kill_an_unreported_standby_takes_the_active_before_no_state() -> None:
    members = assign_group(_survivors(), "lag_aware_sticky").to_json()["members"]
    assert 0 in members["c"]["active"]["0"]
    assert 0 not in members["a"]["active"]["0"]


def test_an_unreported_standby_goes_first_when_the_changelog_is_known_and_small() -> None:
    # b reports dormant state of 0_0 with the changelog's end: 3,000 records, within
    # acceptable.recovery.lag, so a process without state counts as caught up too.
    report = {"task_offsets": {"0": {"0": 2_500}}, "task_end_offsets": {"0": {"0": 3_000}}}
    members = assign_group(_survivors(report), "lag_aware_sticky").to_json()["members"]
    assert 0 in members["c"]["active"]["0"]
    assert 0 not in members["a"]["active"]["0"]


@pytest.mark.parametrize("ends", [{}, {"0": {"0": 50_000, "1": 50_000}}])
def test_an_unreported_restore_slot_never_counts_as_caught_up(ends: dict) -> None:
    # P2 holds both tasks as standbys, one of them the restore slot of the pending move that
    # balances P1's two actives, and has not reported since it got them: the move stays
    # pending, and P2 keeps restoring both.
    document = {
        "configs": {"num.standby.replicas": 1},
        "topology": {"0": {"partitions": 2, "stateful": True}},
        "members": [
            {**_member("a", P1, [0, 1], []), "task_end_offsets": ends},
            _member("b", P2, [], [0, 1]),
        ],
    }
    members = assign_group(document, "lag_aware_sticky").to_json()["members"]
    assert members["a"]["active"] == {"0": [0, 1]}
    assert members["b"]["active"] == {} and members["b"]["standby"] == {"0": [0, 1]}


def test_an_unreported_standby_is_state_of_unknown_lag_or_the_whole_changelog() -> None:
    unknown = group_cluster_state(parse_streams_group(_survivors()))
    assert unknown.clients[2].task_lags[TaskId(0, 0)] == UNKNOWN_OFFSET_SUM
    report = {"task_offsets": {"0": {"0": 2_500}}, "task_end_offsets": {"0": {"0": 3_000}}}
    known = group_cluster_state(parse_streams_group(_survivors(report)))
    assert known.clients[2].task_lags[TaskId(0, 0)] == 3_000
    assert TaskId(0, 0) not in known.clients[0].task_lags


def test_an_end_offset_of_long_max_value_counts_as_not_reported() -> None:
    # Kafka Streams 4.4 members report this end for some standby tasks.
    report = {"task_offsets": {"0": {"0": 3_125}}, "task_end_offsets": {"0": {"0": LONG_MAX_VALUE}}}
    cluster = group_cluster_state(parse_streams_group(_survivors(report)))
    assert cluster.clients[1].task_lags[TaskId(0, 0)] == UNKNOWN_OFFSET_SUM
    assert cluster.changelog_end_offset_sums is None


def test_each_thread_of_a_process_is_a_unit_of_capacity() -> None:
    document = _group({}, {})
    document["members"].append({"member_id": "c", "process_id": P2})
    cluster = group_cluster_state(parse_streams_group(document))
    assert [c.capacity for c in cluster.clients] == [1, 2]


def test_an_unknown_streams_group_assignor_is_refused() -> None:
    with pytest.raises(UnknownAssignorError, match="unknown streams-group assignor 'nope'"):
        assign_group(_group({}, {}), "nope")


def test_a_reported_offset_is_measured_against_another_members_end() -> None:
    # c (P3) reports the offset of 0_0 its state directory holds (a restarted process) and no
    # end: Kafka 4.4 members report ends only for tasks they hold. b reported the end, so c's
    # lag is the difference, and 0 at or beyond it (b's own pair: its end one below its offset,
    # as 4.4 members report a caught-up store).
    document = _survivors(
        {"task_offsets": {"0": {"3": 3_001}}, "task_end_offsets": {"0": {"0": 3_000, "3": 3_000}}}
    )
    document["members"][2]["task_offsets"] = {"0": {"0": 2_900}}
    cluster = group_cluster_state(parse_streams_group(document))
    assert cluster.clients[2].task_lags[TaskId(0, 0)] == 100
    assert cluster.clients[1].task_lags[TaskId(0, 3)] == 0
    document["members"][2]["task_offsets"] = {"0": {"0": 3_100}}
    assert (
        group_cluster_state(parse_streams_group(document)).clients[2].task_lags[TaskId(0, 0)] == 0
    )


def test_a_restarted_process_within_acceptable_lag_of_another_members_end_takes_its_task() -> None:
    # The process that ran 0_0 is gone; the changelog (50,000 records) is beyond
    # acceptable.recovery.lag, so a process without state is not caught up. c (P3) restarted
    # with 0_0 at 49,990 on disk; a (P1) holds the unreported standby of 0_0; b (P2), at its
    # upper bound of 2 tasks, reported 0_0's end. c is the only caught-up process: it runs 0_0.
    document = {
        "configs": {"num.standby.replicas": 1},
        "topology": {"0": {"partitions": 5, "stateful": True}},
        "members": [
            _member("a", P1, [1], [0]),
            {
                **_member("b", P2, [2, 4], [3]),
                "task_offsets": {"0": {"0": 0}},
                "task_end_offsets": {"0": {"0": 50_000}},
            },
            {**_member("c", P3, [3], [4]), "task_offsets": {"0": {"0": 49_990}}},
        ],
    }
    members = assign_group(document, "lag_aware_sticky").to_json()["members"]
    assert 0 in members["c"]["active"]["0"]
