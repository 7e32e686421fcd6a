"""Scenarios A, B, C: ``streams-lag`` + ``streams-assign`` predict what Kafka Streams assigns.

Each scenario runs the real application (3 instances, 2 stream threads each, 1 standby,
``acceptable.recovery.lag`` 500 records against about 750 records per changelog partition) on
the session's broker, collects the operator's view, predicts, triggers the rebalance and
compares per process (active tasks, standby tasks with warmups) and the probing flag with the
group leader's decision, and with what the processes run once the group is stable again. See
docs/e2e.md and :mod:`devtools.kafka.e2e`.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.e2e import ScenarioResult, run_scenario

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def outcomes(
    kafka_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, ScenarioResult | BaseException]:
    """Run A, B and C once for the module, side by side (separate applications and topics on
    the one broker); a scenario that raises fails only its own test."""
    root = tmp_path_factory.mktemp("e2e")

    def run(scenario: str) -> ScenarioResult | BaseException:
        try:
            return run_scenario(kafka_broker, scenario, root / scenario, victim=1)
        except Exception as exc:  # reported by the scenario's own test
            return exc

    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip("ABC", pool.map(run, "ABC"), strict=True))


def _result(outcomes: dict[str, Any], scenario: str) -> ScenarioResult:
    outcome = outcomes[scenario]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def _assert_matched(result: ScenarioResult) -> None:
    assert result.real_probing is not None, "no HighAvailabilityTaskAssignor decision was logged"
    assert result.predicted == result.real, "\n".join(result.differences())
    assert result.predicted_probing == result.real_probing, "\n".join(result.differences())
    # What the processes run once the group is stable again is what the leader decided last.
    # That is the predicted decision unless a later rebalance decided differently on inputs that
    # did not exist when the view was collected (docs/e2e.md, Differences 4): the chain is shown.
    chain = "\n".join(
        f"decision {i} (probing {d.probing}): {d.clients}" for i, d in enumerate(result.decisions)
    )
    assert result.settled == result.last, chain


def test_scenario_a_new_instance_gets_what_was_predicted(outcomes: dict[str, Any]) -> None:
    result = _result(outcomes, "A")
    _assert_matched(result)
    assert len(result.settled) == 4
    newcomer = [c for c in result.cluster_state["clients"] if not c["task_lags"]]
    assert len(newcomer) == 1
    # 500 < records per changelog partition: the newcomer is not caught up, so it may only
    # warm up stateful tasks, and the assignor asks for a probing rebalance.
    assert result.predicted_probing


def test_scenario_b_killed_instance_tasks_go_where_predicted(outcomes: dict[str, Any]) -> None:
    result = _result(outcomes, "B")
    _assert_matched(result)
    assert len(result.settled) == 2
    actives = sorted(t for active, _ in result.settled.values() for t in active)
    assert len(actives) == len(set(actives)) == 12


def test_scenario_c_bounced_instance_gets_what_was_predicted(outcomes: dict[str, Any]) -> None:
    result = _result(outcomes, "C")
    _assert_matched(result)
    assert len(result.settled) == 3


def test_scenario_views_are_operator_sources_only(outcomes: dict[str, Any]) -> None:
    """The prediction was made from the group's state, JmxTool scrapes and state directories:
    every running standby's offset sum came from the restore consumer's metrics, every running
    active from the group, and the description says which sources were used."""
    result = _result(outcomes, "A")
    folder = Path(result.folder)
    scrapes = sorted(folder.glob("metrics-instance-*.txt"))
    assert len(scrapes) == 3
    assert all("-restore-consumer,topic=" in p.read_text() for p in scrapes)
    provenance = json.loads((folder / "provenance.json").read_text())
    sources = {row["source"] for row in provenance}
    assert sources <= {"metrics", "group (running active)", "state-dir", "group"}
    # One standby of each stateful task runs, and the restore consumers' records-lag gave each.
    state = result.cluster_state
    running_standbys = len(state["stateful_tasks"]) * state["configs"]["num_standby_replicas"]
    assert sum(row["source"] == "metrics" for row in provenance) == running_standbys
    actives = sum(row["source"] == "group (running active)" for row in provenance)
    assert actives == len(state["stateful_tasks"])
    assert "offset sums: " in result.cluster_state["description"]
    assert "ListOffsets" in result.cluster_state["description"]


def _java_command_lines() -> list[str]:
    lines = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            raw = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"java" in raw:
            lines.append(raw.replace(b"\0", b" ").decode(errors="replace"))
    return lines


def test_no_instance_jvm_outlives_its_scenario(outcomes: dict[str, Any]) -> None:
    app_ids = {
        f"app.id={outcome.cluster_state['name']} "
        for outcome in outcomes.values()
        if isinstance(outcome, ScenarioResult)
    }
    assert app_ids, "no scenario finished"
    leftovers = [
        line for line in _java_command_lines() if any(app_id in line + " " for app_id in app_ids)
    ]
    assert leftovers == []
