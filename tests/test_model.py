"""The value types: TaskId, process-id order, UUID hash codes, AssignmentConfigs, and the
assigned-set invariants of Kafka's ClientState (``TaskId``, ``ProcessId``, ``ClientState``,
``AssignmentConfigs`` and Kafka's ``ClientStateTest``)."""

from __future__ import annotations

import dataclasses
import os
import pickle
import random
import subprocess
import sys

import pytest

from streams_assign.assignors.state import AssignmentState
from streams_assign.errors import InvalidScenarioError, InvalidTaskIdError, TaskAssignmentError
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.java.hash_order import java_uuid_hash_code
from streams_assign.model import (
    LONG_MAX_VALUE,
    AssignmentConfigs,
    TaskId,
    process_id_sort_key,
)

INT_MAX = 2**31 - 1


def t(text: str) -> TaskId:
    return TaskId.parse(text)


# -- TaskId -------------------------------------------------------------------------------------


def test_task_id_parses_subtopology_and_partition():
    assert t("1_3") == TaskId(1, 3)
    assert t("1_3").topology_name is None


def test_task_id_parses_named_topology():
    assert t("orders__1_3") == TaskId(1, 3, "orders")


@pytest.mark.parametrize("text", ["0_0", "12_345", "orders__1_3", "my_app__0_1", "0_2147483647"])
def test_task_id_formats_as_it_was_written(text: str):
    assert str(t(text)) == text


@pytest.mark.parametrize(
    "text",
    ["", "0", "0_", "_0", "a_0", "0_a", "0_1_2", "-1_0", "0_-1", " 0_1", "0_1 ", "0__1", "1.0_2"],
)
def test_task_id_rejects_malformed_text(text: str):
    with pytest.raises(InvalidTaskIdError, match="malformed task id"):
        TaskId.parse(text)


def test_task_id_rejects_a_trailing_newline():
    with pytest.raises(InvalidTaskIdError):
        TaskId.parse("0_1\n")


@pytest.mark.parametrize("value", [5, None, ["0_1"]])
def test_task_id_rejects_non_strings(value: object):
    with pytest.raises(InvalidTaskIdError, match="must be a string"):
        TaskId.parse(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["2147483648_0", "0_2147483648"])
def test_task_id_rejects_numbers_beyond_java_int(text: str):
    with pytest.raises(InvalidTaskIdError, match="int range"):
        TaskId.parse(text)


def test_invalid_task_id_error_is_a_scenario_error_and_a_value_error():
    assert issubclass(InvalidTaskIdError, InvalidScenarioError)
    assert issubclass(InvalidTaskIdError, ValueError)


def test_task_ids_order_numerically_not_as_text():
    assert t("0_2") < t("0_10")
    assert t("0_10") < t("1_0")
    assert t("2_0") < t("10_0")


def test_task_ids_sort_by_subtopology_then_partition():
    texts = ["1_0", "0_10", "10_1", "0_2", "2_0", "0_1", "1_10", "1_2"]
    assert [str(x) for x in sorted(map(t, texts))] == [
        "0_1",
        "0_2",
        "0_10",
        "1_0",
        "1_2",
        "1_10",
        "2_0",
        "10_1",
    ]


def test_named_task_ids_order_by_name_first():
    assert t("a__9_9") < t("b__0_0")
    assert t("a__0_2") < t("a__0_10")
    assert t("a__1_0") > t("a__0_5")


@pytest.mark.parametrize(
    "compare",
    [
        lambda a, b: a < b,
        lambda a, b: b < a,
        lambda a, b: a > b,
        lambda a, b: a <= b,
        lambda a, b: a >= b,
    ],
)
def test_ordering_named_and_unnamed_task_ids_raises_type_error(compare):
    with pytest.raises(TypeError, match="named and unnamed"):
        compare(t("0_1"), t("app__0_1"))


def test_sorting_a_mix_of_named_and_unnamed_task_ids_raises_type_error():
    with pytest.raises(TypeError):
        sorted([t("0_1"), t("app__0_0"), t("0_0")])


def test_named_and_unnamed_task_ids_are_unequal_without_raising():
    assert t("0_1") != t("app__0_1")
    assert len({t("0_1"), t("app__0_1"), TaskId(0, 1)}) == 2


