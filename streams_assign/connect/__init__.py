"""Kafka Connect's assignors: ``EagerAssignor`` and ``IncrementalCooperativeAssignor``.

Driven round by round over a :class:`ConnectSequence` (the ``kafka-connect`` scenario
format)::

    from streams_assign.connect import load_connect_sequence, replay_connect
    rounds = replay_connect(load_connect_sequence("k0001_incremental.json"))
"""

import importlib
from typing import Any

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
    "load_connect_sequence",
    "parse_connect_sequence",
    "replay_connect",
    "rounds_to_json",
]

#: The document functions, defined in :mod:`streams_assign.formats.connect_sequence` and imported on
#: first use (that module imports this package's model: an eager import here is a cycle).
_FORMAT_NAMES = frozenset({"load_connect_sequence", "parse_connect_sequence"})


def __getattr__(name: str) -> Any:
    if name in _FORMAT_NAMES:
        value = getattr(importlib.import_module("streams_assign.formats.connect_sequence"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
