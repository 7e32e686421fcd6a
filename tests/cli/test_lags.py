"""``streams-assign lags``: every replica's lag under Kafka's caught-up rule, and its errors."""

from __future__ import annotations

import json

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main
from streams_assign.formats.cluster_state import load_cluster_state


def test_lags_lists_every_replica_with_kafkas_caught_up_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    crash = CORPORA / "kafka-diff" / "input" / "s0002-crash.json"
    cluster = load_cluster_state(crash)
    assert main(["lags", str(crash), "--json", "--restore-rate", "1000"]) == 0
    document = json.loads(capsys.readouterr().out)
    replicas = document["replicas"]
    assert len(replicas) == sum(len(c.task_lags) for c in cluster.clients)
    acceptable = cluster.configs.acceptable_recovery_lag
    for row in replicas:
        lag = row["lag"]
        if lag == -2:
            assert row["state"] == "running active" and row["catch_up_s"] is None
        elif lag > acceptable:
            assert row["state"] == "behind"
            assert row["catch_up_s"] == -(-(lag - acceptable) // 1000)
        elif lag >= 0:
            assert row["state"] == "caught up"


def test_lags_refuses_a_bad_rate(capsys: pytest.CaptureFixture[str]) -> None:
    crash = CORPORA / "kafka-diff" / "input" / "s0002-crash.json"
    assert main(["lags", str(crash), "--restore-rate", "-5"]) == 2
    assert "--restore-rate must be > 0 records/s, got -5" in capsys.readouterr().err
