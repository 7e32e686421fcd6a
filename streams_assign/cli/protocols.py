"""``streams-assign protocols FILE``: the classic leader's and the broker's decision side by side.

For an application migrating to ``group.protocol=streams`` (KIP-1071): the same cluster state
decided by ``high_availability`` (Kafka Streams' ``HighAvailabilityTaskAssignor``, classic
protocol) and by ``streams_group_sticky`` (the group coordinator's ``StickyTaskAssignor``, on
the streams group the cluster would form, see
:func:`streams_assign.streams_group.from_cluster_state`): per client the active, standby and
warm-up counts of each, and the tasks whose active placement differs; then per assignor the
stateful active tasks moved off their previous owner, the spread of active tasks per stream
thread, and whether a probing rebalance follows.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any

from streams_assign.model import Assignment, ClusterState, TaskId

__all__ = ["ProtocolComparison", "compare_protocols", "configure", "run"]

CLASSIC = "high_availability"
STREAMS_GROUP = "streams_group_sticky"


@dataclass(frozen=True, slots=True)
class ProtocolComparison:
    """Both decisions for one cluster state.

    Attributes
    ----------
    cluster:
        The classic cluster state.
    classic, streams_group:
        ``high_availability``'s and ``streams_group_sticky``'s assignments (per client).
    """

    cluster: ClusterState
    classic: Assignment
    streams_group: Assignment

    def summary(self, assignment: Assignment) -> dict[str, Any]:
        """Counts for one side: moved stateful actives, actives per thread, standbys, probing."""
        previous = {t: c.id for c in self.cluster.clients for t in c.prev_active}
        stateful = set(self.cluster.stateful_tasks)
        moved = sum(
            1
            for client_id, client in assignment.clients.items()
            for t in client.active
            if t in stateful and t in previous and previous[t] != client_id
        )
        per_thread = [
            len(assignment.clients[c.id].active) / c.capacity
            for c in self.cluster.clients
            if c.id in assignment.clients
        ]
        return {
            "stateful_actives_moved": moved,
            "actives_per_thread_min": round(min(per_thread), 3) if per_thread else 0,
            "actives_per_thread_max": round(max(per_thread), 3) if per_thread else 0,
            "standbys": sum(len(c.standby) - len(c.warmup) for c in assignment.clients.values()),
            "warmups": sum(len(c.warmup) for c in assignment.clients.values()),
            "probing_rebalance_needed": assignment.probing_rebalance_needed,
        }

    def differing_actives(self) -> list[TaskId]:
        """Tasks whose active task runs on a different client under the two protocols."""
        owner = {t: cid for cid, c in self.classic.clients.items() for t in c.active}
        return sorted(
            t
            for cid, c in self.streams_group.clients.items()
            for t in c.active
            if owner.get(t) != cid
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON document with both assignments, both summaries and the differing actives."""
        return {
            CLASSIC: {"summary": self.summary(self.classic), **self.classic.to_json()},
            STREAMS_GROUP: {
                "summary": self.summary(self.streams_group),
                **self.streams_group.to_json(),
            },
            "differing_actives": [str(t) for t in self.differing_actives()],
        }


def compare_protocols(cluster: ClusterState) -> ProtocolComparison:
    """Decide ``cluster`` with ``high_availability`` and with ``streams_group_sticky``.

    Raises
    ------
    InvalidStreamsGroupError
        For named-topology tasks, which streams groups do not have.
    TaskAssignorException
        When Kafka's streams-group assignor throws (no members but tasks).
    """
    from streams_assign.assignors import assign

    return ProtocolComparison(
        cluster=cluster,
        classic=assign(cluster, assignor=CLASSIC),
        streams_group=assign(cluster, assignor=STREAMS_GROUP),
    )


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``streams-assign protocols``."""
    parser.add_argument("file", metavar="FILE", help="classic cluster-state JSON file")
    parser.add_argument("--json", action="store_true", help="print both decisions as JSON")


def run(args: argparse.Namespace) -> int:
    """Print the comparison; returns 0 (bad input raises a ``StreamsAssignError``)."""
    from streams_assign.formats.cluster_state import load_cluster_state
    from streams_assign.views.tables import print_protocols

    try:
        cluster = load_cluster_state(args.file)
    except OSError as exc:
        from streams_assign.errors import StreamsGroupUsageError

        raise StreamsGroupUsageError(f"{args.file}: cannot read: {exc.strerror or exc}") from None
    comparison = compare_protocols(cluster)
    if args.json:
        print(json.dumps(comparison.to_json(), indent=1))
        return 0
    print_protocols(
        cluster,
        [
            (name, assignment, comparison.summary(assignment))
            for name, assignment in (
                (CLASSIC, comparison.classic),
                (STREAMS_GROUP, comparison.streams_group),
            )
        ],
        set(comparison.differing_actives()),
        args.file,
    )
    return 0
