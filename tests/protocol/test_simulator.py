"""The timeline simulator on the example timelines (``examples/timelines/``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streams_assign.protocol.assignors import (
    BalancedStickyAssignor,
    GroupAssignment,
    MemberSubscription,
    StreamsAssignor,
    cooperative_adjust,
)
from streams_assign.protocol.timeline import load_timeline, simulate

TIMELINES = Path(__file__).resolve().parents[2] / "examples" / "timelines"


def _timeline(name: str) -> dict:
    path = TIMELINES / name
    assert path.is_file(), f"{path} is missing"
    return load_timeline(path)


def test_eager_stops_the_world_in_a_rolling_bounce_and_cooperative_does_not() -> None:
    timeline = _timeline("rolling_bounce.json")
    timeline["settings"].update(task_close_ms=20, task_open_ms=20)
    eager = simulate(timeline, "eager")
    cooperative = simulate(timeline, "cooperative")
    assert eager.stop_the_world_ms > 0
    assert cooperative.stop_the_world_ms == 0
    assert cooperative.total_task_seconds_unavailable < eager.total_task_seconds_unavailable
    # cooperative hands moved tasks over in a second rebalance
    assert cooperative.rebalances > eager.rebalances
    assert eager.violations == [] and cooperative.violations == []


def test_static_members_restarted_within_the_session_timeout_cause_no_rebalance() -> None:
    result = simulate(_timeline("static_rolling_bounce.json"), "eager")
    bounce = result.events[1]
    assert bounce.rebalances == 0
    assert result.generation == 1
    # each member's 20 tasks stop for its 10 s restart (revoked) and nothing else moves
    assert result.task_seconds_unavailable["revoked"] == pytest.approx(6 * 20 * 10.0, rel=0.01)


def test_a_crashed_members_tasks_wait_for_the_session_timeout() -> None:
    timeline = _timeline("crash.json")
    result = simulate(timeline, "cooperative")
    crash = result.events[1]
    session_s = timeline["settings"]["session_timeout_ms"] / 1000.0
    heartbeat_s = 3.0
    # m2 ran 10 of the 40 tasks: unowned from the crash until its session (counted from its
    # last heartbeat) expires and the others, told at their next heartbeat, rejoin
    unowned = crash.task_seconds_unavailable["unowned"]
    assert 10 * (session_s - heartbeat_s) <= unowned <= 10 * (session_s + heartbeat_s + 0.1)
    assert crash.rebalances == 1
    assert crash.time_to_stable_ms is not None
    assert crash.time_to_stable_ms >= timeline["settings"]["session_timeout_ms"]


def test_restore_takes_the_changelog_size_over_the_restore_rate() -> None:
    result = simulate(_timeline("restore.json"), "eager")
    # 4 tasks x 100,000 records at 20,000 records/s shared: 20 s, after the 3 s initial delay
    assert result.task_seconds_unavailable["restoring"] == pytest.approx(4 * 20.0, abs=0.1)
    assert result.events[0].time_to_stable_ms == pytest.approx(23_000, abs=100)
    assert result.records_restored == pytest.approx(4 * 100_000, rel=1e-6)


def test_every_event_type_runs_with_the_high_availability_assignor() -> None:
    timeline = _timeline("mixed.json")
    for protocol in ("eager", "cooperative"):
        result = simulate(timeline, protocol)
        assert result.violations == []
        assert set(result.final_status.values()) == {"running"}
        assert len(result.final_status) == 50


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_kafkas_consumer_assignors_lead_the_simulated_group(strategy: str) -> None:
    timeline = _timeline("rolling_bounce.json")
    timeline["assignor"] = f"consumer:{strategy}"
    timeline["settings"].update(task_close_ms=20, task_open_ms=20)
    eager = simulate(timeline, "eager")
    cooperative = simulate(timeline, "cooperative")
    for result in (eager, cooperative):
        assert result.violations == []
        assert set(result.final_status.values()) == {"running"}
    assert eager.stop_the_world_ms > 0
    assert cooperative.stop_the_world_ms == 0


def test_balanced_sticky_keeps_owned_tasks_and_balances() -> None:
    members = [
        MemberSubscription("a", owned=frozenset({"0_0", "0_1", "0_2"})),
        MemberSubscription("b"),
        MemberSubscription("c", previous=frozenset({"0_3"})),
    ]
    tasks = [f"0_{n}" for n in range(6)]
    result = BalancedStickyAssignor().assign(members, tasks, frozenset(), {})
    assert sorted(len(v) for v in result.active.values()) == [2, 2, 2]
    assert result.active["a"] <= {"0_0", "0_1", "0_2"}
    assert "0_3" in result.active["c"]
    assert frozenset().union(*result.active.values()) == frozenset(tasks)


def test_cooperative_adjust_withholds_tasks_still_owned_elsewhere() -> None:
    members = [MemberSubscription("a", owned=frozenset({"0_0", "0_1"})), MemberSubscription("b")]
    decided = GroupAssignment(active={"a": frozenset({"0_0"}), "b": frozenset({"0_1", "0_2"})})
    adjusted, withheld = cooperative_adjust(decided, members)
    assert withheld
    assert adjusted.active == {"a": frozenset({"0_0"}), "b": frozenset({"0_2"})}


def test_streams_high_availability_assignor_assigns_every_task_once() -> None:
    members = [MemberSubscription(f"m{i}", task_lags={"0_0": 5}) for i in range(3)]
    tasks = [f"0_{n}" for n in range(7)]
    result = StreamsAssignor("high_availability").assign(
        members, tasks, frozenset(tasks), {t: 1000 for t in tasks}
    )
    assigned = [t for ts in result.active.values() for t in ts]
    assert sorted(assigned) == sorted(tasks)
