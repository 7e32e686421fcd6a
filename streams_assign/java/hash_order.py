"""Java collection iteration orders, for the places where Kafka's result depends on them.

Kafka iterates a few ``java.util.HashMap``/``HashSet`` instances whose order decides the
outcome:

- ``ClientTagAwareStandbyTaskAssignor`` fills the standbys it could not place on distinct tag
  values in the iteration order of ``tasksToRemainingStandbys`` (a ``HashMap<TaskId, Integer>``
  built by ``Collectors.toMap`` from the sorted stateful tasks, with fully served tasks
  removed);
- ``StreamsPartitionAssignor.assignTasksToThreads`` builds its ``PriorityQueue`` from
  ``ClientState.statefulActiveTasks()`` / ``statelessActiveTasks()``, which are
  ``Collectors.toSet()`` ``HashSet``\\ s: the heap's array layout (and so the order of the last
  distribution loop) follows the set's iteration order.

:class:`JavaHashMap` replays OpenJDK's ``HashMap`` bucket layout: hash spreading
``h ^ (h >>> 16)``, a power-of-two table starting at 16 that doubles when the size exceeds
0.75 of the capacity, new entries appended to their bucket, resize splitting each bucket into
a "low" and a "high" list that keep their relative order, and ``treeifyBin``'s resize when a
bucket of a table smaller than 64 reaches 9 entries. Iteration is bucket by bucket, each bucket
in list order.

Notes
-----
Out of scope: the red-black "tree bins" Java builds when one bucket of a table of 64 or more
entries reaches 9 entries (``TREEIFY_THRESHOLD``). A tree bin's iteration order differs from
the list order (the root moves to the front; a new node is linked after its tree parent).
TaskId hashes spread sub-topologies and partitions well enough that no realistic task set
reaches it (no file of the shared scenarios does); :attr:`JavaHashMap.treeified` reports when
it would have happened so a caller can tell that the emulated order may differ from Java's.
"""

from __future__ import annotations

import uuid as _uuid
from collections.abc import Callable, Hashable, Iterable, Iterator
from functools import lru_cache
from operator import mul
from typing import Generic, TypeVar

from streams_assign.model import TaskId

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_DEFAULT_INITIAL_CAPACITY = 16
_MAXIMUM_CAPACITY = 1 << 30
_LOAD_FACTOR = 0.75
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64


def int32(value: int) -> int:
    """Wrap an integer to Java's 32-bit ``int`` (two's complement overflow)."""
    value &= 0xFFFF_FFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def java_string_hash_code(text: str) -> int:
    """``java.lang.String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units.

    Examples
    --------
    >>> java_string_hash_code("zone")
    3744684
    >>> java_string_hash_code("")
    0
    """
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFF_FFFF
    return int32(h)


_POWERS: dict[int, list[int]] = {}


@lru_cache(maxsize=1 << 16)
def java_string_hash_unsigned(text: str) -> int:
    """``String.hashCode()`` as an unsigned 32-bit value, at C speed for ASCII ids.

    ``s[0]*31^(n-1) + ... + s[n-1]`` modulo 2^32; non-ASCII text takes the UTF-16 path of
    :func:`java_string_hash_code`. Memoised, as a Java ``String`` caches its own hash code.

    Examples
    --------
    >>> java_string_hash_unsigned("zone") == java_string_hash_code("zone") & 0xFFFF_FFFF
    True
    """
    if not text.isascii():
        return java_string_hash_code(text) & 0xFFFF_FFFF
    n = len(text)
    powers = _POWERS.get(n)
    if powers is None:
        powers = [pow(31, n - 1 - i, 1 << 32) for i in range(n)]
        _POWERS[n] = powers
    return sum(map(mul, text.encode("ascii"), powers)) & 0xFFFF_FFFF


