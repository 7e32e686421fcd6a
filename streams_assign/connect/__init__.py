"""Kafka Connect's assignors: ``EagerAssignor`` and ``IncrementalCooperativeAssignor``.

Driven round by round over a :class:`ConnectSequence` (read from the ``kafka-connect`` scenario
format by :mod:`streams_assign.formats.connect_sequence`)::

    from streams_assign.connect import replay_connect
    from streams_assign.formats.connect_sequence import load_connect_sequence

    rounds = replay_connect(load_connect_sequence("k0001_incremental.json"))
"""

from streams_assign.connect.eager import eager_assign
from streams_assign.connect.incremental import IncrementalCooperativeAssignor
from streams_assign.connect.model import (
    ConnectorTaskId,
    ConnectRound,
    ConnectSequence,
    WorkerMember,
)
from streams_assign.connect.replay import replay_connect
from streams_assign.connect.result import RoundResult, WorkerAssignment, rounds_to_json
from streams_assign.errors import InvalidConnectSequenceError

__all__ = [
    "ConnectRound",
    "ConnectSequence",
    "ConnectorTaskId",
    "IncrementalCooperativeAssignor",
    "InvalidConnectSequenceError",
    "RoundResult",
    "WorkerAssignment",
    "WorkerMember",
    "eager_assign",
    "replay_connect",
    "rounds_to_json",
]
