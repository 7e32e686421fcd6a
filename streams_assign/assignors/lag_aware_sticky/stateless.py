"""Stateless actives: per-client counts within Kafka's balance window, as sticky as they allow."""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator, Sequence
from itertools import chain, repeat

from streams_assign.model import ClusterState, TaskId

__all__ = [
    "assign_stateless_tasks",
    "balance_window",
    "least_loaded_counts",
    "sticky_counts",
]

#: Byte 0 / 1 to the digit "0" / "1": a row of comparisons read as a binary numeral.
_DIGITS = bytes.maketrans(b"\x00\x01", b"01")

#: A change of one count, for undoing an augmentation that found no way to close: (g, c, delta).
_Change = tuple[int, int, int]


def _bits(clients: set[int]) -> int:
    """The clients as a bitmask: bit ``c`` set for each client ``c``."""
    mask = 0
    for c in clients:
        mask |= 1 << c
    return mask


def _ascending(mask: int) -> Iterator[int]:
    """The clients of a bitmask in ascending order (lazily: a search stops at the first fit)."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def least_loaded_counts(
    group_sizes: Sequence[int], active_counts: Sequence[int], capacity: Sequence[int]
) -> list[list[int]]:
    """Kafka's least-loaded deal of stateless tasks, as counts per subtopology and client.

    One subtopology at a time, each task goes to the client with the fewest actives per stream
    thread (Kafka's ``assignStatelessActiveTasks`` in ``HighAvailabilityTaskAssignor``), then
    the fewest tasks of that subtopology so far, then the lower index. The previous assignment
    plays no part, so the bounds derived from these counts are the same in every rebalance
    with the same stateful counts.

    Parameters
    ----------
    group_sizes:
        Per subtopology, its stateless tasks (``G`` entries).
    active_counts:
        Per client (``C`` entries, UUID order), the actives it has already (tasks).
    capacity:
        Per client, its stream threads (>= 1).

    Returns
    -------
    list[list[int]]
        ``G x C`` counts (tasks); each row sums to its subtopology's size.

    Examples
    --------
    >>> least_loaded_counts([3, 1], [2, 0, 1], [2, 1, 1])
    [[1, 1, 1], [0, 1, 0]]
    """
    n_clients = len(capacity)
    load = list(active_counts)
    counts = []
    # One heap for all subtopologies, with lazy deletion: an entry (load, quota, client) is
    # live while it matches the client's load and its quota in the current subtopology; after
    # each subtopology the clients it touched are pushed again with quota 0. O(C + T log C).
    heap = [(load[c] / capacity[c], 0, c) for c in range(n_clients)]
    heapq.heapify(heap)
    for size in group_sizes:
        quota = [0] * n_clients
        touched = []
        for _ in range(size):
            while True:
                key, q, c = heapq.heappop(heap)
                if q == quota[c] and key == load[c] / capacity[c]:
                    break
            if not quota[c]:
                touched.append(c)
            quota[c] += 1
            load[c] += 1
            heapq.heappush(heap, (load[c] / capacity[c], quota[c], c))
        for c in touched:
            heapq.heappush(heap, (load[c] / capacity[c], 0, c))
        counts.append(quota)
    return counts


class _Deal:
    """Counts of one stateless deal with their bounds, and the hand-overs between clients.

    Kept up to date on every change: per subtopology ``g``, ``spare[g]``, the clients that can
    give up a task of ``g`` without losing a returning task or going below their floor; and
    the clients above their lower total (``above``: a chain that lacks one task can end there)
    and below their upper total (``below``: a chain with one task too many can end there).
    ``state`` names the current counts (a new number after each change, the old one back after
    an undo), so :meth:`fed` is computed once per state. The same sets are mirrored as
    bitmasks over the clients (bit ``c`` for client ``c``), with per subtopology the clients
    with room (``room_bits``), so :meth:`fed`, :meth:`taker` and :meth:`first_feeder` are a
    few big-integer operations (``O(G * C / 64)`` machine words) rather than loops over clients.
    """

    def __init__(
        self,
        counts: list[list[int]],
        returning: Sequence[Sequence[int]],
        low: list[list[int]],
        high: list[list[int]],
        lower: list[int],
        upper: list[int],
    ) -> None:
        self.k = counts
        self.r = returning
        self.low = low
        self.high = high
        self.lower = lower
        self.upper = upper
        self.groups = range(len(counts))
        self.total = [sum(column) for column in zip(*counts, strict=True)]
        clients = range(len(lower))
        self.spare = [
            {
                c
                for c, (k, floor, back) in enumerate(
                    zip(counts[g], low[g], returning[g], strict=True)
                )
                if k > floor and k > back
            }
            for g in self.groups
        ]
        self.above = {c for c in clients if self.total[c] > lower[c]}
        self.below = {c for c in clients if self.total[c] < upper[c]}
        # Per subtopology, how many clients feed it: spare a task of it, above the lower total.
        self.fed_by = [len(members & self.above) for members in self.spare]
        self.spare_bits = [_bits(members) for members in self.spare]
        self.above_bits = _bits(self.above)
        self.below_bits = _bits(self.below)
        # Bit c of room_bits[g]: counts[g][c] < high[g][c]; built in C (one byte per client,
        # most significant first, read as a binary numeral).
        self.room_bits = [
            int(
                bytes(map(int.__lt__, reversed(counts[g]), reversed(high[g]))).translate(_DIGITS)
                or b"0",
                2,
            )
            for g in self.groups
        ]
        self.log: list[_Change] = []
        self.state = 0
        self._states = 0
        self._fed: tuple[tuple[int, tuple[int, ...]], list[bool]] = ((-1, ()), [])

    def room(self, g: int, c: int) -> bool:
        return self.k[g][c] < self.high[g][c]

    def feeders(self, g: int) -> set[int]:
        """Clients with a task of ``g`` to spare, above their lower total."""
        return self.spare[g] & self.above

    def first_feeder(self, g: int) -> int:
        """``min(self.feeders(g))``: the lowest client index (``fed_by[g] > 0`` required)."""
        members = self.spare_bits[g] & self.above_bits
        return (members & -members).bit_length() - 1

    def taker(self, g: int) -> int:
        """The first client with room for a task of ``g`` below its upper total, or -1."""
        members = self.below_bits & self.room_bits[g]
        return (members & -members).bit_length() - 1

    def move(self, g: int, giver: int, taker: int) -> None:
        self._shift(g, giver, taker)
        self.log.append((g, giver, taker))
        self._states += 1
        self.state = self._states

    def undo(self, mark: int, state: int) -> None:
        while len(self.log) > mark:
            g, giver, taker = self.log.pop()
            self._shift(g, taker, giver)
        self.state = state

    def _shift(self, g: int, giver: int, taker: int) -> None:
        row, floor, back, members = self.k[g], self.low[g], self.r[g], self.spare[g]
        top = self.high[g]
        totals, fed_by, above_set, below_set = self.total, self.fed_by, self.above, self.below
        row[giver] -= 1
        row[taker] += 1
        for c, delta in ((giver, -1), (taker, 1)):
            bit = 1 << c
            if row[c] < top[c]:
                self.room_bits[g] |= bit
            else:
                self.room_bits[g] &= ~bit
            total = totals[c] + delta
            totals[c] = total
            was_above = c in above_set
            spare = row[c] > floor[c] and row[c] > back[c]
            if spare != (c in members):
                if spare:
                    members.add(c)
                    self.spare_bits[g] |= bit
                else:
                    members.discard(c)
                    self.spare_bits[g] &= ~bit
                if was_above:
                    fed_by[g] += 1 if spare else -1
            above = total > self.lower[c]
            if above != was_above:
                if above:
                    above_set.add(c)
                    self.above_bits |= bit
                else:
                    above_set.discard(c)
                    self.above_bits &= ~bit
                step = 1 if above else -1
                for h, others in enumerate(self.spare):
                    if c in others:
                        fed_by[h] += step
            if total < self.upper[c]:
                below_set.add(c)
                self.below_bits |= bit
            else:
                below_set.discard(c)
                self.below_bits &= ~bit

    def fed(self, extra: Sequence[int] = ()) -> list[bool]:
        """Per subtopology, whether a client taking one of its tasks can pass the lack on to
        a client above its lower total: directly (a feeder, or a subtopology of ``extra``,
        fed by a client about to rise above its lower total) or through clients that take
        another subtopology's task in turn; computed once per state and ``extra``."""
        key = (self.state, tuple(extra))
        if self._fed[0] == key:
            return self._fed[1]
        fed = [count > 0 for count in self.fed_by]
        for g in extra:
            fed[g] = True
        grown = True
        while grown:
            grown = False
            # The clients where some fed subtopology has room (the sources of this round).
            reach = 0
            for h in self.groups:
                if fed[h]:
                    reach |= self.room_bits[h]
            for g in self.groups:
                if not fed[g] and self.spare_bits[g] & reach:
                    fed[g] = grown = True
        self._fed = (key, fed)
        return fed

    def draw_deficit(self, start: int) -> bool:
        """Breadth first from ``start`` (one task below its lower total): take a spare task
        from a client above its lower total, through clients that pass one on; applied when
        found."""
        parent: dict[int, tuple[int, int]] = {start: (-1, -1)}
        k, high = self.k, self.high
        # A subtopology's spare clients are all reached the first time it is opened.
        opened = [False] * len(self.k)
        queue = deque([start])
        while queue:
            x = queue.popleft()
            reached = [g for g in self.groups if not opened[g] and k[g][x] < high[g][x]]
            for g in reached:
                opened[g] = True
                if self.fed_by[g]:
                    # No feeder is in the chain: it would have ended there.
                    z = self.first_feeder(g)
                    parent[z] = (x, g)
                    while z != start:
                        x, g = parent[z]
                        self.move(g, z, x)
                        z = x
                    return True
            for g in reached:
                for z in sorted(self.spare[g] - parent.keys()):
                    parent[z] = (x, g)
                    queue.append(z)
        return False


def sticky_counts(
    counts: list[list[int]],
    returning: Sequence[Sequence[int]],
    low: list[list[int]],
    high: list[list[int]],
    lower: list[int],
    upper: list[int],
) -> list[list[int]]:
    """Raise, within the bounds, the stateless tasks that stay on the client that ran them.

    Starting from feasible counts, each step gives a client one more task of a subtopology it
    has tasks of to get back, from a client with one to spare (a task of the subtopology it
    did not run before, above its floor); when that leaves a client's total outside its window,
    a chain of such hand-overs, found breadth first, closes it. Every step keeps all bounds and
    loses no returning task, so the tasks kept rise by at least one per step.

    Parameters
    ----------
    counts:
        ``G x C`` feasible counts (tasks per subtopology and client); changed in place.
    returning:
        ``G x C``: tasks of the subtopology the client ran as active before.
    low, high:
        ``G x C`` bounds of each count.
    lower, upper:
        Per client, the bounds of its stateless total.

    Returns
    -------
    list[list[int]]
        The counts, improved.

    Notes
    -----
    The problem is a transportation problem with a concave gain (``min(count, returning)``);
    the steps are augmenting cycles through one gain edge and lossless edges, so the result is
    optimal whenever an assignment keeping every returning task fits the bounds (as when a
    stable output is fed back), and close to optimal otherwise.
    """
    deal = _Deal(counts, returning, low, high, lower, upper)
    # (g, p, the count p can use: its returning tasks within its ceiling)
    wanted = [
        (g, p, min(back, high[g][p]))
        for g, row in enumerate(counts)
        for p, back in enumerate(returning[g])
        if back and row[p] < back and row[p] < high[g][p]
    ]
    improved = True
    while improved and wanted:
        improved = False
        left = []
        for g, p, most in wanted:
            row = counts[g]
            while row[p] < most:
                if not _keep_one_more(deal, g, p):
                    left.append((g, p, most))
                    break
                improved = True
        wanted = left
    return counts


def _keep_one_more(deal: _Deal, g: int, p: int) -> bool:
    """Give ``p`` one more task of ``g`` from a client with one to spare; False if none fits.

    When ``p`` is at its upper total it gives one spare task of another subtopology to the
    donor (a swap) or to a client with room; when the donor falls to its lower total it takes
    one back through :meth:`_Deal.draw_deficit`. Donors whose lack cannot be passed on
    (:meth:`_Deal.fed`) are not tried.
    """
    excess = deal.total[p] >= deal.upper[p]
    if not excess and deal.fed_by[g]:
        deal.move(g, deal.first_feeder(g), p)
        return True
    gives = [h for h in deal.groups if h != g and p in deal.spare[h]]
    if excess and not gives:
        return False
    passes = next((h for h in gives if deal.taker(h) >= 0), -1) if excess else -1
    # deal.room(h, q), inlined below: (h, its counts, their ceilings) per subtopology p gives
    k, high = deal.k, deal.high
    giving = [(h, k[h], high[h]) for h in gives]
    if excess and deal.fed_by[g]:
        for q in _ascending(deal.spare_bits[g] & deal.above_bits):  # sorted(deal.feeders(g))
            # A swap: p gives q a spare task of another subtopology, both totals unchanged.
            swap = next((h for h, row, top in giving if row[q] < top[q]), -1)
            if (swap >= 0 or passes >= 0) and _hand_over(deal, g, p, q, swap, passes):
                return True
    others = deal.spare_bits[g] & ~deal.above_bits  # deal.spare[g] - deal.above
    if not others:
        return False
    # Once it has the task, p itself feeds the subtopologies it can spare, if above its floor.
    fed = deal.fed(gives if not excess and deal.total[p] + 1 > deal.lower[p] else ())
    drains = [(k[h], high[h]) for h in deal.groups if fed[h]]
    if not fed[g] and not drains and not gives:
        return False
    for q in _ascending(others):
        swap = next((h for h, row, top in giving if row[q] < top[q]), -1)
        if swap < 0 and (
            (excess and passes < 0) or not (fed[g] or any(row[q] < top[q] for row, top in drains))
        ):
            continue
        if _hand_over(deal, g, p, q, swap, passes if excess else -1):
            return True
    return False


def _hand_over(deal: _Deal, g: int, p: int, q: int, swap: int, passes: int) -> bool:
    """``q`` gives ``p`` a task of ``g``; ``p`` gives one of ``swap`` back to ``q``, or else one
    of ``passes`` to a client with room; a donor left below its lower total draws one back.
    Undone, and False, when that last chain is not found."""
    mark, state = len(deal.log), deal.state
    deal.move(g, q, p)
    if swap >= 0:
        deal.move(swap, p, q)
    elif passes >= 0:
        deal.move(passes, p, deal.taker(passes))
    if deal.total[q] < deal.lower[q] and not deal.draw_deficit(q):
        deal.undo(mark, state)
        return False
    return True


def balance_window(
    counts: Sequence[Sequence[int]], active_counts: Sequence[int], capacity: Sequence[int]
) -> tuple[list[int], list[int]]:
    """Per client, the stateless totals that keep every load within ``[m, m + 1]``.

    ``m`` is the least load per thread (all actives over stream threads) that the deal
    ``counts`` leaves. Kafka's least-loaded deal gives each task to a client whose load is at
    most ``m`` at that moment, so its own totals lie within the window; any totals within it
    keep the active load spread at most ``max(1, s)`` for that deal's spread ``s``
    (``assertBalancedActiveAssignment``'s bound of one task per thread).

    Parameters
    ----------
    counts:
        ``G x C`` stateless tasks per subtopology and client.
    active_counts:
        Per client, its other actives (tasks).
    capacity:
        Per client, its stream threads.

    Returns
    -------
    (lower, upper)
        Per client, the least and most stateless tasks (a client already above ``m + 1``
        gets ``0, 0``).

    Examples
    --------
    >>> balance_window([[2, 1, 0]], [0, 1, 3], [1, 1, 1])
    ([2, 1, 0], [3, 2, 0])
    """
    n_clients = len(capacity)
    totals = [sum(column) for column in zip(*counts, strict=True)]
    loads = [active_counts[c] + totals[c] for c in range(n_clients)]
    # The float minimum picks the client; the bounds use its exact load.
    least = min(range(n_clients), key=lambda c: loads[c] / capacity[c])
    num, den = loads[least], capacity[least]
    lower = [max(0, -(-num * capacity[c] // den) - active_counts[c]) for c in range(n_clients)]
    upper = [max(0, (num + den) * capacity[c] // den - active_counts[c]) for c in range(n_clients)]
    return lower, upper


def assign_stateless_tasks(cluster: ClusterState, active_counts: list[int]) -> list[list[TaskId]]:
    """Stateless tasks within Kafka's balance window, as many as possible on their old client.

    The per-client counts of Kafka's least-loaded deal (:func:`least_loaded_counts`) fix the
    window: every client ends with a total load per thread between ``m`` and ``m + 1``, where
    ``m`` is the least load that deal leaves (a client above ``m + 1`` on stateful actives
    alone gets none), and each subtopology's count per client stays within one of an even
    share or within the range of the deal's own counts of that subtopology (the same bounds
    for every client). Within those bounds :func:`sticky_counts` raises the
    tasks that return to the client that ran them; then each client gets its previous tasks
    back, and the rest fill the other places in client order.

    Parameters
    ----------
    cluster:
        The rebalance input.
    active_counts:
        Per client (UUID order), its stateful actives.

    Returns
    -------
    list[list[TaskId]]
        Per client, its stateless actives.

    Notes
    -----
    The active load spread is at most ``max(1, s)`` tasks per thread, where ``s`` is the spread
    of Kafka's deal from the same stateful counts, and each subtopology's skew at most
    ``max(1, s_g)`` (``s_g`` that deal's), so Kafka's balance checks
    (``assertBalancedActiveAssignment``, the subtopology skew of ``TaskAssignorConvergenceTest``)
    hold whenever they hold for Kafka's deal. A subtopology with stateful tasks too keeps the
    deal's counts.
    """
    clients = cluster.clients
    n_clients = len(clients)
    capacity = [client.capacity for client in clients]
    stateless = cluster.stateless_tasks
    # Stateless tasks by position; per subtopology, its tasks' positions in TaskId order.
    by_sub: dict[tuple[str | None, int], list[int]] = {}
    for i, task in enumerate(stateless):
        by_sub.setdefault((task.topology_name, task.subtopology), []).append(i)
    stateful_subs = {(t.topology_name, t.subtopology) for t in cluster.stateful_tasks}
    # Per stateless task, the first client that ran it (-1: none): clients in reverse, each
    # overwriting the later ones. The parser shares one TaskId object per task, so positions
    # are found by identity first (no TaskId.__hash__ call), stateful tasks skipped the same
    # way; other objects equal to a task fall back to a lookup by value.
    by_id = {id(task): i for i, task in enumerate(stateless)}
    by_value: dict[TaskId, int] | None = None  # built at the first task not found by identity
    stateful_ids = {id(task) for task in cluster.stateful_tasks}
    previous = [-1] * len(stateless)
    for c in range(n_clients - 1, -1, -1):
        for task in clients[c].prev_active:
            pos = by_id.get(id(task))
            if pos is None:
                if id(task) in stateful_ids:
                    continue
                if by_value is None:
                    by_value = {task: i for i, task in enumerate(stateless)}
                pos = by_value.get(task)
                if pos is None:
                    continue
            previous[pos] = c
    groups = list(by_sub.values())
    returning = [[0] * n_clients for _ in groups]
    for g, tasks in enumerate(groups):
        for i in tasks:
            if previous[i] >= 0:
                returning[g][previous[i]] += 1
    sizes = [len(tasks) for tasks in groups]
    counts = least_loaded_counts(sizes, active_counts, capacity)
    if groups:
        lower, upper = balance_window(counts, active_counts, capacity)
        low, high = [], []
        for key, size, row in zip(by_sub, sizes, counts, strict=True):
            if key in stateful_subs:
                low.append(list(row))
                high.append(list(row))
                continue
            # One window for every client: within one of an even share, or Kafka's own range.
            floor = min(size // n_clients, min(row))
            ceiling = max(-(-size // n_clients), max(row))
            low.append([floor] * n_clients)
            high.append([ceiling] * n_clients)
        sticky_counts(counts, returning, low, high, lower, upper)
    result: list[list[TaskId]] = [[] for _ in range(n_clients)]
    for tasks, quota in zip(groups, counts, strict=True):
        quota = list(quota)
        rest = []
        for i in tasks:
            c = previous[i]
            if c >= 0 and quota[c] > 0:
                result[c].append(stateless[i])
                quota[c] -= 1
            else:
                rest.append(stateless[i])
        slots = chain.from_iterable(map(repeat, range(n_clients), quota))  # c, quota[c] times
        for task, c in zip(rest, slots, strict=True):  # the quotas left sum to len(rest)
            result[c].append(task)
    return result
