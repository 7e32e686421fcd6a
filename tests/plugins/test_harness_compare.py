"""The differential's comparison reports every kind of difference (no JVM needed)."""

from __future__ import annotations

from devtools.kafka.plugin_harness import disagreements

PID = "00000000-0000-0000-0000-000000000001"


def _decision(active: list[str], probing: bool = False) -> dict:
    return {
        "clients": {PID: {"active": active, "standby": [], "warmup": []}},
        "probing_rebalance_needed": probing,
    }


def test_same_tasks_in_another_order_agree() -> None:
    assert disagreements(_decision(["0_1", "0_0"]), _decision(["0_0", "0_1"])) == []


def test_a_task_on_another_client_is_a_disagreement() -> None:
    assert disagreements(_decision(["0_0"]), _decision(["0_0", "0_1"])) == [
        f"{PID} active: python ['0_0'] java ['0_0', '0_1']"
    ]


def test_the_probing_flag_is_compared() -> None:
    assert disagreements(_decision([], True), _decision([], False)) == [
        "probing_rebalance_needed: python True java False"
    ]


def test_a_java_exception_is_a_disagreement() -> None:
    assert disagreements(_decision([]), {"error": "java.lang.ArithmeticException: overflow"}) == [
        "java failed: java.lang.ArithmeticException: overflow"
    ]
