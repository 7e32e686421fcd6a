"""The snapshot builder's rules without a cluster: which source wins per (process, task), the
running actives, capacities and tags, the changelog mapping, and its one-line errors."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from lag.job.snapshot import build_snapshot
from lag.sources.live_cluster import LiveGroup
from lag.sources.metrics import MetricsDump, RestoreLag
from lag.sources.streams_group_state import StreamsMember
from streams_assign.errors import LagInputError
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.formats.streams_user_data import StreamsAssignmentInfo, StreamsSubscription
from streams_assign.model import AssignmentConfigs, TaskId

APP = "shop"
P1 = "11111111-1111-1111-1111-111111111111"
P2 = "22222222-2222-2222-2222-222222222222"
NOW = 1_800_000_000_000
#: changelog of store ``totals`` (sub-topology 1), 2 partitions.
ENDS = {(f"{APP}-totals-changelog", 0): 1000, (f"{APP}-totals-changelog", 1): 500}


def _member(
    pid: str, thread: int, active: list[str], standby: list[str], sums: dict[str, int],
    tags: dict[str, str] | None = None, assigned: bool = True,
) -> StreamsMember:  # fmt: skip
    subscription = StreamsSubscription(
        version=11,
        latest_supported_version=11,
        process_id=uuid.UUID(pid),
        task_offset_sums={TaskId.parse(t): s for t, s in sums.items()},
        previous_active=frozenset(),
        previous_standby=frozenset(),
        user_endpoint=None,
        unique_field=0,
        error_code=0,
        client_tags=tags or {},
    )
    assignment = StreamsAssignmentInfo(
        version=11,
        commonly_supported_version=11,
        active_tasks=tuple(TaskId.parse(t) for t in active),
        standby_tasks={TaskId.parse(t): frozenset() for t in standby},
        partitions_by_host={},
        standby_partitions_by_host={},
        error_code=0,
        next_rebalance_ms=0,
    )
    client = f"{APP}-{pid}-StreamThread-{thread}-consumer"
    return StreamsMember(
        f"{client}-m", client, "/127.0.0.1", None, ("in",), subscription,
        assignment if assigned else None, (),
    )  # fmt: skip


def _live(*members: StreamsMember) -> LiveGroup:
    return LiveGroup(APP, list(members), dict(ENDS), NOW, "broker:9092")


def _group() -> LiveGroup:
    """P1 runs 1_0 and 0_0 (two threads); P2 runs 1_1 and keeps a standby of 1_0 (sum 400 at
    the last rebalance)."""
    return _live(
        _member(P1, 1, ["1_0"], [], {"1_0": -2}, {"zone": "a"}),
        _member(P1, 2, ["0_0"], [], {}, {"zone": "a"}),
        _member(P2, 1, ["1_1", "0_1"], ["1_0"], {"1_1": -2, "1_0": 400}, {"zone": "b"}),
    )


def _dump(lag: int, time_ms: int, seconds_ago: float | None = None) -> MetricsDump:
    dump = MetricsDump("scrape-p2.txt", time_ms)
    dump.restore_lags.append(
        RestoreLag(f"{APP}-{P2}-StateUpdater-1-restore-consumer", f"{APP}-totals-changelog", 0, lag)
    )
    dump.store_tasks["totals"] = {"1_0", "1_1"}
    if seconds_ago is not None:
        dump.last_rebalance_s[f"{APP}-{P2}-StreamThread-1-consumer"] = seconds_ago
    return dump


def _checkpoint(tmp_path: Path, offset: int, mtime_ms: int) -> list[dict[str, Any]]:
    path = tmp_path / "1_0" / ".checkpoint"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("0\n1\n")
    os.utime(path, (mtime_ms / 1000, mtime_ms / 1000))
    return [
        {"process_id": P2, "task_id": "1_0", "topic": f"{APP}-totals-changelog",
         "partition": 0, "offset": offset, "source": str(path), "line": 3}
    ]  # fmt: skip


def _row(snapshot: Any, pid: str, task: str) -> Any:
    return next(r for r in snapshot.provenance if (r.process_id, r.task) == (pid, task))


def test_the_document_is_the_groups_state() -> None:
    snap = build_snapshot(_group(), AssignmentConfigs(), dumps=[_dump(100, NOW)])
    doc = snap.document
    parse_cluster_state(doc)
    assert doc["stateful_tasks"] == ["1_0", "1_1"]
    assert doc["stateless_tasks"] == ["0_0", "0_1"]
    assert doc["changelog_end_offset_sums"] == {"1_0": 1000, "1_1": 500}
    p1, p2 = doc["clients"]
    assert (p1["id"], p1["capacity"], p1["tags"]) == (P1, 2, {"zone": "a"})
    assert p1["prev_active"] == ["0_0", "1_0"] and p1["task_lags"] == {"1_0": -2}
    assert (p2["capacity"], p2["prev_active"], p2["prev_standby"]) == (1, ["0_1", "1_1"], ["1_0"])


def test_metrics_newer_than_the_rebalance_win() -> None:
    snap = build_snapshot(_group(), AssignmentConfigs(), dumps=[_dump(100, NOW, 30.0)])
    row = _row(snap, P2, "1_0")
    assert (row.source, row.offset_sum, row.lag, row.as_of_ms) == ("metrics", 900, 100, NOW)
    assert snap.document["clients"][1]["task_lags"]["1_0"] == 100
    assert "metrics 1 (0-0 s old)" in snap.document["description"]


def test_a_checkpoint_newer_than_the_scrape_wins(tmp_path: Path) -> None:
    rows = _checkpoint(tmp_path, 950, NOW + 5_000)
    snap = build_snapshot(
        _group(), AssignmentConfigs(), dumps=[_dump(100, NOW)], checkpoint_rows=rows
    )
    row = _row(snap, P2, "1_0")
    assert (row.source, row.offset_sum, row.lag) == ("state-dir", 950, 50)


def test_the_groups_sum_wins_over_an_older_checkpoint(tmp_path: Path) -> None:
    # The scrape says P2's threads rebalanced 10 s before it; the checkpoint is 60 s old.
    rows = _checkpoint(tmp_path, 100, NOW - 60_000)
    dump = _dump(0, NOW, 10.0)
    dump.restore_lags.clear()
    snap = build_snapshot(_group(), AssignmentConfigs(), dumps=[dump], checkpoint_rows=rows)
    row = _row(snap, P2, "1_0")
    assert (row.source, row.offset_sum, row.as_of_ms) == ("group", 400, NOW - 10_000)


def test_without_metrics_the_group_sum_is_of_unknown_age_and_loses(tmp_path: Path) -> None:
    rows = _checkpoint(tmp_path, 100, NOW - 600_000)
    snap = build_snapshot(_group(), AssignmentConfigs(), checkpoint_rows=rows)
    assert _row(snap, P2, "1_0").source == "state-dir"
    names_only = _dump(0, NOW)  # stream-state-metrics only: no lag, no rebalance age
    names_only.restore_lags.clear()
    alone = build_snapshot(_group(), AssignmentConfigs(), dumps=[names_only])
    row = _row(alone, P2, "1_0")
    assert (row.source, row.as_of_ms) == ("group", None)
    assert "group 1 (age unknown (last rebalance))" in alone.document["description"]


def test_a_running_active_is_minus_two_whatever_the_metrics_say() -> None:
    dump = _dump(0, NOW)
    dump.restore_lags.append(
        RestoreLag(f"{APP}-{P2}-StateUpdater-1-restore-consumer", f"{APP}-totals-changelog", 1, 7)
    )
    snap = build_snapshot(_group(), AssignmentConfigs(), dumps=[dump])
    row = _row(snap, P2, "1_1")
    assert (row.source, row.offset_sum, row.lag) == ("group (running active)", -2, -2)


def test_a_restore_consumer_is_matched_by_its_client_id_prefix() -> None:
    """With ``client.id`` set, no process id is in the client ids: the prefix of the group
    members' client ids places the restore consumer."""
    group = _group()
    for member in group.members:
        if str(member.subscription.process_id) == P2:
            object.__setattr__(member, "client_id", "custom-StreamThread-1-consumer")
    dump = _dump(100, NOW)
    dump.restore_lags[0] = RestoreLag(
        "custom-StateUpdater-1-restore-consumer", f"{APP}-totals-changelog", 0, 100
    )
    snap = build_snapshot(group, AssignmentConfigs(), dumps=[dump])
    assert _row(snap, P2, "1_0").source == "metrics"


