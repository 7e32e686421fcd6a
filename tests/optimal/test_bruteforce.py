"""CP-SAT against brute force: on tiny clusters, enumerate every assignment and compare optima.

The enumeration and its objective are written here from the problem statement alone (restore
records from the core's ``ClusterState.lag``/``is_caught_up``, moves from ``prev_active`` and
``prev_standby``, balance with exact fractions). The immediate problem's enumeration includes
warmups (one extra copy per task, at most ``max.warmup.replicas`` in all), so it also checks the
model's claim that dropping warmups never loses the optimum.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest

from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.model import ClusterState
from streams_assign.optimal import Problem, solve_optimal

SEEDS = range(80)
MAX_COMBINATIONS = 30_000
MIN_COMBINATIONS = 8
INSTANCES = 20


def tiny_document(seed: int) -> dict[str, Any]:
    """A random cluster of at most 4 clients and 6 tasks (finite changelogs, no lag -3)."""
    rng = random.Random(seed)
    n_clients = rng.randint(2, 4)
    n_stateful = rng.randint(1, 4)
    n_stateless = rng.randint(0, min(2, 6 - n_stateful))
    ids = [f"00000000-0000-0000-0000-{i + 1:012d}" for i in range(n_clients)]
    stateful = [f"0_{i}" for i in range(n_stateful)]
    stateless = [f"1_{i}" for i in range(n_stateless)]
    prev_active: dict[int, list[str]] = {c: [] for c in range(n_clients)}
    prev_standby: dict[int, list[str]] = {c: [] for c in range(n_clients)}
    lags: dict[int, dict[str, int]] = {c: {} for c in range(n_clients)}
    for task in stateful:
        owner = rng.randrange(n_clients + 1)  # n_clients: nobody ran it
        if owner < n_clients:
            prev_active[owner].append(task)
            lags[owner][task] = -2
        for c in range(n_clients):
            if c != owner and rng.random() < 0.5:
                lags[c][task] = rng.choice([0, rng.randrange(1, 3000)])
                if rng.random() < 0.5:
                    prev_standby[c].append(task)
    for task in stateless:
        owner = rng.randrange(n_clients + 1)
        if owner < n_clients:
            prev_active[owner].append(task)
    return {
        "name": f"tiny-{seed}",
        "configs": {
            "acceptable_recovery_lag": rng.choice([0, 100, 1000]),
            "max_warmup_replicas": rng.choice([1, 2]),
            "num_standby_replicas": rng.choice([0, 1, 1, 2]),
        },
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
        "changelog_end_offset_sums": {task: rng.randrange(3000, 9000) for task in stateful},
        "clients": [
            {
                "id": ids[c],
                "capacity": rng.choice([1, 1, 2, 3]),
                "prev_active": prev_active[c],
                "prev_standby": prev_standby[c],
                "task_lags": lags[c],
            }
            for c in range(n_clients)
        ],
    }


def task_options(
    cluster: ClusterState, problem: Problem
) -> list[list[tuple[int, tuple[int, ...], int]]]:
    """Per task, every (active client, standby clients, warmups among them) it may take."""
    clients = cluster.clients
    n = len(clients)
    wanted = min(cluster.configs.num_standby_replicas, n - 1)
    per_task = []
    for task in cluster.all_tasks:
        stateful = task in cluster.stateful_tasks
        allowed = list(range(n))
        if problem is Problem.IMMEDIATE and stateful:
            caught = [c for c in range(n) if cluster.is_caught_up(clients[c], task)]
            allowed = caught or allowed
        options = []
        for a in allowed:
            if not stateful:
                options.append((a, (), 0))
                continue
            others = [c for c in range(n) if c != a]
            for standbys in itertools.combinations(others, wanted):
                options.append((a, standbys, 0))
                if problem is Problem.IMMEDIATE:
                    for extra in others:
                        if extra not in standbys:
                            options.append((a, (*standbys, extra), 1))
        per_task.append(options)
    return per_task


def brute_force(cluster: ClusterState, problem: Problem) -> tuple[Any, ...] | None:
    """The lexicographically least objective tuple over all feasible assignments."""
    clients = cluster.clients
    tasks = cluster.all_tasks
    n = len(clients)
    options = task_options(cluster, problem)

    def restore(c: int, task: Any) -> int:
        if task not in cluster.stateful_tasks or cluster.is_caught_up(clients[c], task):
            return 0
        return cluster.lag(clients[c], task)

    def option_cost(task: Any, option: tuple[int, tuple[int, ...], int]) -> tuple[int, int]:
        a, standbys, _ = option
        prev_active = {c for c in range(n) if task in clients[c].prev_active}
        prev_held = prev_active | {c for c in range(n) if task in clients[c].prev_standby}
        moves = int(bool(prev_active) and a not in prev_active)
        moves += sum(1 for c in standbys if prev_held and c not in prev_held)
        return restore(a, task) + sum(restore(c, task) for c in standbys), moves

    costs = [
        [option_cost(task, o) for o in opts] for task, opts in zip(tasks, options, strict=True)
    ]
    stateful_flags = [task in cluster.stateful_tasks for task in tasks]
    caps = [client.capacity for client in clients]
    best: tuple[Any, ...] | None = None
    for choice in itertools.product(*[range(len(o)) for o in options]):
        warmups = 0
        active = [0] * n
        holding = [0] * n
        restore_total = moves_total = 0
        for t, k in enumerate(choice):
            a, standbys, warm = options[t][k]
            warmups += warm
            active[a] += 1
            if stateful_flags[t]:
                holding[a] += 1
                for c in standbys:
                    holding[c] += 1
            restore_total += costs[t][k][0]
            moves_total += costs[t][k][1]
        active_loads = [Fraction(active[c], caps[c]) for c in range(n)]
        spread = max(active_loads) - min(active_loads)
        if problem is Problem.TARGET:
            held = [Fraction(holding[c], caps[c]) for c in range(n)]
            if spread > 1 or max(held) - min(held) > 1:
                continue
            value: tuple[Any, ...] = (restore_total, moves_total)
        else:
            if warmups > cluster.configs.max_warmup_replicas:
                continue
            value = (spread, restore_total, moves_total)
        if best is None or value < best:
            best = value
    return best


def tiny_clusters() -> Iterator[ClusterState]:
    """The first seeds whose enumeration is neither trivial nor too long."""
    kept = 0
    for seed in SEEDS:
        cluster = parse_cluster_state(tiny_document(seed))
        sizes = [_product([len(o) for o in task_options(cluster, p)]) for p in Problem]
        if min(sizes) >= MIN_COMBINATIONS and max(sizes) <= MAX_COMBINATIONS:
            kept += 1
            yield cluster
        if kept == INSTANCES:
            return


def _product(values: list[int]) -> int:
    result = 1
    for v in values:
        result *= v
    return result


CLUSTERS = list(tiny_clusters())


def test_generator_gives_enough_varied_tiny_clusters():
    assert len(CLUSTERS) == INSTANCES
    assert any(c.configs.num_standby_replicas for c in CLUSTERS)
    assert any(c.stateless_tasks for c in CLUSTERS)
    assert len({len(c.clients) for c in CLUSTERS}) >= 2
    assert any(brute_force(c, Problem.TARGET) is None for c in CLUSTERS)  # some are infeasible


@pytest.mark.parametrize("problem", list(Problem), ids=lambda p: p.value)
@pytest.mark.parametrize("cluster", CLUSTERS, ids=lambda c: c.name)
def test_cp_sat_finds_the_brute_force_optimum(cluster, problem):
    expected = brute_force(cluster, problem)
    result = solve_optimal(cluster, problem, time_limit=20)
    if expected is None:
        assert result.status == "INFEASIBLE"
        assert result.explanation
        return
    assert result.status == "OPTIMAL"
    found = tuple(
        result.objective[name]
        for name in (("active_load_spread",) if problem is Problem.IMMEDIATE else ())
        + ("restore_records", "moves")
    )
    assert found == expected


@pytest.mark.parametrize("problem", list(Problem), ids=lambda p: p.value)
@pytest.mark.parametrize("cluster", CLUSTERS[:6], ids=lambda c: c.name)
def test_unaggregated_model_finds_the_same_optimum(cluster, problem):
    aggregated = solve_optimal(cluster, problem, time_limit=20)
    full = solve_optimal(cluster, problem, time_limit=20, aggregate=False)
    assert full.status == aggregated.status
    assert dict(full.objective) == dict(aggregated.objective)