def java_int_div(a: int, b: int) -> int:
    """Java ``int`` division (truncates toward zero).

    Examples
    --------
    >>> java_int_div(-7, 2)
    -3
    """
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def java_uuid_hash_code(process_id: str) -> int:
    """``java.util.UUID.hashCode()`` of a process id: ``(int)(hilo >> 32) ^ (int) hilo``."""
    value = _uuid.UUID(process_id).int
    hilo = (value >> 64) ^ (value & 0xFFFF_FFFF_FFFF_FFFF)
    result = ((hilo >> 32) ^ hilo) & 0xFFFF_FFFF
    return result - (1 << 32) if result >= 1 << 31 else result


def java_objects_hash(*values: int | str | None) -> int:
    """``java.util.Objects.hash(values...)`` for ``int``, ``String`` and ``null`` arguments.

    ``Arrays.hashCode``: ``result = 31 * result + hash(element)`` starting at 1, where an
    ``Integer`` hashes to itself, a ``String`` as :func:`java_string_hash_code` and ``null`` to 0.
    """
    result = 1
    for value in values:
        if value is None:
            h = 0
        elif isinstance(value, str):
            h = java_string_hash_code(value)
        else:
            h = int32(value)
        result = int32(31 * result + h)
    return result


def task_id_hash_code(task: TaskId) -> int:
    """Kafka's ``TaskId.hashCode()``: ``Objects.hash(subtopology, partition, topologyName)``.

    Examples
    --------
    >>> task_id_hash_code(TaskId(0, 0))
    29791
    >>> task_id_hash_code(TaskId(1, 2))
    30814
    """
    return java_objects_hash(task.subtopology, task.partition, task.topology_name)


def spread(hash_code: int) -> int:
    """``HashMap.hash``: ``h ^ (h >>> 16)`` on the 32-bit pattern (returned non-negative)."""
    h = hash_code & 0xFFFF_FFFF
    return h ^ (h >> 16)


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``capacity`` (at least 1)."""
    n = 1
    while n < capacity and n < _MAXIMUM_CAPACITY:
        n <<= 1
    return n


class JavaHashMap(Generic[K, V]):
    """A map that iterates in OpenJDK ``java.util.HashMap`` order.

    Parameters
    ----------
    hash_code:
        The key's Java ``hashCode()`` (for example :func:`task_id_hash_code`).
    initial_capacity:
        ``new HashMap<>(initialCapacity)``; ``None`` for the no-argument constructor (table of
        16 allocated on the first put).

    Attributes
    ----------
    treeified:
        True once a bucket of a table of at least 64 reached 9 entries, where Java would have
        converted it to a tree bin (whose order this class does not model; see the module
        notes).

    Examples
    --------
    >>> m = JavaHashMap(task_id_hash_code)
    >>> for t in ("0_0", "0_1", "1_0", "0_16"):
    ...     m.put(TaskId.parse(t), 1)
    >>> [str(t) for t in m]
    ['1_0', '0_1', '0_0', '0_16']
    """

    __slots__ = ("_hash_code", "_table", "_size", "_threshold", "_index", "treeified")

    def __init__(self, hash_code: Callable[[K], int], initial_capacity: int | None = None) -> None:
        self._hash_code = hash_code
        self._table: list[list[tuple[int, K]]] = []
        self._size = 0
        # Java keeps the requested table size in ``threshold`` until the first allocation.
        self._threshold = 0 if initial_capacity is None else table_size_for(initial_capacity)
        self._index: dict[K, V] = {}
        self.treeified = False

    # -- queries -------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __getitem__(self, key: K) -> V:
        return self._index[key]

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value for ``key``, or ``default``."""
        return self._index.get(key, default)

    def __iter__(self) -> Iterator[K]:
        for bucket in self._table:
            for _, key in bucket:
                yield key

    def keys(self) -> list[K]:
        """The keys in Java iteration order."""
        return list(self)

    def items(self) -> list[tuple[K, V]]:
        """The entries in Java iteration order."""
        return [(key, self._index[key]) for key in self]

    @property
    def capacity(self) -> int:
        """The current table length (0 before the first put)."""
        return len(self._table)

    # -- mutation ------------------------------------------------------------------------
    def put(self, key: K, value: V) -> None:
        """``HashMap.put``: replace the value in place, or append a new entry and maybe resize."""
        if key in self._index:
            self._index[key] = value
            return
        if not self._table:
            self._resize()
        h = spread(self._hash_code(key))
        bucket = self._table[h & (len(self._table) - 1)]
        bucket.append((h, key))
        self._index[key] = value
        if len(bucket) > _TREEIFY_THRESHOLD:
            # treeifyBin: a small table grows instead of building a tree bin.
            if len(self._table) < _MIN_TREEIFY_CAPACITY:
                self._resize()
            else:
                self.treeified = True
        self._size += 1
        if self._size > self._threshold:
            self._resize()

    def remove(self, key: K) -> V | None:
        """``HashMap.remove``: unlink the entry (no shrinking); return its value or ``None``."""
        if key not in self._index:
            return None
        h = spread(self._hash_code(key))
        bucket = self._table[h & (len(self._table) - 1)]
        for i, (_, k) in enumerate(bucket):
            if k == key:
                del bucket[i]
                break
        self._size -= 1
        return self._index.pop(key)

    def _resize(self) -> None:
        old = self._table
        old_cap = len(old)
        if old_cap > 0:
            if old_cap >= _MAXIMUM_CAPACITY:
                self._threshold = 2**31 - 1
                return
            new_cap = old_cap << 1
            new_threshold = int(new_cap * _LOAD_FACTOR)
        elif self._threshold > 0:
            new_cap = self._threshold  # initial capacity requested in the constructor
            new_threshold = int(new_cap * _LOAD_FACTOR)
        else:
            new_cap = _DEFAULT_INITIAL_CAPACITY
            new_threshold = int(_DEFAULT_INITIAL_CAPACITY * _LOAD_FACTOR)
        table: list[list[tuple[int, K]]] = [[] for _ in range(new_cap)]
        for j, bucket in enumerate(old):
            for entry in bucket:  # split into lo (j) and hi (j + old_cap), order kept
                table[j + old_cap if entry[0] & old_cap else j].append(entry)
        self._table = table
        self._threshold = new_threshold


