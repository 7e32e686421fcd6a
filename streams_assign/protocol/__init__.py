"""The rebalance protocol over time: Kafka's classic group coordinator and simulated members.

- :class:`GroupCoordinator`: Kafka's classic-group coordinator (``GroupMetadataManager``'s
  classic paths) as a deterministic state machine driven by timed requests and timers;
- :func:`run_trace`: replays a group trace of ``scenarios/kafka-group`` and returns the output
  document.
"""

from streams_assign.errors import CoordinatorStateError, InvalidTraceError
from streams_assign.protocol.classic_group import (
    ClassicGroup,
    ClassicGroupMember,
    GroupState,
    ResponseFuture,
)
from streams_assign.protocol.coordinator import CoordinatorConfig, GroupCoordinator
from streams_assign.protocol.expectations import check_expectations
from streams_assign.protocol.trace import load_trace, run_trace

__all__ = [
    "ClassicGroup",
    "ClassicGroupMember",
    "CoordinatorConfig",
    "CoordinatorStateError",
    "GroupCoordinator",
    "GroupState",
    "InvalidTraceError",
    "ResponseFuture",
    "check_expectations",
    "load_trace",
    "run_trace",
]
