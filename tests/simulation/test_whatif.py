"""What-if changes: the next rebalance's input after a crash, shutdown, bounce or scale-out."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.errors import PlanInputError
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state
from streams_assign.model import LATEST_OFFSET
from streams_assign.simulation.whatif import Changes, apply_changes

INPUTS = CORPORA / "kafka-diff" / "input"


def _inputs() -> list[Path]:
    paths = sorted(INPUTS.glob("*.json"))
    if not paths:
        pytest.fail(f"no shared scenarios in {INPUTS}")
    return paths[::8]


def test_kill_equals_the_hand_made_crash_state() -> None:
    for path in _inputs():
        document = json.loads(path.read_text())
        if len(document["clients"]) < 2:
            continue
        victim = document["clients"][1]["id"]
        hand_made = copy.deepcopy(document)
        del hand_made["clients"][1]
        expected = parse_cluster_state(hand_made)
        planned = apply_changes(load_cluster_state(path), Changes(kill=(victim,)))
        assert planned == expected, path.name


def test_killed_clients_actives_have_no_running_owner() -> None:
    for path in _inputs():
        cluster = load_cluster_state(path)
        victim = cluster.clients[0]
        after = apply_changes(cluster, Changes(kill=(victim.id[:13],)))
        orphaned = set(victim.prev_active) & set(cluster.stateful_tasks)
        for client in after.clients:
            running = {t for t, lag in client.task_lags.items() if lag == LATEST_OFFSET}
            assert not running & orphaned, path.name


def test_remove_and_kill_give_the_same_next_state() -> None:
    cluster = load_cluster_state(_inputs()[0])
    pid = cluster.clients[-1].id
    assert apply_changes(cluster, Changes(remove=(pid,))) == apply_changes(
        cluster, Changes(kill=(pid,))
    )


def test_bounced_client_keeps_its_state_as_previous_standbys() -> None:
    for path in _inputs():
        cluster = load_cluster_state(path)
        before = cluster.clients[0]
        after = apply_changes(cluster, Changes(bounce=(before.id,))).client(before.id)
        assert after.prev_active == ()
        assert set(after.prev_standby) == set(before.task_lags)
        for task, lag in before.task_lags.items():
            assert after.task_lags[task] == (0 if lag == LATEST_OFFSET else lag)
        others = [c for c in cluster.clients if c.id != before.id]
        assert [
            c
            for c in apply_changes(cluster, Changes(bounce=(before.id,))).clients
            if c.id != before.id
        ] == others


def test_added_instances_have_no_state_and_deterministic_ids() -> None:
    cluster = load_cluster_state(_inputs()[0])
    changes = Changes(add=2, capacity=3, zone="eu-1c")
    first, second = apply_changes(cluster, changes), apply_changes(cluster, changes)
    assert first == second
    new = [c for c in first.clients if c.id not in {k.id for k in cluster.clients}]
    assert len(new) == 2 and len(first.clients) == len(cluster.clients) + 2
    for client in new:
        assert client.capacity == 3
        assert client.task_lags == {} and client.prev_active == () and client.prev_standby == ()
        assert client.tags == {"zone": "eu-1c"}


def test_standbys_change_num_standby_replicas_only() -> None:
    cluster = load_cluster_state(_inputs()[0])
    after = apply_changes(cluster, Changes(standbys=3))
    assert after.configs.num_standby_replicas == 3
    assert after.clients == cluster.clients


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (Changes(kill=("ffffffff-0000",)), "--kill 'ffffffff-0000': no client"),
        (Changes(add=-1), "--add must be >= 0 instances, got -1"),
        (Changes(add=1, capacity=0), "--capacity must be >= 1 stream threads, got 0"),
        (Changes(standbys=-2), "--standbys must be >= 0, got -2"),
    ],
)
def test_bad_changes_name_the_option_and_value(changes: Changes, message: str) -> None:
    cluster = load_cluster_state(_inputs()[0])
    with pytest.raises(PlanInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply_changes(cluster, changes)


def test_a_client_named_twice_is_refused() -> None:
    cluster = load_cluster_state(_inputs()[0])
    pid = cluster.clients[0].id
    with pytest.raises(PlanInputError, match="already named by --kill"):
        apply_changes(cluster, Changes(kill=(pid,), bounce=(pid,)))


def test_removing_every_client_is_refused() -> None:
    cluster = load_cluster_state(_inputs()[0])
    with pytest.raises(PlanInputError, match="leave no client"):
        apply_changes(cluster, Changes(remove=tuple(c.id for c in cluster.clients)))
