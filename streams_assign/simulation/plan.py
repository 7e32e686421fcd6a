"""A what-if plan: the changes, the next cluster state, and each assignor's whole convergence."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from streams_assign.errors import StreamsAssignError, UsageError
from streams_assign.model import ClusterState
from streams_assign.simulation.chain import Chain, plan_chain
from streams_assign.simulation.probing import Convergence, RestoreRates, plan_convergence
from streams_assign.simulation.races import RaceEvidence
from streams_assign.simulation.whatif import (
    Changes,
    apply_changes,
    describe_changes,
    resolve_client,
)

__all__ = ["IdSpread", "Plan", "build_plan", "chosen_assignors"]


@dataclass(frozen=True)
class IdSpread:
    """How one assignor's chain varies with where the added instances' process ids sort.

    Attributes
    ----------
    assignor:
        The assignor's name.
    samples:
        Per sampled set of new process ids (one per gap of the current ids in
        ``java.util.UUID`` order, :func:`~streams_assign.simulation.id_order.ids_across_order`),
        the ids and the chain.
    differing_actives:
        Per sample, the active tasks whose client differs from the first sample's final
        decision (new instances matched by their position in the added list).
    """

    assignor: str
    samples: tuple[tuple[tuple[str, ...], Chain], ...]
    differing_actives: tuple[int, ...]

    def span(self, metric: str) -> tuple[int, int]:
        """(min, max) over the samples of ``rebalances``, ``follow_ups``, ``moves``,
        ``stable_ms`` or ``differing_actives``."""
        values = [
            self._metric(metric, chain, index) for index, (_, chain) in enumerate(self.samples)
        ]
        return min(values), max(values)

    def _metric(self, metric: str, chain: Chain, index: int) -> int:
        if metric == "differing_actives":
            return self.differing_actives[index]
        if metric == "rebalances":
            return len(chain.rebalances)
        if metric == "follow_ups":
            return chain.count("immediate follow-up")
        return int(getattr(chain, metric))

    def to_json(self) -> dict[str, Any]:
        """The spread as a JSON document."""
        metrics = ("rebalances", "follow_ups", "moves", "stable_ms", "differing_actives")
        return {
            "assignor": self.assignor,
            "range": {m: list(self.span(m)) for m in metrics},
            "samples": [
                {
                    "add_ids": list(ids),
                    "rebalances": len(chain.rebalances),
                    "follow_ups": chain.count("immediate follow-up"),
                    "moves": chain.moves,
                    "stable_ms": chain.stable_ms,
                    "differing_actives": self.differing_actives[i],
                }
                for i, (ids, chain) in enumerate(self.samples)
            ],
        }


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
    chains:
        Per classic assignor, Kafka's rebalance chain (:mod:`streams_assign.simulation.chain`:
        immediate follow-ups after withheld tasks, probing rebalances).
    id_spread:
        When instances are added without all their process ids: how the first chain varies
        with where the new ids sort.
    session_timeout_ms, follow_up_ms:
        The times used: crash detection, and a decision to its immediate follow-up.
    """

    source: str
    before: ClusterState
    after: ClusterState
    changes: tuple[str, ...]
    rates: RestoreRates
    convergences: tuple[Convergence, ...]
    errors: tuple[tuple[str, str], ...] = ()
    optimum: dict[str, int] | None = None
    chains: tuple[Chain, ...] = ()
    id_spread: IdSpread | None = None
    session_timeout_ms: int = 45_000
    follow_up_ms: int = 1000

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
            "session_timeout_ms": self.session_timeout_ms,
            "follow_up_ms": self.follow_up_ms,
            "chains": [c.to_json() for c in self.chains],
            "id_order": None if self.id_spread is None else self.id_spread.to_json(),
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
    follow_up_ms: int = 1000,
    id_samples: int = 0,
    evidence: RaceEvidence | None = None,
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
    follow_up_ms:
        Milliseconds from a decision that withholds tasks to its immediate follow-up.
    id_samples:
        When ``changes.add`` exceeds the ids given in ``changes.add_ids``: how many placements
        of the new ids in ``java.util.UUID`` order to plan (0: none).
    evidence:
        The leader's logged inputs of a real chain after these changes: settle each chain's
        timing races with them (:func:`~streams_assign.simulation.chain.plan_chain`).

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
    chains = []
    for name in assignors:
        try:
            chains.append(
                plan_chain(
                    after,
                    name,
                    rates,
                    first_ms=detection,
                    follow_up_ms=follow_up_ms,
                    max_rebalances=max_rounds * 4,
                    evidence=evidence,
                )
            )
        except StreamsAssignError:
            continue  # a broker-side assignor has no classic chain; its error is listed above
    spread = None
    if chains and id_samples > 0 and changes.add > len(changes.add_ids):
        spread = _id_spread(
            cluster,
            changes,
            chains[0].assignor,
            rates,
            detection,
            follow_up_ms,
            max_rounds * 4,
            id_samples,
        )
    return Plan(
        source=source,
        before=cluster,
        after=after,
        changes=tuple(describe_changes(cluster, changes)),
        rates=rates,
        convergences=tuple(convergences),
        errors=tuple(errors),
        chains=tuple(chains),
        id_spread=spread,
        session_timeout_ms=session_timeout_ms,
        follow_up_ms=follow_up_ms,
    )


def _id_spread(
    cluster: ClusterState,
    changes: Changes,
    assignor: str,
    rates: RestoreRates,
    first_ms: int,
    follow_up_ms: int,
    max_rebalances: int,
    samples: int,
) -> IdSpread:
    """The chain once per sampled placement of the ids not given (see :class:`IdSpread`)."""
    from dataclasses import replace

    from streams_assign.simulation.id_order import ids_across_order

    missing = changes.add - len(changes.add_ids)
    existing = [c.id for c in cluster.clients] + list(changes.add_ids)
    runs: list[tuple[tuple[str, ...], Chain]] = []
    for drawn in ids_across_order(existing, missing, samples):
        ids = (*changes.add_ids, *drawn)
        after = apply_changes(cluster, replace(changes, add_ids=ids))
        chain = plan_chain(
            after,
            assignor,
            rates,
            first_ms=first_ms,
            follow_up_ms=follow_up_ms,
            max_rebalances=max_rebalances,
        )
        runs.append((ids, chain))
    finals = [_final_actives(ids, chain) for ids, chain in runs]
    differing = tuple(
        sum(final.get(task) != finals[0].get(task) for task in set(final) | set(finals[0]))
        for final in finals
    )
    return IdSpread(assignor, tuple(runs), differing)


def _final_actives(ids: tuple[str, ...], chain: Chain) -> dict[Any, str]:
    """Task -> client of the last decision, the added clients named by their position."""
    alias = {pid: f"new-{i + 1}" for i, pid in enumerate(ids)}
    return {task: alias.get(pid, pid) for pid, c in chain.final.items() for task in c.active}
