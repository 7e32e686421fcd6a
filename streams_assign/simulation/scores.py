"""Scores over the whole convergence, beside the optimum's one-step cost (for ``compare``).

The optimum (``streams_assign.optimal``) decides one rebalance with perfect knowledge; Kafka's
``HighAvailabilityTaskAssignor`` gets to a balanced assignment over several probing rebalances
(KIP-441), restoring warmup replicas in between. Comparing Kafka's first step alone with the
target optimum makes Kafka look cheaper than optimal while it is still converging; these scores
add up every rebalance until stable instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from streams_assign.errors import StreamsAssignError
from streams_assign.model import ClusterState
from streams_assign.simulation.probing import Convergence, RestoreRates, plan_convergence

if TYPE_CHECKING:
    from streams_assign.optimal.compare import Comparison

__all__ = [
    "convergence_scores",
    "optimum_one_step",
    "scores_json",
]


def convergence_scores(
    cluster: ClusterState,
    assignors: Sequence[str],
    rates: RestoreRates,
    max_rounds: int = 50,
) -> dict[str, Convergence]:
    """Each assignor's whole convergence from ``cluster`` (assignors that refuse it left out).

    Parameters
    ----------
    cluster:
        The rebalance input.
    assignors:
        Names of :data:`streams_assign.assignors.ASSIGNORS`.
    rates:
        Restore rates, records/s.
    max_rounds:
        Rebalances at most per assignor.

    Returns
    -------
    dict
        Assignor name -> :class:`Convergence`, in the order given.
    """
    scores = {}
    for name in assignors:
        try:
            scores[name] = plan_convergence(cluster, name, rates, max_rounds=max_rounds)
        except StreamsAssignError:
            continue
    return scores


def optimum_one_step(comparison: Comparison, problem: str = "target") -> dict[str, int] | None:
    """The optimum's one-rebalance cost: records to restore and task moves (``None`` if unsolved).

    Parameters
    ----------
    comparison:
        A comparison from :func:`streams_assign.optimal.compare.compare_assignors`.
    problem:
        ``target`` or ``immediate``.
    """
    try:
        row = comparison.row(f"optimal_{problem}")
    except KeyError:
        return None
    if row.metrics is None:
        return None
    return {"restore_records": int(row.metrics.restore_records), "moves": int(row.metrics.moves)}


def scores_json(scores: dict[str, Convergence], optimum: dict[str, int] | None) -> dict[str, Any]:
    """The convergence part of ``compare --json``."""
    return {
        "assignors": {
            name: {k: v for k, v in c.to_json().items() if k != "rounds"}
            for name, c in scores.items()
        },
        "optimal_target_one_step": optimum,
    }
