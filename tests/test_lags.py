"""Lags: Kafka's ``computeTaskLags`` rules, Kafka-native offset-sum input, the caught-up predicate
and the by-lag order (``ClientState.computeTaskLags``, ``TaskMovement.taskIsCaughtUpOnClient``,
``HighAvailabilityTaskAssignor.tasksToClientByLag`` and the lag cases of Kafka's
``ClientStateTest``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streams_assign.assignors import assign
from streams_assign.assignors.state import AssignmentState
from streams_assign.errors import InvalidScenarioError
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.model import (
    LATEST_OFFSET,
    LONG_MAX_VALUE,
    UNKNOWN_OFFSET_SUM,
    TaskId,
    compute_task_lag,
    is_caught_up,
    process_id_sort_key,
)

P1, P2, P3 = (f"00000000-0000-0000-0000-00000000000{n}" for n in (1, 2, 3))


def t(text: str) -> TaskId:
    return TaskId.parse(text)


def native(offsets: dict[str, int], end: dict[str, int]) -> dict[str, Any]:
    """A one-client Kafka-native document (ClientStateTest's single client)."""
    return {
        "stateful_tasks": sorted(end, key=TaskId.parse),
        "changelog_end_offset_sums": end,
        "clients": [{"id": P1, "capacity": 1, "task_offset_sums": offsets}],
    }


# -- computeTaskLags ----------------------------------------------------------------------------


def test_latest_offset_stays_latest_offset():
    assert compute_task_lag(LATEST_OFFSET, 100) == LATEST_OFFSET


def test_unknown_offset_sum_stays_unknown():
    assert compute_task_lag(UNKNOWN_OFFSET_SUM, 100) == UNKNOWN_OFFSET_SUM


def test_offset_sum_beyond_the_end_gives_the_end_offset_sum():
    assert compute_task_lag(5, 1) == 1


def test_lag_is_end_offset_sum_minus_offset_sum():
    assert compute_task_lag(0, 500) == 500
    assert compute_task_lag(100, 100) == 0
    assert compute_task_lag(30, 100) == 70


def test_should_compute_task_lags():
    cluster = parse_cluster_state(native({"0_1": 0, "0_2": 100}, {"0_1": 500, "0_2": 100}))
    assert dict(cluster.clients[0].task_lags) == {t("0_1"): 500, t("0_2"): 0}


def test_should_return_end_offset_sum_for_lag_of_task_we_did_not_previously_own():
    cluster = parse_cluster_state(native({}, {"0_1": 500}))
    assert cluster.lag(cluster.clients[0], t("0_1")) == 500


def test_should_return_latest_offset_for_lag_of_previous_active_running_task():
    cluster = parse_cluster_state(native({"0_1": LATEST_OFFSET}, {"0_1": 500}))
    assert cluster.lag(cluster.clients[0], t("0_1")) == LATEST_OFFSET


def test_should_return_unknown_offset_sum_for_lag_of_task_with_unknown_offset():
    cluster = parse_cluster_state(native({"0_1": UNKNOWN_OFFSET_SUM}, {"0_1": 500}))
    assert cluster.lag(cluster.clients[0], t("0_1")) == UNKNOWN_OFFSET_SUM


def test_should_return_end_offset_sum_if_offset_sum_is_greater_than_end_offset_sum():
    cluster = parse_cluster_state(native({"0_1": 5}, {"0_1": 1}))
    assert cluster.lag(cluster.clients[0], t("0_1")) == 1


def test_reported_offset_sums_are_kept_beside_the_lags():
    cluster = parse_cluster_state(native({"0_1": 5}, {"0_1": 1}))
    assert dict(cluster.clients[0].task_offset_sums or {}) == {t("0_1"): 5}


def test_absent_task_without_end_offsets_lags_the_whole_unknown_changelog():
    cluster = parse_cluster_state(
        {"stateful_tasks": ["0_0"], "clients": [{"id": P1, "capacity": 1, "task_lags": {}}]}
    )
    assert cluster.lag(cluster.clients[0], t("0_0")) == LONG_MAX_VALUE


def test_absent_task_lags_its_end_offset_sum_when_end_offsets_are_given_beside_task_lags():
    cluster = parse_cluster_state(
        {
            "stateful_tasks": ["0_0", "0_1"],
            "changelog_end_offset_sums": {"0_0": 700, "0_1": 50},
            "clients": [{"id": P1, "capacity": 1, "task_lags": {"0_0": 3}}],
        }
    )
    client = cluster.clients[0]
    assert (cluster.lag(client, t("0_0")), cluster.lag(client, t("0_1"))) == (3, 50)


def test_offset_sums_need_the_changelog_end_offset_sums():
    document = native({"0_1": 5}, {"0_1": 1})
    del document["changelog_end_offset_sums"]
    with pytest.raises(InvalidScenarioError, match=r"clients\[0\]\.task_offset_sums: needs"):
        parse_cluster_state(document)


def test_offset_sums_and_task_lags_exclude_each_other():
    document = native({"0_1": 5}, {"0_1": 1})
    document["clients"][0]["task_lags"] = {"0_1": 4}
    with pytest.raises(InvalidScenarioError, match=r"clients\[0\]: give either"):
        parse_cluster_state(document)


def test_offset_sum_of_a_task_without_end_offset_sum_is_rejected():
    document = native({"0_1": 5, "0_2": 1}, {"0_1": 10})
    document["stateful_tasks"] = ["0_1", "0_2"]
    with pytest.raises(InvalidScenarioError, match="changelog_end_offset_sums: .* task 0_2"):
        parse_cluster_state(document)


def test_negative_end_offset_sum_is_rejected():
    with pytest.raises(InvalidScenarioError, match=r"changelog_end_offset_sums\.0_1: .* got -1"):
        parse_cluster_state(native({}, {"0_1": -1}))


@pytest.mark.parametrize("offset", [-1, -4, -100])
def test_negative_offset_sum_other_than_sentinels_is_rejected(offset: int):
    with pytest.raises(
        InvalidScenarioError, match=rf"clients\[0\]\.task_offset_sums\.0_1: .*{offset}"
    ):
        parse_cluster_state(native({"0_1": offset}, {"0_1": 10}))


def test_end_offset_sum_of_a_task_that_is_not_stateful_is_ignored_with_a_warning():
    document = native({}, {"0_1": 10})
    document["changelog_end_offset_sums"]["9_9"] = 5
    cluster = parse_cluster_state(document)
    assert any("changelog_end_offset_sums.9_9" in w for w in cluster.warnings)


# -- Kafka-native input assigns as the equivalent lags ------------------------------------------

NATIVE: dict[str, Any] = {
    "configs": {
        "acceptable_recovery_lag": 100,
        "max_warmup_replicas": 2,
        "num_standby_replicas": 1,
    },
    "stateful_tasks": ["0_0", "0_1", "0_2", "1_0"],
    "stateless_tasks": ["2_0"],
    "changelog_end_offset_sums": {"0_0": 1000, "0_1": 5000, "0_2": 200, "1_0": 0},
    "clients": [
        {"id": P1, "capacity": 1, "task_offset_sums": {"0_0": -2, "0_1": 4950, "0_2": 999}},
        {"id": P2, "capacity": 2, "task_offset_sums": {"0_1": -2, "0_0": 400, "1_0": -3}},
        {"id": P3, "capacity": 1, "task_offset_sums": {"0_2": -2, "0_0": 950}},
    ],
}
# The same cluster with lags worked out by hand: end - offset, -2/-3 kept, offset beyond the end
# gives the end (0_2 on P1), and a task without local state lags its whole changelog.
LAGS: dict[str, Any] = {
    "configs": NATIVE["configs"],
    "stateful_tasks": NATIVE["stateful_tasks"],
    "stateless_tasks": NATIVE["stateless_tasks"],
    "clients": [
        {"id": P1, "capacity": 1, "task_lags": {"0_0": -2, "0_1": 50, "0_2": 200, "1_0": 0}},
        {"id": P2, "capacity": 2, "task_lags": {"0_0": 600, "0_1": -2, "0_2": 200, "1_0": -3}},
        {"id": P3, "capacity": 1, "task_lags": {"0_0": 50, "0_1": 5000, "0_2": -2, "1_0": 0}},
    ],
}


def test_offset_sums_and_end_offsets_give_the_same_assignment_as_the_equivalent_lags():
    assert assign(NATIVE).to_json() == assign(LAGS).to_json()


def test_the_equivalence_scenario_depends_on_the_lags():
    """Guard: the scenario above must exercise movements, or the equivalence proves little."""
    result = assign(LAGS)
    assert result.probing_rebalance_needed
    flattened = copy.deepcopy(LAGS)
    for client in flattened["clients"]:
        client["task_lags"] = {}
    assert assign(flattened).to_json() != result.to_json()


def _reference_lag(offset: int | None, end: int) -> int:
    if offset is None:
        return end
    if offset in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
        return offset
    return end if offset > end else end - offset


_offsets = st.one_of(
    st.none(), st.sampled_from([LATEST_OFFSET, UNKNOWN_OFFSET_SUM]), st.integers(0, 300)
)


@settings(max_examples=60, deadline=None)
@given(
    ends=st.lists(st.integers(0, 250), min_size=1, max_size=5),
    offsets=st.lists(st.lists(_offsets, min_size=5, max_size=5), min_size=1, max_size=4),
    capacities=st.lists(st.integers(1, 3), min_size=4, max_size=4),
    acceptable=st.sampled_from([0, 50, 100, LONG_MAX_VALUE]),
    standbys=st.integers(0, 2),
    warmups=st.integers(1, 3),
)
def test_offset_sums_always_assign_as_their_computed_lags(
    ends, offsets, capacities, acceptable, standbys, warmups
):
    tasks = [f"0_{i}" for i in range(len(ends))]
    configs = {
        "acceptable_recovery_lag": acceptable,
        "max_warmup_replicas": warmups,
        "num_standby_replicas": standbys,
    }
    native_doc = {
        "configs": configs,
        "stateful_tasks": tasks,
        "stateless_tasks": ["1_0"],
        "changelog_end_offset_sums": dict(zip(tasks, ends, strict=True)),
        "clients": [
            {
                "id": f"00000000-0000-0000-0000-00000000000{i + 1}",
                "capacity": capacities[i],
                "task_offset_sums": {
                    task: o for task, o in zip(tasks, row, strict=False) if o is not None
                },
            }
            for i, row in enumerate(offsets)
        ],
    }
    lags_doc = {
        "configs": configs,
        "stateful_tasks": tasks,
        "stateless_tasks": ["1_0"],
        "clients": [
            {
                "id": c["id"],
                "capacity": c["capacity"],
                "task_lags": {
                    task: _reference_lag(c["task_offset_sums"].get(task), end)
                    for task, end in zip(tasks, ends, strict=True)
                },
            }
            for c in native_doc["clients"]
        ],
    }
    assert assign(native_doc).to_json() == assign(lags_doc).to_json()


# -- the caught-up predicate --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lag", "acceptable", "caught_up"),
    [
        (LATEST_OFFSET, 0, True),  # a running active is always caught up
        (UNKNOWN_OFFSET_SUM, 100, False),  # unknown is never caught up...
        (UNKNOWN_OFFSET_SUM, LONG_MAX_VALUE, True),  # ...unless the lag bound is unbounded
        (UNKNOWN_OFFSET_SUM, LONG_MAX_VALUE - 1, False),
        (0, 0, True),
        (100, 100, True),
        (101, 100, False),
        (LONG_MAX_VALUE, LONG_MAX_VALUE, True),
        (LONG_MAX_VALUE, LONG_MAX_VALUE - 1, False),
        (LONG_MAX_VALUE - 1, LONG_MAX_VALUE - 1, True),
    ],
)
def test_caught_up_predicate(lag: int, acceptable: int, caught_up: bool):
    assert is_caught_up(lag, acceptable) is caught_up


