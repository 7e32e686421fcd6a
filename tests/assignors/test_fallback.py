"""Kafka's FallbackPriorTaskAssignor, and when the leader falls back to it.

Cases: ``tests/data/sticky/fallback_cases.json``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from streams_assign.api import assign, get_assignor
from streams_assign.assignors.fallback import (
    FallbackPriorTaskAssignor,
    lag_computation_failed,
    select_assignor,
)
from streams_assign.assignors.state import AssignmentState
from streams_assign.assignors.sticky import LegacyStickyTaskAssignor, assign_legacy_sticky
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state

DATA = Path(__file__).resolve().parents[1] / "data"
FALLBACK = json.loads((DATA / "sticky" / "fallback_cases.json").read_text())
RANDOM_FILES = sorted((DATA / "rack_aware").glob("random_ha_seed*.json"))


def pid(n: int | str) -> str:
    return f"00000000-0000-0000-0000-{int(n):012x}"


@pytest.mark.parametrize("case", FALLBACK["cases"], ids=[c["name"] for c in FALLBACK["cases"]])
def test_fallback_matches_kafka(case: dict[str, Any]) -> None:
    result = FallbackPriorTaskAssignor().assign(parse_cluster_state(case["document"]))
    expected = case["expected"]
    assert result.probing_rebalance_needed is expected["probing_rebalance_needed"]
    for n, tasks in expected["active"].items():
        assert [str(t) for t in result.clients[pid(n)].active] == tasks
    assert result.assignor == "fallback_prior"


@pytest.mark.parametrize("path", RANDOM_FILES, ids=lambda p: p.stem)
def test_fallback_always_probes_keeps_previous_actives_and_ignores_racks(path: Path) -> None:
    document = json.loads(path.read_text())
    tasks = document["stateful_tasks"] + document["stateless_tasks"]
    for k, task in enumerate(tasks):  # previous actives piled on the first few clients
        document["clients"][k % 5].setdefault("prev_active", []).append(task)
    cluster = parse_cluster_state(document)
    result = FallbackPriorTaskAssignor().assign(cluster)
    assert result.probing_rebalance_needed is True
    for client in cluster.clients:
        assert set(client.prev_active) <= set(result.clients[client.id].active)
    # No rack-aware optimisation, whatever the strategy: as with strategy none.
    plain = dataclasses.replace(
        cluster,
        configs=dataclasses.replace(cluster.configs, rack_aware_assignment_strategy="none"),
    )
    assert FallbackPriorTaskAssignor().assign(plain).clients == result.clients
    # It is the legacy sticky assignor told to preserve every previous active.
    state = AssignmentState(cluster)
    assign_legacy_sticky(state, must_preserve_active_task_assignment=True, rack=None)
    assert state.to_assignment(True, assignor="fallback_prior").clients == result.clients


def test_sticky_assignor_never_probes() -> None:
    cluster = load_cluster_state(RANDOM_FILES[0])
    assert LegacyStickyTaskAssignor().assign(cluster).probing_rebalance_needed is False


@pytest.mark.parametrize(
    "case", FALLBACK["selection"], ids=[c["name"] for c in FALLBACK["selection"]]
)
def test_lag_computation_failed_only_when_every_stateful_lag_is_unknown(
    case: dict[str, Any],
) -> None:
    cluster = parse_cluster_state(
        {
            "stateful_tasks": ["0_0", "0_1"],
            "clients": [
                {"id": pid(n + 1), "capacity": 1, "task_lags": lags}
                for n, lags in enumerate(case["lags"])
            ],
        }
    )
    assert lag_computation_failed(cluster) is case["failed"]
    expected = "fallback_prior" if case["failed"] else "high_availability"
    assert select_assignor(cluster, "high_availability") == expected
    assert select_assignor(cluster, "sticky") == "sticky"  # Kafka keeps the legacy sticky one


def test_no_stateful_tasks_never_falls_back() -> None:
    cluster = parse_cluster_state(
        {"stateless_tasks": ["0_0"], "clients": [{"id": pid(1), "capacity": 1}]}
    )
    assert not lag_computation_failed(cluster)


@pytest.mark.parametrize(
    ("name", "cls"),
    [("sticky", LegacyStickyTaskAssignor), ("fallback_prior", FallbackPriorTaskAssignor)],
)
def test_registered_in_the_api(name: str, cls: type) -> None:
    assert isinstance(get_assignor(name), cls)
    result = assign(FALLBACK["cases"][0]["document"], assignor=name)
    assert result.assignor == name


def test_assign_runs_the_fallback_when_every_stateful_lag_is_unknown() -> None:
    import streams_assign

    pid = "00000000-0000-0000-0000-000000000001"
    document = {
        "stateful_tasks": ["0_0"],
        "clients": [{"id": pid, "capacity": 1, "prev_active": ["0_0"], "task_lags": {"0_0": -3}}],
    }
    assert streams_assign.assign(document).assignor == "fallback_prior"
    assert streams_assign.assign(document, assignor="sticky").assignor == "sticky"
    document["clients"][0]["task_lags"] = {"0_0": -2}
    assert streams_assign.assign(document).assignor == "high_availability"
