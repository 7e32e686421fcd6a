"""Kafka's caught-up-clients queue for ``TaskMovement``, exact and usually O(k) per poll.

Kafka's ``TaskMovement`` keeps every client in a ``ConstrainedPrioritySet``: a
``java.util.PriorityQueue<ProcessId>`` ordered by ``(assignedTaskLoad, ProcessId)`` whose
comparator reads the load **when it compares**, plus a ``uniqueClients`` set.
``poll(task, extra)`` pops clients until one satisfies the constraints and offers the rejected
ones back in ``java.util.HashSet`` iteration order; ``offer(c)`` removes ``c`` if present
(``removeAt``) and inserts it again.

While the heap is *valid* (every parent orders before its children under the current loads),
Java pops in key order, so a poll returns the least ``(load, ProcessId)`` client that satisfies
the constraints: a minimum over the task's caught-up clients, O(k). The heap stops being valid
only when a client's load changes while it sits in the heap and ``offerAll([x1, x2])`` then
compares against it before re-keying it (the old holder losing its active or standby when the
warmup budget is spent; the most caught-up source taken without polling). Then ``siftUp`` and
``removeAt`` can leave a parent after its child, and later polls can return a client that is not
the minimum. Kafka's answers then depend on the backing array's layout.

:class:`ExactCaughtUpClients` answers from the minimum while the heap is valid, and keeps just
enough history to rebuild Java's array when it has to:

- a poll that rejects every client (a *reset*) refills an empty heap in ``HashSet`` order; from
  a valid heap the pops come out in key order, so the new array is a function of the loads at
  that moment (a snapshot of them is enough);
- a poll with an answer on a valid heap pops exactly the clients ordered before the answer, so it
  can be replayed from the answer alone;
- an ``offerAll([x1, x2])`` whose second client is stale can only go wrong if some comparison with
  ``x2`` changes outcome between its old and its new load. When ``x1`` was polled (not in the
  heap) the only such comparison is ``x1`` against ``x2`` in ``x1``'s ``siftUp``, which changes
  only when ``x1``'s key lies strictly between ``x2``'s old and new keys; ``x2``'s own
  ``removeAt`` never reads ``x2``'s key, nor does ``x1``'s (it is removed before any
  comparison). Any other stale ``offerAll`` is replayed exactly.

When an ``offerAll`` cannot be shown safe, the array is rebuilt (base plus replayed log), the
``offerAll`` is done on it as Java does (reading the current loads), and the heap is checked;
if it is valid again the lazy mode resumes from that array, otherwise every operation runs on
the array as Java's ``poll``/``offer`` do until the heap is valid again (a reset always makes it
valid). Replays run at C speed through :mod:`heapq` (see :class:`ExactCaughtUpClients`).

Cost: at 1000 clients on the scale benchmark 1577 of 6000 ``offerAll`` calls need the array
(1153 standby fallbacks right after a reset, 424 old holders whose old and new loads straddle
the source's), and ``assign`` takes 1.0-1.4 s (machine shared, 2 cores) against 0.2-0.35 s
for the plain minimum (which is not exact) and 23-38 s for the literal structure.

Sources: OpenJDK 17 ``java.util.PriorityQueue`` (``offer``/``siftUpUsingComparator``,
``poll``/``siftDownUsingComparator``, ``remove(Object)``/``removeAt``), ``java.util.HashMap``
bucket iteration, Kafka 4.0 ``ConstrainedPrioritySet`` and ``TaskMovement``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from itertools import repeat
from operator import and_, ge, lshift, lt, or_
from typing import Protocol

from streams_assign.java.hash_order import java_uuid_hash_code
from streams_assign.java.priority_queue import JavaClientHeap
from streams_assign.model import TaskId


class CaughtUpClientsState(Protocol):
    """What the movement queue reads of :class:`~streams_assign.assignors.state.AssignmentState`.

    Attributes
    ----------
    task_load:
        Per client index, ``assignedTaskLoad`` (kept current by the state).
    client_ids, capacity:
        Per client index, the process id and the number of stream threads.
    tasks:
        All tasks in TaskId order.
    """

    task_load: list[float]
    client_ids: list[str]
    capacity: list[int]
    tasks: list[TaskId]

    @property
    def num_clients(self) -> int:
        """Number of clients C."""
        ...

    def caught_up(self, client: int, task: int) -> bool:
        """Whether ``client`` is caught up on ``task``."""
        ...

    def caught_up_clients(self, task: int) -> Sequence[int]:
        """The clients caught up on ``task``, in ascending index order."""
        ...


# Log entries: (_POLL, key of the answer) or (_OFFER, old key or None, new key).
_POLL = 0
_OFFER = 1


def _remove_key(heap: list[int], key: int, current: dict[int, int] | None = None) -> None:
    """Java's ``remove(Object)`` (``indexOf`` + ``removeAt``) on a heap of distinct int keys.

    ``current`` maps the stored key of an element whose load changed in place to the key Java's
    comparator reads now; the removed element's own key is never compared.
    """
    index = heap.index(key)
    moved = heap.pop()
    n = len(heap)
    if index == n:
        return
    stale = current or {}

    def value(k: int) -> int:
        return stale.get(k, k)

    moved_value = value(moved)
    # siftDown(index, moved)
    k = index
    half = n >> 1
    while k < half:
        child = 2 * k + 1
        element = heap[child]
        element_value = value(element)
        right = child + 1
        if right < n:
            right_value = value(heap[right])
            if element_value > right_value:  # Java: cmp(c, queue[right]) > 0
                child, element, element_value = right, heap[right], right_value
        if moved_value <= element_value:  # Java: if (cmp(x, c) <= 0) break
            break
        heap[k] = element
        k = child
    heap[k] = moved
    if k == index:
        _sift_up_key(heap, index, moved, current)


def _sift_up_key(heap: list[int], k: int, item: int, current: dict[int, int] | None) -> None:
    """Java's ``siftUp(k, item)`` on int keys, reading changed keys through ``current``."""
    item_value = item if not current else current.get(item, item)
    while k > 0:
        parent = (k - 1) >> 1
        element = heap[parent]
        if item_value >= (element if not current else current.get(element, element)):
            break
        heap[k] = element
        k = parent
    heap[k] = item


