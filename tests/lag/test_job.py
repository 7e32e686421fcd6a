"""The Spark lag job on small hand-checked fleets: Kafka's lag rules, sentinels, overflow pinning,
the errors table, the as-of join and the restore rates.

The hand-made application (conftest ``HAND_TOPOLOGY``, application id ``app``): sub-topology 0
reads ``in`` and owns store s1; sub-topology 1 reads ``other`` and owns s2 and s3 (two changelog
partitions per task); sub-topology 2 reads ``plain`` and is stateless. Two partitions each.
"""

from __future__ import annotations

from typing import Any

import pytest

from lag.job.job import LAG_PLAIN_COLUMNS, LagJob
from lag.job.layout import configs_json
from lag.job.restore import restore_table
from lag.outputs.tables import write_table
from lag.pipeline import ComputeRequest, build_job, prepare
from streams_assign.assignors import assign
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.model import AssignmentConfigs, TaskId, compute_task_lag

pytestmark = pytest.mark.spark

P1 = "11111111-1111-4111-8111-111111111111"
P2 = "22222222-2222-4222-8222-222222222222"
P3 = "33333333-3333-4333-8333-333333333333"
P4 = "44444444-4444-4444-8444-444444444444"
LONG_MAX = 9_223_372_036_854_775_807
BIG = 9_223_372_036_854_775_000


def run_job(
    files: Any,
    spark: Any,
    configs: dict[str, int] | None = None,
    end_rows: bool = False,
    persist: bool = True,
) -> LagJob:
    request = ComputeRequest(
        application_id="app",
        topology=str(files.topology),
        members=[str(files.members)],
        end_offsets=[str(files.end_rows if end_rows else files.end_offsets)],
        offsets=[str(files.offsets)],
        output=str(files.root / "cluster.json"),
        configs=configs or {},
        persist=persist,
    )
    topology, membership = prepare(request)
    return build_job(request, spark, topology, membership)


def lag_rows(job: LagJob) -> dict[tuple[Any, str, str], dict[str, Any]]:
    return {
        (r["snapshot_time"], r["process_id"], r["task_id"]): r.asDict() for r in job.lags.collect()
    }


# --- one moment: the rules -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def hand(
    tmp_path_factory: pytest.TempPathFactory, spark: Any, fleet_factory: Any, offset_row: Any
) -> dict[str, Any]:
    """One run over a fleet that exercises every rule; returns the job's outputs."""
    files = fleet_factory(tmp_path_factory.mktemp("hand"))
    row = offset_row
    files.write_members(
        [
            (P1, 1, "in(0), plain(0)"),
            (P1, 2, "other(1)"),
            (P2, 1, "in(1), other(0), plain(1)"),
            (P3, 1, "-"),
        ]
    )
    files.write_end_offsets(
        [
            "app-s1-changelog:0:1000",
            "app-s1-changelog:1:500",
            "app-s2-changelog:0:300",
            f"app-s2-changelog:1:{BIG}",
            "app-s3-changelog:0:200",
            "app-s3-changelog:1:10000",
            "plain:0:77",
            "plain:1:88",
        ]
    )
    files.write_offsets(
        [
            row(P1, "s1", 0, 900, task="0_0"),
            row(P1, "s1", 1, 600, task="0_1"),  # beyond the end offset 500
            row(P1, "s2", 0, 100, task="1_0"),
            row(P1, "s3", 0, -4, task="1_0"),  # unknown: skipped in the sum
            row(P2, "s1", 0, 990),
            row(P2, "s2", 1, BIG),
            row(P2, "s3", 1, 5000),  # the sum overflows: pinned to Long.MAX_VALUE
            row(P2, "s2", 0, 250),
            row(P2, "s3", 0, 200),
            row(P3, None, None, None, task="0_1"),  # empty checkpoint: local state, sum 0
            row(P3, "s3", 1, -4, task="1_1"),
            row(P3, "s1", 0, -2, task="0_0"),  # an exporter saying "running active"
            row(P4, "s1", 0, 5),  # not a group member
            row(P1, "unknown", 0, 5),
            row(P2, "s1", 1, -7),
            row(P3, "s1", 1, 50, task="0_0"),
        ]
    )
    job = run_job(files, spark, configs={"num_standby_replicas": 1})
    document = job.cluster_state()
    return {
        "job": job,
        "document": document,
        "lags": lag_rows(job),
        "errors": job.error_summary(),
        "error_rows": [r.asDict() for r in job.errors().collect()],
        "non_members": job.non_member_processes(),
    }


