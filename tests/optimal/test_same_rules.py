"""The same-rules optimum against brute force, a hand-checked zone case, and shared states.

The enumeration is written here from the rules alone (``streams_assign.optimal.same_rules``
states them): every task active once on a caught-up client when there is one, exactly
``min(num.standby.replicas, clients - 1)`` standbys elsewhere, and some choice of targets (a
caught-up target only where the task runs now) whose stateful counts have a load spread of at
most one task per thread; every client running a stateless task within one task per thread of
the least loaded (``actives / capacity <= min + 1`` of actives per thread, the window of the
assignor's stateless deal). With client
tags, zone violations counted per standby and key.
"""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from devtools.paths import CORPORA
from streams_assign.assignors import assign
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state
from streams_assign.model import ClusterState
from streams_assign.optimal import solve_optimal
from streams_assign.optimal.costs import PlacementCosts
from streams_assign.optimal.metrics import score
from streams_assign.optimal.same_rules import without_warmups, zone_violations
from tests.optimal.test_bruteforce import tiny_document

DATA = Path(__file__).parent / "data"
MAX_COMBINATIONS = 20_000
INSTANCES = 12


def tagged_document(seed: int) -> dict[str, Any]:
    """A tiny cluster of ``tiny_document`` with one or two tag keys on its clients."""
    document = tiny_document(seed)
    rng = random.Random(1000 + seed)
    keys = ["zone", "cluster"][: rng.choice([1, 2])]
    document["configs"]["rack_aware_assignment_tags"] = keys
    document["configs"]["num_standby_replicas"] = rng.choice([1, 2])
    for client in document["clients"]:
        client["tags"] = {key: rng.choice("ab") for key in keys}
    document["name"] = f"tagged-{seed}"
    return document


def options(cluster: ClusterState) -> list[list[tuple[int, tuple[int, ...]]]]:
    """Per task, every (active client, standby clients) the rules allow."""
    clients = cluster.clients
    n = len(clients)
    wanted = min(cluster.configs.num_standby_replicas, n - 1)
    per_task = []
    for task in cluster.all_tasks:
        if task not in cluster.stateful_tasks:
            per_task.append([(a, ()) for a in range(n)])
            continue
        caught = [c for c in range(n) if cluster.is_caught_up(clients[c], task)]
        per_task.append(
            [
                (a, standbys)
                for a in caught or range(n)
                for standbys in itertools.combinations([c for c in range(n) if c != a], wanted)
            ]
        )
    return per_task


def violations(cluster: ClusterState, active: int, standbys: tuple[int, ...]) -> int:
    """Zone violations of one task's copies (per standby and tag key)."""
    tags = [client.tags for client in cluster.clients]
    holders = {active, *standbys}
    count = 0
    for key in cluster.configs.rack_aware_assignment_tags:
        mine = tags[active].get(key)
        if mine is None:
            continue
        if any(tags[d].get(key) != mine and d not in holders for d in range(len(tags))):
            count += sum(1 for c in standbys if tags[c].get(key) == mine)
    return count


