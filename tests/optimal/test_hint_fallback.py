"""A same-rules stage that finds no solution in time keeps the caller's hint.

CP-SAT with one worker can end a stage with no solution at all, even with a complete hint
(``s0119-large`` of kafka-diff did under load). :func:`~streams_assign.optimal.solve_optimal`
then solves the stage again with the hinted variables fixed, so the result is at least the
hint, marked ``FEASIBLE`` with ``from_hint``. The tests force the empty stage deterministically
(CP-SAT stopped after its presolve) instead of relying on a time limit.
"""

from __future__ import annotations

import pytest
from ortools.sat.python import cp_model

from devtools.paths import CORPORA
from streams_assign.assignors import assign
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.optimal import Problem, solve_optimal
from streams_assign.optimal import solve as solve_module
from streams_assign.optimal.costs import PlacementCosts
from streams_assign.optimal.metrics import score
from streams_assign.optimal.same_rules import without_warmups, zone_violations

#: A tagged state with zone violations in ours' output, so every same-rules stage has work.
STATE = CORPORA / "kafka-ext" / "input" / "p0050-both-thread_change.json"


@pytest.fixture
def first_stages_stop_after_presolve(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the first ``n`` searches stop after presolve (no solution); returns ``[n]``."""
    budget = [1]
    real = solve_module.make_solver

    def make_solver(num_workers: int, random_seed: int, seconds: float) -> cp_model.CpSolver:
        solver = real(num_workers, random_seed, seconds)
        if budget[0] > 0:
            budget[0] -= 1
            solver.parameters.stop_after_presolve = True
        return solver

    monkeypatch.setattr(solve_module, "make_solver", make_solver)
    return budget


def solve_with_hint(zone_rule: bool) -> tuple[solve_module.OptimalResult, tuple[int, int, int]]:
    """The same-rules optimum of STATE hinted with ours, and ours' (zone, restore, moves)."""
    cluster = load_cluster_state(STATE)
    costs = PlacementCosts.of(cluster)
    ours = without_warmups(assign(cluster, assignor="lag_aware_sticky"))
    metrics = score(cluster, ours, costs)
    result = solve_optimal(
        cluster,
        Problem.IMMEDIATE,
        time_limit=20,
        num_workers=1,
        costs=costs,
        hint=ours,
        same_rules=True,
        zone_rule=zone_rule,
    )
    zones = zone_violations(cluster, ours) if zone_rule else 0
    return result, (zones, metrics.restore_records, metrics.moves)


@pytest.mark.parametrize("zone_rule", [True, False], ids=["zone-rule", "no-zone-rule"])
def test_an_empty_first_stage_keeps_the_hint(
    first_stages_stop_after_presolve: list[int], zone_rule: bool
) -> None:
    result, hint = solve_with_hint(zone_rule)
    assert first_stages_stop_after_presolve == [0], "the forced empty search did not run"
    assert result.assignment is not None and result.metrics is not None, result.explanation
    first = result.stages[0]
    assert first.from_hint and first.status in ("FEASIBLE", "OPTIMAL"), first
    cluster = load_cluster_state(STATE)
    found = (
        zone_violations(cluster, result.assignment) if zone_rule else 0,
        result.metrics.restore_records,
        result.metrics.moves,
    )
    # The later stages search again from the hint's bounds: never worse than the hint.
    assert found <= hint, (found, hint)
    # The first stage's value is the hint's own: nothing was searched.
    assert first.value == (hint[0] if zone_rule else hint[1])
    assert result.status == "FEASIBLE" or all(s.status == "OPTIMAL" for s in result.stages)
    assert result.to_json()["stages"][0]["from_hint"] is True


def test_without_a_hint_an_empty_stage_is_still_no_solution(
    first_stages_stop_after_presolve: list[int],
) -> None:
    cluster = load_cluster_state(STATE)
    result = solve_optimal(
        cluster, Problem.IMMEDIATE, time_limit=20, num_workers=1, same_rules=True
    )
    assert result.assignment is None
    assert result.status == "UNKNOWN"
    assert not result.stages[0].from_hint