def test_a_client_without_state_is_caught_up_when_the_whole_changelog_is_acceptable():
    document = native({}, {"0_1": 80})
    document["configs"] = {"acceptable_recovery_lag": 100}
    cluster = parse_cluster_state(document)
    assert cluster.is_caught_up(cluster.clients[0], t("0_1"))


def test_every_client_is_caught_up_when_the_lag_bound_is_unbounded():
    cluster = parse_cluster_state(
        {
            "configs": {"acceptable_recovery_lag": LONG_MAX_VALUE},
            "stateful_tasks": ["0_0"],
            "clients": [
                {"id": P1, "capacity": 1, "task_lags": {"0_0": UNKNOWN_OFFSET_SUM}},
                {"id": P2, "capacity": 1},
            ],
        }
    )
    state = AssignmentState(cluster)
    assert state.caught_up_clients(state.task_index[t("0_0")]) == [0, 1]


# -- the by-lag order ---------------------------------------------------------------------------


def test_by_lag_order_puts_unknown_before_running_active_before_zero():
    cluster = parse_cluster_state(
        {
            "stateful_tasks": ["0_0"],
            "clients": [
                {"id": P1, "capacity": 1, "task_lags": {"0_0": 0}},
                {"id": P2, "capacity": 1, "task_lags": {"0_0": LATEST_OFFSET}},
                {"id": P3, "capacity": 1, "task_lags": {"0_0": UNKNOWN_OFFSET_SUM}},
            ],
        }
    )
    state = AssignmentState(cluster)
    assert list(state.clients_by_lag(0)) == [2, 1, 0]


