"""streams-assign: where the tasks of a Kafka Streams application run.

A Kafka-identical ``HighAvailabilityTaskAssignor`` and its companions, on validated cluster
states. Start with :func:`assign`::

    import streams_assign
    assignment = streams_assign.assign("cluster.json")

The names below are imported on first use (PEP 562), so ``import streams_assign.cli`` and
``streams-assign --help`` load no assignor.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streams_assign.assignors import ASSIGNORS, assign, get_assignor
    from streams_assign.errors import (
        InvalidScenarioError,
        InvalidTaskIdError,
        MissingExtraError,
        StreamsAssignError,
        TaskAssignmentError,
        UnknownAssignorError,
    )
    from streams_assign.formats.cluster_state import (
        cluster_state_to_json,
        load_cluster_state,
        loads_cluster_state,
        parse_cluster_state,
    )
    from streams_assign.model import (
        LATEST_OFFSET,
        LONG_MAX_VALUE,
        UNKNOWN_OFFSET_SUM,
        Assignment,
        AssignmentConfigs,
        ClientAssignment,
        ClientState,
        ClusterState,
        ConsumerState,
        TaskId,
        process_id_sort_key,
    )

__version__ = "0.1.0"

# The library's warnings ("Unable to assign 1 of 1 standby tasks ...") reach the handlers the
# program configures; a program that configures none gets no stray lines on stderr from
# logging's last-resort handler.
logging.getLogger(__name__).addHandler(logging.NullHandler())

#: Public name -> the module that defines it.
_SOURCES: dict[str, str] = {
    "ASSIGNORS": "assignors",
    "assign": "assignors",
    "get_assignor": "assignors",
    "InvalidScenarioError": "errors",
    "InvalidTaskIdError": "errors",
    "MissingExtraError": "errors",
    "StreamsAssignError": "errors",
    "TaskAssignmentError": "errors",
    "UnknownAssignorError": "errors",
    "LATEST_OFFSET": "model",
    "LONG_MAX_VALUE": "model",
    "UNKNOWN_OFFSET_SUM": "model",
    "Assignment": "model",
    "AssignmentConfigs": "model",
    "ClientAssignment": "model",
    "ClientState": "model",
    "ClusterState": "model",
    "ConsumerState": "model",
    "TaskId": "model",
    "process_id_sort_key": "model",
    "cluster_state_to_json": "formats.cluster_state",
    "load_cluster_state": "formats.cluster_state",
    "loads_cluster_state": "formats.cluster_state",
    "parse_cluster_state": "formats.cluster_state",
}

__all__ = [
    "ASSIGNORS",
    "LATEST_OFFSET",
    "LONG_MAX_VALUE",
    "UNKNOWN_OFFSET_SUM",
    "Assignment",
    "AssignmentConfigs",
    "ClientAssignment",
    "ClientState",
    "ClusterState",
    "ConsumerState",
    "InvalidScenarioError",
    "InvalidTaskIdError",
    "MissingExtraError",
    "StreamsAssignError",
    "TaskAssignmentError",
    "TaskId",
    "UnknownAssignorError",
    "assign",
    "cluster_state_to_json",
    "get_assignor",
    "load_cluster_state",
    "loads_cluster_state",
    "parse_cluster_state",
    "process_id_sort_key",
]


def __getattr__(name: str) -> Any:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'streams_assign' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"streams_assign.{source}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
