"""The chain's timing races: which inputs of an immediate follow-up depend on timing, the
branches they give, and settling them with the inputs Kafka's leader logged.

The two real chains in ``tests/data/chain/`` are ClicksApp runs on Kafka Streams 4.2.1 (5
instances x 3 threads, 2 standbys, ``acceptable.recovery.lag=50``, warmups; see
docs/planning.md): the cluster state collected before the change, the application's
properties, and the leader's "Decided on assignment" lines from the change on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streams_assign.errors import StreamsAssignError
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.model import LATEST_OFFSET, TaskId
from streams_assign.simulation.chain import FOLLOW_UP, plan_chain
from streams_assign.simulation.leader_log import race_evidence, read_decisions
from streams_assign.simulation.probing import RestoreRates
from streams_assign.simulation.races import Race, RaceEvidence

DATA = Path(__file__).parent.parent / "data" / "chain"
KILLED = "38f5d141-85a8-4be7-ae92-45c95276f6f9"
ADDED = "b697c342-079b-4649-b005-1d6b269ac3e0"
T = TaskId.parse


def _race(ready: int | None, late: int | None) -> Race:
    return Race("p", T("0_0"), ready, late, ready, 500)


def test_a_race_allows_what_restoration_can_produce_and_nothing_else() -> None:
    new_standby = _race(ready=0, late=None)
    assert new_standby.allows(None) and new_standby.allows(0) and new_standby.allows(500)
    assert not new_standby.allows(501) and not new_standby.allows(LATEST_OFFSET)
    partial = _race(ready=120, late=400)
    assert partial.allows(120) and partial.allows(400)
    assert not partial.allows(119) and not partial.allows(None)
    new_active = _race(ready=LATEST_OFFSET, late=0)
    assert new_active.allows(LATEST_OFFSET) and new_active.allows(0) and new_active.allows(1)
    assert not new_active.allows(None)


def test_evidence_settles_a_race_only_with_a_value_the_race_can_produce() -> None:
    race = _race(ready=0, late=None)
    evidence = RaceEvidence(({"p": {T("0_0"): 7}}, {"p": {}}, {"q": {}}))
    assert evidence.settle(1, race) == 7
    assert evidence.settle(2, race) is None  # not reported
    assert evidence.settle(3, race) is race  # no such client logged
    assert evidence.settle(4, race) is race  # no such rebalance logged
    assert RaceEvidence(({"p": {T("0_0"): 900}},)).settle(1, race) is race


def _two_threads() -> Any:
    return load_cluster_state(DATA / "move-between-clients-two-threads.json")


def test_a_warmup_on_a_thread_that_rejoins_with_its_heartbeat_is_a_race() -> None:
    # B's second thread gets the warmup and rejoins only with the follow-up: ready at the
    # rate (the model's assumption) or not initialised yet (the late branch).
    chain = plan_chain(_two_threads(), "high_availability", RestoreRates(10_000.0))
    follow_up = chain.rebalances[1]
    assert follow_up.kind == FOLLOW_UP and follow_up.races
    assert all(r.assumed == r.ready for r in follow_up.races)
    assert chain.if_late is not None
    late = plan_chain(_two_threads(), "high_availability", RestoreRates(10_000.0), races="late")
    assert late.if_late is None and late.races == "late"
    assert [len(r.moves) for r in late.rebalances[:2]] != [
        len(r.moves) for r in chain.rebalances[:2]
    ]
    assert chain.if_late.rebalances == late.rebalances


def test_evidence_of_the_late_branch_gives_the_late_branch() -> None:
    cluster = _two_threads()
    late = plan_chain(cluster, "high_availability", RestoreRates(10_000.0), races="late")
    evidence = RaceEvidence(
        tuple(
            {
                pid: {t: lag for t, lag in lags.items() if lag != cluster.no_state_lag(t)}
                for pid, lags in r.lags.items()
            }
            for r in late.rebalances
        )
    )
    settled = plan_chain(cluster, "high_availability", RestoreRates(10_000.0), evidence=evidence)
    assert [r.decided for r in settled.rebalances] == [r.decided for r in late.rebalances]
    assert not any(r.unsettled for r in settled.rebalances)


def test_an_unknown_race_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="races must be one of"):
        plan_chain(_two_threads(), "high_availability", RestoreRates(10.0), races="sometimes")


def test_the_leader_log_of_kafka_streams_4_2_is_read_with_its_inputs() -> None:
    path = DATA / "kill-4.2.1" / "leader-after-change.log"
    decisions = read_decisions(path.read_text().splitlines(), str(path))
    assert len(decisions) == 8
    assert [d.probing for d in decisions] == [True] * 6 + [False] * 2
    first = decisions[0]
    assert KILLED not in first.clients and len(first.clients) == 4
    client = next(iter(first.clients.values()))
    assert set(client.lags) == {T(f"{s}_{p}") for s in range(3) for p in range(4)}
    assert set(client.reported) <= set(client.prev_active) | set(client.prev_standby)
    assert all(lag == LATEST_OFFSET for t, lag in client.lags.items() if t in client.prev_active)


def test_a_decision_line_without_clients_is_an_error_naming_the_line() -> None:
    lines = [
        "x",
        "[2026-11-27 21:14:05,586] INFO Decided on assignment: {} with no followup probing",
    ]
    with pytest.raises(StreamsAssignError, match="leader.log:2"):
        read_decisions(lines, "leader.log")


def _plan(folder: str, *change: str) -> list[dict[str, Any]]:
    base = DATA / folder
    command = [
        sys.executable,
        "-m",
        "streams_assign.cli",
        "plan",
        str(base / "state.json"),
        *change,
        "--assignor",
        "high_availability",
        "--streams-config",
        str(base / "app.properties"),
        "--json",
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    chain: list[dict[str, Any]] = json.loads(result.stdout)["chains"][0]["chain"]
    return chain


def _decisions(chain: list[dict[str, Any]]) -> list[dict[str, tuple[list[str], list[str]]]]:
    return [
        {pid: (sorted(c["active"]), sorted(c["standby"])) for pid, c in r["decided"].items()}
        for r in chain
    ]


def _logged(folder: str) -> list[dict[str, tuple[list[str], list[str]]]]:
    path = DATA / folder / "leader-after-change.log"
    return [
        {
            pid: (sorted(map(str, c.active)), sorted(map(str, c.standby)))
            for pid, c in d.clients.items()
        }
        for d in read_decisions(path.read_text().splitlines(), str(path))
    ]


@pytest.mark.parametrize(
    ("folder", "change"),
    [
        ("kill-4.2.1", ["--kill", KILLED]),
        ("add-4.2.1", ["--add", "1", "--add-id", ADDED, "--capacity", "3", "--zone", "zone-c"]),
    ],
)
def test_a_real_chain_with_warmups_is_planned_decision_for_decision_once_settled(
    folder: str, change: list[str]
) -> None:
    logged = _logged(folder)
    evidence = str(DATA / folder / "leader-after-change.log")
    settled = _plan(folder, *change, "--race-evidence", evidence)
    assert _decisions(settled) == logged
    assert not any(r["unsettled"] for r in settled)
    # Without the log, the first decision holds; the races make the rest a range.
    predicted = _plan(folder, *change)
    assert _decisions(predicted)[0] == logged[0]
    assert any(r["races"] for r in predicted)


def test_race_evidence_that_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    base = DATA / "kill-4.2.1"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "streams_assign.cli",
            "plan",
            str(base / "state.json"),
            "--kill",
            KILLED,
            "--race-evidence",
            str(empty),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "--race-evidence" in result.stderr and "no 'Decided on assignment' line" in result.stderr


def test_evidence_from_the_log_is_one_mapping_per_decision() -> None:
    path = DATA / "add-4.2.1" / "leader-after-change.log"
    decisions = read_decisions(path.read_text().splitlines(), str(path))
    evidence = race_evidence(decisions)
    assert len(evidence.reported) == len(decisions) == 14
    assert ADDED not in evidence.reported[0] or not evidence.reported[0][ADDED]


def test_the_printed_plan_names_the_races_and_the_all_late_branch() -> None:
    base = DATA / "kill-4.2.1"
    command = [
        sys.executable,
        "-m",
        "streams_assign.cli",
        "plan",
        str(base / "state.json"),
        "--kill",
        KILLED,
        "--assignor",
        "high_availability",
        "--streams-config",
        str(base / "app.properties"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "depend on" in result.stdout and "race(s)" in result.stdout
    assert "if every racing replica is late: 9 rebalances" in result.stdout


def test_the_leaders_per_consumer_lines_give_each_threads_reported_tasks() -> None:
    path = DATA / "kill-4.2.1" / "leader-after-change.log"
    decisions = read_decisions(path.read_text().splitlines(), str(path))
    assert all(set(d.threads) == set(d.clients) for d in decisions)
    for decision in decisions:
        for pid, threads in decision.threads.items():
            assert set(threads) <= {1, 2, 3}
            client = decision.clients[pid]
            reported = set().union(*threads.values())
            # Every previous task the leader counted was reported by one of its threads.
            assert set(client.prev_active) | set(client.prev_standby) <= reported
    evidence = race_evidence(decisions)
    pid = next(iter(decisions[1].threads))
    assert evidence.reporting_threads(2, pid) == decisions[1].threads[pid]
    assert evidence.reporting_threads(99, pid) == {}
