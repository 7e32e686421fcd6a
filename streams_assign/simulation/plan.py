"""A what-if plan: the changes, the next cluster state, and each assignor's whole convergence."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from streams_assign.errors import StreamsAssignError, UsageError
from streams_assign.model import ClusterState
from streams_assign.simulation.probing import Convergence, RestoreRates, plan_convergence
from streams_assign.simulation.whatif import (
    Changes,
    apply_changes,
    describe_changes,
    resolve_client,
)

__all__ = ["Plan", "build_plan", "chosen_assignors"]


@dataclass(frozen=True)
class Plan:
    """One what-if question and its answer.

    Attributes
    ----------
    source:
        The input file name.
    before, after:
        The current cluster state and the next rebalance's input.
    changes:
        One sentence per change.
    rates:
        The restore rates used (records/s).
    convergences:
        One per assignor, in the order asked.
    errors:
        Per assignor that refused the state: Kafka's exception message.
    optimum:
        The target optimum's one-step cost of ``after`` (``restore_records`` in records,
        ``moves`` in tasks), when it was solved (``plan --optimal``).
    """

    source: str
    before: ClusterState
    after: ClusterState
    changes: tuple[str, ...]
    rates: RestoreRates
    convergences: tuple[Convergence, ...]
    errors: tuple[tuple[str, str], ...] = ()
    optimum: dict[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        """The plan as a JSON document (what ``plan --json`` prints)."""
        return {
            "source": self.source,
            "changes": list(self.changes),
            "clients_before": len(self.before.clients),
            "clients_after": len(self.after.clients),
            "restore_rate_default": self.rates.default,
            "restore_rates_measured": len(self.rates.measured),
            "probing_rebalance_interval_ms": self.after.configs.probing_rebalance_interval_ms,
            "assignors": [c.to_json() for c in self.convergences],
            "errors": [{"assignor": name, "error": message} for name, message in self.errors],
            "optimal_target_one_step": self.optimum,
        }


def chosen_assignors(names: Sequence[str] | None) -> tuple[str, ...]:
    """The assignors to plan with: the given names, or every registered one that imports.

    Raises
    ------
    UsageError
        For a name not in :data:`streams_assign.assignors.ASSIGNORS` (with the closest name).
    """
    from streams_assign.assignors import ASSIGNORS, get_assignor

    if not names:
        usable = []
        for name in ASSIGNORS:
            try:
                get_assignor(name)
            except ImportError:
                continue
            usable.append(name)
        return tuple(usable)
    for name in names:
        if name not in ASSIGNORS:
            close = difflib.get_close_matches(name, list(ASSIGNORS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(
                f"--assignor {name!r}: unknown assignor{hint}; choose from {', '.join(ASSIGNORS)}"
            )
    return tuple(dict.fromkeys(names))


def build_plan(
    cluster: ClusterState,
    changes: Changes,
    assignors: Sequence[str],
    rates: RestoreRates,
    max_rounds: int = 50,
    session_timeout_ms: int = 45_000,
    source: str = "",
) -> Plan:
    """Apply ``changes`` and run each assignor's convergence from the resulting state.

    Parameters
    ----------
    cluster:
        The current cluster state.
    changes:
        What happens before the next rebalance.
    assignors:
        Names of :data:`streams_assign.assignors.ASSIGNORS`.
    rates:
        Restore rates, records/s.
    max_rounds:
        Rebalances at most per assignor.
    session_timeout_ms:
        ``session.timeout.ms``: a crash (``changes.kill``) is detected after it, and the crashed
        clients' actives serve nobody until then.
    source:
        The input's name, for the outputs.

    Returns
    -------
    Plan

    Raises
    ------
    PlanInputError
        For changes that do not fit the state (see :func:`apply_changes`).
    """
    after = apply_changes(cluster, changes)
    killed = {resolve_client(cluster, value, "--kill") for value in changes.kill}
    orphaned = sum(len(cluster.client(pid).prev_active) for pid in killed)
    detection = session_timeout_ms if killed else 0
    convergences = []
    errors = []
    for name in assignors:
        try:
            convergences.append(
                plan_convergence(
                    after,
                    name,
                    rates,
                    max_rounds=max_rounds,
                    detection_ms=detection,
                    orphaned_actives=orphaned,
                )
            )
        except StreamsAssignError as exc:
            errors.append((name, str(exc)))
    return Plan(
        source=source,
        before=cluster,
        after=after,
        changes=tuple(describe_changes(cluster, changes)),
        rates=rates,
        convergences=tuple(convergences),
        errors=tuple(errors),
    )