class JavaHashSet(Generic[K]):
    """A set that iterates in ``java.util.HashSet`` order (a :class:`JavaHashMap` of keys).

    Examples
    --------
    >>> s = JavaHashSet(task_id_hash_code, [TaskId(0, 0), TaskId(0, 1), TaskId(1, 0)])
    >>> [str(t) for t in s]
    ['1_0', '0_1', '0_0']
    """

    __slots__ = ("_map",)

    def __init__(
        self,
        hash_code: Callable[[K], int],
        items: Iterable[K] = (),
        initial_capacity: int | None = None,
    ) -> None:
        self._map: JavaHashMap[K, bool] = JavaHashMap(hash_code, initial_capacity)
        for item in items:
            self.add(item)

    def add(self, item: K) -> None:
        """``HashSet.add``."""
        self._map.put(item, True)

    def discard(self, item: K) -> None:
        """``HashSet.remove``."""
        self._map.remove(item)

    def __contains__(self, item: object) -> bool:
        return item in self._map

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self) -> Iterator[K]:
        return iter(self._map)

    @property
    def treeified(self) -> bool:
        """See :attr:`JavaHashMap.treeified`."""
        return self._map.treeified


def task_hash_map() -> JavaHashMap[TaskId, int]:
    """An empty ``HashMap<TaskId, Integer>`` (what ``Collectors.toMap`` starts from)."""
    return JavaHashMap(task_id_hash_code)


def task_hash_set(tasks: Iterable[TaskId] = ()) -> JavaHashSet[TaskId]:
    """A ``HashSet<TaskId>`` filled in the given order (``Collectors.toSet()``)."""
    return JavaHashSet(task_id_hash_code, tasks)


__all__ = [
    "JavaHashMap",
    "JavaHashSet",
    "int32",
    "java_int_div",
    "java_objects_hash",
    "java_string_hash_code",
    "java_string_hash_unsigned",
    "java_uuid_hash_code",
    "spread",
    "table_size_for",
    "task_hash_map",
    "task_hash_set",
    "task_id_hash_code",
]
