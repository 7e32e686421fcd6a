"""The lag-aware sticky assignor's stateless deal: Kafka's balance window, as sticky as it allows.

``assign_stateless_tasks`` takes the per-client counts of Kafka's least-loaded deal
(``least_loaded_counts``), derives the window every client's active load must stay in
(``balance_window``) and each subtopology's count bounds, and raises within them the tasks that
return to the client that ran them (``sticky_counts``). Checked as hypothesis properties on
generated documents: every task placed once; the active load spread and each subtopology's skew
no larger than ``max(1, Kafka's deal's)``; never fewer returning tasks kept than Kafka's deal
keeps; a deal fed back as the previous assignment is unchanged. On the 280 shared states (from
ours' stateful actives): never more stateless moves than Kafka's deal, and fewer in total.
"""

from __future__ import annotations

import logging
import uuid
from fractions import Fraction
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams_assign.assignors.lag_aware_sticky import LagAwareStickyTaskAssignor
from streams_assign.assignors.lag_aware_sticky.stateless import (
    assign_stateless_tasks,
    least_loaded_counts,
)
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state
from streams_assign.model import ClusterState, TaskId
from tests.tiers import examples

logging.getLogger("streams_assign").setLevel(logging.ERROR)

SETTINGS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def stateless_deals(draw: st.DrawFn) -> tuple[dict[str, Any], list[int]]:
    """A document with stateless tasks only (1-4 subtopologies, 1-30 clients, some tasks run
    before on a random client) and each client's stateful actives (0-12)."""
    n_clients = draw(st.integers(1, 30))
    sizes = draw(st.lists(st.integers(1, 40), min_size=1, max_size=4))
    tasks = [f"{s}_{p}" for s, size in enumerate(sizes) for p in range(size)]
    ids = sorted({str(uuid.UUID(int=draw(st.integers(1, 2**128 - 1)))) for _ in range(n_clients)})
    previous: list[list[str]] = [[] for _ in ids]
    for task in tasks:
        owner = draw(st.integers(-1, len(ids) - 1))  # -1: nobody ran it
        if owner >= 0:
            previous[owner].append(task)
    clients = [
        {"id": pid, "capacity": draw(st.integers(1, 4)), "prev_active": prev, "task_lags": {}}
        for pid, prev in zip(ids, previous, strict=True)
    ]
    document = {"configs": {}, "stateful_tasks": [], "stateless_tasks": tasks, "clients": clients}
    stateful = [draw(st.integers(0, 12)) for _ in ids]
    return document, stateful


def _groups(cluster: ClusterState) -> dict[tuple[str | None, int], list[TaskId]]:
    """Stateless tasks per (topology, subtopology), in the assignor's order."""
    groups: dict[tuple[str | None, int], list[TaskId]] = {}
    for task in cluster.stateless_tasks:
        groups.setdefault((task.topology_name, task.subtopology), []).append(task)
    return groups


def _previous(cluster: ClusterState) -> dict[TaskId, int]:
    """Per task run before, the first client (UUID order) that ran it."""
    previous: dict[TaskId, int] = {}
    for c, client in enumerate(cluster.clients):
        for task in client.prev_active:
            previous.setdefault(task, c)
    return previous


def _kafka_kept(cluster: ClusterState, kafka: list[list[int]]) -> int:
    """Returning tasks Kafka's counts keep when each client gets its previous tasks first."""
    previous = _previous(cluster)
    return sum(
        min(row[c], sum(previous.get(t) == c for t in tasks))
        for tasks, row in zip(_groups(cluster).values(), kafka, strict=True)
        for c in range(len(cluster.clients))
    )


def _kafka_deal(cluster: ClusterState, stateful: list[int]) -> list[list[int]]:
    """Kafka's least-loaded counts, ``G x C``, in the subtopology order of ``_groups``."""
    capacity = [client.capacity for client in cluster.clients]
    sizes = [len(tasks) for tasks in _groups(cluster).values()]
    return least_loaded_counts(sizes, stateful, capacity)


def _spread(counts_per_client: list[int], capacity: list[int]) -> Fraction:
    loads = [Fraction(n, q) for n, q in zip(counts_per_client, capacity, strict=True)]
    return max(loads) - min(loads)


def _kept(cluster: ClusterState, placed: list[list[TaskId]]) -> int:
    previous = _previous(cluster)
    return sum(previous.get(task) == c for c, tasks in enumerate(placed) for task in tasks)


@SETTINGS
@given(stateless_deals())
def test_every_stateless_task_is_placed_exactly_once(
    deal: tuple[dict[str, Any], list[int]],
) -> None:
    document, stateful = deal
    cluster = parse_cluster_state(document)
    placed = assign_stateless_tasks(cluster, stateful)
    assert sorted(t for tasks in placed for t in tasks) == sorted(cluster.stateless_tasks)


