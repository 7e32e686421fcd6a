"""Which (source, destination) pairs ``balanceTasksOverThreads`` visits, and the loads it reads.

Kafka's fixed-point loop visits every (source, destination) client pair on every pass:
O(passes * C^2 * T). The answer only depends on the pairs where ``shouldMoveATask`` holds, and
while one source's inner loop runs its load only falls and the later destinations' loads stay as
they were, so the pairs that can still move are a subset of those that could when the source's
loop began. :class:`ListPairs` and :class:`NumpyPairs` find that superset with one test per
source; :class:`AllPairs` is Kafka's loop as written (every pair). The exact scalar test of
Kafka then decides each pair in Kafka's order (:mod:`streams_assign.assignors.balance`), so the
moves are Kafka's moves with any of them.
"""

from __future__ import annotations

from typing import Any, Protocol

# The vectorised filter must never drop a pair the exact test would accept; this margin only
# lets through a few more pairs than needed, which the exact test then rejects.
MARGIN = 1e-9

#: From this many clients the destination test runs vectorised (numpy); below it a list does the
#: same float arithmetic without importing numpy (which costs more than a small assignment).
NUMPY_FROM = 64


class BalancingPairs(Protocol):
    """Per-client assigned-task counts and the destinations worth visiting from a source.

    Attributes
    ----------
    counts:
        Per client index, its assigned-task count as a float; the balancing loop keeps it
        current.
    """

    counts: Any

    def floor(self) -> float:
        """A lower bound of the load any destination reaches after receiving one task."""
        ...

    def candidates(self, src: int) -> list[int]:
        """Destinations, ascending, that ``src`` may move a task to (a superset of the exact)."""
        ...


class AllPairs:
    """Every other client is a destination, as Kafka's loop visits them (verification mode)."""

    def __init__(self, capacity: list[int], counts: list[int]) -> None:
        self.counts = [float(c) for c in counts]

    def floor(self) -> float:
        """No source is skipped."""
        return float("-inf")

    def candidates(self, src: int) -> list[int]:
        """Every client but ``src``, ascending."""
        return [dst for dst in range(len(self.counts)) if dst != src]


class ListPairs:
    """Per-client loads as Python floats (same IEEE operations as :class:`NumpyPairs`)."""

    def __init__(self, capacity: list[int], counts: list[int]) -> None:
        self.capacity = [float(c) for c in capacity]
        self.counts = [float(c) for c in counts]

    def floor(self) -> float:
        """The least ``(count + 1) / capacity``."""
        return min((c + 1.0) / k for c, k in zip(self.counts, self.capacity, strict=True))

    def candidates(self, src: int) -> list[int]:
        """Destinations whose load is below ``src``'s before and after one move (with margin)."""
        counts, capacity = self.counts, self.capacity
        src_count, src_cap = counts[src], capacity[src]
        high, low = src_count / src_cap, (src_count - 1.0) / src_cap
        return [
            dst
            for dst in range(len(counts))
            if dst != src
            and high - counts[dst] / capacity[dst] > -MARGIN
            and low - (counts[dst] + 1.0) / capacity[dst] >= -MARGIN
        ]


class NumpyPairs:
    """Per-client loads as numpy arrays: one vectorised destination test per source."""

    def __init__(self, capacity: list[int], counts: list[int]) -> None:
        import numpy as np

        self.np = np
        self.capacity = np.asarray(capacity, dtype=np.float64)
        self.counts = np.asarray(counts, dtype=np.float64)

    def floor(self) -> float:
        """The least ``(count + 1) / capacity``."""
        return float(self.np.min((self.counts + 1.0) / self.capacity))

    def candidates(self, src: int) -> list[int]:
        """As :meth:`ListPairs.candidates`, vectorised."""
        counts, capacity = self.counts, self.capacity
        src_count, src_cap = counts[src], capacity[src]
        mask = (src_count / src_cap - counts / capacity > -MARGIN) & (
            (src_count - 1.0) / src_cap - (counts + 1.0) / capacity >= -MARGIN
        )
        mask[src] = False
        result: list[int] = self.np.flatnonzero(mask).tolist()
        return result


def movable_pairs(capacity: list[int], counts: list[int]) -> BalancingPairs:
    """The filtered pairs: :class:`NumpyPairs` from :data:`NUMPY_FROM` clients, else a list."""
    if len(counts) >= NUMPY_FROM:
        return NumpyPairs(capacity, counts)
    return ListPairs(capacity, counts)


__all__ = [
    "MARGIN",
    "NUMPY_FROM",
    "AllPairs",
    "BalancingPairs",
    "ListPairs",
    "NumpyPairs",
    "movable_pairs",
]
