"""Drive a Connect sequence round by round through its assignor."""

from __future__ import annotations

from streams_assign.connect.eager import eager_assign
from streams_assign.connect.incremental import replay_incremental
from streams_assign.connect.model import ConnectSequence
from streams_assign.connect.result import RoundResult

__all__ = ["replay_connect"]


def replay_connect(sequence: ConnectSequence) -> list[RoundResult]:
    """Every round's decision of the sequence's assignor.

    Parameters
    ----------
    sequence:
        The rounds; ``sequence.assignor`` picks ``EagerAssignor`` (stateless, each round on
        its own) or one leader's ``IncrementalCooperativeAssignor`` (state carried over).

    Returns
    -------
    list[RoundResult]
        One per round, in order.
    """
    if sequence.assignor == "eager":
        return [eager_assign(r) for r in sequence.rounds]
    return replay_incremental(sequence)
