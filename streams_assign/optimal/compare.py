"""Kafka's assignors beside the optima: one row per assignor, its metrics and its gaps.

:func:`compare_assignors` scores Kafka's HA assignment, every other importable assignor of
:data:`streams_assign.assignors.ASSIGNORS`, and the optimum of each problem on the same cluster
state.
The table and the bar chart of a comparison are in :mod:`streams_assign.views`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from streams_assign.assignors import ASSIGNORS, get_assignor
from streams_assign.errors import StreamsAssignError
from streams_assign.model import Assignment, ClusterState
from streams_assign.optimal.costs import PlacementCosts
from streams_assign.optimal.metrics import Metrics, score
from streams_assign.optimal.model import Problem
from streams_assign.optimal.solve import (
    DEFAULT_NUM_WORKERS,
    DEFAULT_RANDOM_SEED,
    DEFAULT_TIME_LIMIT,
    OptimalResult,
    json_number,
    solve_optimal,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """One assignor's (or optimum's) assignment and its scores.

    Attributes
    ----------
    name:
        ``high_availability``, ``optimal_target``, ``optimal_immediate``, or an assignor name.
    status:
        ``valid``/``invalid`` for assignors; the solver status for optima.
    metrics:
        The scorer's metrics (``None`` when there is no assignment).
    assignment:
        The assignment (``None`` when there is none).
    note:
        Why there is no assignment, or other remarks.
    """

    name: str
    status: str
    metrics: Metrics | None
    assignment: Assignment | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every row of a comparison, with the optima's solve results."""

    cluster: ClusterState
    rows: tuple[ComparisonRow, ...]
    optima: dict[Problem, OptimalResult] = field(default_factory=dict)

    def row(self, name: str) -> ComparisonRow:
        """The row called ``name``; raises ``KeyError`` when there is none."""
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)

    def gap(self, row: ComparisonRow, problem: Problem) -> dict[str, int | Fraction] | None:
        """The row's excess over an optimum on that problem's objectives (``None`` if unknown)."""
        result = self.optima.get(problem)
        if row.metrics is None or result is None or result.metrics is None:
            return None
        gaps: dict[str, int | Fraction] = {}
        for name in result.objective:
            gaps[name] = getattr(row.metrics, name) - getattr(result.metrics, name)
        return gaps

    def to_json(self) -> dict[str, Any]:
        """The comparison as a JSON document (one entry per row)."""
        rows = []
        for row in self.rows:
            entry: dict[str, Any] = {"assignor": row.name, "status": row.status}
            if row.metrics is not None:
                entry["metrics"] = row.metrics.to_json()
            if row.note:
                entry["note"] = row.note
            entry["gap"] = {
                problem.value: (
                    {k: json_number(v) for k, v in gaps.items()}
                    if (gaps := self.gap(row, problem)) is not None
                    else None
                )
                for problem in Problem
            }
            rows.append(entry)
        optima = {
            problem.value: {
                "status": result.status,
                "objective": {k: json_number(v) for k, v in result.objective.items()},
                "bound": {k: json_number(v) for k, v in result.bound.items()},
                "solve_seconds": round(result.solve_seconds, 3),
                **({"explanation": result.explanation} if result.explanation else {}),
            }
            for problem, result in self.optima.items()
        }
        return {"name": self.cluster.name, "rows": rows, "optima": optima}


def compare_assignors(
    cluster: ClusterState,
    time_limit: float = DEFAULT_TIME_LIMIT,
    num_workers: int = DEFAULT_NUM_WORKERS,
    random_seed: int = DEFAULT_RANDOM_SEED,
    progress: Callable[[str], None] | None = None,
) -> Comparison:
    """Score Kafka's HA, the other importable assignors and both optima on one cluster state.

    Parameters
    ----------
    cluster:
        The validated rebalance input.
    time_limit:
        Seconds per optimisation problem.
    num_workers, random_seed:
        CP-SAT settings (see :func:`~streams_assign.optimal.solve.solve_optimal`).
    progress:
        Called with a short message before each step (for a spinner).

    Returns
    -------
    Comparison
        Rows in the order: ``high_availability``, ``optimal_target``, ``optimal_immediate``,
        then the other assignors of :data:`~streams_assign.assignors.ASSIGNORS` that import (an
        assignor whose module is not there yet is left out).
    """
    costs = PlacementCosts.of(cluster)
    say = progress or (lambda _message: None)
    rows: list[ComparisonRow] = []
    say("Kafka's HighAvailabilityTaskAssignor")
    ha: Assignment | None = None
    try:
        ha = get_assignor("high_availability").assign(cluster)
        rows.append(_assignor_row("high_availability", cluster, ha, costs))
    except StreamsAssignError as exc:
        rows.append(
            ComparisonRow(name="high_availability", status="error", metrics=None, note=str(exc))
        )
    optima: dict[Problem, OptimalResult] = {}
    for problem in (Problem.TARGET, Problem.IMMEDIATE):
        say(f"CP-SAT: {problem.value} optimum (up to {time_limit:g} s)")
        result = solve_optimal(
            cluster,
            problem,
            time_limit=time_limit,
            num_workers=num_workers,
            random_seed=random_seed,
            hint=ha if problem is Problem.IMMEDIATE else None,
            costs=costs,
        )
        optima[problem] = result
        rows.append(
            ComparisonRow(
                name=f"optimal_{problem.value}",
                status=result.status,
                metrics=result.metrics,
                assignment=result.assignment,
                note=result.explanation,
            )
        )
    for name in ASSIGNORS:
        if name == "high_availability":
            continue
        try:
            assignor = get_assignor(name)
        except (ImportError, ModuleNotFoundError):
            log.info("assignor %s is not available; left out of the comparison", name)
            continue
        say(f"assignor {name}")
        try:
            assignment = assignor.assign(cluster)
        except StreamsAssignError as exc:
            rows.append(ComparisonRow(name=name, status="error", metrics=None, note=str(exc)))
            continue
        rows.append(_assignor_row(name, cluster, assignment, costs))
    return Comparison(cluster=cluster, rows=tuple(rows), optima=optima)


def _assignor_row(
    name: str, cluster: ClusterState, assignment: Assignment, costs: PlacementCosts
) -> ComparisonRow:
    metrics = score(cluster, assignment, costs)
    note = "; ".join(metrics.violations[:3]) if metrics.violations else None
    return ComparisonRow(
        name=name,
        status="valid" if metrics.valid else "invalid",
        metrics=metrics,
        assignment=assignment,
        note=note,
    )


__all__ = [
    "Comparison",
    "ComparisonRow",
    "compare_assignors",
]
