"""Rack-aware task assignment (KIP-925): Kafka's ``RackAwareTaskAssignor`` on a min-cost flow.

After an assignor has balanced its tasks, Kafka moves tasks between clients to cut cross-rack
traffic without changing how many tasks each client has. The cost of running task ``t`` on
client ``c`` is ``traffic_cost`` for every partition of ``t`` with no replica on ``c``'s rack,
plus ``non_overlap_cost`` when ``c`` is not the client that held ``t`` before the optimisation
(``RackAwareTaskAssignor.getCost``). Two graph constructions decide which placements are allowed:

- ``min_traffic`` (Kafka's ``MinTrafficGraphConstructor``): every client keeps
  exactly its task count;
- ``balance_subtopology`` (``BalanceSubtopologyGraphConstructor``): as well,
  each client gets at most ``ceil(count / T * |tasks of the sub-topology|)`` tasks of each
  sub-topology.

Standbys are optimised pair by pair (two clients on different racks swap standbys, at most
four rounds, ``RackAwareTaskAssignor.optimizeStandbyTasks``).

Kafka solves each graph with its own ``Graph.java`` (BFS max flow, then cycle cancelling with
Bellman-Ford) on graphs numbered its own way; which optimum it reaches among equally cheap
ones follows from that. The default here does the same (:mod:`.kafka_graphs` builds Kafka's
graphs, :mod:`.cycle_cancelling` runs Kafka's algorithm, numba-compiled with the ``fast``
extra), so the placement is Kafka's, ties included.

A faster path for our own use: pass a library solver (:mod:`.flow`: OR-Tools'
``SimpleMinCostFlow`` or networkx's network simplex), or set
``RackAwareTaskAssignor.default_solver``. It solves rack-compressed graphs (:mod:`.graphs`: a
task has an arc to its current client and one arc per client rack, each rack node feeds the
clients of that rack, ``T * R`` arcs instead of ``T * C``): Kafka's optimal cost and task
counts, ties broken towards the fewest moves instead of Kafka's way.

The input comes from optional top-level fields of the cluster state (``docs/rack-aware.md``):
``task_partitions``, ``task_changelog_partitions``, ``partition_racks`` and ``client_racks``
(or the racks of ``clients[].consumers``).
"""

from streams_assign.assignors.rack_aware.assignor import (
    BALANCE_SUBTOPOLOGY,
    MIN_TRAFFIC,
    STANDBY_OPTIMIZER_MAX_ITERATION,
    STATELESS_NON_OVERLAP_COST,
    STATELESS_TRAFFIC_COST,
    MoveStandbyTaskPredicate,
    RackAwareTaskAssignor,
)
from streams_assign.assignors.rack_aware.flow import (
    MinCostFlowSolver,
    default_solver,
    networkx_min_cost_flow,
    ortools_min_cost_flow,
)
from streams_assign.model import TopicPartition

__all__ = [
    "BALANCE_SUBTOPOLOGY",
    "MIN_TRAFFIC",
    "STANDBY_OPTIMIZER_MAX_ITERATION",
    "STATELESS_NON_OVERLAP_COST",
    "STATELESS_TRAFFIC_COST",
    "MinCostFlowSolver",
    "MoveStandbyTaskPredicate",
    "RackAwareTaskAssignor",
    "TopicPartition",
    "default_solver",
    "networkx_min_cost_flow",
    "ortools_min_cost_flow",
]