def brute_force(cluster: ClusterState) -> tuple[int, int, int]:
    """The least (zone violations, restore records, moves) over every allowed assignment."""
    clients = cluster.clients
    n = len(clients)
    tasks = cluster.all_tasks
    stateful = [i for i, task in enumerate(tasks) if task in cluster.stateful_tasks]
    caps = [client.capacity for client in clients]

    def restore(c: int, task: Any) -> int:
        if task not in cluster.stateful_tasks or cluster.is_caught_up(clients[c], task):
            return 0
        return cluster.lag(clients[c], task)

    def cost(t: int, option: tuple[int, tuple[int, ...]]) -> tuple[int, int, int]:
        task = tasks[t]
        a, standbys = option
        prev_active = {c for c in range(n) if task in clients[c].prev_active}
        held = prev_active | {c for c in range(n) if task in clients[c].prev_standby}
        moves = int(bool(prev_active) and a not in prev_active)
        moves += sum(1 for c in standbys if held and c not in held)
        zone = violations(cluster, a, standbys) if task in cluster.stateful_tasks else 0
        return zone, restore(a, task) + sum(restore(c, task) for c in standbys), moves

    @cache
    def balanced_targets_exist(actives: tuple[int, ...]) -> bool:
        # Per stateful task, its possible targets: where it runs now, or any client not
        # caught up on it.
        choices = [
            sorted({a} | {c for c in range(n) if not cluster.is_caught_up(clients[c], tasks[t])})
            for t, a in zip(stateful, actives, strict=True)
        ]
        for targets in itertools.product(*choices):
            loads = [Fraction(targets.count(c), caps[c]) for c in range(n)]
            if max(loads) - min(loads) <= 1:
                return True
        return False

    def stateless_least_loaded(actives: list[int]) -> bool:
        counts = [actives.count(c) for c in range(n)]
        least = min(Fraction(counts[c], caps[c]) for c in range(n))
        runs_stateless = {a for t, a in enumerate(actives) if t not in stateful}
        return all(Fraction(counts[c], caps[c]) <= least + 1 for c in runs_stateless)

    per_task = options(cluster)
    costs = [[cost(t, o) for o in opts] for t, opts in enumerate(per_task)]
    best: tuple[int, int, int] | None = None
    for choice in itertools.product(*[range(len(o)) for o in per_task]):
        value = tuple(sum(costs[t][k][i] for t, k in enumerate(choice)) for i in range(3))
        if best is not None and value >= best:
            continue
        actives = [per_task[t][k][0] for t, k in enumerate(choice)]
        if stateless_least_loaded(actives) and balanced_targets_exist(
            tuple(actives[t] for t in stateful)
        ):
            best = value  # type: ignore[assignment]
    assert best is not None, "the rules always admit an assignment"
    return best


def _size(cluster: ClusterState) -> int:
    size = 1
    for opts in options(cluster):
        size *= len(opts)
    return size


def _clusters(make: Any, count: int) -> list[ClusterState]:
    kept = []
    for seed in range(200):
        cluster = parse_cluster_state(make(seed))
        if cluster.stateful_tasks and 8 <= _size(cluster) <= MAX_COMBINATIONS:
            kept.append(cluster)
        if len(kept) == count:
            break
    return kept


PLAIN = _clusters(tiny_document, INSTANCES)
TAGGED = _clusters(tagged_document, INSTANCES)


def test_generators_give_enough_varied_tiny_clusters() -> None:
    assert len(PLAIN) == INSTANCES and len(TAGGED) == INSTANCES
    assert any(brute_force(c)[0] > 0 for c in TAGGED)  # the zone rule cannot always be kept
    assert any(brute_force(c)[0] == 0 for c in TAGGED)
    assert sum(1 for c in PLAIN + TAGGED if c.stateless_tasks) >= 4


@pytest.mark.parametrize("cluster", PLAIN + TAGGED, ids=lambda c: c.name)
def test_same_rules_optimum_equals_brute_force(cluster: ClusterState) -> None:
    result = solve_optimal(cluster, "immediate", time_limit=20, num_workers=1, same_rules=True)
    assert result.status == "OPTIMAL"
    assert result.same_rules
    found = (
        result.objective.get("zone_violations", 0),
        result.objective["restore_records"],
        result.objective["moves"],
    )
    assert found == brute_force(cluster)
    assert result.assignment is not None
    assert zone_violations(cluster, result.assignment) == found[0]


def test_zone_rule_hand_checked_case() -> None:
    """``same-rules-zones.json``: a standby of 0_0 in the active's zone saves 900 records.

    Clients 1 (zone a) and 2 (zone a) hold 0_0, client 2 only 100 records behind; client 3
    (zone b) has no state (changelog 1000). Client 1 must run it (the only caught-up one).
    Without the zone rule the standby goes to client 2 (100 records); with it, to client 3
    (1000 records, a moved standby), 0 violations.
    """
    cluster = load_cluster_state(DATA / "same-rules-zones.json")
    kept = solve_optimal(cluster, "immediate", num_workers=1, same_rules=True)
    assert (kept.objective["zone_violations"], kept.objective["restore_records"]) == (0, 1000)
    assert kept.objective["moves"] == 1
    loose = solve_optimal(cluster, "immediate", num_workers=1, same_rules=True, zone_rule=False)
    assert "zone_violations" not in loose.objective
    assert loose.objective["restore_records"] == 100
    assert kept.assignment is not None and loose.assignment is not None
    assert zone_violations(cluster, loose.assignment) == 1


