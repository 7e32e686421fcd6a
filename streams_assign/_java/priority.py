"""Priority structures with Kafka's (and Java's) exact semantics.

- :class:`JavaPriorityQueue` reproduces ``java.util.PriorityQueue``'s binary heap step by step
  (``siftUp``, ``siftDown``, ``removeAt``), because where two elements compare equal, Java's poll
  order depends on the heap's array layout; Kafka's movement queue and ``assignTasksToThreads``
  expose it.
- :class:`ConstrainedPrioritySet` is Kafka's ``ConstrainedPrioritySet``: the least-loaded client
  ``(weight, ProcessId)`` that satisfies a constraint. Kafka pops every rejected client and offers
  it back; here a lazy heap skips stale entries, so a poll costs O(r log C) for r rejected clients.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from streams_assign._java.hash_order import JavaHashSet

T = TypeVar("T")


class PrioritySet(Protocol):
    """The interface of Kafka's ``ConstrainedPrioritySet``.

    ``AssignmentState.java`` (:mod:`streams_assign._java.emulation`) provides it: the fast lazy
    heap, the exact caught-up-clients queue, or the literal Java structure in verification mode.
    """

    def offer(self, client: int) -> None:
        """Add or re-key a client."""

    def offer_all(self, clients: Sequence[int]) -> None:
        """Offer each client, in order."""

    def poll(self, task: int, extra: Callable[[int], bool] | None = None) -> int | None:
        """Remove and return the least-loaded eligible client, or ``None``."""


class JavaPriorityQueue(Generic[T]):
    """``java.util.PriorityQueue`` with a comparator given as a sort key.

    Parameters
    ----------
    key:
        Maps an element to a value ordered as Java's comparator orders elements; it is read at
        every comparison, as Java reads a comparator's inputs lazily.

    Notes
    -----
    Follows OpenJDK 17's ``PriorityQueue`` (``offer``/``siftUpUsingComparator``,
    ``poll``/``siftDownUsingComparator``, ``remove(Object)``/``removeAt``). Iterating the
    queue (:meth:`array_order`) yields the backing array, as Java's iterator does.
    """

    __slots__ = ("_queue", "_key")

    def __init__(self, key: Callable[[T], Any], items: Iterable[T] = ()) -> None:
        self._queue: list[T] = []
        self._key = key
        for item in items:
            self.offer(item)

    def __len__(self) -> int:
        return len(self._queue)

    def __bool__(self) -> bool:
        return bool(self._queue)

    def __contains__(self, item: object) -> bool:
        return item in self._queue

    def offer(self, item: T) -> None:
        """Insert ``item`` (Java's ``offer``/``add``)."""
        self._queue.append(item)
        self._sift_up(len(self._queue) - 1, item)

    def peek(self) -> T | None:
        """The head, or ``None`` when empty."""
        return self._queue[0] if self._queue else None

    def poll(self) -> T | None:
        """Remove and return the head, or ``None`` when empty (Java's ``poll``)."""
        queue = self._queue
        if not queue:
            return None
        result = queue[0]
        last = queue.pop()
        if queue:
            self._sift_down(0, last)
        return result

    def remove(self, item: T) -> bool:
        """Remove the first element equal to ``item`` in array order (Java's ``remove(Object)``)."""
        try:
            index = self._queue.index(item)
        except ValueError:
            return False
        self._remove_at(index)
        return True

    def array_order(self) -> list[T]:
        """The elements in backing-array order (what Java's iterator yields)."""
        return list(self._queue)

    def _remove_at(self, index: int) -> None:
        queue = self._queue
        moved = queue.pop()
        if index == len(queue):
            return
        self._sift_down(index, moved)
        if queue[index] is moved:
            self._sift_up(index, moved)

    def _sift_up(self, k: int, item: T) -> None:
        queue, key = self._queue, self._key
        item_key = key(item)
        while k > 0:
            parent = (k - 1) >> 1
            element = queue[parent]
            if not item_key < key(element):  # Java: if (cmp(x, e) >= 0) break
                break
            queue[k] = element
            k = parent
        queue[k] = item

    def _sift_down(self, k: int, item: T) -> None:
        queue, key = self._queue, self._key
        n = len(queue)
        half = n >> 1
        item_key = key(item)
        while k < half:
            child = 2 * k + 1
            element = queue[child]
            element_key = key(element)
            right = child + 1
            if right < n:
                right_key = key(queue[right])
                if element_key > right_key:  # Java: cmp(c, queue[right]) > 0
                    child = right
                    element = queue[right]
                    element_key = right_key
            if not item_key > element_key:  # Java: if (cmp(x, c) <= 0) break
                break
            queue[k] = element
            k = child
        queue[k] = item


class KeyedJavaPriorityQueue(Generic[T]):
    """OpenJDK's ``java.util.PriorityQueue`` whose comparator's key is given with each item.

    A binary heap in an array: ``offer`` sifts up, ``poll`` moves the last element to the root
    and sifts down, preferring the left child on ties. The items' order among equal keys is the
    heap's shape, exactly as in Java (OpenJDK 17 ``siftUpUsingComparator`` /
    ``siftDownUsingComparator``). Keys are read when an item is offered, so the queue is exact
    only where no item's key changes while it sits in the queue (Kafka 4.4's streams-group
    ``StickyTaskAssignor`` heaps, Kafka Streams' ``TaskMovement`` queue); where keys change,
    :class:`JavaPriorityQueue` reads them at every comparison.

    Attributes
    ----------
    keys, items:
        The backing arrays, index for index (Java's ``queue`` array and each element's key).
    """

    __slots__ = ("keys", "items")

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.items: list[T] = []

    def __len__(self) -> int:
        return len(self.items)

    def offer(self, key: Any, item: T) -> None:
        """Insert ``item`` ordered by ``key`` (any totally ordered value; Java's ``offer``)."""
        keys, items = self.keys, self.items
        k = len(items)
        keys.append(key)
        items.append(item)
        while k > 0:
            parent = (k - 1) >> 1
            if key >= keys[parent]:
                break
            keys[k] = keys[parent]
            items[k] = items[parent]
            k = parent
        keys[k] = key
        items[k] = item

    def poll(self) -> T | None:
        """Remove and return the head, or ``None`` when empty (Java's ``poll``)."""
        keys, items = self.keys, self.items
        if not items:
            return None
        result = items[0]
        key = keys.pop()
        item = items.pop()
        n = len(items)
        if n:
            k = 0
            half = n >> 1
            while k < half:
                child = 2 * k + 1
                right = child + 1
                if right < n and keys[child] > keys[right]:
                    child = right
                if key <= keys[child]:
                    break
                keys[k] = keys[child]
                items[k] = items[child]
                k = child
            keys[k] = key
            items[k] = item
        return result


def java_poll_order(items: Iterable[T], key: Callable[[T], Any]) -> list[T]:
    """The order in which ``java.util.PriorityQueue`` polls ``items`` offered in this order.

    For a queue that is filled first and then polled until empty, its comparator given as a
    sort key that does not change while an element is queued (Kafka's ``TaskMovement`` queue).

    Parameters
    ----------
    items:
        The elements, in the order they are offered.
    key:
        Maps an element to a value ordered as Java's comparator orders elements; read once per
        element.

    Returns
    -------
    list
        The elements in Java's poll order.

    Notes
    -----
    A binary heap polls in non-decreasing key order, so when no two keys are equal the order is
    the sorted order and a sort gives it in O(n log n) at C speed. Elements with equal keys
    come out in an order that depends on the heap's array layout; then the queue is run as
    OpenJDK 17 runs it (:class:`KeyedJavaPriorityQueue`).
    """
    elements = list(items)
    keys = [key(item) for item in elements]
    if len(set(keys)) == len(keys):
        order = sorted(range(len(keys)), key=keys.__getitem__)
        return [elements[i] for i in order]
    queue: KeyedJavaPriorityQueue[T] = KeyedJavaPriorityQueue()
    for item, item_key in zip(elements, keys, strict=True):
        queue.offer(item_key, item)
    result: list[T] = []
    while queue.items:
        result.append(queue.items[0])
        queue.poll()
    return result


class ConstrainedPrioritySet:
    """Kafka's ``ConstrainedPrioritySet`` over client indices (reference 1.5).

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


def java_hash_set_order(items: Sequence[T], hash_code: Callable[[T], int]) -> list[T]:
    """Iteration order of a ``java.util.HashSet`` filled with ``items`` in this order.

    See :class:`streams_assign.javacompat.JavaHashSet` (buckets by ``h ^ (h >>> 16)``, the
    table doubled past 3/4 full, insertion order within a bucket).
    """
    return list(JavaHashSet(hash_code, items))


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
    "JavaPriorityQueue",
    "KafkaLiteralPrioritySet",
    "KeyedJavaPriorityQueue",
    "PrioritySet",
    "java_hash_set_order",
    "java_poll_order",
]
