"""Kafka's test coordinator timer: keyed timeouts in a ``java.util.PriorityQueue``.

The shared group traces were recorded with ``MockCoordinatorTimer`` (coordinator-common tests):
``schedule`` cancels the key then pushes onto a ``PriorityQueue`` ordered by deadline only, so
timeouts sharing a deadline fire in the heap's array order, not FIFO. The project's port of
OpenJDK's binary heap (``streams_assign.java.priority_queue.JavaPriorityQueue``: ``siftUp``,
``siftDown``, ``removeAt``) replays it, so the ties come out as in Java.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from streams_assign.java.priority_queue import JavaPriorityQueue

__all__ = [
    "CoordinatorTimer",
    "FastCoordinatorTimer",
    "ScheduledTimeout",
]


@dataclass(eq=False)
class ScheduledTimeout:
    """One pending timeout: its key, its deadline (ms) and the operation it runs."""

    key: str
    deadline_ms: int
    operation: Callable[[], None] = field(repr=False)


class CoordinatorTimer:
    """Keyed timeouts, as Kafka's ``MockCoordinatorTimer``.

    ``schedule`` replaces any timeout of the same key; :meth:`poll` runs, in heap order, every
    timeout whose deadline is at or before the clock, including ones scheduled by the timeouts it
    runs.

    Parameters
    ----------
    clock:
        Returns the current time in milliseconds.
    """

    def __init__(self, clock: Callable[[], int]) -> None:
        self._clock = clock
        self._map: dict[str, ScheduledTimeout] = {}
        self._queue: JavaPriorityQueue[ScheduledTimeout] = JavaPriorityQueue(
            lambda t: t.deadline_ms
        )

    def schedule(self, key: str, delay_ms: int, operation: Callable[[], None]) -> None:
        """Cancel ``key``, then schedule ``operation`` at now + ``delay_ms``."""
        self.cancel(key)
        timeout = ScheduledTimeout(key, self._clock() + delay_ms, operation)
        self._queue.offer(timeout)
        self._map[key] = timeout

    def cancel(self, key: str) -> None:
        """Drop the timeout of ``key`` if any."""
        timeout = self._map.pop(key, None)
        if timeout is not None:
            self._queue.remove(timeout)

    def deadline(self, key: str) -> int | None:
        """The deadline (ms) of ``key``, or ``None``."""
        timeout = self._map.get(key)
        return None if timeout is None else timeout.deadline_ms

    def next_deadline(self) -> int | None:
        """The earliest deadline (ms) of all pending timeouts, or ``None``."""
        head = self._queue.peek()
        return None if head is None else head.deadline_ms

    def pending_keys(self) -> list[str]:
        """The keys of the pending timeouts."""
        return list(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def poll(self, on_fire: Callable[[ScheduledTimeout], None] | None = None) -> int:
        """Run every due timeout in heap order; returns how many ran.

        Parameters
        ----------
        on_fire:
            Called with each timeout just before its operation runs.
        """
        fired = 0
        now = self._clock()
        head = self._queue.peek()
        while head is not None and head.deadline_ms <= now:
            self._queue.poll()
            if self._map.get(head.key) is head:
                del self._map[head.key]
            if on_fire is not None:
                on_fire(head)
            head.operation()
            fired += 1
            head = self._queue.peek()
        return fired


class FastCoordinatorTimer:
    """The same keyed timeouts on ``heapq`` with lazy cancellation, for long simulations.

    ``cancel`` is O(1) and ``schedule`` O(log n) instead of the O(n) ``PriorityQueue.remove`` of
    :class:`CoordinatorTimer`; timeouts that share a deadline fire in scheduling order (FIFO),
    not in Java's heap order, so use :class:`CoordinatorTimer` where Kafka's tie order matters.

    Parameters
    ----------
    clock:
        Returns the current time in milliseconds.
    """

    def __init__(self, clock: Callable[[], int]) -> None:
        self._clock = clock
        self._map: dict[str, ScheduledTimeout] = {}
        self._heap: list[tuple[int, int, ScheduledTimeout]] = []
        self._seq = 0

    def schedule(self, key: str, delay_ms: int, operation: Callable[[], None]) -> None:
        """Replace the timeout of ``key`` with one at now + ``delay_ms``."""
        timeout = ScheduledTimeout(key, self._clock() + delay_ms, operation)
        self._map[key] = timeout
        self._seq += 1
        heapq.heappush(self._heap, (timeout.deadline_ms, self._seq, timeout))

    def cancel(self, key: str) -> None:
        """Drop the timeout of ``key`` if any (its heap entry is skipped later)."""
        self._map.pop(key, None)

    def deadline(self, key: str) -> int | None:
        """The deadline (ms) of ``key``, or ``None``."""
        timeout = self._map.get(key)
        return None if timeout is None else timeout.deadline_ms

    def _drop_stale(self) -> None:
        heap = self._heap
        while heap and self._map.get(heap[0][2].key) is not heap[0][2]:
            heapq.heappop(heap)

    def next_deadline(self) -> int | None:
        """The earliest live deadline (ms), or ``None``."""
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def pending_keys(self) -> list[str]:
        """The keys of the pending timeouts."""
        return list(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def poll(self, on_fire: Callable[[ScheduledTimeout], None] | None = None) -> int:
        """Run every due timeout, earliest first; returns how many ran."""
        fired = 0
        now = self._clock()
        while True:
            self._drop_stale()
            if not self._heap or self._heap[0][0] > now:
                return fired
            _, _, timeout = heapq.heappop(self._heap)
            del self._map[timeout.key]
            if on_fire is not None:
                on_fire(timeout)
            timeout.operation()
            fired += 1
