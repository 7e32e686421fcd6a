"""The optimum against Kafka's HA assignment on the shared kafka-diff scenarios.

By default the small scenarios (chosen by size) run with a short time limit; with
``STREAMS_ASSIGN_LONG=1`` all 160 run. Where HA's assignment is not a feasible point of a
problem's model, only the optimum's own checks run (HA's output is then not comparable on that
problem's objective); a separate test makes sure the comparison runs on most scenarios.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.assignors import assign
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.optimal import OBJECTIVES, Problem, model_violations, score, solve_optimal

LONG = os.environ.get("STREAMS_ASSIGN_LONG") == "1"
TIME_LIMIT = 30.0 if LONG else 5.0
RETRY_TIME_LIMIT = 120.0
#: Default selection: scenarios with at most this many (stateful task, client) pairs and tasks.
MAX_CELLS = 400
MAX_TASKS = 80
KAFKA_DIFF = CORPORA / "kafka-diff" / "input"


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
def inputs(kafka_corpora: Path) -> Path:
    return kafka_corpora / "kafka-diff" / "input"


def test_selection_covers_enough_scenarios(inputs):
    assert len(SCENARIOS) >= (160 if LONG else 40)


@pytest.mark.parametrize("name", SCENARIOS)
def test_kafka_ha_assignment_scores_as_valid(inputs, name):
    cluster = load_cluster_state(inputs / name)
    metrics = score(cluster, assign(cluster))
    assert metrics.valid, metrics.violations


@pytest.mark.slow
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
        return
    if result.status != "OPTIMAL":
        # A loaded machine gets one longer try; a time-out then fails (a skip would check
        # nothing on a slow machine).
        result = solve_optimal(
            cluster,
            problem,
            time_limit=RETRY_TIME_LIMIT,
            hint=ha if problem is Problem.IMMEDIATE else None,
        )
    assert result.status == "OPTIMAL", f"not solved within {RETRY_TIME_LIMIT:g} s"
    assert result.assignment is not None and result.metrics is not None
    assert result.metrics.valid, result.metrics.violations
    assert model_violations(cluster, result.assignment, problem) == []
    if reasons:
        # HA's one step is not a point of this model (e.g. not balanced for the target), so
        # there is no objective to compare it on; the optimum's own checks above still apply.
        return
    ha_metrics = score(cluster, ha)
    names = OBJECTIVES[problem]
    optimum = tuple(Fraction(result.objective[n]) for n in names)
    kafka = tuple(Fraction(getattr(ha_metrics, n)) for n in names)
    assert optimum <= kafka, f"optimum {optimum} worse than HA {kafka} on {names}"


def test_ha_is_a_point_of_the_immediate_model_on_most_scenarios(inputs):
    comparable = [
        name
        for name in SCENARIOS
        if not model_violations(
            load_cluster_state(inputs / name), assign(inputs / name), Problem.IMMEDIATE
        )
    ]
    # The optimum-vs-HA comparison must actually run on a good share of the scenarios.
    assert len(comparable) >= len(SCENARIOS) // 2