def test_mixing_named_and_unnamed_tasks_in_a_scenario_is_rejected():
    with pytest.raises(InvalidScenarioError, match="stateful_tasks: named and unnamed"):
        parse_cluster_state(
            {
                "stateful_tasks": ["0_0"],
                "stateless_tasks": ["app__1_0"],
                "clients": [{"id": "00000000-0000-0000-0000-000000000001", "capacity": 1}],
            }
        )


# -- process ids: java.util.UUID order ----------------------------------------------------------

#: Java's UUID.compareTo order: most significant 64 bits as a signed long, then the least
#: significant 64 bits as a signed long.
JAVA_UUID_ORDER = [
    "80000000-0000-0000-0000-000000000000",  # msb = Long.MIN_VALUE
    "ffffffff-ffff-ffff-ffff-ffffffffffff",  # msb = -1
    "00000000-0000-0000-8000-000000000000",  # msb 0, lsb = Long.MIN_VALUE
    "00000000-0000-0000-ffff-ffffffffffff",  # msb 0, lsb = -1
    "00000000-0000-0000-0000-000000000000",
    "00000000-0000-0000-0000-000000000001",  # P1 = new UUID(0, 1)
    "00000000-0000-0000-0000-000000000002",
    "00000000-0000-0000-0000-00000000000a",  # new UUID(0, 10)
    "00000000-0000-0000-7fff-ffffffffffff",  # msb 0, lsb = Long.MAX_VALUE
    "00000000-0000-0001-0000-000000000000",  # msb 1 beats any lsb
    "7fffffff-ffff-ffff-ffff-ffffffffffff",  # msb = Long.MAX_VALUE
]


def test_process_ids_sort_as_java_uuid_compare_to():
    shuffled = list(JAVA_UUID_ORDER)
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled, key=process_id_sort_key) == JAVA_UUID_ORDER


def test_process_ids_starting_8_to_f_sort_before_ids_starting_0_to_7():
    high = [f"{d}0000000-0000-0000-0000-000000000000" for d in "89abcdef"]
    low = [f"{d}0000000-0000-0000-0000-000000000001" for d in "01234567"]
    ordered = sorted(low + high, key=process_id_sort_key)
    assert ordered == high + low


def test_process_id_order_differs_from_string_order():
    assert sorted(JAVA_UUID_ORDER) != JAVA_UUID_ORDER


def test_process_id_sort_key_ignores_letter_case():
    lower = "abcdef00-0000-0000-0000-00000000000f"
    assert process_id_sort_key(lower.upper()) == process_id_sort_key(lower)


@pytest.mark.parametrize("text", ["P1", "", "00000000-0000-0000-0000-00000000000g"])
def test_process_id_sort_key_rejects_non_uuids(text: str):
    with pytest.raises(ValueError):
        process_id_sort_key(text)


def test_scenario_lists_clients_in_java_uuid_order():
    cluster = parse_cluster_state(
        {
            "stateful_tasks": [],
            "clients": [{"id": pid, "capacity": 1} for pid in reversed(JAVA_UUID_ORDER)],
        }
    )
    assert [c.id for c in cluster.clients] == JAVA_UUID_ORDER


def test_round_robin_deals_the_first_task_to_the_smallest_java_uuid():
    from streams_assign.assignors import assign

    high, low = "80000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001"
    result = assign(
        {
            "stateful_tasks": ["0_0", "0_1"],
            "clients": [{"id": low, "capacity": 1}, {"id": high, "capacity": 1}],
        }
    )
    assert [str(x) for x in result.clients[high].active] == ["0_0"]
    assert [str(x) for x in result.clients[low].active] == ["0_1"]


