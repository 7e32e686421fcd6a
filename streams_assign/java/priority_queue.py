"""``java.util.PriorityQueue`` step by step, and the poll order it gives.

Where two elements compare equal, Java's poll order depends on the heap's array layout; Kafka's
movement queue, its ``ConstrainedPrioritySet`` and ``assignTasksToThreads`` expose it.

- :class:`JavaPriorityQueue`: the heap with a comparator given as a sort key, read at every
  comparison (``siftUp``, ``siftDown``, ``removeAt``);
- :class:`KeyedJavaPriorityQueue`: the same heap with each item's key given when it is offered;
- :class:`JavaClientHeap`: the same heap over int client indices and an explicit key list;
- :func:`java_poll_order` and :func:`java_hash_set_order`: the order a filled queue polls in and
  a ``HashSet`` iterates in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import ge
from typing import Any, Generic, TypeVar

from streams_assign.java.hash_order import JavaHashSet

T = TypeVar("T")


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


def java_hash_set_order(items: Sequence[T], hash_code: Callable[[T], int]) -> list[T]:
    """Iteration order of a ``java.util.HashSet`` filled with ``items`` in this order.

    See :class:`streams_assign.java.hash_order.JavaHashSet` (buckets by ``h ^ (h >>> 16)``, the
    table doubled past 3/4 full, insertion order within a bucket).
    """
    return list(JavaHashSet(hash_code, items))


class JavaClientHeap:
    """``java.util.PriorityQueue<ProcessId>`` of client indices over an explicit key list.

    Parameters
    ----------
    keys:
        ``keys[c]``: an int ordered as Kafka's comparator orders ``(load, ProcessId)``
        (the load's rank among possible loads, shifted, then the client index). Read at every
        comparison, so changing an entry while the client is in the heap behaves as Java's
        lazily reading comparator does.
    array:
        Initial backing array (taken as is).

    Notes
    -----
    Same steps as :class:`JavaPriorityQueue` (OpenJDK 17
    ``offer``/``siftUp``, ``poll``/``siftDown``, ``remove(Object)``/``removeAt``), specialised
    to int keys held in a list.
    """

    __slots__ = ("array", "keys")

    def __init__(self, keys: list[int], array: list[int] | None = None) -> None:
        self.keys = keys
        self.array: list[int] = [] if array is None else array

    def offer(self, item: int) -> None:
        """Java's ``offer``: append and ``siftUp``."""
        queue = self.array
        queue.append(item)
        self._sift_up(len(queue) - 1, item)

    def offer_many(self, items: Sequence[int]) -> None:
        """``offer`` each item in order (Java's ``addAll`` and ``offerAll``)."""
        queue, keys = self.array, self.keys
        for item in items:
            k = len(queue)
            queue.append(item)
            item_key = keys[item]
            while k:
                parent = (k - 1) >> 1
                element = queue[parent]
                if item_key >= keys[element]:
                    break
                queue[k] = element
                k = parent
            queue[k] = item

    def poll(self) -> int:
        """Java's ``poll`` on a non-empty queue."""
        queue = self.array
        result = queue[0]
        last = queue.pop()
        if queue:
            self._sift_down(0, last)
        return result

    def remove(self, item: int) -> bool:
        """Java's ``remove(Object)``: ``indexOf`` then ``removeAt``."""
        queue = self.array
        try:
            index = queue.index(item)
        except ValueError:
            return False
        moved = queue.pop()
        if index == len(queue):
            return True
        self._sift_down(index, moved)
        if queue[index] == moved:
            self._sift_up(index, moved)
        return True

    def is_valid(self) -> bool:
        """Whether every parent orders before its children under the current keys."""
        keys = self.keys
        ordered = list(map(keys.__getitem__, self.array))
        return all(map(ge, ordered[1::2], ordered)) and all(map(ge, ordered[2::2], ordered))

    def _sift_up(self, k: int, item: int) -> None:
        queue, keys = self.array, self.keys
        item_key = keys[item]
        while k > 0:
            parent = (k - 1) >> 1
            element = queue[parent]
            if item_key >= keys[element]:  # Java: if (cmp(x, e) >= 0) break
                break
            queue[k] = element
            k = parent
        queue[k] = item

    def _sift_down(self, k: int, item: int) -> None:
        queue, keys = self.array, self.keys
        n = len(queue)
        half = n >> 1
        item_key = keys[item]
        while k < half:
            child = 2 * k + 1
            element = queue[child]
            element_key = keys[element]
            right = child + 1
            if right < n:
                right_element = queue[right]
                right_key = keys[right_element]
                if element_key > right_key:  # Java: cmp(c, queue[right]) > 0
                    child, element, element_key = right, right_element, right_key
            if item_key <= element_key:  # Java: if (cmp(x, c) <= 0) break
                break
            queue[k] = element
            k = child
        queue[k] = item


__all__ = [
    "JavaClientHeap",
    "JavaPriorityQueue",
    "KeyedJavaPriorityQueue",
    "java_hash_set_order",
    "java_poll_order",
]
