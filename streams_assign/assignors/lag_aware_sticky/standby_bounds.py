"""Standbys within their stateful-load bounds, then where they restore less or move less.

The per-task greedy of
:func:`~streams_assign.assignors.lag_aware_sticky.standbys.assign_standby_tasks` places standbys
one task at a time; these two steps then even out the counts per client
(:func:`even_out_standbys`) and exchange standbys for cheaper places within the bounds
(:func:`exchange_standbys`).
"""

from __future__ import annotations

import heapq
from collections import deque

from streams_assign.assignors.lag_aware_sticky.problem import IndexedCluster

__all__ = ["even_out_standbys", "exchange_standbys"]


def even_out_standbys(
    problem: IndexedCluster,
    active: list[int],
    standbys: list[list[int]],
    counts: list[int],
    bounds: tuple[list[int], list[int]],
) -> None:
    """Move standbys from clients above their bounds to clients below them.

    The per-task greedy can leave a client below its lower bound when the earlier tasks filled
    the clients that hold state, or above its upper bound when no other client was allowed;
    such a client takes (or gives) a standby of a task the other holds no copy of, the one
    cheapest to restore first, without sharing more client tags with the task's active. A
    client below its lower bound first tries hand-over chains that restore nothing and never
    take a standby from a client that held the task before to one that did not (a zero-cost
    augmenting path, breadth first).
    """
    leveller = _StandbyLeveller(problem, active, standbys, counts, bounds)
    leveller.raise_to_lower_bounds()
    leveller.lower_to_upper_bounds()


