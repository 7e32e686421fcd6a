"""Properties of Connect's assignors on random clusters driven to a stable assignment."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams_assign.connect import ConnectorTaskId, replay_connect
from streams_assign.formats.connect_sequence import parse_connect_sequence
from tests.tiers import examples

SETTINGS = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    """Connectors (name -> task count) and two worker sets: before and after a change."""
    connectors = {f"ct{i}": draw(st.integers(0, 6)) for i in range(draw(st.integers(0, 6)))}
    workers = [f"w{i}-{draw(st.integers(0, 999))}" for i in range(draw(st.integers(1, 6)))]
    workers = sorted(set(workers))
    later = draw(st.lists(st.sampled_from(workers), min_size=1, unique=True)) + [
        f"new-{i}" for i in range(draw(st.integers(0, 3)))
    ]
    return {"connectors": connectors, "workers": workers, "later": later}


def _drive(assignor: str, cluster: dict[str, Any], rounds: int = 12) -> list[dict[str, Any]]:
    """Run rebalances where every member applies its assignment and rejoins, until a round
    neither assigns nor revokes anything (or ``rounds`` pass); return each round's workers."""
    owned: dict[str, tuple[set[str], set[ConnectorTaskId]]] = {}
    history: list[dict[str, Any]] = []
    members = cluster["workers"]
    doc_rounds: list[dict[str, Any]] = []
    for index in range(rounds):
        if index == 3:
            members = cluster["later"]
        doc_rounds.append(
            {
                "time_ms": index,
                "members": [
                    {
                        "worker_id": w,
                        "owned_connectors": sorted(owned.get(w, (set(), set()))[0]),
                        "owned_tasks": [list(t) for t in sorted(owned.get(w, (set(), set()))[1])],
                    }
                    for w in members
                ],
            }
        )
        doc = {
            "assignor": assignor,
            "connectors": cluster["connectors"],
            "scheduled_rebalance_max_delay_ms": 0,
            "rounds": doc_rounds,
        }
        result = replay_connect(parse_connect_sequence(doc))[-1]
        history.append({"workers": result.workers, "members": members})
        changed = False
        new_owned: dict[str, tuple[set[str], set[ConnectorTaskId]]] = {}
        for worker, a in result.workers.items():
            connectors, tasks = owned.get(worker, (set(), set()))
            if assignor == "eager":
                connectors, tasks = set(), set()
            connectors = (connectors - set(a.revoked_connectors)) | set(a.assigned_connectors)
            tasks = (tasks - set(a.revoked_tasks)) | set(a.assigned_tasks)
            changed |= bool(a.revoked_connectors or a.revoked_tasks)
            if assignor != "eager":
                changed |= bool(a.assigned_connectors or a.assigned_tasks)
            new_owned[worker] = (connectors, tasks)
        owned = new_owned
        if index >= 3 and not changed:
            break
    history.append({"owned": owned})
    return history


@SETTINGS
@given(clusters(), st.sampled_from(["eager", "incremental"]))
def test_stable_assignment_runs_every_connector_and_task_once_balanced(
    cluster: dict[str, Any], assignor: str
) -> None:
    owned = _drive(assignor, cluster)[-1]["owned"]
    connectors = Counter(c for cs, _ in owned.values() for c in cs)
    tasks = Counter(t for _, ts in owned.values() for t in ts)
    assert set(connectors) == set(cluster["connectors"])
    expected_tasks = {
        ConnectorTaskId(c, t) for c, n in cluster["connectors"].items() for t in range(n)
    }
    assert set(tasks) == expected_tasks
    assert all(n == 1 for n in connectors.values()) and all(n == 1 for n in tasks.values())
    sizes = [len(cs) for cs, _ in owned.values()]
    task_sizes = [len(ts) for _, ts in owned.values()]
    assert max(task_sizes) - min(task_sizes) <= 1
    assert max(sizes) - min(sizes) <= 1


@SETTINGS
@given(clusters())
def test_incremental_never_revokes_and_reassigns_in_the_same_round(
    cluster: dict[str, Any],
) -> None:
    for step in _drive("incremental", cluster)[:-1]:
        revoked = {t for a in step["workers"].values() for t in a.revoked_tasks}
        revoked |= {c for a in step["workers"].values() for c in a.revoked_connectors}
        assigned = {t for a in step["workers"].values() for t in a.assigned_tasks}
        assigned |= {c for a in step["workers"].values() for c in a.assigned_connectors}
        assert not revoked & assigned
