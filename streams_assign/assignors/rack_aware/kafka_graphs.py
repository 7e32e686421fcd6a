"""Kafka's two rack-aware graphs, numbered as Kafka numbers them, solved as Kafka solves them.

Among equally cheap placements, which one Kafka picks follows from its graph: the node ids
(they order Kafka's sorted maps), the starting flow and the solver's scan order. Here the graphs
of ``MinTrafficGraphConstructor`` and ``BalanceSubtopologyGraphConstructor`` are rebuilt with
the same ids and starting flow and handed to :class:`.CycleCancellingGraph` (Kafka's
``Graph.java`` algorithm), so the placement is Kafka's, not only its cost. This is the default
of :class:`~streams_assign.assignors.rack_aware.RackAwareTaskAssignor`; the rack-compressed
graphs of :mod:`.graphs` with a library solver reach the same cost faster, breaking ties their
own way.

Node ids (``T`` tasks being placed, ``C`` clients in ``ProcessId`` order, ``G`` sub-topologies
with tasks being placed):

- ``min_traffic``: source ``-1``; task ``k`` (sorted ``TaskId``) is ``k``; client ``j`` is
  ``T + j``; sink ``T + C``. The flow starts at the current placement.
- ``balance_subtopology``: source ``-1``; tasks numbered sub-topology by sub-topology
  (``Subtopology`` order, then ``TaskId``); client ``j`` in sub-topology ``g`` is
  ``T + C * g + j``; client ``j``'s second stage is ``T + C * G + j``; sink ``T + C * G + C``.
  The flow starts empty and a max flow is pushed first. Kafka counts ``g`` over every
  sub-topology of the topology, ours over those with tasks being placed: the ids differ by
  gaps only, which keeps their order and so the result.
"""

from __future__ import annotations

import math

import numpy as np

from streams_assign.assignors.rack_aware.cycle_cancelling import CycleCancellingGraph
from streams_assign.assignors.rack_aware.graphs import GraphProblem
from streams_assign.errors import TaskAssignmentError

__all__ = ["kafka_balance_subtopology", "kafka_min_traffic"]

SOURCE_ID = -1


def _task_costs(problem: GraphProblem) -> np.ndarray:
    """``costs[k, j]``: Kafka's ``getCost`` of task ``k`` on client position ``j``."""
    traffic = problem.traffic * problem.rows[:, problem.client_rack]
    moved = np.ones(traffic.shape, dtype=bool)
    moved[np.arange(problem.num_tasks), problem.current] = False
    result: np.ndarray = traffic + problem.non_overlap * moved
    return result


def kafka_min_traffic(problem: GraphProblem) -> np.ndarray:
    """``MinTrafficGraphConstructor`` + ``Graph.solveMinCostFlow``: the new owners.

    Parameters
    ----------
    problem:
        The tasks (rows, sorted ``TaskId``), their current clients and each client's task
        count to keep.

    Returns
    -------
    numpy.ndarray
        Shape ``(T,)``: each task's client after optimisation, in the problem's convention.

    Raises
    ------
    TaskAssignmentError
        When the flow search fails (see :meth:`.CycleCancellingGraph.solve_min_cost_flow`).
    """
    t_count, c_count = problem.num_tasks, len(problem.clients)
    costs = _task_costs(problem).tolist()
    current = problem.current.tolist()
    graph = CycleCancellingGraph()
    for k in range(t_count):
        row = costs[k]
        for j in range(c_count):
            graph.add_edge(k, t_count + j, 1, int(row[j]), 1 if current[k] == j else 0)
        graph.add_edge(SOURCE_ID, k, 1, 0, 1)
    sink = t_count + c_count
    for j, count in enumerate(problem.orig.tolist()):
        graph.add_edge(t_count + j, sink, count, 0, count)
    graph.solve_min_cost_flow()
    local = np.asarray(current, dtype=np.int64)
    for k in range(t_count):
        local[k] = _chosen(graph, k, t_count, c_count)
    return problem.to_caller(local)


def kafka_balance_subtopology(problem: GraphProblem, groups: list[list[int]]) -> np.ndarray:
    """``BalanceSubtopologyGraphConstructor`` + max flow + cycle cancelling: the new owners.

    Parameters
    ----------
    problem:
        As for :func:`kafka_min_traffic`.
    groups:
        Positions of the problem's tasks per sub-topology, in ``Subtopology`` order, each
        ascending (:func:`.graphs.subtopology_groups`).

    Returns
    -------
    numpy.ndarray
        Shape ``(T,)``: each task's client after optimisation, in the problem's convention.

    Raises
    ------
    TaskAssignmentError
        ``max flow calculated: F doesn't match taskSize: T`` when the per-sub-topology caps
        admit no placement of every task (Kafka's ``IllegalStateException``).
    """
    t_count, c_count, g_count = problem.num_tasks, len(problem.clients), len(groups)
    costs = _task_costs(problem).tolist()
    orig = problem.orig.tolist()
    second = t_count + c_count * g_count
    sink = second + c_count
    graph = CycleCancellingGraph()
    node_of: list[tuple[int, int]] = []  # (task position, group) per task node id
    for g, members in enumerate(groups):
        base = t_count + c_count * g
        for position in members:
            node = len(node_of)
            node_of.append((position, g))
            row = costs[position]
            for j in range(c_count):
                graph.add_edge(node, base + j, 1, int(row[j]), 0)
        for j in range(c_count):
            cap = math.ceil(orig[j] * 1.0 / t_count * len(members)) if orig[j] > 0 else 0
            graph.add_edge(base + j, second + j, cap, 0, 0)
    for node in range(len(node_of)):
        graph.add_edge(SOURCE_ID, node, 1, 0, 0)
    for j in range(c_count):
        graph.add_edge(second + j, sink, orig[j], 0, 0)
    max_flow = graph.calculate_max_flow(SOURCE_ID, sink)
    if max_flow != t_count:
        raise TaskAssignmentError(
            f"max flow calculated: {max_flow} doesn't match taskSize: {t_count}"
        )
    graph.solve_min_cost_flow()
    local = problem.current.copy()
    for node, (position, g) in enumerate(node_of):
        local[position] = _chosen(graph, node, t_count + c_count * g, c_count)
    return problem.to_caller(local)


def _chosen(graph: CycleCancellingGraph, task_node: int, base: int, c_count: int) -> int:
    """The client position whose arc from ``task_node`` carries the flow."""
    for j in range(c_count):
        if graph.flow(task_node, base + j) > 0:
            return j
    raise TaskAssignmentError(f"task node {task_node} carries no flow after optimisation")
