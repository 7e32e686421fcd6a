"""Closed-loop Connect rebalances: workers apply each assignment and rejoin.

A recorded sequence fixes, for every round, the members and what each reports it runs. To
compare eager with incremental cooperative rebalancing on the *same* events, this module keeps
only the events of a sequence (time, membership, configuration) and lets every worker run what
its assignor gave it: eager workers run their whole new assignment; incremental workers stop
what was revoked and start what was assigned. A worker that leaves takes its work with it (lost
work). Follow-up rebalances are added as Connect triggers them: right after a round that
revoked something (``rebalance_ms`` later), and when a scheduled delay expires.
"""

from __future__ import annotations

from dataclasses import replace

from streams_assign.connect.eager import eager_assign
from streams_assign.connect.incremental import IncrementalCooperativeAssignor
from streams_assign.connect.model import (
    ConnectorTaskId,
    ConnectRound,
    ConnectSequence,
    WorkerMember,
)
from streams_assign.connect.result import RoundResult

__all__ = ["MAX_FOLLOW_UPS", "simulate_connect"]

MAX_FOLLOW_UPS = 20
"""Follow-up rebalances allowed after one event before the simulation stops adding them."""


def simulate_connect(
    sequence: ConnectSequence, assignor: str, rebalance_ms: int = 1000
) -> tuple[ConnectSequence, list[RoundResult]]:
    """Replay the events of ``sequence`` under ``assignor`` with workers applying assignments.

    Parameters
    ----------
    sequence:
        The recorded sequence; its reported ownership is ignored after the first round.
    assignor:
        ``eager`` or ``incremental`` (with the sequence's protocol and
        ``scheduled.rebalance.max.delay.ms``).
    rebalance_ms:
        Milliseconds from a revoking round to its follow-up rebalance.

    Returns
    -------
    tuple[ConnectSequence, list[RoundResult]]
        The rounds actually run (events plus follow-ups, with the ownership each member
        reported) and the decision of each, ready for
        :func:`~streams_assign.connect.scores.score_sequence`.

    Raises
    ------
    ValueError
        ``assignor`` is neither ``eager`` nor ``incremental``.
    """
    if assignor not in ("eager", "incremental"):
        raise ValueError(f"assignor must be eager or incremental, got {assignor!r}")
    incremental = IncrementalCooperativeAssignor(
        sequence.scheduled_rebalance_max_delay_ms, sequence.protocol
    )
    first = sequence.rounds[0]
    owned: dict[str, tuple[set[str], set[ConnectorTaskId]]] = {
        m.worker_id: (set(m.owned_connectors), set(m.owned_tasks)) for m in first.members
    }
    ran: list[ConnectRound] = []
    results: list[RoundResult] = []
    follow_up: int | None = None

    def run(template: ConnectRound, time_ms: int) -> None:
        nonlocal follow_up, owned
        generation = len(ran) + 1
        members = tuple(
            WorkerMember(
                m.worker_id,
                m.url,
                tuple(sorted(owned.get(m.worker_id, (set(), set()))[0])),
                tuple(sorted(owned.get(m.worker_id, (set(), set()))[1])),
            )
            for m in template.members
        )
        round_ = replace(
            template,
            time_ms=time_ms,
            members=members,
            generation=generation,
            last_completed_generation=generation - 1,
        )
        if assignor == "eager":
            result = eager_assign(round_)
        else:
            result = incremental.perform_assignment(round_)
        ran.append(round_)
        results.append(result)
        after: dict[str, tuple[set[str], set[ConnectorTaskId]]] = {}
        revoking = False
        for worker, decision in result.workers.items():
            connectors, tasks = owned.get(worker, (set(), set()))
            if assignor == "eager":
                connectors, tasks = set(), set()
            connectors = (connectors - set(decision.revoked_connectors)) | set(
                decision.assigned_connectors
            )
            tasks = (tasks - set(decision.revoked_tasks)) | set(decision.assigned_tasks)
            revoking |= bool(decision.revoked_connectors or decision.revoked_tasks)
            after[worker] = (connectors, tasks)
        owned = after
        delay = max((d.delay_ms for d in result.workers.values()), default=0)
        if revoking:
            follow_up = time_ms + rebalance_ms
        elif delay > 0:
            follow_up = time_ms + delay
        else:
            follow_up = None

    def drain(until: int | None, template: ConnectRound) -> None:
        count = 0
        while follow_up is not None and (until is None or follow_up < until):
            if count == MAX_FOLLOW_UPS:
                break
            run(template, follow_up)
            count += 1

    for round_ in sequence.rounds:
        if ran:
            drain(round_.time_ms, ran[-1])
        run(round_, max(round_.time_ms, ran[-1].time_ms if ran else round_.time_ms))
    drain(None, ran[-1])
    simulated = ConnectSequence(
        assignor, sequence.protocol, sequence.scheduled_rebalance_max_delay_ms, tuple(ran)
    )
    return simulated, results