class _StandbyLeveller:
    """The state :func:`even_out_standbys` moves standbys in, and its steps.

    ``standbys`` and ``counts`` are the caller's lists, updated in place; ``held_by`` lists per
    client the tasks it holds a standby of.
    """

    def __init__(
        self,
        problem: IndexedCluster,
        active: list[int],
        standbys: list[list[int]],
        counts: list[int],
        bounds: tuple[list[int], list[int]],
    ) -> None:
        self.problem = problem
        self.active = active
        self.standbys = standbys
        self.counts = counts
        self.lower, self.upper = bounds
        self.held_by: list[list[int]] = [[] for _ in range(problem.num_clients)]
        for t, chosen in enumerate(standbys):
            for c in chosen:
                self.held_by[c].append(t)
        # Without rack.aware.assignment.tags no client shares a tag value: the tag tests are
        # moot.
        self.tagged = bool(problem.cluster.configs.rack_aware_assignment_tags)

    def raise_to_lower_bounds(self) -> None:
        """Raise every client to its lower bound: hand-over chains first, then the most loaded."""
        counts, lower, load = self.counts, self.lower, self.load
        donors = [(-load(c), c) for c in range(self.problem.num_clients) if counts[c] > lower[c]]
        heapq.heapify(donors)
        for receiver in range(self.problem.num_clients):
            while counts[receiver] < lower[receiver] and self.chain_to(receiver):
                pass
            if counts[receiver] < lower[receiver]:
                self.trade(receiver, donors, taking=True)
            while counts[receiver] < lower[receiver] and self.chain(receiver, raising=True):
                pass

    def lower_to_upper_bounds(self) -> None:
        """Bring every client above its upper bound down, giving to the least loaded ones."""
        counts, upper, load = self.counts, self.upper, self.load
        receivers = [(load(c), c) for c in range(self.problem.num_clients) if counts[c] < upper[c]]
        heapq.heapify(receivers)
        for donor in range(self.problem.num_clients):
            if counts[donor] > upper[donor]:
                self.trade(donor, receivers, taking=False)
            while counts[donor] > upper[donor] and self.chain(donor, raising=False):
                pass

    def load(self, c: int) -> float:
        """Standbys per stream thread of client ``c``."""
        return self.counts[c] / self.problem.capacity[c]

    def movable(self, donor: int, receiver: int) -> list[int]:
        """The donor's standbys the receiver may take (no copy of the task there, tags kept)."""
        active, standbys, problem = self.active, self.standbys, self.problem
        if not self.tagged:
            return [
                t
                for t in self.held_by[donor]
                if active[t] != receiver and receiver not in standbys[t]
            ]
        return [
            t
            for t in self.held_by[donor]
            if active[t] != receiver
            and receiver not in standbys[t]
            and problem.shared_tags(receiver, active[t]) <= problem.shared_tags(donor, active[t])
        ]

    def move(self, donor: int, receiver: int, tasks: list[int]) -> None:
        """Hand the task of ``tasks`` cheapest for the receiver to restore over to it."""
        problem = self.problem
        t = min(tasks, key=lambda t: (problem.restore_cost(receiver, t), t))
        self.hand_over(t, donor, receiver)

    def hand_over(self, t: int, donor: int, receiver: int) -> None:
        """Move the donor's standby of task ``t`` to the receiver."""
        standbys = self.standbys[t]
        standbys[standbys.index(donor)] = receiver
        self.held_by[donor].remove(t)
        self.held_by[receiver].append(t)
        self.counts[donor] -= 1
        self.counts[receiver] += 1

    def chain_to(self, receiver: int) -> bool:
        """Raise the receiver by one through a chain of hand-overs that restore nothing.

        Breadth-first: the receiver takes a standby it is caught up on from a client, which in
        turn takes one it is caught up on from another, until a client above its lower bound
        gives one up. An augmenting path of the transportation problem with zero cost; every
        client appears on it at most once.

        Returns
        -------
        bool
            Whether a chain was found (and carried out).
        """
        problem, active, standbys = self.problem, self.active, self.standbys
        counts, lower, tagged = self.counts, self.lower, self.tagged
        via: dict[int, tuple[int, int]] = {receiver: (-1, -1)}
        queue = deque([receiver])
        while queue:
            x = queue.popleft()
            for t in problem.state_tasks[x]:
                if active[t] == x or x in standbys[t] or not problem.caught_up(x, t):
                    continue
                x_held = not problem.fresh(x, t)
                for h in standbys[t]:
                    if (
                        h in via
                        or not (x_held or problem.fresh(h, t))
                        or (
                            tagged
                            and problem.shared_tags(x, active[t])
                            > problem.shared_tags(h, active[t])
                        )
                    ):
                        continue
                    via[h] = (t, x)
                    if counts[h] > lower[h]:
                        while h != receiver:
                            t, x = via[h]
                            self.hand_over(t, h, x)
                            h = x
                        return True
                    queue.append(h)
        return False

    def may_take(self, t: int, donor: int, receiver: int) -> bool:
        """Whether the receiver may take the donor's standby of task ``t`` (no copy there, tags
        no closer to the active's than the donor's)."""
        active, problem = self.active[t], self.problem
        return (
            active != receiver
            and receiver not in self.standbys[t]
            and (
                not self.tagged
                or problem.shared_tags(receiver, active) <= problem.shared_tags(donor, active)
            )
        )

    def chain(self, client: int, raising: bool) -> bool:
        """Move ``client`` one standby toward its bounds through a chain of hand-overs.

        The fallback when neither a chain that restores nothing (:meth:`chain_to`) nor a direct
        trade exists: every partner of ``client`` may be at its bound while a client further
        on has room (the direct partners hold only standbys of the client's own actives, say).
        Breadth-first over any hand-over :meth:`may_take` allows, the cheapest for the taker to
        restore first at each client: raising, the client takes a standby from a client that
        takes one from another ... until one above its lower bound gives; lowering, the client
        gives a standby to one that gives one to another ... until one below its upper bound
        takes. Only the ends change counts. An augmenting path of the transportation problem
        whose bounds :func:`balanced_count_bounds` sets, so one exists whenever the counts can
        reach the bounds by hand-overs at all.

        Returns
        -------
        bool
            Whether a chain was found (and carried out).
        """
        problem, counts, lower, upper = self.problem, self.counts, self.lower, self.upper
        n_clients = problem.num_clients
        via: dict[int, tuple[int, int]] = {client: (-1, -1)}
        queue = deque([client])
        while queue:
            x = queue.popleft()
            if raising:  # x takes task t from holder y
                steps = [
                    (problem.restore_cost(x, t), t, y)
                    for t in range(len(self.standbys))
                    for y in self.standbys[t]
                    if y not in via and self.may_take(t, y, x)
                ]
            else:  # x gives task t to client y
                steps = [
                    (problem.restore_cost(y, t), t, y)
                    for t in self.held_by[x]
                    for y in range(n_clients)
                    if y not in via and self.may_take(t, x, y)
                ]
            for _, t, y in sorted(steps):
                if y in via:
                    continue
                via[y] = (t, x)
                if (counts[y] > lower[y]) if raising else (counts[y] < upper[y]):
                    while y != client:
                        t, x = via[y]
                        if raising:
                            self.hand_over(t, y, x)
                        else:
                            self.hand_over(t, x, y)
                        y = x
                    return True
                queue.append(y)
        return False

    def trade(self, client: int, heap: list[tuple[float, int]], taking: bool) -> None:
        """Move standbys to ``client`` (taking) or away from it until it is within its bounds.

        The partners are those ``heap`` holds: ``(-load, donor)`` when taking, ``(load,
        receiver)`` when giving; stale entries are refreshed on pop, partners without a movable
        task skipped.
        """
        counts, lower, upper, held_by, load = (
            self.counts,
            self.lower,
            self.upper,
            self.held_by,
            self.load,
        )
        sign = -1 if taking else 1
        skipped: list[tuple[float, int]] = []
        while heap and (
            counts[client] < lower[client] if taking else counts[client] > upper[client]
        ):
            key, other = heapq.heappop(heap)
            if other == client or (
                counts[other] <= lower[other] if taking else counts[other] >= upper[other]
            ):
                continue
            if key != sign * load(other):
                heapq.heappush(heap, (sign * load(other), other))
                continue
            donor, receiver = (other, client) if taking else (client, other)
            tasks = self.movable(donor, receiver)
            if not tasks:
                if taking and not held_by[donor]:
                    # A donor without standbys cannot give one to any receiver, and while
                    # clients below their lower bound are raised it gains none (only a client
                    # below its bound receives, and hand-over chains pass through holders):
                    # dropped for good rather than popped again for every receiver.
                    continue
                skipped.append((key, other))
                continue
            self.move(donor, receiver, tasks)
            heapq.heappush(heap, (sign * load(other), other))
        for entry in skipped:
            heapq.heappush(heap, entry)


