"""streams-assign: where the tasks of a Kafka Streams application run.

A Kafka-identical ``HighAvailabilityTaskAssignor`` and its companions, on validated cluster
states. Start with :func:`assign`::

    import streams_assign
    assignment = streams_assign.assign("cluster.json")
"""

from streams_assign.api import ASSIGNORS, assign, get_assignor
from streams_assign.errors import (
    InvalidScenarioError,
    InvalidTaskIdError,
    StreamsAssignError,
    TaskAssignmentError,
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
from streams_assign.scenario import (
    cluster_state_to_json,
    load_cluster_state,
    loads_cluster_state,
    parse_cluster_state,
)

__version__ = "0.1.0"

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
    "StreamsAssignError",
    "TaskAssignmentError",
    "TaskId",
    "assign",
    "cluster_state_to_json",
    "get_assignor",
    "load_cluster_state",
    "loads_cluster_state",
    "parse_cluster_state",
    "process_id_sort_key",
]