def client(document: dict[str, Any], process_id: str) -> dict[str, Any]:
    return next(c for c in document["clients"] if c["id"] == process_id)


def test_task_lists_follow_stores_and_kafka_task_order(hand: dict[str, Any]) -> None:
    document = hand["document"]
    assert document["stateful_tasks"] == ["0_0", "0_1", "1_0", "1_1"]
    assert document["stateless_tasks"] == ["2_0", "2_1"]
    assert [c["id"] for c in document["clients"]] == [P1, P2, P3]
    assert document["configs"]["num_standby_replicas"] == 1


def test_running_active_reports_minus_two_and_others_end_minus_offset_sum(
    hand: dict[str, Any],
) -> None:
    p1 = client(hand["document"], P1)
    # 0_0 and 1_1 run on P1: -2; 1_0: 300 + 200 - (100 + skipped -4) = 400; 0_1: 600 > 500 -> 500.
    assert p1["task_lags"] == {"0_0": -2, "0_1": 500, "1_0": 400, "1_1": -2}
    assert p1["capacity"] == 2
    assert p1["prev_active"] == ["0_0", "1_1", "2_0"]
    assert p1["prev_standby"] == ["0_1", "1_0"]


def test_overflowing_sums_are_pinned_to_long_max(hand: dict[str, Any]) -> None:
    p2 = client(hand["document"], P2)
    # Offset sum BIG + 5000 and end sum BIG + 10000 both pin to Long.MAX_VALUE: lag 0.
    assert p2["task_lags"] == {"0_0": 10, "0_1": -2, "1_0": -2, "1_1": 0}
    assert hand["document"]["changelog_end_offset_sums"]["1_1"] == LONG_MAX
    assert hand["lags"][(None, P2, "1_1")]["offset_sum"] == LONG_MAX


def test_empty_checkpoint_and_unknown_offsets_sum_to_zero(hand: dict[str, Any]) -> None:
    p3 = client(hand["document"], P3)
    assert p3["task_lags"] == {"0_0": -2, "0_1": 500, "1_1": LONG_MAX}
    assert p3["prev_active"] == ["0_0"]  # offset sum -2 makes it previous active, as Kafka does
    assert p3["prev_standby"] == ["0_1", "1_1"]
    assert p3["capacity"] == 1


def test_tasks_without_local_state_are_absent_from_task_lags(hand: dict[str, Any]) -> None:
    assert "1_0" not in client(hand["document"], P3)["task_lags"]
    assert hand["non_members"] == [P4]
    assert P4 not in [c["id"] for c in hand["document"]["clients"]]


def test_lag_table_applies_kafka_rules_to_the_checkpointed_sums(hand: dict[str, Any]) -> None:
    lags = hand["lags"]
    assert len(lags) == 10
    assert (lags[(None, P1, "0_0")]["offset_sum"], lags[(None, P1, "0_0")]["lag"]) == (900, 100)
    beyond = lags[(None, P1, "0_1")]
    assert (beyond["lag"], beyond["records_behind"]) == (500, 0)
    assert lags[(None, P2, "1_0")]["lag"] == 50
    assert lags[(None, P2, "1_0")]["changelog_partitions"] == 2
    assert (lags[(None, P3, "0_0")]["offset_sum"], lags[(None, P3, "0_0")]["lag"]) == (-2, -2)
    assert lags[(None, P3, "0_1")]["changelog_partitions"] == 0
    assert lags[(None, P2, "1_1")]["end_offset_sum"] == LONG_MAX