def test_same_rules_applies_to_the_immediate_problem_only() -> None:
    cluster = PLAIN[0]
    with pytest.raises(ValueError, match="immediate problem"):
        solve_optimal(cluster, "target", same_rules=True)


@pytest.mark.parametrize(
    "name",
    [
        "kafka-diff/input/s0020-uneven.json",
        "kafka-diff/input/s0090-crash.json",
        "kafka-ext/input/p0010-threads-scale_out.json",
        "kafka-ext/input/p0060-zones-bounce.json",
        "kafka-ext/input/p0110-both-scale_out.json",
    ],
)
def test_lag_aware_sticky_is_never_better_than_the_same_rules_optimum(name: str) -> None:
    path = CORPORA / name
    assert path.exists(), f"missing shared scenario {path}"
    cluster = load_cluster_state(path)
    costs = PlacementCosts.of(cluster)
    ours = without_warmups(assign(cluster, assignor="lag_aware_sticky"))
    ours_metrics = score(cluster, ours, costs)
    for zone_rule in (False, True):
        best = solve_optimal(
            cluster,
            "immediate",
            time_limit=20,
            num_workers=1,
            costs=costs,
            same_rules=True,
            zone_rule=zone_rule,
        )
        assert best.status == "OPTIMAL"
        zones = "zone_violations" in best.objective
        found = (
            best.objective.get("zone_violations", 0),
            best.objective["restore_records"],
            best.objective["moves"],
        )
        mine = (
            zone_violations(cluster, ours) if zones else 0,
            ours_metrics.restore_records,
            ours_metrics.moves,
        )
        assert found <= mine


def test_converged_balance_hand_checked_case() -> None:
    """``same-rules-balance.json``: three tasks all on client 1, three clients of capacity 1.

    Client 3 is caught up on every task and client 2 on ``0_0`` and ``0_1`` (``0_2`` is 2000
    records behind). A balanced target gives each client one task; a caught-up target must run
    its task now, so clients 2 and 3 can only be targets of tasks they run now, except client 2
    of ``0_2`` (not caught up: a pending move, free now). Cheapest: client 1 keeps two tasks,
    client 3 or 2 runs one now and client 2 is the pending target of ``0_2``: one moved active,
    nothing restored. The relaxed problem without the balance keeps all three: no move.
    """
    cluster = load_cluster_state(DATA / "same-rules-balance.json")
    result = solve_optimal(cluster, "immediate", num_workers=1, same_rules=True)
    assert result.status == "OPTIMAL"
    assert (result.objective["restore_records"], result.objective["moves"]) == (0, 1)
    assert result.assignment is not None
    first = result.assignment.clients["00000000-0000-0000-0000-000000000001"]
    assert len(first.active) == 2
    assert brute_force(cluster) == (0, 0, 1)


def test_cli_optimal_same_rules_reports_the_zone_objective_first(capsys) -> None:
    from streams_assign.cli import main

    path = str(DATA / "same-rules-zones.json")
    status = main(["optimal", path, "--problem", "immediate", "--same-rules", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert status == 0
    assert document["same_rules"] is True
    assert document["objective"] == {"zone_violations": 0, "restore_records": 1000, "moves": 1}
    status = main(["optimal", path, "--problem", "immediate", "--same-rules", "--no-zone-rule"])
    assert status == 0
    capsys.readouterr()


def test_cli_same_rules_with_the_target_problem_is_a_usage_error(capsys) -> None:
    from streams_assign.cli import main

    status = main(["optimal", str(DATA / "same-rules-zones.json"), "--same-rules"])
    err = capsys.readouterr().err
    assert status == 2
    assert "--same-rules needs --problem immediate" in err
