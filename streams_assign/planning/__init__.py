"""What-if planning: the next cluster state after a change, and each assignor's convergence.

- :mod:`~streams_assign.planning.whatif`: add, remove, kill, bounce instances; change standbys.
- :mod:`~streams_assign.planning.convergence`: every rebalance until stable, with its costs.
- :mod:`~streams_assign.planning.plan`: both together for ``streams-assign plan``.
- :mod:`~streams_assign.planning.plots` and :mod:`~streams_assign.planning.page`: the plots and
  the one-page HTML report (the ``report`` extra).
"""

from streams_assign.errors import PlanInputError
from streams_assign.planning.convergence import (
    Convergence,
    Move,
    PlannedRound,
    RestoreRates,
    plan_convergence,
)
from streams_assign.planning.whatif import Changes, apply_changes

__all__ = [
    "Changes",
    "Convergence",
    "Move",
    "PlanInputError",
    "PlannedRound",
    "RestoreRates",
    "apply_changes",
    "plan_convergence",
]
