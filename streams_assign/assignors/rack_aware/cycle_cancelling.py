"""Kafka's own min-cost-flow algorithm for the rack-aware graphs, step for step.

Kafka Streams solves every rack-aware graph with ``Graph.java``
(``org.apache.kafka.streams.processor.internals.assignment.Graph``): a BFS augmenting-path
max flow (``calculateMaxFlow``, used by ``BalanceSubtopologyGraphConstructor``), then cycle
cancelling (``solveMinCostFlow``): Bellman-Ford from a dummy node joined to every node finds
one negative cycle of the residual graph, the cycle is cancelled, and the search repeats until
none is left. Nodes and each node's arcs are kept in sorted maps, so the scan order, and with it
the cycle found and the optimum reached among equally cheap ones, follows the node numbering.

:class:`CycleCancellingGraph` is this project's implementation of that algorithm, written to
reach the same flow as Kafka on every input:

- arcs are scanned by (tail, head) ascending, the dummy node's arcs first;
- Bellman-Ford runs ``|nodes| + 1`` passes (the dummy counts as a node), relaxing on a strict
  improvement, and reports the head of the first arc relaxed in the last pass; the cycle is
  the one reached by following parents from that node;
- a pass that relaxes nothing ends the search early (Kafka runs the remaining passes, which can
  relax nothing either, so the answer is the same);
- the augmenting paths of the max flow are shortest paths found by a BFS that visits each
  node's arcs by head ascending and stops at the first arc into the sink.

Costs and distances are 64-bit integers (Kafka's distances are ``long``). The two loops run
compiled by numba when it is installed (the ``fast`` extra), else as plain Python: the same
code either way (``STREAMS_ASSIGN_NO_NUMBA=1`` forces plain Python).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, MutableSequence, Sequence
from typing import Any

import numpy as np

from streams_assign.errors import TaskAssignmentError

__all__ = ["CycleCancellingGraph"]


class CycleCancellingGraph:
    """A flow graph over integer nodes solved as Kafka's ``Graph<Integer>`` solves it.

    Arcs carry a capacity (tasks), a unit cost (scaled traffic and non-overlap costs) and a
    flow (tasks). Node ids are any ints; only their order matters (Kafka's ``TreeMap``).

    Examples
    --------
    >>> graph = CycleCancellingGraph()
    >>> graph.add_edge(-1, 0, 1, 0, 1)
    >>> graph.add_edge(0, 10, 1, 5, 1)   # the task sits on client 10 at cost 5
    >>> graph.add_edge(0, 11, 1, 2, 0)   # client 11 would cost 2
    >>> graph.add_edge(10, 20, 1, 0, 1)
    >>> graph.add_edge(11, 20, 1, 0, 0)
    >>> graph.solve_min_cost_flow()
    >>> graph.flow(0, 10), graph.flow(0, 11)   # moved to the cheaper client
    (0, 1)

    Notes
    -----
    Source: ``org.apache.kafka.streams.processor.internals.assignment.Graph`` (KIP-925), read
    at commit 1eb7644349cb (4.0.0-SNAPSHOT): ``addEdge``, ``residualGraph``,
    ``calculateMaxFlow`` / ``fordFulkson``, ``solveMinCostFlow`` / ``cancelNegativeCycles`` /
    ``detectNegativeCycles``. The decisions are checked against Kafka 4.2.1's jars by the
    random differential (``tests/reference``).
    """

    def __init__(self) -> None:
        # (tail, head) -> [capacity, cost, flow], in insertion order (sorted when solving).
        self._arcs: dict[tuple[int, int], list[int]] = {}

    def add_edge(self, tail: int, head: int, capacity: int, cost: int, flow: int = 0) -> None:
        """Add the arc ``tail -> head`` (Kafka's ``addEdge(u, v, capacity, cost, flow)``).

        A second arc between the same two nodes in the same direction replaces the first, as
        Kafka's ``TreeMap.put`` does.

        Raises
        ------
        ValueError
            When the capacity is negative, the flow exceeds it, or ``head -> tail`` exists
            (Kafka's ``IllegalArgumentException``: two opposite arcs would make a 2-cycle).
        """
        if capacity < 0:
            raise ValueError("Edge capacity cannot be negative")
        if flow > capacity:
            raise ValueError(f"Edge flow {flow} cannot exceed capacity {capacity}")
        if (head, tail) in self._arcs:
            raise ValueError(
                f"There is already an edge from {head} to {tail}. Can not add an edge from "
                f"{tail} to {head} since there will create a cycle between two nodes"
            )
        self._arcs[(tail, head)] = [capacity, cost, flow]

    def flow(self, tail: int, head: int) -> int:
        """The flow on arc ``tail -> head`` (tasks); 0 when there is no such arc."""
        arc = self._arcs.get((tail, head))
        return 0 if arc is None else arc[2]

    def flows_from(self, tail: int) -> dict[int, int]:
        """Head -> flow of every arc leaving ``tail`` (Kafka's ``edges(node)``)."""
        return {h: a[2] for (t, h), a in self._arcs.items() if t == tail}

    # -- residual graph --------------------------------------------------------------------
    def _residual(self) -> _Residual:
        return _Residual(self._arcs)

    def _store(self, residual: _Residual) -> None:
        for k, key in enumerate(residual.keys):
            self._arcs[key][2] = int(residual.res[2 * k + 1])

    def calculate_max_flow(self, source: int, sink: int) -> int:
        """Push a maximum flow from ``source`` to ``sink`` over the current flow; return it.

        Kafka's ``calculateMaxFlow`` / ``fordFulkson``: BFS augmenting paths (Edmonds-Karp)
        on the residual graph, each node's arcs visited by head ascending.

        Returns
        -------
        int
            The flow leaving ``source`` afterwards (tasks).
        """
        residual = self._residual()
        residual.max_flow(source, sink)
        self._store(residual)
        return sum(a[2] for (t, _), a in self._arcs.items() if t == source)

    def solve_min_cost_flow(self) -> None:
        """Cancel negative cycles until the flow is of minimum cost (``solveMinCostFlow``).

        The flow value is kept; the current flow must be valid (conservation at every node but
        the source and sink), as Kafka's ``validateMinCostGraph`` requires.

        Raises
        ------
        TaskAssignmentError
            When the parents of a node relaxed in the last Bellman-Ford pass lead back to the
            dummy node instead of a cycle (Kafka would fail with a NullPointerException).
        """
        residual = self._residual()
        residual.cancel_negative_cycles()
        self._store(residual)


class _Residual:
    """The residual graph: arc ``2k`` is arc ``k``'s forward copy, ``2k + 1`` its reverse.

    ``res`` holds each residual arc's free capacity; the flow of original arc ``k`` is
    ``res[2k + 1]``. Each node's residual arcs are listed by head ascending (``ptr``, ``head``,
    ``cost``, ``arc`` in CSR form), so reading nodes ascending gives Kafka's scan order.
    """

    def __init__(self, arcs: dict[tuple[int, int], list[int]]) -> None:
        self.keys = sorted(arcs)
        node_ids = sorted({n for key in self.keys for n in key})
        self.index = {n: i for i, n in enumerate(node_ids)}
        self.num_nodes = n = len(node_ids)
        index = self.index
        tails: list[int] = []
        heads: list[int] = []
        costs: list[int] = []
        res: list[int] = []
        for key in self.keys:
            capacity, cost, flow = arcs[key]
            u, v = index[key[0]], index[key[1]]
            tails += (u, v)
            heads += (v, u)
            costs += (cost, -cost)
            res += (capacity - flow, flow)
        scan = sorted(range(len(tails)), key=lambda k: (tails[k], heads[k]))
        ptr = [0] * (n + 1)
        for tail in tails:
            ptr[tail + 1] += 1
        for u in range(n):
            ptr[u + 1] += ptr[u]
        self.tails = tails
        self.res = res
        self.csr = (ptr, [heads[k] for k in scan], [costs[k] for k in scan], scan)
        self.accelerated, self.max_flow_kernel, self.cancel_kernel = _kernels()
        if self.accelerated:
            self.tails = np.asarray(tails, dtype=np.int64)  # type: ignore[assignment]
            self.res = np.asarray(res, dtype=np.int64)  # type: ignore[assignment]
            self.csr = tuple(np.asarray(a, dtype=np.int64) for a in self.csr)  # type: ignore[assignment]

    def _work(self, count: int) -> list[Any]:
        """``count`` scratch arrays of one int per node."""
        if self.accelerated:
            return [np.zeros(self.num_nodes, dtype=np.int64) for _ in range(count)]
        return [[0] * self.num_nodes for _ in range(count)]

    def max_flow(self, source_id: int, sink_id: int) -> None:
        if source_id not in self.index or sink_id not in self.index:
            return
        ptr, head, _, arc = self.csr
        via, visited, queue = self._work(3)
        self.max_flow_kernel(
            self.num_nodes,
            ptr,
            head,
            arc,
            self.tails,
            self.res,
            self.index[source_id],
            self.index[sink_id],
            via,
            visited,
            queue,
        )

    def cancel_negative_cycles(self) -> None:
        ptr, head, cost, arc = self.csr
        status = self.cancel_kernel(self.num_nodes, ptr, head, cost, arc, self.res, *self._work(5))
        if status != 0:
            raise TaskAssignmentError(
                "negative cycle search reached the dummy node (Kafka's Graph would fail)"
            )


def _max_flow_kernel(
    n: int,
    ptr: Sequence[int],
    head: Sequence[int],
    arc: Sequence[int],
    tail_of: Sequence[int],
    res: MutableSequence[int],
    source: int,
    sink: int,
    via: MutableSequence[int],
    visited: MutableSequence[int],
    queue: MutableSequence[int],
) -> None:
    """Kafka's ``fordFulkson``: BFS augmenting paths; arcs of a node visited by head ascending.

    The search stops at the first arc into the sink (the sink is never queued), as Kafka's
    ``breadthFirstSearch`` does.
    """
    while True:
        for v in range(n):
            visited[v] = 0
            via[v] = -1
        visited[source] = 1
        queue[0] = source
        first, last = 0, 1
        found = False
        while first < last and not found:
            u = queue[first]
            first += 1
            for p in range(ptr[u], ptr[u + 1]):
                k = arc[p]
                v = head[p]
                if visited[v] == 1 or res[k] <= 0:
                    continue
                via[v] = k
                if v == sink:
                    found = True
                    break
                queue[last] = v
                last += 1
                visited[v] = 1
        if not found:
            return
        amount = res[via[sink]]
        node = tail_of[via[sink]]
        while node != source:
            amount = min(amount, res[via[node]])
            node = tail_of[via[node]]
        node = sink
        while node != source:
            k = via[node]
            res[k] -= amount
            res[k ^ 1] += amount
            node = tail_of[k]


def _cancel_kernel(
    n: int,
    ptr: Sequence[int],
    head: Sequence[int],
    cost: Sequence[int],
    arc: Sequence[int],
    res: MutableSequence[int],
    dist: MutableSequence[int],
    dirty: MutableSequence[int],
    parent: MutableSequence[int],
    parent_arc: MutableSequence[int],
    seen: MutableSequence[int],
) -> int:
    """Kafka's ``cancelNegativeCycles``; returns 0, or 1 when a walk reached the dummy node.

    One round is Kafka's ``detectNegativeCycles(null, ...)``: the dummy node's arcs come first
    in pass 0, so every node starts at distance 0 with the dummy as parent; ``n + 1`` passes
    (the dummy counts as a node) over the arcs in scan order, relaxing on a strict improvement;
    the head of the first arc relaxed in the last pass is walked back through the parents
    until a node repeats, and that cycle is cancelled. A node's arcs are only scanned when its
    distance fell since their last scan (an arc whose tail kept its distance cannot relax), and
    a pass that relaxes nothing ends the round: the relaxations, their order and the parents
    are those of Kafka's full scans.
    """
    stamp = 0
    while True:
        for v in range(n):
            dist[v] = 0
            dirty[v] = 1
            parent[v] = -1
            parent_arc[v] = -1
        start = -1
        for i in range(n + 1):
            changed = False
            for u in range(n):
                if dirty[u] == 0:
                    continue
                dirty[u] = 0
                du = dist[u]
                for p in range(ptr[u], ptr[u + 1]):
                    k = arc[p]
                    if res[k] <= 0:
                        continue
                    v = head[p]
                    d = du + cost[p]
                    if d < dist[v]:
                        dist[v] = d
                        parent[v] = u
                        parent_arc[v] = k
                        if i == n:
                            start = v
                            break
                        dirty[v] = 1
                        changed = True
                if start >= 0:
                    break
            if start >= 0 or not changed:
                break
        if start < 0:
            return 0
        stamp += 1
        node = start
        while seen[node] != stamp:
            seen[node] = stamp
            node = parent[node]
            if node < 0:
                return 1
        amount = res[parent_arc[node]]
        walk = parent[node]
        while walk != node:
            amount = min(amount, res[parent_arc[walk]])
            walk = parent[walk]
        k = parent_arc[node]
        res[k] -= amount
        res[k ^ 1] += amount
        walk = parent[node]
        while walk != node:
            k = parent_arc[walk]
            res[k] -= amount
            res[k ^ 1] += amount
            walk = parent[walk]


def _compile() -> tuple[bool, Callable[..., None], Callable[..., int]]:
    """The kernels compiled by numba (the ``fast`` extra) when installed, else plain Python.

    Both run the same code on the same integers, so they return the same flows.
    """
    if os.environ.get("STREAMS_ASSIGN_NO_NUMBA") == "1":
        return False, _max_flow_kernel, _cancel_kernel
    try:
        import numba
    except ImportError:
        return False, _max_flow_kernel, _cancel_kernel
    return (
        True,
        numba.njit(cache=True)(_max_flow_kernel),
        numba.njit(cache=True)(_cancel_kernel),
    )


@functools.cache
def _kernels() -> tuple[bool, Callable[..., None], Callable[..., int]]:
    """:func:`_compile`, once per process, on first use (numba is imported only then)."""
    return _compile()
