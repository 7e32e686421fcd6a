"""Offline optimality: score any assignment, and solve the assignment to proven optimality.

The only part of streams-assign that imports OR-Tools. :func:`score` measures an assignment
(Kafka's HA, another assignor's, an optimum) on the same metrics; :func:`solve_optimal` solves
the ``target`` or ``immediate`` problem with CP-SAT; :func:`flow_lower_bound` bounds clusters
too large for CP-SAT with a min-cost flow. ``docs/optimal.md`` states the model.
"""

from streams_assign.errors import InvalidAssignmentError
from streams_assign.optimal.bounds import (
    FlowBound,
    SpreadOptimum,
    flow_lower_bound,
    min_active_spread,
)
from streams_assign.optimal.costs import PlacementCosts
from streams_assign.optimal.metrics import METRIC_NAMES, Metrics, parse_assignment, score
from streams_assign.optimal.model import OBJECTIVES, Problem, balance_windows
from streams_assign.optimal.solve import (
    OptimalResult,
    StageResult,
    model_violations,
    solve_optimal,
)

__all__ = [
    "FlowBound",
    "METRIC_NAMES",
    "OBJECTIVES",
    "InvalidAssignmentError",
    "Metrics",
    "OptimalResult",
    "PlacementCosts",
    "Problem",
    "SpreadOptimum",
    "StageResult",
    "balance_windows",
    "flow_lower_bound",
    "min_active_spread",
    "model_violations",
    "parse_assignment",
    "score",
    "solve_optimal",
]