def test_bad_rows_go_to_the_errors_table_with_their_reason(hand: dict[str, Any]) -> None:
    assert hand["errors"] == {"invalid offset": 1, "task mismatch": 1, "unknown changelog topic": 1}
    by_reason = {r["reason"].split(":")[0]: r for r in hand["error_rows"]}
    assert '"offset":-7' in by_reason["invalid offset"]["raw"]
    assert by_reason["task mismatch"]["reason"].endswith("belongs to task 0_1, row says 0_0")
    assert by_reason["unknown changelog topic"]["source"].endswith("offsets.jsonl")


def test_cluster_state_is_valid_for_the_core(hand: dict[str, Any]) -> None:
    state = parse_cluster_state(hand["document"])
    assert [c.id for c in state.clients] == [P1, P2, P3]


#: What each member's subscription carries in the hand fleet (``TaskManager.getTaskOffsetSums``):
#: -2 for running actives, the checkpointed sums (-4 skipped, overflow pinned) for the rest.
HAND_OFFSET_SUMS = {
    P1: {"0_0": -2, "0_1": 600, "1_0": 100, "1_1": -2},
    P2: {"0_0": 990, "0_1": -2, "1_0": -2, "1_1": LONG_MAX},
    P3: {"0_0": -2, "0_1": 0, "1_1": 0},
}
HAND_END_OFFSET_SUMS = {"0_0": 1000, "0_1": 500, "1_0": 500, "1_1": LONG_MAX}


def kafka_leader_lags(offset_sums: dict[str, int], ends: dict[str, int]) -> dict[str, int]:
    """``ClientState.computeTaskLags``: every task with an end offset sum gets a lag, a task
    the client reported no offset sum for counts as offset sum 0 (``getOrDefault(task, 0L)``)."""
    return {task: compute_task_lag(offset_sums.get(task, 0), end) for task, end in ends.items()}


def test_the_cluster_state_carries_the_end_offset_sums_kafkas_leader_uses(
    hand: dict[str, Any],
) -> None:
    document = hand["document"]
    assert document["changelog_end_offset_sums"] == HAND_END_OFFSET_SUMS
    assert "task_offset_sums" not in str(document)  # one form
    state = parse_cluster_state(document)
    for process_id, sums in HAND_OFFSET_SUMS.items():
        expected = kafka_leader_lags(sums, HAND_END_OFFSET_SUMS)
        got = {str(t): state.lag(state.client(process_id), t) for t in state.stateful_tasks}
        assert got == expected, process_id
    # P3 has no state for 1_0: Kafka's leader gives it the end offset sum, not Long.MAX_VALUE
    assert state.lag(state.client(P3), TaskId.parse("1_0")) == 500


def test_the_leaders_own_numbers_give_the_same_lags_in_the_core(hand: dict[str, Any]) -> None:
    native = dict(hand["document"])
    native["clients"] = [
        {k: v for k, v in c.items() if k != "task_lags"}
        | {"task_offset_sums": HAND_OFFSET_SUMS[c["id"]]}
        for c in hand["document"]["clients"]
    ]
    from_lags = parse_cluster_state(hand["document"])
    from_sums = parse_cluster_state(native)
    for a, b in zip(from_lags.clients, from_sums.clients, strict=True):
        assert dict(a.task_lags) == dict(b.task_lags)
        for task in from_lags.stateful_tasks:
            assert from_lags.lag(a, task) == from_sums.lag(b, task)


