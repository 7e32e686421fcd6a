"""Costs of a Connect rebalance sequence, round by round: what stops, what moves, for how long.

For each round of a replayed sequence (inputs plus the assignor's decisions) the scores count
connectors and tasks ("work items"):

- ``revoked``: items a worker must stop at this rebalance. Eager: everything the members
  reported running (the eager protocol stops all work before rejoining). Incremental: the
  revoked lists.
- ``assigned``: items a worker starts (eager: every item; incremental: the increments).
- ``moved``: items started on a worker other than the one that last ran them.
- ``stopped_ms``: item-milliseconds of downtime that ended at this round, with a rebalance
  taking ``rebalance_ms``: an item stopped by an eager rejoin is down from the round's start
  until it is started again at ``time_ms + rebalance_ms``; an item revoked cooperatively keeps
  running through the rebalance and is down from ``time_ms + rebalance_ms`` until a later round
  starts it; an item whose worker left is down from the round that notices it.
- ``lost_ms``: the part of ``stopped_ms`` due to work whose worker left (waiting, under
  incremental, up to ``scheduled.rebalance.max.delay.ms`` for the worker to return);
- ``balanced``: after the round every configured item runs exactly once and the counts of
  connectors and of tasks per worker differ by at most one.

Per sequence, ``rounds_to_balance`` is the largest number of rounds from a change of membership
or configuration (the first round counts as one) to the first balanced round at or after it
(1 = balanced at once; ``None`` = some change was never followed by a balanced round before the
next change or the end).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streams_assign.connect.model import ConnectorTaskId, ConnectRound, ConnectSequence
from streams_assign.connect.result import RoundResult

__all__ = ["DEFAULT_REBALANCE_MS", "RoundScore", "SequenceScore", "score_sequence"]

Item = str | ConnectorTaskId

DEFAULT_REBALANCE_MS = 1000
"""Assumed length of one rebalance (JoinGroup to started work), milliseconds."""


@dataclass(frozen=True)
class RoundScore:
    """The costs of one round (counts of work items; times in milliseconds)."""

    round: int
    time_ms: int
    revoked: int
    assigned: int
    moved: int
    stopped_ms: int
    lost_ms: int
    still_stopped: int
    balanced: bool

    def to_json(self) -> dict[str, Any]:
        """A JSON object of the fields."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class SequenceScore:
    """A sequence's per-round costs and totals.

    Attributes
    ----------
    rounds:
        One :class:`RoundScore` per round.
    rounds_to_balance:
        The most rounds any membership or configuration change took to reach a balanced round
        (``None`` if one never did).
    stopped_ms:
        Total item-milliseconds of downtime, counting items still stopped at the end until
        the last round's ``time_ms + rebalance_ms``.
    """

    assignor: str
    rounds: tuple[RoundScore, ...]
    rounds_to_balance: int | None
    stopped_ms: int
    lost_ms: int

    @property
    def revoked(self) -> int:
        """Items revoked over the whole sequence."""
        return sum(r.revoked for r in self.rounds)

    @property
    def moved(self) -> int:
        """Items moved over the whole sequence."""
        return sum(r.moved for r in self.rounds)

    def to_json(self) -> dict[str, Any]:
        """A JSON object: totals and the per-round list."""
        return {
            "assignor": self.assignor,
            "revoked": self.revoked,
            "moved": self.moved,
            "stopped_ms": self.stopped_ms,
            "lost_ms": self.lost_ms,
            "rounds_to_balance": self.rounds_to_balance,
            "rounds": [r.to_json() for r in self.rounds],
        }


def _balanced(running: dict[Item, list[str]], configured: set[Item], workers: list[str]) -> bool:
    if set(running) != configured or any(len(owners) != 1 for owners in running.values()):
        return False
    connectors = dict.fromkeys(workers, 0)
    tasks = dict.fromkeys(workers, 0)
    for item, owners in running.items():
        target = tasks if isinstance(item, ConnectorTaskId) else connectors
        target[owners[0]] += 1
    return all(max(c.values()) - min(c.values()) <= 1 for c in (connectors, tasks) if c)


def _reported(round_: ConnectRound) -> dict[Item, str]:
    """The work items the members report running, each with (the last) worker reporting it."""
    reported: dict[Item, str] = {}
    for member in round_.members:
        for c in member.owned_connectors:
            reported[c] = member.worker_id
        for t in member.owned_tasks:
            reported[t] = member.worker_id
    return reported