# -- java.util.UUID.hashCode --------------------------------------------------------------------
# hashCode() = (int)(hilo >> 32) ^ (int) hilo with hilo = msb ^ lsb (signed, arithmetic shift).


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("00000000-0000-0000-0000-000000000000", 0),
        ("00000000-0000-0000-0000-000000000001", 1),  # new UUID(0, 1)
        ("00000000-0000-0000-0000-000000000009", 9),
        ("00000000-0000-0001-0000-000000000000", 1),  # new UUID(1, 0): hilo = 1
        ("00000000-0000-0000-0000-000100000000", 1),  # lsb = 2^32: high word 1, low word 0
        ("00000000-0000-0000-0000-00007fffffff", 2147483647),
        ("00000000-0000-0000-0000-000080000000", -2147483648),  # (int) 0x80000000
        ("00000000-0000-0000-0000-0000ffffffff", -1),  # (int) 0xffffffff
        ("ffffffff-ffff-ffff-ffff-ffffffffffff", 0),  # msb == lsb: hilo = 0
        ("ffffffff-ffff-ffff-0000-000000000000", 0),  # hilo = -1: -1 ^ -1
        ("80000000-0000-0000-0000-000000000000", -2147483648),  # hilo = Long.MIN_VALUE
        ("f0000000-0000-0000-0000-000000000000", -268435456),  # (int) 0xf0000000
        # 123e4567 ^ a4564266 = b6680701; e89b12d3 ^ 14174000 = fc8c52d3; xor = 4ae455d2
        ("123e4567-e89b-12d3-a456-426614174000", 0x4AE455D2),
    ],
)
def test_java_uuid_hash_code_matches_java(text: str, expected: int):
    assert java_uuid_hash_code(text) == expected


# -- AssignmentConfigs --------------------------------------------------------------------------


def test_assignment_configs_defaults_are_kafkas():
    configs = AssignmentConfigs()
    assert configs.acceptable_recovery_lag == 10_000
    assert configs.max_warmup_replicas == 2
    assert configs.num_standby_replicas == 0
    assert configs.probing_rebalance_interval_ms == 600_000
    assert configs.rack_aware_assignment_tags == ()
    assert configs.rack_aware_assignment_strategy == "none"
    assert configs.rack_aware_assignment_traffic_cost is None
    assert configs.rack_aware_assignment_non_overlap_cost is None


def test_missing_configs_in_a_scenario_take_kafkas_defaults():
    cluster = parse_cluster_state(
        {
            "configs": {"num_standby_replicas": 1},
            "clients": [{"id": JAVA_UUID_ORDER[0], "capacity": 1}],
        }
    )
    assert cluster.configs == AssignmentConfigs(num_standby_replicas=1)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("acceptable_recovery_lag", 0),
        ("acceptable_recovery_lag", LONG_MAX_VALUE),
        ("max_warmup_replicas", 1),
        ("max_warmup_replicas", INT_MAX),
        ("num_standby_replicas", 0),
        ("num_standby_replicas", INT_MAX),
        ("probing_rebalance_interval_ms", 60_000),
        ("probing_rebalance_interval_ms", LONG_MAX_VALUE),
    ],
)
def test_assignment_configs_accept_the_bounds_of_kafkas_ranges(name: str, value: int):
    assert getattr(AssignmentConfigs(**{name: value}), name) == value


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("acceptable_recovery_lag", -1, "must be >= 0, got -1"),
        ("acceptable_recovery_lag", LONG_MAX_VALUE + 1, "must be <= 9223372036854775807"),
        ("max_warmup_replicas", 0, "must be >= 1, got 0"),
        ("max_warmup_replicas", INT_MAX + 1, "must be <= 2147483647"),
        ("num_standby_replicas", -1, "must be >= 0, got -1"),
        ("probing_rebalance_interval_ms", 59_999, "must be >= 60000, got 59999"),
    ],
)
def test_assignment_configs_reject_values_out_of_kafkas_ranges(name: str, value: int, reason: str):
    with pytest.raises(InvalidScenarioError) as error:
        AssignmentConfigs(**{name: value})
    assert error.value.path == f"configs.{name}"
    assert reason in str(error.value)


@pytest.mark.parametrize("value", [True, 1.5, "10", None])
@pytest.mark.parametrize(
    "name",
    [
        "acceptable_recovery_lag",
        "max_warmup_replicas",
        "num_standby_replicas",
        "probing_rebalance_interval_ms",
    ],
)
def test_assignment_configs_reject_non_integers(name: str, value: object):
    with pytest.raises(InvalidScenarioError, match=f"configs.{name}: must be an integer"):
        AssignmentConfigs(**{name: value})


def test_assignment_configs_reject_more_than_five_rack_aware_tags():
    with pytest.raises(InvalidScenarioError, match="configs.rack_aware_assignment_tags"):
        AssignmentConfigs(rack_aware_assignment_tags=("a", "b", "c", "d", "e", "f"))