def test_a_task_missing_one_changelog_partition_in_the_metrics_is_not_read_from_them() -> None:
    group = _group()
    group.end_offsets[(f"{APP}-counts-changelog", 0)] = 10
    dump = _dump(100, NOW)
    dump.store_tasks["counts"] = {"1_0"}
    snap = build_snapshot(group, AssignmentConfigs(), dumps=[dump])
    assert _row(snap, P2, "1_0").source == "group"
    assert snap.document["changelog_end_offset_sums"]["1_0"] == 1010


def test_a_changelog_no_source_places_is_an_error() -> None:
    with pytest.raises(LagInputError, match=r"shop-totals-changelog.*--topology"):
        build_snapshot(_group(), AssignmentConfigs())  # no metrics, no checkpoints


def test_a_rebalancing_group_is_an_error() -> None:
    group = _live(_member(P1, 1, ["1_0"], [], {}, assigned=False))
    with pytest.raises(LagInputError, match="rebalancing"):
        build_snapshot(group, AssignmentConfigs(), dumps=[_dump(0, NOW)])


def test_config_notes_keep_the_defaults_and_drop_the_tags_caveat(tmp_path: Path) -> None:
    from lag.job.snapshot import config_notes
    from lag.sources.streams_config import resolve_configs

    properties = tmp_path / "app.properties"
    properties.write_text("num.standby.replicas=1\nclient.tag.zone=a\n")
    resolved = resolve_configs({}, str(properties))
    notes = config_notes(resolved)
    assert "acceptable.recovery.lag = 10000 (Kafka's default; not given)" in notes
    assert not any("num.standby.replicas" in n for n in notes)
    assert not any("client.tag" in n for n in notes)
    assert any("client.tag" in n for n in resolved.notes())
