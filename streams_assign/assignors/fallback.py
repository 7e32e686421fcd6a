"""Kafka Streams' ``FallbackPriorTaskAssignor``, and when Kafka falls back to it.

When the group leader cannot fetch the changelog end offsets (``listOffsets`` throws a
``StreamsException`` or times out), every stateful task's lag is ``UNKNOWN_OFFSET_SUM`` (-3)
and ``StreamsPartitionAssignor`` uses this assignor instead of the configured one, unless that
is the ``LegacyStickyTaskAssignor`` (reference 1.4 and 3). It keeps every previous active task
on its owner, places the rest and the standbys as the legacy sticky assignor does, ignores
lags and rack awareness, and always asks for a probing rebalance so the leader retries the
offset fetch ``probing.rebalance.interval.ms`` later.
"""

from __future__ import annotations

from streams_assign.assignors.state import AssignmentState
from streams_assign.assignors.sticky import assign_legacy_sticky
from streams_assign.model import UNKNOWN_OFFSET_SUM, Assignment, ClusterState

#: Assignor names (as in ``streams_assign.api.ASSIGNORS``).
FALLBACK_ASSIGNOR = "fallback_prior"
STICKY_ASSIGNOR = "sticky"


def lag_computation_failed(cluster: ClusterState) -> bool:
    """Whether the input looks like a leader whose end-offset fetch failed.

    True when there is at least one stateful task and every client's lag for every stateful
    task is ``UNKNOWN_OFFSET_SUM`` (-3): what Kafka's ``populateClientStatesMap`` leaves after
    a failed fetch (``lagComputationSuccessful = false``). A -3 on some tasks only is a
    rolling upgrade from a pre-offset-sum version, which Kafka assigns normally.

    Examples
    --------
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
    >>> pid = "00000000-0000-0000-0000-000000000001"
    >>> lag_computation_failed(parse_cluster_state({"stateful_tasks": ["0_0"],
    ...     "clients": [{"id": pid, "capacity": 1, "task_lags": {"0_0": -3}}]}))
    True
    >>> lag_computation_failed(parse_cluster_state({"stateful_tasks": ["0_0"],
    ...     "clients": [{"id": pid, "capacity": 1, "task_lags": {"0_0": 0}}]}))
    False
    """
    if not cluster.stateful_tasks:
        return False
    return all(
        client.task_lags.get(task) == UNKNOWN_OFFSET_SUM
        for client in cluster.clients
        for task in cluster.stateful_tasks
    )


def select_assignor(cluster: ClusterState, configured: str) -> str:
    """The assignor Kafka's leader would run: the fallback after a failed lag computation.

    Kafka's ``StreamsPartitionAssignor.assignTasksToClients``: ``FallbackPriorTaskAssignor``
    when :func:`lag_computation_failed`, unless the configured assignor is the legacy sticky
    one (which ignores lags anyway); otherwise the configured assignor.
    """
    if configured != STICKY_ASSIGNOR and lag_computation_failed(cluster):
        return FALLBACK_ASSIGNOR
    return configured


class FallbackPriorTaskAssignor:
    """Kafka's ``FallbackPriorTaskAssignor``: previous actives stay put, a probe always follows.

    Delegates to ``LegacyStickyTaskAssignor(mustPreserveActiveTaskAssignment=true)`` with no
    rack-aware optimiser, and returns ``probing_rebalance_needed = True``.

    Examples
    --------
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
    >>> cluster = parse_cluster_state({
    ...     "stateful_tasks": ["0_0", "0_1", "0_2"],
    ...     "clients": [
    ...         {"id": "00000000-0000-0000-0000-000000000001", "capacity": 1,
    ...          "prev_active": ["0_0", "0_1", "0_2"]},
    ...         {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1}]})
    >>> result = FallbackPriorTaskAssignor().assign(cluster)
    >>> [len(c.active) for c in result.clients.values()], result.probing_rebalance_needed
    ([3, 0], True)

    Notes
    -----
    Source: ``org.apache.kafka.streams.processor.internals.assignment.FallbackPriorTaskAssignor``
    at Kafka 4.0.0-SNAPSHOT (commit 1eb7644349cb); reference section 7.
    """

    name = FALLBACK_ASSIGNOR

    def assign(self, cluster: ClusterState) -> Assignment:
        """Decide actives and standbys; ``probing_rebalance_needed`` is always true."""
        state = AssignmentState(cluster)
        assign_legacy_sticky(state, must_preserve_active_task_assignment=True, rack=None)
        return state.to_assignment(True, assignor=self.name)


__all__ = [
    "FALLBACK_ASSIGNOR",
    "FallbackPriorTaskAssignor",
    "STICKY_ASSIGNOR",
    "lag_computation_failed",
    "select_assignor",
]