def exchange_standbys(
    problem: IndexedCluster,
    active: list[int],
    standbys: list[list[int]],
    counts: list[int],
    bounds: tuple[list[int], list[int]],
) -> None:
    """Move standbys to places that restore fewer records or move fewer copies, within bounds.

    The per-task greedy fills the clients that hold state in TaskId order, so a later task can
    find its holders full although an earlier task could have gone elsewhere as cheaply. For
    each standby not on a caught-up holder, a client with state of the task (or that held it)
    takes it when that is no worse in records to restore and in moved copies and better in one
    (a Pareto step): directly, while both clients stay within their stateful-load bounds, or
    in exchange for one of its own standbys the first client can take (counts unchanged). These
    are the length-one and length-two augmenting cycles of the transportation problem that
    minimises (records to restore, moved standbys) within the bounds; on the shared states
    they reach what an exact min-cost flow reaches (``docs/improved-assignor.md``).
    Without client tags only: with tags an exchange would also have to keep both tasks' tag
    spread.
    """
    lower, upper = bounds
    held_by: list[set[int]] = [set() for _ in range(problem.num_clients)]
    for t, chosen in enumerate(standbys):
        for c in chosen:
            held_by[c].add(t)

    caught, prev_standby, prev_active = problem.caught, problem.prev_standby, problem.prev_active
    costs, base_cost = problem.costs, problem.base_cost

    for t, chosen in enumerate(standbys):
        # A place's key: (records to restore, 1 when the client held no copy of the task: a
        # moved copy), computed inline in the loops over the task's places (the hot loops).
        costs_t, base_t, standby_t, active_t = (
            costs[t],
            base_cost[t],
            prev_standby[t],
            prev_active[t],
        )
        for c in list(chosen):
            if c in caught[t] and (c in standby_t or c in active_t):
                continue  # a caught-up holder: nothing is better
            here_cost = costs_t.get(c, base_t)
            here_fresh = int(c not in standby_t and c not in active_t)
            if here_cost == 0 and here_fresh == 0:
                continue
            places = set(problem.lags[t]) | standby_t | set(active_t)
            best: tuple[tuple[int, int], int, int] | None = None
            for h in sorted(places):
                if h == active[t] or h in chosen:
                    continue
                gain = (
                    costs_t.get(h, base_t) - here_cost,
                    int(h not in standby_t and h not in active_t) - here_fresh,
                )
                if gain[0] > 0 or gain[1] > 0 or gain == (0, 0):
                    continue
                if counts[h] < upper[h] and counts[c] > lower[c]:
                    if best is None or gain < best[0]:
                        best = (gain, h, -1)
                    continue
                for u in sorted(held_by[h]):
                    if c == active[u] or c in standbys[u]:
                        continue
                    # the keys of h and c for u
                    costs_u, base_u, standby_u, active_u = (
                        costs[u],
                        base_cost[u],
                        prev_standby[u],
                        prev_active[u],
                    )
                    away_fresh = int(h not in standby_u and h not in active_u)
                    back_fresh = int(c not in standby_u and c not in active_u)
                    # Only a standby the first client held too can come back without a move.
                    if gain[1] == 0 and away_fresh == 0 and back_fresh:
                        continue
                    step = (
                        gain[0] + costs_u.get(c, base_u) - costs_u.get(h, base_u),
                        gain[1] + back_fresh - away_fresh,
                    )
                    pareto = step[0] <= 0 and step[1] <= 0 and step != (0, 0)
                    if pareto and (best is None or step < best[0]):
                        best = (step, h, u)
            if best is not None:
                _exchange(standbys, counts, held_by, t, c, best[1], best[2])


def _exchange(
    standbys: list[list[int]],
    counts: list[int],
    held_by: list[set[int]],
    t: int,
    c: int,
    h: int,
    u: int,
) -> None:
    """Move the standby of task ``t`` from client ``c`` to ``h``; ``h`` gives its standby of
    task ``u`` to ``c`` in exchange (``u < 0``: a direct move, the counts change)."""
    chosen = standbys[t]
    chosen[chosen.index(c)] = h
    held_by[c].discard(t)
    held_by[h].add(t)
    if u < 0:
        counts[c] -= 1
        counts[h] += 1
    else:
        standbys[u][standbys[u].index(h)] = c
        held_by[h].discard(u)
        held_by[c].add(u)
