"""The optimum against Kafka's HA assignment on the shared kafka-diff scenarios.

By default the small scenarios (chosen by size) run with a short time limit; with
``STREAMS_ASSIGN_LONG=1`` all 160 run. Where HA's assignment is not a feasible point of a
problem's model, the comparison is skipped with the reason (HA's output is then not comparable
on that problem's objective), rather than passing silently.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest

from streams_assign.api import assign
from streams_assign.optimal import OBJECTIVES, Problem, model_violations, score, solve_optimal
from streams_assign.scenario import load_cluster_state

LONG = os.environ.get("STREAMS_ASSIGN_LONG") == "1"
TIME_LIMIT = 30.0 if LONG else 5.0
#: Default selection: scenarios with at most this many (stateful task, client) pairs and tasks.
MAX_CELLS = 400
MAX_TASKS = 80
KAFKA_DIFF = (
    Path(__file__).resolve().parents[2].parent / "shared" / "scenarios" / "kafka-diff" / "input"
)


def _selected() -> list[str]:
    if not KAFKA_DIFF.is_dir():
        return []
    names = []
    for path in sorted(KAFKA_DIFF.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        stateful = len(document.get("stateful_tasks", []))
        tasks = stateful + len(document.get("stateless_tasks", []))
        if LONG or (stateful * len(document["clients"]) <= MAX_CELLS and tasks <= MAX_TASKS):
            names.append(path.name)
    return names


SCENARIOS = _selected()


@pytest.fixture(scope="module")
def inputs(shared_scenarios: Path) -> Path:
    return shared_scenarios / "kafka-diff" / "input"


def test_selection_covers_enough_scenarios(inputs):
    assert len(SCENARIOS) >= (160 if LONG else 40)


@pytest.mark.parametrize("name", SCENARIOS)
def test_kafka_ha_assignment_scores_as_valid(inputs, name):
    cluster = load_cluster_state(inputs / name)
    metrics = score(cluster, assign(cluster))
    assert metrics.valid, metrics.violations


@pytest.mark.parametrize("problem", list(Problem), ids=lambda p: p.value)
@pytest.mark.parametrize("name", SCENARIOS)
def test_optimum_is_never_worse_than_kafka_ha(inputs, name, problem):
    cluster = load_cluster_state(inputs / name)
    ha = assign(cluster)
    result = solve_optimal(
        cluster, problem, time_limit=TIME_LIMIT, hint=ha if problem is Problem.IMMEDIATE else None
    )
    reasons = model_violations(cluster, ha, problem)
    if result.status == "INFEASIBLE":
        assert reasons, "the model is infeasible although HA's assignment satisfies it"
        assert result.explanation
        pytest.skip(f"{problem.value} problem infeasible: {result.explanation}")
    if result.status != "OPTIMAL":
        pytest.skip(f"not solved to optimality within {TIME_LIMIT:g} s ({result.status})")
    if reasons:
        pytest.skip(
            f"HA's assignment is not a feasible point of the {problem.value} model: {reasons[0]}"
        )
    ha_metrics = score(cluster, ha)
    names = OBJECTIVES[problem]
    optimum = tuple(Fraction(result.objective[n]) for n in names)
    kafka = tuple(Fraction(getattr(ha_metrics, n)) for n in names)
    assert optimum <= kafka, f"optimum {optimum} worse than HA {kafka} on {names}"
    assert result.metrics is not None and result.metrics.valid