def test_a_client_without_state_is_assigned_as_kafkas_leader_assigns_it(
    fleet_files: Any, spark: Any, offset_row: Any
) -> None:
    """P1 runs every task; P2 has a little state for 0_0; P3 none. The changelogs are short
    (100-300 records, below acceptable.recovery.lag), so for Kafka's leader both are caught
    up on every task (lag = end offset sum) and the HA assignor moves actives at once."""
    row = offset_row
    fleet_files.write_members(
        [
            (P1, 1, "in(0), in(1), other(0), plain(0)"),
            (P1, 2, "other(1), plain(1)"),
            (P2, 1, "-"),
            (P2, 2, "-"),
            (P3, 1, "-"),
            (P3, 2, "-"),
        ]
    )
    fleet_files.write_end_offsets(
        [
            "app-s1-changelog:0:100",
            "app-s1-changelog:1:100",
            "app-s2-changelog:0:100",
            "app-s2-changelog:1:100",
            "app-s3-changelog:0:200",
            "app-s3-changelog:1:200",
            "plain:0:5",
            "plain:1:5",
        ]
    )
    fleet_files.write_offsets(
        [
            row(P1, "s1", 0, 90),
            row(P1, "s1", 1, 90),
            row(P1, "s2", 0, 90),
            row(P1, "s3", 0, 190),
            row(P1, "s2", 1, 90),
            row(P1, "s3", 1, 190),
            row(P2, "s1", 0, 39),
        ]
    )
    ends = {"0_0": 100, "0_1": 100, "1_0": 300, "1_1": 300}
    document = run_job(fleet_files, spark, configs={"num_standby_replicas": 1}).cluster_state()

    # what the members' subscriptions carry and what the leader fetches
    leader_input = dict(document)
    leader_input["clients"] = [
        {k: v for k, v in c.items() if k != "task_lags"}
        | {
            "task_offset_sums": {
                P1: {t: -2 for t in ends},
                P2: {"0_0": 39},
                P3: {},
            }[c["id"]]
        }
        for c in document["clients"]
    ]
    assert document["changelog_end_offset_sums"] == ends
    state = parse_cluster_state(document)
    assert {str(t): state.lag(state.client(P3), t) for t in state.stateful_tasks} == ends
    assert state.lag(state.client(P2), TaskId.parse("0_0")) == 61
    assert state.lag(state.client(P2), TaskId.parse("1_1")) == 300

    leader = assign(leader_input, assignor="high_availability").to_json()
    assert assign(document, assignor="high_availability").to_json() == leader
    assert not leader["probing_rebalance_needed"]
    assert leader["clients"][P3]["active"] != ["2_1"]  # P3 got stateful actives at once
    # The form without end offset sums (task_lags alone, Long.MAX_VALUE without state) decides
    # otherwise on this fleet: every stateful active stays on P1, warmups and a probing rebalance.
    lags_only = {k: v for k, v in document.items() if k != "changelog_end_offset_sums"}
    before = assign(lags_only, assignor="high_availability").to_json()
    assert before != leader and before["probing_rebalance_needed"]
    assert before["clients"][P1]["active"] == ["0_0", "0_1", "1_0", "1_1"]


# --- histories: as-of join, incomplete end offsets, --at -----------------------------------------