def _revoked_and_assigned(
    round_: ConnectRound, result: RoundResult, eager: bool
) -> tuple[list[Item], list[tuple[Item, str]]]:
    """The items the round stops, and the items it starts with their workers.

    Eager: every member stops everything it runs (an item run twice is stopped twice);
    incremental: the revoked lists.
    """
    revoked: list[Item] = []
    assigned: list[tuple[Item, str]] = []
    for worker, decision in result.workers.items():
        if not eager:
            revoked += [*decision.revoked_connectors, *decision.revoked_tasks]
        assigned += [(c, worker) for c in decision.assigned_connectors]
        assigned += [(t, worker) for t in decision.assigned_tasks]
    if eager:
        revoked = [c for m in round_.members for c in m.owned_connectors]
        revoked += [t for m in round_.members for t in m.owned_tasks]
    return revoked, assigned


def _running_after(
    eager: bool,
    reported: dict[Item, str],
    revoked: list[Item],
    assigned: list[tuple[Item, str]],
) -> dict[Item, list[str]]:
    """What runs after the round: per item, its workers."""
    running: dict[Item, list[str]] = {}
    if eager:
        for item, worker in assigned:
            running.setdefault(item, []).append(worker)
    else:
        gone = set(revoked)
        for item, worker in reported.items():
            if item not in gone:
                running.setdefault(item, []).append(worker)
        for item, worker in assigned:
            running.setdefault(item, []).append(worker)
    return running


def _configured(round_: ConnectRound) -> set[Item]:
    """The round's configured connectors and tasks."""
    configured: set[Item] = set(round_.connectors)
    configured |= {ConnectorTaskId(c, t) for c, n in round_.connectors.items() for t in range(n)}
    return configured


def score_sequence(
    sequence: ConnectSequence,
    results: list[RoundResult],
    rebalance_ms: int = DEFAULT_REBALANCE_MS,
) -> SequenceScore:
    """Score a replayed sequence round by round.

    Parameters
    ----------
    sequence:
        The input rounds (reported ownership, configuration, membership, times).
    results:
        The assignor's decision for each round (:func:`~streams_assign.connect.replay_connect`).
    rebalance_ms:
        Assumed length of a rebalance (milliseconds), the stop-the-world window of eager.

    Returns
    -------
    SequenceScore

    Raises
    ------
    ValueError
        ``results`` does not have one entry per round.
    """
    if len(results) != len(sequence.rounds):
        raise ValueError(f"{len(results)} results for {len(sequence.rounds)} rounds")
    eager = sequence.assignor == "eager"
    last_owner: dict[Item, str] = {}
    down_since: dict[Item, tuple[int, bool]] = {}  # item -> (since, its worker left)
    scores = []
    changes: list[int] = []
    balanced_after: dict[int, int] = {}
    previous_key: tuple[Any, ...] | None = None
    for index, (round_, result) in enumerate(zip(sequence.rounds, results, strict=True)):
        start = round_.time_ms
        done = start + rebalance_ms
        key = (
            tuple(sorted(m.worker_id for m in round_.members)),
            tuple(sorted(round_.connectors.items())),
        )
        if key != previous_key:
            changes.append(index)
        previous_key = key
        reported = _reported(round_)
        # Work whose worker left (known, not reported, not already down) is down from now.
        for item in last_owner:
            if item not in reported and item not in down_since:
                down_since[item] = (start, True)
        revoked, assigned = _revoked_and_assigned(round_, result, eager)
        if eager:
            for item in reported:
                down_since.setdefault(item, (start, False))
        else:
            for item in revoked:
                down_since.setdefault(item, (done, False))
        moved = sum(1 for item, worker in assigned if last_owner.get(item, worker) != worker)
        stopped_ms = lost_ms = 0
        for item, worker in assigned:
            down = down_since.pop(item, None)
            if down is not None:
                stopped_ms += max(0, done - down[0])
                lost_ms += max(0, done - down[0]) if down[1] else 0
            last_owner[item] = worker
        running = _running_after(eager, reported, revoked, assigned)
        configured = _configured(round_)
        for item in list(down_since):
            if item not in configured:
                del down_since[item]  # deleted work is not downtime
        workers = [m.worker_id for m in round_.members]
        balanced = _balanced(running, configured, workers)
        if balanced and changes[-1] not in balanced_after:
            balanced_after[changes[-1]] = index - changes[-1] + 1
        scores.append(
            RoundScore(
                index + 1,
                start,
                len(revoked),
                len(assigned),
                moved,
                stopped_ms,
                lost_ms,
                len(down_since),
                balanced,
            )
        )
    end = sequence.rounds[-1].time_ms + rebalance_ms
    still = [(max(0, end - since), lost) for since, lost in down_since.values()]
    total = sum(s.stopped_ms for s in scores) + sum(ms for ms, _ in still)
    total_lost = sum(s.lost_ms for s in scores) + sum(ms for ms, lost in still if lost)
    to_balance = max(balanced_after.values()) if all(c in balanced_after for c in changes) else None
    return SequenceScore(sequence.assignor, tuple(scores), to_balance, total, total_lost)