@SETTINGS
@given(stateless_deals())
def test_active_load_spread_within_one_task_per_thread_or_kafkas_deal(
    deal: tuple[dict[str, Any], list[int]],
) -> None:
    """Kafka's ``assertBalancedActiveAssignment`` bound: a spread of one task per thread, or
    no more than Kafka's own deal leaves when the stateful actives alone already exceed it."""
    document, stateful = deal
    cluster = parse_cluster_state(document)
    capacity = [client.capacity for client in cluster.clients]
    placed = assign_stateless_tasks(cluster, stateful)
    kafka = _kafka_deal(cluster, stateful)
    kafka_totals = [
        a + sum(column) for a, column in zip(stateful, zip(*kafka, strict=True), strict=True)
    ]
    ours_totals = [a + len(tasks) for a, tasks in zip(stateful, placed, strict=True)]
    assert _spread(ours_totals, capacity) <= max(1, _spread(kafka_totals, capacity))


@SETTINGS
@given(stateless_deals())
def test_subtopology_skew_within_one_or_kafkas_deal(
    deal: tuple[dict[str, Any], list[int]],
) -> None:
    """The subtopology skew of Kafka's ``TaskAssignorConvergenceTest`` (max - min of a
    subtopology's actives per client, over all clients): at most one, or Kafka's deal's."""
    document, stateful = deal
    cluster = parse_cluster_state(document)
    placed = assign_stateless_tasks(cluster, stateful)
    kafka = _kafka_deal(cluster, stateful)
    for key, row in zip(_groups(cluster), kafka, strict=True):
        ours = [sum((t.topology_name, t.subtopology) == key for t in tasks) for tasks in placed]
        assert max(ours) - min(ours) <= max(1, max(row) - min(row)), key


@SETTINGS
@given(stateless_deals())
def test_never_fewer_returning_tasks_than_kafkas_deal_keeps(
    deal: tuple[dict[str, Any], list[int]],
) -> None:
    """Kafka's counts filled with each client's previous tasks first keep ``min(count,
    returning)`` per client and subtopology; ours keeps at least as many."""
    document, stateful = deal
    cluster = parse_cluster_state(document)
    placed = assign_stateless_tasks(cluster, stateful)
    assert _kept(cluster, placed) >= _kafka_kept(cluster, _kafka_deal(cluster, stateful))


@SETTINGS
@given(stateless_deals())
def test_a_deal_fed_back_as_the_previous_assignment_is_unchanged(
    deal: tuple[dict[str, Any], list[int]],
) -> None:
    """With the same stateful counts, the next rebalance keeps every stateless task where it
    is: a stable group does not move stateless tasks between rebalances."""
    document, stateful = deal
    cluster = parse_cluster_state(document)
    placed = assign_stateless_tasks(cluster, stateful)
    # Clients are indexed in the cluster's (Java UUID) order, not the document's.
    now = {
        client.id: [str(t) for t in tasks]
        for client, tasks in zip(cluster.clients, placed, strict=True)
    }
    again_document = {
        **document,
        "clients": [{**client, "prev_active": now[client["id"]]} for client in document["clients"]],
    }
    again = assign_stateless_tasks(parse_cluster_state(again_document), stateful)
    assert [sorted(tasks) for tasks in again] == [sorted(tasks) for tasks in placed]


def test_fewer_stateless_moves_than_kafkas_deal_on_the_shared_states(
    kafka_corpora: Path,
) -> None:
    """From ours' stateful actives on each shared state, ours moves no more stateless tasks
    than Kafka's least-loaded deal filled with previous tasks first, and fewer in total."""
    files = sorted((kafka_corpora / "kafka-diff" / "input").glob("*.json"))
    files += sorted((kafka_corpora / "kafka-ext" / "input").glob("*.json"))
    assert len(files) == 280
    ours_total = kafka_total = 0
    for path in files:
        cluster = load_cluster_state(path)
        if not cluster.stateless_tasks:
            continue
        result = LagAwareStickyTaskAssignor().assign(cluster)
        stateful_set = set(cluster.stateful_tasks)
        stateful = [
            sum(t in stateful_set for t in result.clients[client.id].active)
            for client in cluster.clients
        ]
        placed = assign_stateless_tasks(cluster, stateful)
        had_one = sum(t in _previous(cluster) for t in cluster.stateless_tasks)
        ours = had_one - _kept(cluster, placed)
        kafka_moves = had_one - _kafka_kept(cluster, _kafka_deal(cluster, stateful))
        assert ours <= kafka_moves, path.stem
        ours_total += ours
        kafka_total += kafka_moves
    assert ours_total < kafka_total
