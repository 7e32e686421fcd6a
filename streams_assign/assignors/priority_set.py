"""Kafka's ``ConstrainedPrioritySet``: the least-loaded client that may take a task.

Kafka keeps clients in a ``java.util.PriorityQueue`` ordered by ``(weight, ProcessId)``; a poll
pops every rejected client and offers it back.

- :class:`ConstrainedPrioritySet`: the same answers from a lazy heap that skips stale entries,
  so a poll costs O(r log C) for r rejected clients (the default mode);
- :class:`KafkaLiteralPrioritySet`: Kafka's structure as written (verification mode).

Source: Kafka 4.0 ``ConstrainedPrioritySet`` (``processor.internals.assignment``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from streams_assign.java.priority_queue import JavaPriorityQueue, java_hash_set_order


class PrioritySet(Protocol):
    """The interface of Kafka's ``ConstrainedPrioritySet``.

    ``AssignmentState.java`` (:mod:`streams_assign.assignors.java_emulation`) provides it: the
    fast lazy heap, the exact caught-up-clients queue, or the literal Java structure in
    verification mode.
    """

    def offer(self, client: int) -> None:
        """Add or re-key a client."""

    def offer_all(self, clients: Sequence[int]) -> None:
        """Offer each client, in order."""

    def poll(self, task: int, extra: Callable[[int], bool] | None = None) -> int | None:
        """Remove and return the least-loaded eligible client, or ``None``."""


class ConstrainedPrioritySet:
    """Kafka's ``ConstrainedPrioritySet`` over client indices, ordered by ``(weight, ProcessId)``.

    Parameters
    ----------
    weights:
        Per client index, its current weight (a load as a Java double). The caller keeps it
        current and offers every client whose weight changed before the next poll, as all of
        Kafka's callers do.
    constraint:
        ``constraint(client, task)``: whether the client may take the task.

    Notes
    -----
    ``poll`` returns the present client with the smallest ``(weight, index)`` that satisfies the
    constraint and removes it; rejected clients stay present. Entries whose weight went stale
    or whose client was polled are skipped lazily instead of being removed from the heap.
    """

    __slots__ = ("_weights", "_constraint", "_heap", "_present")

    def __init__(self, weights: Sequence[float], constraint: Callable[[int, int], bool]) -> None:
        self._weights = weights
        self._constraint = constraint
        self._heap: list[tuple[float, int]] = []
        self._present: set[int] = set()

    def offer(self, client: int) -> None:
        """Add ``client`` with its current weight (re-keying it if present)."""
        self._present.add(client)
        heapq.heappush(self._heap, (self._weights[client], client))

    def offer_all(self, clients: Iterable[int]) -> None:
        """Offer each client."""
        for client in clients:
            self.offer(client)

    def poll(self, task: int, extra: Callable[[int], bool] | None = None) -> int | None:
        """Remove and return the least-loaded client that may take ``task``, or ``None``."""
        heap, present, weights = self._heap, self._present, self._weights
        rejected: list[tuple[float, int]] = []
        found = None
        while heap:
            entry = heapq.heappop(heap)
            weight, client = entry
            if client not in present or weight != weights[client]:
                continue  # stale: polled since, or re-offered with another weight
            if self._constraint(client, task) and (extra is None or extra(client)):
                present.discard(client)
                found = client
                break
            rejected.append(entry)
        for entry in rejected:
            heapq.heappush(heap, entry)
        return found


class KafkaLiteralPrioritySet:
    """Kafka's ``ConstrainedPrioritySet`` reproduced structure for structure (verification only).

    A ``java.util.PriorityQueue`` whose comparator reads each client's weight when it compares
    (so a weight that changes while the client sits in the queue behaves as in Java), a
    ``uniqueClients`` set, and rejected clients offered back in ``HashSet`` iteration order.
    O(C log C) per poll, as in Kafka; :class:`ConstrainedPrioritySet` gives the same answers
    faster, which the tests check against this class.

    Parameters
    ----------
    weights:
        Per client index, its current weight, read lazily.
    constraint:
        ``constraint(client, task)``.
    hash_code:
        Per client index, ``ProcessId.hashCode()`` (``UUID.hashCode()`` of the process id).
    """

    __slots__ = ("_queue", "_unique", "_constraint", "_hash_code")

    def __init__(
        self,
        weights: Sequence[float],
        constraint: Callable[[int, int], bool],
        hash_code: Sequence[int],
    ) -> None:
        self._queue: JavaPriorityQueue[int] = JavaPriorityQueue(key=lambda c: (weights[c], c))
        self._unique: set[int] = set()
        self._constraint = constraint
        self._hash_code = hash_code

    def offer(self, client: int) -> None:
        """Kafka's ``offer``: remove the client if present, then insert it."""
        if client in self._unique:
            self._queue.remove(client)
        else:
            self._unique.add(client)
        self._queue.offer(client)

    def offer_all(self, clients: Iterable[int]) -> None:
        """Offer each client in the given order."""
        for client in clients:
            self.offer(client)

    def poll(self, task: int, extra: Callable[[int], bool] | None = None) -> int | None:
        """Kafka's ``poll(task, extraConstraint)``."""
        rejected: list[int] = []
        found = None
        while self._queue:
            client = self._queue.poll()
            assert client is not None
            self._unique.discard(client)
            if self._constraint(client, task) and (extra is None or extra(client)):
                found = client
                break
            rejected.append(client)
        self.offer_all(java_hash_set_order(rejected, lambda c: self._hash_code[c]))
        return found


__all__ = [
    "ConstrainedPrioritySet",
    "KafkaLiteralPrioritySet",
    "PrioritySet",
]
