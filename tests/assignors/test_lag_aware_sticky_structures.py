"""The lag-aware sticky assignor's speed structures against the plain rules they stand for.

The assignor keeps, for speed, a restore-cost table built in the pass over the lags
(``index_cluster``), one lazily pruned heap for Kafka's least-loaded deal of every stateless
subtopology (``least_loaded_counts``), a level walk for the least loaded client of the
subtopology spread (``_Extremes``) and bitmasks mirroring the stateless search's client sets
(``_Deal``). Each is checked here against a direct computation of what it replaces: the
restore-cost rule and ``estimated_changelog_records`` on the 280 shared states; a heap per
subtopology over every client; a scan of all counts; the sets and a reachability computed
from the counts. ``benchmarks/improved_assignor_digest.py`` checks the whole assignments.
"""

from __future__ import annotations

import heapq
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from streams_assign.assignors.lag_aware_sticky.actives import _Extremes
from streams_assign.assignors.lag_aware_sticky.problem import (
    estimated_changelog_records,
    index_cluster,
)
from streams_assign.assignors.lag_aware_sticky.stateless import _Deal, least_loaded_counts
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.model import LONG_MAX_VALUE, is_caught_up
from tests.tiers import examples

SETTINGS = settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def test_restore_costs_follow_the_rule_on_the_shared_states(kafka_corpora: Path) -> None:
    files = sorted((kafka_corpora / "kafka-diff" / "input").glob("*.json"))
    files += sorted((kafka_corpora / "kafka-ext" / "input").glob("*.json"))
    assert len(files) == 280
    checked = 0
    for path in files:
        cluster = load_cluster_state(path)
        problem = index_cluster(cluster)
        estimate = estimated_changelog_records(cluster)
        acceptable = cluster.configs.acceptable_recovery_lag
        assert problem.no_state_lag == [estimate[task] for task in problem.tasks], path.name
        for t, task in enumerate(problem.tasks):
            generic = is_caught_up(cluster.no_state_lag(task), acceptable)
            assert problem.generic_caught_up[t] == generic, (path.name, str(task))
            for c, client in enumerate(cluster.clients):
                lag = client.task_lags.get(task)
                caught = lag is not None and is_caught_up(lag, acceptable)
                assert (c in problem.caught[t]) == caught, (path.name, str(task), c)
                if lag is None:
                    expected = 0 if generic else estimate[task]
                elif caught:
                    expected = 0
                elif lag < 0 or lag >= LONG_MAX_VALUE:
                    expected = estimate[task]
                else:
                    expected = lag
                assert problem.restore_cost(c, t) == expected, (path.name, str(task), c)
                checked += 1
    assert checked > 10_000


def _deal_per_subtopology(
    sizes: list[int], active: list[int], capacity: list[int]
) -> list[list[int]]:
    """Kafka's least-loaded deal with a fresh heap over every client per subtopology."""
    load = list(active)
    counts = []
    for size in sizes:
        quota = [0] * len(capacity)
        heap = [(load[c] / capacity[c], 0, c) for c in range(len(capacity))]
        heapq.heapify(heap)
        for _ in range(size):
            _, _, c = heapq.heappop(heap)
            quota[c] += 1
            load[c] += 1
            heapq.heappush(heap, (load[c] / capacity[c], quota[c], c))
        counts.append(quota)
    return counts


@SETTINGS
@given(
    st.integers(1, 25).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 60), min_size=0, max_size=6),
            st.lists(st.integers(0, 15), min_size=n, max_size=n),
            st.lists(st.integers(1, 4), min_size=n, max_size=n),
        )
    )
)
def test_one_heap_deals_as_a_heap_per_subtopology(
    case: tuple[list[int], list[int], list[int]],
) -> None:
    sizes, active, capacity = case
    assert least_loaded_counts(sizes, active, capacity) == _deal_per_subtopology(
        sizes, active, capacity
    )


@SETTINGS
@given(st.lists(st.integers(0, 6), min_size=2, max_size=40), st.randoms(use_true_random=False))
def test_extremes_match_a_scan_under_the_spread_steps(counts: list[int], rng) -> None:  # type: ignore[no-untyped-def]
    assume(max(counts) - min(counts) > 1)  # the spread builds it only for such a subtopology
    extremes = _Extremes(list(counts))
    current = list(counts)
    for _ in range(200):
        most = max(range(len(current)), key=lambda c: (current[c], -c))
        least = min(range(len(current)), key=lambda c: (current[c], c))
        assert (extremes.most(), extremes.least()) == (most, least)
        if current[most] - current[least] <= 1:
            break
        # A step of the spread: the most loaded gives, a client at the least count receives.
        receiver = rng.choice([c for c in range(len(current)) if current[c] == current[least]])
        current[most] -= 1
        current[receiver] += 1
        extremes.add(most, -1)
        extremes.add(receiver, 1)
        assert extremes.counts == current


def _bits(clients: set[int]) -> int:
    return sum(1 << c for c in clients)


@SETTINGS
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.lists(st.integers(0, 4), min_size=n, max_size=n), min_size=1, max_size=4),
        )
    ),
    st.randoms(use_true_random=False),
)
def test_deal_bitmasks_mirror_its_sets_and_reachability(case, rng) -> None:  # type: ignore[no-untyped-def]
    n, counts = case
    groups = range(len(counts))
    returning = [[rng.randint(0, 3) for _ in range(n)] for _ in groups]
    low = [[rng.randint(0, 1)] * n for _ in groups]
    high = [[low[g][0] + rng.randint(1, 4)] * n for g in groups]
    totals = [sum(counts[g][c] for g in groups) for c in range(n)]
    lower = [max(0, t - rng.randint(0, 2)) for t in totals]
    upper = [t + rng.randint(0, 2) for t in totals]
    deal = _Deal(counts, returning, low, high, lower, upper)
    for _ in range(30):
        g = rng.randrange(len(counts))
        giver, taker = rng.randrange(n), rng.randrange(n)
        if giver == taker:
            continue
        mark, state = len(deal.log), deal.state
        deal.move(g, giver, taker)
        if rng.random() < 0.3:
            deal.undo(mark, state)
        k = deal.k
        assert deal.total == [sum(k[h][c] for h in groups) for c in range(n)]
        for h in groups:
            spare = {c for c in range(n) if k[h][c] > low[h][c] and k[h][c] > returning[h][c]}
            assert deal.spare[h] == spare
            assert deal.spare_bits[h] == _bits(spare)
            assert deal.room_bits[h] == _bits({c for c in range(n) if k[h][c] < high[h][c]})
        assert deal.above_bits == _bits({c for c in range(n) if deal.total[c] > lower[c]})
        assert deal.below_bits == _bits({c for c in range(n) if deal.total[c] < upper[c]})
        for h in groups:
            feeders = deal.spare[h] & deal.above
            assert deal.fed_by[h] == len(feeders)
            if feeders:
                assert deal.first_feeder(h) == min(feeders)
            takers = [c for c in sorted(deal.below) if k[h][c] < high[h][c]]
            assert deal.taker(h) == (takers[0] if takers else -1)
        # Reachability as a fixed point over the sets: a subtopology is fed when a client
        # sparing one of its tasks has room in a fed one.
        fed = [deal.fed_by[h] > 0 for h in groups]
        changed = True
        while changed:
            changed = False
            for h in groups:
                if not fed[h] and any(
                    k[f][z] < high[f][z] for z in deal.spare[h] for f in groups if fed[f]
                ):
                    fed[h] = changed = True
        assert deal.fed() == fed