def test_assignment_configs_reject_an_unknown_rack_aware_strategy():
    with pytest.raises(InvalidScenarioError, match="configs.rack_aware_assignment_strategy"):
        AssignmentConfigs(rack_aware_assignment_strategy="fastest")


def test_recovery_lag_is_unbounded_only_at_long_max_value():
    assert AssignmentConfigs(acceptable_recovery_lag=LONG_MAX_VALUE).unbounded_recovery_lag
    assert not AssignmentConfigs(acceptable_recovery_lag=LONG_MAX_VALUE - 1).unbounded_recovery_lag


def test_assignment_configs_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        AssignmentConfigs().max_warmup_replicas = 5  # type: ignore[misc]


# -- assigned sets: ClientStateTest's invariants -------------------------------------------------


@pytest.fixture
def state() -> AssignmentState:
    """One client of capacity 2, tasks 0_0 (index 0) and 0_1 (index 1)."""
    return AssignmentState(
        parse_cluster_state(
            {
                "stateful_tasks": ["0_0", "0_1"],
                "clients": [{"id": JAVA_UUID_ORDER[5], "capacity": 2}],
            }
        )
    )


def test_should_refuse_double_active_task(state: AssignmentState):
    state.assign_active(0, 0)
    with pytest.raises(TaskAssignmentError):
        state.assign_active(0, 0)


def test_should_refuse_active_and_standby_task(state: AssignmentState):
    state.assign_active(0, 0)
    with pytest.raises(TaskAssignmentError):
        state.assign_standby(0, 0)


def test_should_refuse_double_standby_task(state: AssignmentState):
    state.assign_standby(0, 0)
    with pytest.raises(TaskAssignmentError):
        state.assign_standby(0, 0)


def test_should_refuse_standby_and_active_task(state: AssignmentState):
    state.assign_standby(0, 0)
    with pytest.raises(TaskAssignmentError):
        state.assign_active(0, 0)


def test_should_refuse_to_unassign_not_assigned_active_task(state: AssignmentState):
    with pytest.raises(TaskAssignmentError):
        state.unassign_active(0, 0)


def test_should_refuse_to_unassign_not_assigned_standby_task(state: AssignmentState):
    with pytest.raises(TaskAssignmentError):
        state.unassign_standby(0, 0)


def test_should_refuse_to_unassign_active_task_as_standby(state: AssignmentState):
    state.assign_active(0, 0)
    with pytest.raises(TaskAssignmentError):
        state.unassign_standby(0, 0)


def test_should_refuse_to_unassign_standby_task_as_active(state: AssignmentState):
    state.assign_standby(0, 0)
    with pytest.raises(TaskAssignmentError):
        state.unassign_active(0, 0)


def test_should_unassign_active_task(state: AssignmentState):
    state.assign_active(0, 0)
    state.unassign_active(0, 0)
    assert not state.has_assigned(0, 0)
    assert state.active_load[0] == 0.0


def test_should_unassign_standby_task(state: AssignmentState):
    state.assign_standby(0, 0)
    state.unassign_standby(0, 0)
    assert not state.has_assigned(0, 0)
    assert state.task_load[0] == 0.0


def test_loads_are_assigned_and_active_counts_per_thread(state: AssignmentState):
    state.assign_active(0, 0)
    state.assign_standby(0, 1)
    assert state.assigned_count(0) == 2
    assert state.task_load[0] == 1.0
    assert state.active_load[0] == 0.5


@pytest.mark.parametrize("text", ["1_3", "orders__0_10"])
def test_a_task_id_pickled_in_one_process_is_found_in_another(text: str) -> None:
    """A TaskId caches its hash; a pickle must carry the fields, not that process's hash.

    In Python 3.11 ``hash(None)`` comes from an address and string hashes are salted per
    process, so a copied cache made an equal TaskId miss in an unpickled dict (multiprocessing).
    """
    task = TaskId.parse(text)
    payload = pickle.dumps({task: "found"})
    code = (
        "import pickle, sys; from streams_assign.model import TaskId; "
        f"d = pickle.loads({payload!r}); print(d.get(TaskId.parse({text!r}), 'missing'))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "4321"}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert run.stdout.strip() == "found", run.stderr
    # In this process too: the copy equals the original and hashes like it.
    copy = pickle.loads(pickle.dumps(task))
    assert copy == task and hash(copy) == hash(task) and copy._hash == task._hash