@pytest.fixture(scope="module")
def history(
    tmp_path_factory: pytest.TempPathFactory, spark: Any, fleet_factory: Any, offset_row: Any
) -> dict[str, Any]:
    files = fleet_factory(tmp_path_factory.mktemp("history"))
    files.write_members([(P1, 1, "in(0,1), other(0,1), plain(0,1)"), (P2, 1, "-")])
    end = []
    for t, s1_0 in ((1000, 100), (2000, 200), (3000, 300)):
        end += [
            {"topic": "app-s1-changelog", "partition": 0, "offset": s1_0, "snapshot_time": t},
            {"topic": "app-s1-changelog", "partition": 1, "offset": t // 100, "snapshot_time": t},
            {
                "topic": "app-s2-changelog",
                "partition": 0,
                "offset": 20 * t // 1000 + 20,
                "snapshot_time": t,
            },
            {"topic": "app-s2-changelog", "partition": 1, "offset": 1, "snapshot_time": t},
            {"topic": "app-s3-changelog", "partition": 1, "offset": 1, "snapshot_time": t},
        ]
        if t != 2000:  # s3-0 missing at 2000: task 1_0 is incomplete then
            end.append(
                {
                    "topic": "app-s3-changelog",
                    "partition": 0,
                    "offset": 2 * t // 1000 + 2,
                    "snapshot_time": t,
                }
            )
    files.write_end_rows(end)
    files.write_offsets(
        [
            offset_row(P2, "s1", 0, 50, t=999),
            offset_row(P2, "s1", 0, 60, t=1000),
            offset_row(P2, "s1", 0, 150, t=2500),
            offset_row(P2, "s2", 0, 30, t=2500),
            offset_row(P2, "s3", 0, 3, t=2500),
            offset_row(P2, "s1", 0, 290, t=5000),
        ]
    )
    job = run_job(files, spark, end_rows=True)
    unpersisted = run_job(files, spark, end_rows=True, persist=False)
    return {
        "lags": lag_rows(job),
        "unpersisted": lag_rows(unpersisted),
        "unpersisted_latest": unpersisted.cluster_state(),
        "latest": job.cluster_state(),
        "moment": job.state_moment(),
        "at_2000": job.cluster_state(at=2000),
        "errors": job.error_summary(),
    }


def test_as_of_join_takes_the_same_or_latest_earlier_end_offsets(history: dict[str, Any]) -> None:
    lags = history["lags"]
    picked = {
        t: (lags[(t, P2, "0_0")]["end_offset_time"], lags[(t, P2, "0_0")]["lag"])
        for t in (999, 1000, 2500, 5000)
    }
    assert picked == {999: (None, None), 1000: (1000, 40), 2500: (2000, 50), 5000: (3000, 10)}


def test_job_without_cache_gives_the_same_lags(
    history: dict[str, Any],
) -> None:
    assert len(history["lags"]) == 5
    assert history["unpersisted"] == history["lags"]
    assert history["unpersisted_latest"] == history["latest"]


def test_incomplete_end_offsets_are_skipped_for_the_earlier_complete_ones(
    history: dict[str, Any],
) -> None:
    row = history["lags"][(2500, P2, "1_0")]
    # At 2000 only s2-0 is known (60), so 1000's complete sum 40 + 4 = 44 is used: lag 44 - 33.
    assert (row["end_offset_time"], row["end_offset_sum"], row["lag"]) == (1000, 44, 11)
    assert history["errors"] == {"incomplete end offsets": 1}


def test_cluster_state_pairs_latest_end_offsets_with_snapshots_taken_before_them(
    history: dict[str, Any],
) -> None:
    assert history["moment"] == 3000
    # P2's snapshot at 5000 is after the latest end offsets (3000): its 2500 snapshot is used.
    assert client(history["latest"], P2)["task_lags"] == {"0_0": 300 - 150, "1_0": 80 + 8 - 33}
    assert client(history["at_2000"], P2)["task_lags"] == {"0_0": 200 - 60}


# --- restore table -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def restore(
    tmp_path_factory: pytest.TempPathFactory, spark: Any, fleet_factory: Any, offset_row: Any
) -> dict[str, Any]:
    files = fleet_factory(tmp_path_factory.mktemp("restore"))
    files.write_members([(P1, 1, "in(0,1), other(0,1), plain(0,1)"), (P2, 1, "-"), (P3, 1, "-")])
    files.write_end_rows(
        [
            {"topic": f"app-{s}-changelog", "partition": p, "offset": 100_000, "snapshot_time": 0}
            for s in ("s1", "s2", "s3")
            for p in (0, 1)
        ]
    )
    rows = []
    for t, restoring, caught_up in (
        (0, 10_000, 99_500),
        (10_000, 40_000, 99_800),
        (20_000, 50_000, 99_900),
    ):
        rows += [
            offset_row(P2, "s1", 0, restoring, t=t),
            offset_row(P2, "s1", 1, caught_up, t=t),
            offset_row(P3, "s1", 0, 20_000, t=t),
        ]
    files.write_offsets(rows)
    job = run_job(files, spark, configs={"acceptable_recovery_lag": 1000}, end_rows=True)
    window2 = {(r["process_id"], r["task_id"]): r.asDict() for r in job.restore.collect()}
    window3 = {
        (r["process_id"], r["task_id"]): r.asDict()
        for r in restore_table(job.snapshots, job.process_keys, 1000, 3).collect()
    }
    return {"w2": window2, "w3": window3}