def _is_valid_key_heap(heap: list[int]) -> bool:
    """Whether every parent is at most its children (C speed)."""
    return all(map(ge, heap[1::2], heap)) and all(map(ge, heap[2::2], heap))


class ExactCaughtUpClients:
    """Kafka's ``ConstrainedPrioritySet`` for ``TaskMovement`` with Java's exact answers.

    Parameters
    ----------
    state:
        The assignment state; the weight is ``state.task_load`` and the constraint is
        ``state.caught_up``.

    Notes
    -----
    Contract (as in ``TaskMovement``): between two operations only the clients passed to the
    next ``offer_all`` change load, and every offered client is present at each poll.

    Replays keep the heap as a list of int keys ``(load bits << s) | client`` and use
    :mod:`heapq`: on a valid heap of distinct keys, ``heappush`` is Java's ``offer`` and
    ``heappop`` ends in the same array as Java's ``poll`` (its bottom-up sift moves the same
    ascending chain of smaller children up and puts the last element where Java's ``siftDown``
    stops), so replaying costs C speed.

    Attributes
    ----------
    materialized:
        How many ``offerAll`` calls needed Java's array rebuilt (for tests and benchmarks).
    literal_operations:
        How many operations ran on an invalid heap, as Java's ``poll``/``offer`` do.
    """

    def __init__(self, state: CaughtUpClientsState) -> None:
        self._state = state
        n = state.num_clients
        self._shift = max(n.bit_length(), 1)
        self._client_mask = (1 << self._shift) - 1
        self._placed: list[float] = [0.0] * n  # the load each present client was inserted with
        self._placed_key: list[int] = [0] * n  # the same as an int key (see JavaClientHeap)
        self._present = [False] * n
        self._num_present = 0
        # Base of the log: ("keys", heap of int keys) or ("reset", loads snapshot, members).
        self._base: tuple = ("keys", [])
        self._log: list[tuple] = []
        self._heap: JavaClientHeap | None = None  # set while operations run on the Java array
        self._spread: list[int] | None = None
        self._rank: dict[float, int] | None = None
        self._high = 0  # bits of a key
        self._full_buckets: list[int] | None = None
        self.materialized = 0
        self.literal_operations = 0

    # -- public interface (as movements.py calls it) ------------------------------------------
    def offer(self, client: int) -> None:
        """Kafka's ``offer``."""
        self.offer_all((client,))

    def offer_all(self, clients: Sequence[int]) -> None:
        """Kafka's ``offerAll``: ``offer`` each client in order."""
        loads = self._state.task_load
        if self._heap is not None:
            self._literal_offer_all(clients)
            return
        if not self._offer_all_is_safe(clients, loads):
            self.materialized += 1
            self._exact_offer_all(clients)
            return
        log, placed, placed_key, present = self._log, self._placed, self._placed_key, self._present
        for client in clients:
            load = loads[client]
            new = self._key(load, client)
            if present[client]:
                old = placed_key[client]
            else:
                old = None
                present[client] = True
                self._num_present += 1
            log.append((_OFFER, old, new))
            placed[client] = load
            placed_key[client] = new

    def poll(self, task: int, extra: Callable[[int], bool] | None = None) -> int | None:
        """Kafka's ``poll(task, extraConstraint)``."""
        if self._heap is not None:
            return self._literal_poll(task, extra)
        state = self._state
        load = state.task_load
        present = self._present
        best: int | None = None
        best_load = 0.0
        # Caught-up clients come in ascending index order, so the first of equal loads is the
        # least (load, ProcessId).
        for client in state.caught_up_clients(task):
            if not present[client] or (extra is not None and not extra(client)):
                continue
            client_load = load[client]
            if best is None or client_load < best_load:
                best, best_load = client, client_load
        if best is None:
            # Every client is polled and offered back: the array restarts from the loads.
            all_present = self._num_present == len(present)
            members = None if all_present else [c for c, p in enumerate(present) if p]
            self._base = ("reset", list(self._placed_key), members)
            self._log = []
        else:
            self._log.append((_POLL, self._placed_key[best]))
            present[best] = False
            self._num_present -= 1
        return best

    # -- lazy bookkeeping ---------------------------------------------------------------------
    def _offer_all_is_safe(self, clients: Sequence[int], loads: Sequence[float]) -> bool:
        """Whether Java's ``offerAll`` gives the array the placed loads predict (module notes)."""
        present, placed = self._present, self._placed
        if len(clients) == 1:
            return True  # a client's own key is never compared before it is removed
        if len(clients) != 2:
            return not any(present[c] and placed[c] != loads[c] for c in clients[1:])
        first, second = clients
        if not present[second] or placed[second] == loads[second]:
            return True
        if present[first]:
            return False
        low, high = sorted(((placed[second], second), (loads[second], second)))
        return not low < (loads[first], first) < high

    def _key(self, load: float, client: int) -> int:
        """``(load, client)`` as one int ordered as Kafka's comparator orders them."""
        rank = self._rank
        if rank is None:
            rank = self._load_ranks()
        return (rank[load] << self._shift) | client

    def _load_ranks(self) -> dict[float, int]:
        # Every load is assignedTaskCount / capacity (a Java double, as Python computes it) with
        # at most one copy of each task per client: ranking all of them keeps keys small ints.
        state = self._state
        values = sorted(
            {
                count / capacity
                for capacity in set(state.capacity)
                for count in range(len(state.tasks) + 1)
            }
        )
        self._rank = {value: i for i, value in enumerate(values)}
        self._high = len(values).bit_length() + self._shift
        return self._rank

    def _spreads(self) -> list[int]:
        if self._spread is None:
            spread = []
            for process_id in self._state.client_ids:
                h = java_uuid_hash_code(process_id) & 0xFFFF_FFFF
                spread.append(h ^ (h >> 16))
            self._spread = spread
        return self._spread

    def _hash_set_order(self, items: list[int]) -> list[int]:
        """``java.util.HashSet`` iteration order of distinct clients or keys added in order.

        Same model as :func:`~streams_assign.java.priority_queue.java_hash_set_order`: bucket
        ``(h ^ (h >>> 16)) & (table - 1)`` with the table doubled past 3/4 full, buckets in
        index order, insertion order within a bucket. ``items`` may be int keys (the client is
        in the low bits).
        """
        spread, client_mask = self._spreads(), self._client_mask
        n = len(items)
        table = 16
        while n > table * 3 // 4:
            table *= 2
        mask = table - 1
        buckets = [spread[item & client_mask] & mask for item in items]
        return [items[i] for i in sorted(range(n), key=buckets.__getitem__)]

    def _sorted_hash_set_order(self, keys: list[int]) -> list[int]:
        """:meth:`_hash_set_order` of keys given in ascending order, at C speed."""
        spread = self._spreads()
        n = len(keys)
        table = 16
        while n > table * 3 // 4:
            table *= 2
        high = self._high
        buckets = map(
            and_,
            map(spread.__getitem__, map(and_, keys, repeat(self._client_mask))),
            repeat(table - 1),
        )
        composite = sorted(map(or_, map(lshift, buckets, repeat(high)), keys))
        return list(map(and_, composite, repeat((1 << high) - 1)))

    def _reset_heap(self, keys: list[int], members: list[int] | None) -> list[int]:
        """The array after a reset from a valid heap: keys in (bucket, key) order, offered."""
        if members is not None:
            ordered = self._sorted_hash_set_order(sorted(keys[c] for c in members))
        else:
            if self._full_buckets is None:
                spread, n = self._spreads(), len(keys)
                table = 16
                while n > table * 3 // 4:
                    table *= 2
                high = self._high
                self._full_buckets = [(h & (table - 1)) << high for h in spread]
            composite = sorted(map(or_, self._full_buckets, keys))
            below = (1 << self._high) - 1
            ordered = list(map(and_, composite, repeat(below)))
        heap: list[int] = []
        deque(map(heappush, repeat(heap), ordered), maxlen=0)
        return heap

    def _replay(self) -> list[int]:
        """Java's array as int keys (valid under the placed loads), from the base and the log."""
        if self._rank is None:
            self._load_ranks()
        base = self._base
        heap = list(base[1]) if base[0] == "keys" else self._reset_heap(base[1], base[2])
        for entry in self._log:
            if entry[0] == _POLL:
                answer = entry[1]
                # A valid heap pops in key order: the answer comes after every smaller key.
                count = sum(map(lt, heap, repeat(answer)))
                rejected = list(map(heappop, repeat(heap, count)))
                popped = heappop(heap)
                assert popped == answer
                deque(map(heappush, repeat(heap), self._sorted_hash_set_order(rejected)), maxlen=0)
            else:
                _, old, new = entry
                if old is not None:
                    _remove_key(heap, old)
                heappush(heap, new)
        self._log = []
        return heap

    def _exact_offer_all(self, clients: Sequence[int]) -> None:
        """Rebuild the array and run ``offerAll`` on it as Java does, with the current loads.

        Stale clients keep their placed key in the array; comparisons read their current key
        through a map, as Java's comparator reads the current load.
        """
        heap = self._replay()
        loads, placed, placed_key, present = (
            self._state.task_load,
            self._placed,
            self._placed_key,
            self._present,
        )
        current: dict[int, int] = {}
        for client in clients:
            new = self._key(loads[client], client)
            if present[client] and new != placed_key[client]:
                current[placed_key[client]] = new
        for client in clients:
            new = self._key(loads[client], client)
            if present[client]:
                _remove_key(heap, placed_key[client], current)
                current.pop(placed_key[client], None)
            else:
                present[client] = True
                self._num_present += 1
            heap.append(new)
            _sift_up_key(heap, len(heap) - 1, new, current)
            placed[client] = loads[client]
            placed_key[client] = new
        if _is_valid_key_heap(heap):
            self._base = ("keys", heap)
        else:
            clients_array = list(map(and_, heap, repeat(self._client_mask)))
            self._heap = JavaClientHeap(list(placed_key), clients_array)

    # -- operations on the Java array ---------------------------------------------------------
    def _literal_offer_all(self, clients: Sequence[int]) -> None:
        heap = self._heap
        assert heap is not None
        self.literal_operations += 1
        keys, loads, present = heap.keys, self._state.task_load, self._present
        for client in clients:  # the only loads that can differ from the keys (contract)
            keys[client] = self._key(loads[client], client)
        for client in clients:
            if present[client]:
                heap.remove(client)
            else:
                present[client] = True
                self._num_present += 1
            heap.offer(client)
            self._placed[client] = loads[client]
            self._placed_key[client] = keys[client]
        self._leave_array_if_valid()

    def _literal_poll(self, task: int, extra: Callable[[int], bool] | None) -> int | None:
        heap = self._heap
        assert heap is not None
        self.literal_operations += 1
        caught_up = self._state.caught_up
        rejected: list[int] = []
        found = None
        while heap.array:
            client = heap.poll()
            if caught_up(client, task) and (extra is None or extra(client)):
                found = client
                self._present[client] = False
                self._num_present -= 1
                break
            rejected.append(client)
        heap.offer_many(self._hash_set_order(rejected))
        self._leave_array_if_valid()
        return found

    def _leave_array_if_valid(self) -> None:
        heap = self._heap
        assert heap is not None
        if heap.is_valid():
            keys = heap.keys
            self._base = ("keys", list(map(keys.__getitem__, heap.array)))
            self._log = []
            self._heap = None


__all__ = [
    "CaughtUpClientsState",
    "ExactCaughtUpClients",
]
