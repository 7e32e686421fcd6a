"""Kafka's Graph.java algorithm (``rack_aware.cycle_cancelling``) and Kafka's graphs.

Parity of the placements with Kafka's own solver is tested by the random differential
(``tests/reference/test_differential.py``, rack-aware variants) and on Kafka's fixtures
(``test_rack_aware.py``); here: the optimum is a true minimum (equal to OR-Tools' cost), the
numba-compiled and the plain-Python kernels give the same flows, and bad arcs raise as Kafka's.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from streams_assign.assignors.rack_aware import cycle_cancelling, ortools_min_cost_flow
from streams_assign.assignors.rack_aware.cycle_cancelling import CycleCancellingGraph
from streams_assign.assignors.rack_aware.graphs import (
    GraphProblem,
    solve_balance_subtopology,
    solve_min_traffic,
)
from streams_assign.assignors.rack_aware.kafka_graphs import (
    kafka_balance_subtopology,
    kafka_min_traffic,
)


def random_problem(rng: random.Random) -> tuple[GraphProblem, list[list[int]]]:
    """A random placement problem: tasks, clients on racks, missing partitions per rack."""
    tasks = rng.randint(1, 14)
    clients = rng.randint(1, 6)
    racks = rng.randint(1, 3)
    rows = np.asarray(
        [[rng.randint(0, 3) for _ in range(racks)] for _ in range(tasks)], dtype=np.int64
    )
    current = np.asarray([rng.randrange(clients) for _ in range(tasks)], dtype=np.int64)
    orig = [int(np.count_nonzero(current == c)) for c in range(clients)]
    problem = GraphProblem(
        rows=rows,
        current=current,
        clients=list(range(clients)),
        client_rack=[rng.randrange(racks) for _ in range(clients)],
        orig=orig,
        traffic=rng.choice([1, 10]),
        non_overlap=rng.choice([0, 1, 10]),
        local_clients=True,
    )
    groups: dict[int, list[int]] = {}
    for k in range(tasks):
        groups.setdefault(rng.randrange(3), []).append(k)
    return problem, [groups[g] for g in sorted(groups)]


@pytest.mark.parametrize("seed", range(4))
def test_kafka_graphs_reach_the_optimal_cost_and_keep_counts(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        problem, groups = random_problem(rng)
        kafka = kafka_min_traffic(problem)
        fast = solve_min_traffic(problem, ortools_min_cost_flow)
        assert problem.cost_of(kafka) == problem.cost_of(fast)
        assert np.bincount(kafka, minlength=len(problem.clients)).tolist() == problem.orig.tolist()
        kafka_b = kafka_balance_subtopology(problem, groups)
        fast_b = solve_balance_subtopology(problem, groups, ortools_min_cost_flow)
        assert problem.cost_of(kafka_b) == problem.cost_of(fast_b)
        counts = np.bincount(kafka_b, minlength=len(problem.clients)).tolist()
        assert counts == problem.orig.tolist()


def test_plain_python_and_compiled_kernels_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both kernels run the same code; with numba installed (the ``fast`` extra) both run."""
    compiled = cycle_cancelling._kernels()
    plain = (False, cycle_cancelling._max_flow_kernel, cycle_cancelling._cancel_kernel)
    rng = random.Random(7)
    problems = [random_problem(rng) for _ in range(60)]
    answers = []
    for kernels in (compiled, plain):
        monkeypatch.setattr(cycle_cancelling, "_kernels", lambda k=kernels: k)
        answers.append(
            [
                (kafka_min_traffic(p).tolist(), kafka_balance_subtopology(p, g).tolist())
                for p, g in problems
            ]
        )
    assert answers[0] == answers[1]


def test_bad_arcs_raise_like_kafka() -> None:
    graph = CycleCancellingGraph()
    with pytest.raises(ValueError, match="capacity cannot be negative"):
        graph.add_edge(0, 1, -1, 0)
    with pytest.raises(ValueError, match="cannot exceed capacity"):
        graph.add_edge(0, 1, 1, 0, 2)
    graph.add_edge(0, 1, 1, 0)
    with pytest.raises(ValueError, match="already an edge from 0 to 1"):
        graph.add_edge(1, 0, 1, 0)


def test_max_flow_fills_the_sink_and_reports_it() -> None:
    graph = CycleCancellingGraph()
    for task in range(3):
        graph.add_edge(-1, task, 1, 0)
        graph.add_edge(task, 10 + task % 2, 1, 0)
    graph.add_edge(10, 20, 1, 0)
    graph.add_edge(11, 20, 5, 0)
    assert graph.calculate_max_flow(-1, 20) == 2
    assert graph.flows_from(-1) == {0: 1, 1: 1, 2: 0}