def test_catch_up_rate_and_eta_from_the_last_two_snapshots(restore: dict[str, Any]) -> None:
    row = restore["w2"][(P2, "0_0")]
    assert row["records_behind"] == row["lag"] == 50_000
    assert (
        row["snapshots"],
        row["first_snapshot_time"],
        row["rate_from_time"],
        row["snapshot_time"],
    ) == (3, 0, 10_000, 20_000)
    assert row["catch_up_rate"] == pytest.approx(1000.0)  # (60 000 - 50 000) records / 10 s
    assert row["restore_rate"] == pytest.approx(1000.0)
    assert row["eta_ms"] == 49_000  # (50 000 - 1000) records at 1000 records/s
    assert row["caught_up_at"] == 69_000
    assert row["caught_up"] is False


def test_a_wider_rate_window_spans_more_snapshots(restore: dict[str, Any]) -> None:
    row = restore["w3"][(P2, "0_0")]
    assert row["catch_up_rate"] == pytest.approx(2000.0)  # (90 000 - 50 000) records / 20 s
    assert row["eta_ms"] == 24_500


def test_caught_up_replica_has_eta_zero_and_a_stalled_one_none(restore: dict[str, Any]) -> None:
    done = restore["w2"][(P2, "0_1")]
    assert (done["records_behind"], done["caught_up"], done["eta_ms"], done["caught_up_at"]) == (
        100,
        True,
        0,
        20_000,
    )
    stalled = restore["w2"][(P3, "0_0")]
    assert (stalled["catch_up_rate"], stalled["caught_up"], stalled["eta_ms"]) == (0.0, False, None)


def test_configs_outside_kafka_ranges_are_refused() -> None:
    with pytest.raises(ValueError, match="max_warmup_replicas"):
        AssignmentConfigs(max_warmup_replicas=0)
    with pytest.raises(ValueError, match="probing_rebalance_interval_ms"):
        AssignmentConfigs(probing_rebalance_interval_ms=59_999)
    configs = configs_json(AssignmentConfigs(acceptable_recovery_lag=LONG_MAX))
    assert configs["acceptable_recovery_lag"] == LONG_MAX


def test_lag_table_writes_times_and_offsets_without_dictionaries(
    tmp_path: Any, spark: Any, fleet_factory: Any, offset_row: Any
) -> None:
    import pyarrow.parquet as pq

    files = fleet_factory(tmp_path)
    files.write_members([(P1, 1, "in(0,1), other(0,1), plain(0,1)"), (P2, 1, "-")])
    files.write_end_rows(
        [
            {"topic": f"app-{s}-changelog", "partition": p, "offset": 1000 + t, "snapshot_time": t}
            for s in ("s1", "s2", "s3")
            for p in (0, 1)
            for t in (0, 10, 20)
        ]
    )
    files.write_offsets([offset_row(P2, "s1", p, 10 * t + p, t=t) for p in (0, 1) for t in (5, 15)])
    job = run_job(files, spark, end_rows=True)
    target = tmp_path / "lags.parquet"
    write_table(job.lags.coalesce(1), f"{target}/", plain_columns=LAG_PLAIN_COLUMNS)
    (part,) = sorted(target.glob("*.parquet"))
    chunks = {
        chunk.path_in_schema: chunk.has_dictionary_page
        for chunk in (pq.ParquetFile(part).metadata.row_group(0).column(i) for i in range(11))
    }
    assert {c for c, dictionary in chunks.items() if not dictionary} == set(LAG_PLAIN_COLUMNS)
    assert sorted(pq.read_table(part).to_pylist(), key=str) == sorted(
        (r.asDict() for r in job.lags.collect()), key=str
    )
