"""Rack-aware task assignment (KIP-925): Kafka's ``RackAwareTaskAssignor`` on a min-cost flow.

After an assignor has balanced its tasks, Kafka moves tasks between clients to cut cross-rack
traffic without changing how many tasks each client has. The cost of running task ``t`` on
client ``c`` is ``traffic_cost`` for every partition of ``t`` with no replica on ``c``'s rack,
plus ``non_overlap_cost`` when ``c`` is not the client that held ``t`` before the optimisation
(reference 6.2). Two graph constructions decide which placements are allowed:

- ``min_traffic`` (Kafka's ``MinTrafficGraphConstructor``, reference 6.3): every client keeps
  exactly its task count;
- ``balance_subtopology`` (``BalanceSubtopologyGraphConstructor``, reference 6.4): as well,
  each client gets at most ``ceil(count / T * |tasks of the sub-topology|)`` tasks of each
  sub-topology.

Standbys are optimised pair by pair (two clients on different racks swap standbys, at most
four rounds, reference 6.6).

Kafka solves each graph by cycle cancelling with Bellman-Ford (``Graph.java``). Here the same
graphs are solved by OR-Tools' ``SimpleMinCostFlow`` (networkx when OR-Tools is missing), so
the optimal cost and every client's task count are Kafka's; where several placements share
the optimal cost, the one that moves the fewest tasks is chosen (Kafka's choice follows its
Bellman-Ford scan order). Where the optimum is unique the placement is Kafka's.

The graphs are rack-compressed: a task has an arc to its current client and one arc per client
rack (cost ``traffic * missing partitions + non_overlap_cost``), and each rack node feeds the
clients of that rack. Every client of one rack costs the same for a task it does not hold, so
the optimum is the dense graph's, with ``T * R`` arcs instead of ``T * C``.

Modules: :mod:`.assignor` (the assignor), :mod:`.graphs` (the two graph constructors),
:mod:`.flow` (the min-cost-flow solvers, passed in; OR-Tools' by default, networkx's when
OR-Tools is absent).

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
