"""Stateful actives: where each task should run (target) and where it runs now (immediate)."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import compress

from streams_assign.assignors.lag_aware_sticky.problem import (
    IndexedCluster,
    LeastLoaded,
    balanced_count_bounds,
    subtopology_indices,
)

__all__ = [
    "SWAP_CHOICES",
    "assign_immediate_stateful_actives",
    "assign_target_stateful_actives",
    "spread_subtopologies",
]

#: Subtopologies :func:`spread_subtopologies` considers for a swap: those the receiver has the
#: most more tasks of than the donor. A bound on the work per swap; each still lowers the sum
#: of squared per-subtopology counts.
SWAP_CHOICES = 3


def assign_target_stateful_actives(problem: IndexedCluster) -> list[int]:
    """Where each stateful task should run once every move has completed.

    Returns
    -------
    list[int]
        Per stateful task, its target client. Counts per client lie within
        :func:`balanced_count_bounds` of the stateful tasks.

    Notes
    -----
    Order of preference for a task: its previous active client when caught up and within the
    upper bound (a client above it sheds as :func:`_keep_within` says); a caught-up client with
    room (least loaded, then least lag); the client with room that has the least to restore.
    Clients below their lower bound then take tasks from the most loaded clients, those already
    moving first; then :func:`spread_subtopologies`.
    """
    lower, upper = balanced_count_bounds(len(problem.tasks), problem.capacity)
    groups = subtopology_indices(problem.tasks)
    target, counts = _keep_caught_up_owners(problem, upper, groups)
    _place_the_others(problem, target, counts, upper)
    _raise_to_lower_bounds(problem, target, counts, lower)
    costs, base_cost = problem.costs, problem.base_cost
    spread_subtopologies(
        groups,
        target,
        counts,
        lower,
        upper,
        lambda t, c: (costs[t].get(c, base_cost[t]), c not in problem.prev_active[t]),
        lambda t: problem.lags[t].keys(),
    )
    return target


def _keep_caught_up_owners(
    problem: IndexedCluster, upper: list[int], groups: Sequence[int]
) -> tuple[list[int], list[int]]:
    """Each previous active stays on its owner when caught up there, up to the upper bound.

    Returns
    -------
    tuple[list[int], list[int]]
        Per stateful task its target client (``-1`` when not kept), and per client its count.
    """
    n_tasks = len(problem.tasks)
    n_clients = problem.num_clients
    counts = [0] * n_clients
    target = [-1] * n_tasks
    kept: list[list[int]] = [[] for _ in range(n_clients)]
    costs, base_cost = problem.costs, problem.base_cost
    for t in range(n_tasks):
        owners = problem.prev_active[t]
        if not owners:
            continue
        owner = (
            owners[0]
            if len(owners) == 1
            else min(owners, key=lambda c: (costs[t].get(c, base_cost[t]), c))
        )
        if problem.caught_up(owner, t) or not problem.caught[t]:
            # Caught up, or nobody is: the previous owner has the most state (or ties for it).
            kept[owner].append(t)
    # Only the tasks of clients above their bound are ranked by _keep_within.
    ranked = [t for c in range(n_clients) if len(kept[c]) > upper[c] for t in kept[c]]
    has_alternative = {
        t: len(problem.caught[t]) > 1 or problem.generic_caught_up[t] for t in ranked
    }
    # A task whose other caught-up clients have room after the others keep theirs moves
    # without restoring; otherwise shedding it is a pending move that waits for a warmup.
    room = [max(0, upper[c] - len(kept[c])) for c in range(n_clients)]
    has_room = {
        t: problem.generic_caught_up[t] or any(room[h] > 0 for h in problem.caught[t])
        for t in ranked
    }
    for c in range(n_clients):
        tasks = kept[c]
        if len(tasks) > upper[c]:
            tasks = _keep_within(
                tasks, upper[c], groups, has_room, has_alternative, problem.no_state_lag
            )
        for t in tasks:
            target[t] = c
        counts[c] = len(tasks)
    return target, counts


def _place_the_others(
    problem: IndexedCluster, target: list[int], counts: list[int], upper: list[int]
) -> None:
    """Place each task without a target on the client with room that restores the least.

    The most constrained tasks first (the fewest caught-up holders); ties in records to
    restore go to a client with local state (the records charged to a client without state
    are a lower estimate of its changelog), then to the least loaded. ``target`` and
    ``counts`` are updated in place.
    """
    heap = LeastLoaded(counts, problem.capacity, upper)
    pending = [t for t in range(len(target)) if target[t] < 0]
    pending.sort(
        key=lambda t: (
            problem.generic_caught_up[t],
            len(problem.caught[t]),
            t,
        )
    )
    capacity, costs, base_cost = problem.capacity, problem.costs, problem.base_cost
    for t in pending:
        best = None
        best_key: tuple[int, bool, float, int] | None = None
        for c, cost in costs[t].items():
            if counts[c] >= upper[c]:
                continue
            key = (cost, False, (counts[c] + 1) / capacity[c], c)
            if best_key is None or key < best_key:
                best, best_key = c, key
        generic = heap.pop(exclude=problem.lags[t].keys())
        if generic is not None:
            key = (base_cost[t], True, (counts[generic] + 1) / capacity[generic], generic)
            if best_key is None or key < best_key:
                best = generic
        if best is None:
            # Every client is full (only when the bounds are tight and holders crowd it).
            best = min(
                range(problem.num_clients), key=lambda c: (counts[c] / problem.capacity[c], c)
            )
        target[t] = best
        counts[best] += 1
        heap.touch(best)


def _keep_within(
    tasks: list[int],
    limit: int,
    groups: Sequence[int],
    has_room: Mapping[int, bool],
    has_alternative: Mapping[int, bool],
    no_state_lag: Sequence[int],
) -> list[int]:
    """The ``limit`` tasks a client keeps of its caught-up previous actives when above its bound.

    Parameters
    ----------
    tasks:
        The client's caught-up previous active tasks (stateful task indices), more than
        ``limit``.
    limit:
        The client's upper count bound (:func:`balanced_count_bounds`).
    groups:
        Per task, its subtopology index.
    has_room:
        Per task, whether a caught-up client with room left (after every client keeps its
        own, up to its bound) or a caught-up client without state can take it: shedding it
        is a move now, without restoring.
    has_alternative:
        Per task, whether another client is caught up on it at all.
    no_state_lag:
        Per task, the records a client without state restores (its changelog).

    Returns
    -------
    list[int]
        The ``limit`` tasks kept.

    Notes
    -----
    It sheds first the tasks another caught-up client has room for: a task whose caught-up
    holders are all full becomes a pending move to a client that must restore, whose target
    the next rebalance chooses again from other counts, so the client stays above its bound
    and sheds again (the cycling of issue #15). Among equals, first one task of each
    subtopology it holds the most of, in turn (rank within the subtopology on this client,
    largest changelog kept first), the task :func:`spread_subtopologies` would take from it;
    then the tasks cheapest to restore elsewhere (smallest changelog).
    """
    rank: dict[int, int] = {}
    seen: dict[int, int] = {}
    for t in sorted(tasks, key=lambda t: (-no_state_lag[t], t)):
        if has_alternative[t]:
            rank[t] = seen.get(groups[t], 0)
            seen[groups[t]] = rank[t] + 1
    ordered = sorted(
        tasks, key=lambda t: (has_room[t], has_alternative[t], rank.get(t, 0), -no_state_lag[t], t)
    )
    return ordered[:limit]


def _raise_to_lower_bounds(
    problem: IndexedCluster, target: list[int], counts: list[int], lower: list[int]
) -> None:
    """Give each client below its lower bound tasks from the most loaded clients."""
    deficient = [c for c in range(problem.num_clients) if counts[c] < lower[c]]
    if not deficient:
        return
    owned: list[list[int]] = [[] for _ in range(problem.num_clients)]
    for t, c in enumerate(target):
        owned[c].append(t)
    donors = [
        (-counts[c] / problem.capacity[c], c)
        for c in range(problem.num_clients)
        if counts[c] > lower[c]
    ]
    heapq.heapify(donors)
    for d in deficient:
        # First the tasks this client is caught up on, from the most loaded owner above its bound.
        candidates = [
            t for t in problem.state_tasks[d] if problem.caught_up(d, t) and target[t] != d
        ]
        while counts[d] < lower[d] and candidates:
            movable = [t for t in candidates if counts[target[t]] > lower[target[t]]]
            if not movable:
                break
            t = max(
                movable,
                key=lambda t: (
                    counts[target[t]] / problem.capacity[target[t]],
                    target[t] not in problem.prev_active[t],
                    -t,
                ),
            )
            candidates.remove(t)
            _move_target(t, d, target, counts, owned)
        while counts[d] < lower[d]:
            while donors:
                key, donor = donors[0]
                if counts[donor] <= lower[donor]:
                    heapq.heappop(donors)
                    continue
                current = -counts[donor] / problem.capacity[donor]
                if key != current:
                    heapq.heapreplace(donors, (current, donor))
                    continue
                break
            if not donors:
                return
            donor = donors[0][1]
            # Move the task that costs the least on the deficient client; ties: one that is not
            # running on the donor already (its move is happening anyway), then the highest id.
            t = min(
                owned[donor],
                key=lambda t: (
                    problem.costs[t].get(d, problem.base_cost[t]),  # restore_cost(d, t)
                    donor in problem.prev_active[t],
                    -t,
                ),
            )
            _move_target(t, d, target, counts, owned)


def _move_target(
    task: int, client: int, target: list[int], counts: list[int], owned: list[list[int]]
) -> None:
    owned[target[task]].remove(task)
    counts[target[task]] -= 1
    owned[client].append(task)
    counts[client] += 1
    target[task] = client


def spread_subtopologies(
    groups: Sequence[int],
    owner: list[int],
    counts: list[int],
    lower: Sequence[int],
    upper: Sequence[int],
    cost: Callable[[int, int], tuple[int, int]],
    holders: Callable[[int], Iterable[int]] | None = None,
) -> None:
    """Even out each subtopology's tasks over the clients, within one task (best effort).

    Kafka's balance check (``TaskAssignorConvergenceTest``) wants, per subtopology, the counts
    of its active tasks over all clients to differ by at most one. A task of an over-full client
    moves to an under-full one when both stay within their total bounds; otherwise it is swapped
    with a task of another subtopology that the receiver can spare and the donor can take.

    Parameters
    ----------
    groups:
        Per task, its subtopology as an index.
    owner:
        Per task, its client; updated in place.
    counts:
        Per client, its number of tasks; updated in place (unchanged by swaps).
    lower, upper:
        Per client, the bounds of :func:`balanced_count_bounds` that moves must keep.
    cost:
        ``cost(task, client)``: what placing the task there costs, as (records to restore,
        moved actives); the cheapest candidate moves, swaps adding both parts.
    holders:
        ``holders(task)``: clients with local state of the task. Besides the client with the
        fewest tasks of the subtopology, such a client with as few may receive, whichever move
        or swap costs least.
    """
    if len(counts) < 2 or not groups:
        return
    spread = _SubtopologySpread(groups, owner, counts, lower, upper, cost, holders)
    # Passes over the subtopologies left stuck above the skew bound, while a pass makes a step:
    # a step for one subtopology changes the totals and can make room for another that an
    # earlier pass found no step for (each step lowers the sum of squared counts, so the
    # passes end). Without them the next rebalance, from the same assignment, could find the
    # step this one missed: the output would not be a fixed point.
    pending = list(range(len(spread.size)))
    while pending:
        results = [(g, *spread.even_out(g)) for g in pending]  # in order: each pass sees the last
        progressed = any(stepped for _, _, stepped in results)
        pending = [g for g, stuck, _ in results if stuck] if progressed else []


class _SubtopologySpread:
    """The state :func:`spread_subtopologies` moves tasks in, and its steps.

    ``owner`` and ``counts`` are the caller's lists, updated in place. Per subtopology,
    ``by_client`` maps a client to its tasks of the subtopology (only clients that have some),
    ``held`` gives per client their number, and ``size`` counts its tasks.
    """

    def __init__(
        self,
        groups: Sequence[int],
        owner: list[int],
        counts: list[int],
        lower: Sequence[int],
        upper: Sequence[int],
        cost: Callable[[int, int], tuple[int, int]],
        holders: Callable[[int], Iterable[int]] | None,
    ) -> None:
        self.owner, self.counts, self.lower, self.upper = owner, counts, lower, upper
        self.cost, self.holders = cost, holders
        n_clients = len(counts)
        n_groups = max(groups) + 1
        self.by_client: list[defaultdict[int, list[int]]] = [
            defaultdict(list) for _ in range(n_groups)
        ]
        self.held = [[0] * n_clients for _ in range(n_groups)]
        self.size = [0] * n_groups
        for t, g in enumerate(groups):
            self.by_client[g][owner[t]].append(t)
            self.held[g][owner[t]] += 1
            self.size[g] += 1

    def move(self, t: int, g: int, src: int, dst: int) -> None:
        """Move task ``t`` of subtopology ``g`` from client ``src`` to ``dst``."""
        self.by_client[g][src].remove(t)
        self.by_client[g][dst].append(t)
        self.held[g][src] -= 1
        self.held[g][dst] += 1
        self.owner[t] = dst

    def delta(self, t: int, src: int, dst: int) -> tuple[int, int]:
        """What moving task ``t`` from client ``src`` to ``dst`` adds: ``cost`` there minus here.

        A task on a client that restores nothing for it (caught up) costs its full price to
        move, one on a client that must restore it anyway costs only the difference: the spread
        moves the tasks that are not yet where their state is first, and never undoes the
        warmup that made a task's target caught up for a task that gains nothing.
        """
        there, here = self.cost(t, dst), self.cost(t, src)
        return there[0] - here[0], there[1] - here[1]

    def plan(
        self, g: int, donor: int, receiver: int, t: int
    ) -> tuple[tuple[int, int], int, int, int] | None:
        """The cheapest way to take task ``t`` of ``g`` from ``donor`` to ``receiver``.

        Returns
        -------
        tuple or None
            ``(cost, task, swap task or -1, its subtopology or -1)``, or ``None`` when neither
            a move nor a swap fits.
        """
        counts, delta = self.counts, self.delta
        there = delta(t, donor, receiver)
        if counts[donor] > self.lower[donor] and counts[receiver] < self.upper[receiver]:
            return there, t, -1, -1
        # Swap with a task of another subtopology the receiver has more of than the donor:
        # the sum of squared counts falls, so the loop ends.
        # Of the subtopologies the receiver has most more of (at most SWAP_CHOICES), the
        # cheapest task to give back.
        spare = sorted(
            (rows[donor] - rows[receiver], h)
            for h, rows in enumerate(self.held)
            if h != g and rows[donor] < rows[receiver]
        )[:SWAP_CHOICES]
        best: tuple[tuple[int, int], int, int, int] | None = None
        for _, h in spare:
            u = min(self.by_client[h][receiver], key=lambda u: (delta(u, receiver, donor), u))
            back = delta(u, receiver, donor)
            option = ((there[0] + back[0], there[1] + back[1]), t, u, h)
            if best is None or option < best:
                best = option
        return best

    def even_out(self, g: int) -> tuple[bool, bool]:
        """Steps for subtopology ``g`` until its counts differ by at most one or no step fits.

        Returns
        -------
        tuple[bool, bool]
            (stuck without a step, made a step).
        """
        row = self.held[g]
        if max(row) - min(row) <= 1:
            return False, False  # within the bound already (the loop below would stop at once)
        extremes = _Extremes(list(row))
        stepped = False
        for _ in range(self.size[g]):
            donor, least = extremes.most(), extremes.least()
            if extremes.counts[donor] - extremes.counts[least] <= 1:
                break
            options = self._options(g, donor, least, extremes.counts)
            if not options:
                return True, stepped
            (_, t, u, h), receiver = options[0]
            self.move(t, g, donor, receiver)
            if u < 0:
                self.counts[donor] -= 1
                self.counts[receiver] += 1
            else:
                self.move(u, h, receiver, donor)
            extremes.add(donor, -1)
            extremes.add(receiver, 1)
            stepped = True
        return False, stepped

    def _options(
        self, g: int, donor: int, least: int, row: list[int]
    ) -> list[tuple[tuple[tuple[int, int], int, int, int], int]]:
        """The steps that take a task of ``g`` from ``donor``, cheapest first, with receivers.

        The receiver is the least loaded client ``least``, or one holding state of the donor's
        tasks with as few tasks of ``g`` (``row``) when that is cheaper (a holder restores
        less, so the spread itself moves no state).
        """
        delta, holders = self.delta, self.holders
        tasks = self.by_client[g][donor]
        cheapest = {least: min((delta(t, donor, least), t) for t in tasks)}
        if holders is not None:
            for t in tasks:
                for c in holders(t):
                    if c == least or row[c] != row[least]:
                        continue
                    key = (delta(t, donor, c), t)
                    if c not in cheapest or key < cheapest[c]:
                        cheapest[c] = key
        options: list[tuple[tuple[tuple[int, int], int, int, int], int]] = []
        for r in sorted(cheapest, key=lambda r: (cheapest[r], r)):
            if options and cheapest[r][0] > options[0][0][0]:
                break  # a swap only adds to what taking the task costs
            step = self.plan(g, donor, r, cheapest[r][1])
            if step is not None:
                options.append((step, r))
                options.sort()
        return options


class _Extremes:
    """Per-client counts with their largest and smallest at hand, for one subtopology's spread.

    The largest: a lazy heap of ``(-count, client)`` over the clients with a task (a client
    whose count rises is pushed anew). The smallest: the clients at the least count ``m`` in
    index order, walked with a pointer; this relies on the spread's steps, in which only a
    client at the least count gains and a client losing a task is at least two above it, so
    ``m`` never falls and a client that left level ``m`` never returns to it. Building both is
    ``O(C)`` in C-level loops; each step costs ``O(log C)`` and each new level one scan.
    """

    def __init__(self, counts: list[int]) -> None:
        self.counts = counts
        clients = range(len(counts))
        self._most = [(-counts[c], c) for c in compress(clients, counts)]  # counts are >= 0
        heapq.heapify(self._most)
        self._level = min(counts)
        self._at_level = list(compress(clients, map(self._level.__eq__, counts)))
        self._next = 0

    def most(self) -> int:
        """The client with the largest count (ties: the smaller index)."""
        while -self._most[0][0] != self.counts[self._most[0][1]]:
            heapq.heappop(self._most)
        return self._most[0][1]

    def least(self) -> int:
        """The client with the smallest count (ties: the smaller index)."""
        counts = self.counts
        while True:
            members = self._at_level
            while self._next < len(members):
                c = members[self._next]
                if counts[c] == self._level:
                    return c
                self._next += 1
            # Everyone at this level has risen: the next level up (the least never falls).
            self._level += 1
            self._at_level = list(compress(range(len(counts)), map(self._level.__eq__, counts)))
            self._next = 0

    def add(self, client: int, delta: int) -> None:
        """Change a client's count by ``delta`` (a gain only at the least count, see above)."""
        self.counts[client] += delta
        if self.counts[client] > 0:
            heapq.heappush(self._most, (-self.counts[client], client))


def assign_immediate_stateful_actives(
    problem: IndexedCluster, target: list[int]
) -> tuple[list[int], list[int]]:
    """Where each stateful task runs now, and which tasks still have to move.

    A task whose target client is not caught up, while some client is, stays on a caught-up
    client (its previous active client when caught up, else the one with the least lag) and is
    a pending move: KIP-441's rule that no task is unavailable while its new owner restores.

    Returns
    -------
    (active, moving)
        Per stateful task its client now; the tasks whose target differs from it.
    """
    active = list(target)
    moving = []
    for t, c in enumerate(target):
        if problem.caught_up(c, t):
            continue
        caught_up = [h for h in problem.lags[t] if problem.caught_up(h, t)]
        if caught_up:
            owners = [h for h in problem.prev_active[t] if h in caught_up]
            pool = owners or caught_up
        else:
            # Nobody can run it without restoring: the client with the least to restore does.
            pool = [c, *problem.lags[t]]
        best = min(
            pool,
            key=lambda h: (problem.restore_cost(h, t), h not in problem.prev_active[t], h != c, h),
        )
        if best != c:
            active[t] = best
            moving.append(t)
    return active, moving
