"""Active moves counted from the classic group leader's decisions
(:func:`devtools.kafka.measure.leader_decisions`, :func:`devtools.kafka.measure.decided_moves`)
on real log lines of ``benchmarks/plugin_real_cluster.py --door classic`` (27-28 Nov 2026,
``tests/data/measure/README.md``)."""

from __future__ import annotations

from pathlib import Path

from devtools.kafka.measure import decided_moves, decisions_in_log, leader_decisions

DATA = Path(__file__).resolve().parents[1] / "data" / "measure"


def _lines(*names: str) -> list[str]:
    return [line for name in names for line in (DATA / name).read_text().splitlines()]


def _owners(decision: dict[str, frozenset[str]]) -> dict[str, str]:
    return {task: pid for pid, tasks in decision.items() for task in tasks}


def test_ha_decisions_are_read_from_the_clientstate_lines() -> None:
    decisions = leader_decisions(_lines("ha-add-4.2.1/instance-4.log"), plugin=False)
    assert len(decisions) == 3
    assert [len(d) for d in decisions] == [4, 5, 5]
    assert all(sum(len(tasks) for tasks in d.values()) == 18 for d in decisions)
    # The added process (its first decision) takes 0_1, 1_3 and 2_2.
    added = next(iter(set(decisions[1]) - set(decisions[0])))
    assert decisions[1][added] == {"0_1", "1_3", "2_2"}


def test_ha_add_moves_fifteen_actives_in_its_first_decision_and_none_in_the_follow_up() -> None:
    kill_last, *add = leader_decisions(_lines("ha-add-4.2.1/instance-4.log"), plugin=False)
    assert decided_moves(_owners(kill_last), add[:1]) == 15
    assert decided_moves(_owners(add[0]), add[1:]) == 0
    assert decisions_in_log(_lines("ha-add-4.2.1/instance-4.log"), plugin=False) == (3, 0)


def test_plugin_decisions_are_read_from_its_json_lines_in_time_order_across_leaders() -> None:
    # instance-2 became the leader when instance-3 was bounced; its lines come first here.
    lines = _lines("plugin-bounce-4.2.1/instance-2.log", "plugin-bounce-4.2.1/instance-3.log")
    decisions = leader_decisions(lines, plugin=True)
    assert len(decisions) == 7 == decisions_in_log(lines, plugin=True)[0]
    add_last, *bounce = decisions
    assert decided_moves(_owners(add_last), bounce) == 2
    # In file order the old leader's bounce decision would come after the new leader's five
    # and seem to undo their two moves.
    old_leader = leader_decisions(_lines("plugin-bounce-4.2.1/instance-3.log"), plugin=True)
    new_leader = leader_decisions(_lines("plugin-bounce-4.2.1/instance-2.log"), plugin=True)
    assert old_leader[0] == add_last and len(new_leader) == 5
    assert decided_moves(_owners(add_last), [*new_leader, old_leader[1]]) == 4


def test_a_task_moved_away_and_back_counts_twice_a_new_task_not_at_all() -> None:
    before = {"1_0": "a", "1_1": "b"}
    away = {"a": frozenset(), "b": frozenset({"1_0", "1_1"})}
    back = {"a": frozenset({"1_0"}), "b": frozenset({"1_1", "2_0"})}
    assert decided_moves(before, [away, back]) == 2
    assert decided_moves(before, [back]) == 0


def test_a_killed_processes_tasks_count_as_moved_when_they_run_elsewhere() -> None:
    before = {"1_0": "dead", "1_1": "b"}
    assert decided_moves(before, [{"b": frozenset({"1_0", "1_1"})}]) == 1


def test_lines_without_a_time_stamp_are_skipped() -> None:
    line = _lines("plugin-bounce-4.2.1/instance-3.log")[2]
    assert "lag_aware_sticky decision:" in line
    assert leader_decisions([line[line.index("]") + 1 :]], plugin=True) == []
    assert len(leader_decisions([line], plugin=True)) == 1
