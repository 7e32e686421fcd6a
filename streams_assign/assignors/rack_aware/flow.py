"""Min-cost-flow solvers for the rack-aware graphs, passed to ``RackAwareTaskAssignor``.

Kafka solves its graphs by cycle cancelling with Bellman-Ford (``Graph.java``). Any exact
min-cost-flow solver reaches the same optimal cost; two are provided:
:func:`ortools_min_cost_flow` (OR-Tools' ``SimpleMinCostFlow``, cost-scaling push-relabel) and
:func:`networkx_min_cost_flow` (networkx's network simplex). :func:`default_solver` picks the
first whose library is installed.
"""

from __future__ import annotations

import importlib.util
from typing import Protocol

import numpy as np

from streams_assign.errors import MissingExtraError, TaskAssignmentError

__all__ = [
    "MinCostFlowSolver",
    "default_solver",
    "networkx_min_cost_flow",
    "ortools_min_cost_flow",
    "solve_flow",
]

_INFEASIBLE = "no feasible rack-aware assignment keeps the task counts"


class MinCostFlowSolver(Protocol):
    """A min-cost flow meeting every node's supply; returns the flow on each arc.

    Parameters
    ----------
    num_nodes:
        Nodes are ``0 .. num_nodes - 1``.
    tails, heads, caps, costs:
        One entry per arc (int64 arrays of equal length): its ends, capacity (tasks) and unit
        cost (scaled traffic and non-overlap costs).
    supplies:
        Per node, the flow it emits (negative: absorbs); they sum to 0.
    infeasible_message:
        The message of the error raised when no flow meets the supplies.

    Raises
    ------
    TaskAssignmentError
        When no flow meets the supplies (Kafka's "max flow ... doesn't match taskSize").
    """

    def __call__(
        self,
        num_nodes: int,
        tails: np.ndarray,
        heads: np.ndarray,
        caps: np.ndarray,
        costs: np.ndarray,
        supplies: np.ndarray,
        infeasible_message: str,
    ) -> np.ndarray: ...


def ortools_min_cost_flow(
    num_nodes: int,
    tails: np.ndarray,
    heads: np.ndarray,
    caps: np.ndarray,
    costs: np.ndarray,
    supplies: np.ndarray,
    infeasible_message: str = _INFEASIBLE,
) -> np.ndarray:
    """OR-Tools' ``SimpleMinCostFlow`` (see :class:`MinCostFlowSolver`)."""
    from ortools.graph.python import min_cost_flow

    solver = min_cost_flow.SimpleMinCostFlow()
    arcs = solver.add_arcs_with_capacity_and_unit_cost(tails, heads, caps, costs)
    solver.set_nodes_supplies(np.arange(num_nodes, dtype=np.int64), supplies)
    status = solver.solve()
    if status == solver.INFEASIBLE:
        raise TaskAssignmentError(infeasible_message)
    if status != solver.OPTIMAL:
        raise TaskAssignmentError(f"min-cost flow solver failed with status {status}")
    return np.asarray(solver.flows(arcs), dtype=np.int64)


def networkx_min_cost_flow(
    num_nodes: int,
    tails: np.ndarray,
    heads: np.ndarray,
    caps: np.ndarray,
    costs: np.ndarray,
    supplies: np.ndarray,
    infeasible_message: str = _INFEASIBLE,
) -> np.ndarray:
    """networkx's network simplex (see :class:`MinCostFlowSolver`)."""
    import networkx as nx

    # A MultiDiGraph would allow parallel arcs; the graphs here have none, so key by (u, v).
    graph = nx.DiGraph()
    for node in range(num_nodes):
        graph.add_node(node, demand=-int(supplies[node]))
    for u, v, cap, cost in zip(
        tails.tolist(), heads.tolist(), caps.tolist(), costs.tolist(), strict=True
    ):
        graph.add_edge(u, v, capacity=cap, weight=cost)
    try:
        flow = nx.min_cost_flow(graph)
    except nx.NetworkXUnfeasible:
        raise TaskAssignmentError(infeasible_message) from None
    return np.asarray(
        [flow[u][v] for u, v in zip(tails.tolist(), heads.tolist(), strict=True)], dtype=np.int64
    )


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def default_solver() -> MinCostFlowSolver:
    """OR-Tools' solver when OR-Tools is installed, else networkx's.

    Raises
    ------
    MissingExtraError
        When neither is installed (both come with the ``optimal`` extra).
    """
    if _installed("ortools"):
        return ortools_min_cost_flow
    if _installed("networkx"):
        return networkx_min_cost_flow
    raise MissingExtraError("rack-aware assignment", "optimal", "ortools")


def solve_flow(
    solver: MinCostFlowSolver,
    num_nodes: int,
    tails: np.ndarray,
    heads: np.ndarray,
    caps: np.ndarray,
    costs: np.ndarray,
    supplies: np.ndarray,
    infeasible_message: str = _INFEASIBLE,
) -> np.ndarray:
    """Run ``solver`` on arrays converted to int64 (the graphs build them as lists or arrays)."""
    return solver(
        num_nodes,
        np.asarray(tails, dtype=np.int64),
        np.asarray(heads, dtype=np.int64),
        np.asarray(caps, dtype=np.int64),
        np.asarray(costs, dtype=np.int64),
        np.asarray(supplies, dtype=np.int64),
        infeasible_message,
    )