def test_by_lag_order_breaks_ties_by_process_id_in_java_order():
    high = "f0000000-0000-0000-0000-000000000000"
    cluster = parse_cluster_state(
        {
            "stateful_tasks": ["0_0"],
            "clients": [
                {"id": P2, "capacity": 1, "task_lags": {"0_0": 5}},
                {"id": P1, "capacity": 1, "task_lags": {"0_0": 5}},
                {"id": high, "capacity": 1, "task_lags": {"0_0": 5}},
            ],
        }
    )
    state = AssignmentState(cluster)
    assert [state.client_ids[c] for c in state.clients_by_lag(0)] == [high, P1, P2]


_lag_values = st.one_of(
    st.none(),
    st.sampled_from([LATEST_OFFSET, UNKNOWN_OFFSET_SUM, LONG_MAX_VALUE]),
    st.integers(0, 200),
)


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(st.lists(_lag_values, min_size=3, max_size=3), min_size=1, max_size=7),
    ids=st.lists(st.uuids(), min_size=7, max_size=7, unique=True),
    end_offsets=st.one_of(st.none(), st.lists(st.integers(0, 200), min_size=3, max_size=3)),
    acceptable=st.sampled_from([0, 10, 100, LONG_MAX_VALUE]),
)
def test_caught_up_sets_and_by_lag_orders_match_a_full_sort(rows, ids, end_offsets, acceptable):
    tasks = ["0_0", "0_1", "0_2"]
    document: dict[str, Any] = {
        "configs": {"acceptable_recovery_lag": acceptable},
        "stateful_tasks": tasks,
        "stateless_tasks": ["1_0"],
        "clients": [
            {
                "id": str(ids[i]),
                "capacity": 1,
                "task_lags": {task: v for task, v in zip(tasks, row, strict=True) if v is not None},
            }
            for i, row in enumerate(rows)
        ],
    }
    if end_offsets is not None:
        document["changelog_end_offset_sums"] = dict(zip(tasks, end_offsets, strict=True))
    cluster = parse_cluster_state(document)
    state = AssignmentState(cluster)
    order = sorted(cluster.clients, key=lambda c: process_id_sort_key(c.id))
    for task in cluster.stateful_tasks:
        index = state.task_index[task]
        by_lag = sorted(
            range(len(order)), key=lambda i, task=task: (cluster.lag(order[i], task), i)
        )
        caught_up = [i for i, c in enumerate(order) if cluster.is_caught_up(c, task)]
        assert list(state.clients_by_lag(index)) == by_lag
        assert state.caught_up_clients(index) == caught_up
