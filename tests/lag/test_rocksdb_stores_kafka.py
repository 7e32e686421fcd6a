"""The Kafka Streams 4.3 reader on state directories written by a real Kafka Streams 4.3 app.

The project's ``OrdersApp`` (``devtools.kafka.streams_app``) runs on kafka-streams and
kafka-clients 4.3.1 (``.kafka/lib-next``) against the session's 4.2.1 broker: two instances,
one stream thread each, ``num.standby.replicas=1``, so every stateful task has a store on both.
After both closed cleanly, the state directories must hold no ``.checkpoint`` (KIP-1035) and
``streams-lag collect``'s offsets must equal the changelog end offsets and the positions the
instances reported (``KafkaStreams#allLocalStorePartitionLags``). Then both restart on those
state directories: at start-up Kafka Streams 4.3 reads its stores
(``StateDirectory#initializeStartupStores``) and reports per task the offset sum the group
leader logs in ``ClientState#toString`` (``changelogOffsetTotalsByTask``); the collected rows
must sum to exactly those numbers.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools.kafka.e2e import CONSUMER_GROUPS, parse_decision, wait_caught_up
from devtools.kafka.streams_app import (
    INPUT_PARTITIONS,
    STORES,
    StreamsCluster,
    app_classpath_next,
)
from lag.cli import main as lag_main
from lag.sources.checkpoints import CollectResult, collect_state_dirs
from lag.sources.rocksdb_stores import OFFSETS_COLUMN_FAMILY, ROCKSDB_DIR

pytestmark = pytest.mark.kafka

APP_ID = "lag43"
RECORDS = 300


_CLIENT_SUMS = re.compile(
    r"([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})=\[activeTasks: .*?"
    r"changelogOffsetTotalsByTask: \(\[([^\]]*)\]\)"
)


def _reported_sums(cluster: StreamsCluster, after_ms: float) -> list[dict[str, dict[str, int]]]:
    """Per decision the group leader logged since ``after_ms`` (epoch ms): process id -> task
    -> reported offset sum."""
    decisions = []
    for instance in cluster.instances:
        for line in instance.log_lines("Decided on assignment"):
            logged = parse_decision(line)
            if logged is None or logged.time_ms < after_ms:
                continue
            decision = {}
            for process_id, sums in _CLIENT_SUMS.findall(line):
                pairs = (entry.split("=") for entry in sums.split(", ") if entry)
                decision[process_id] = {task: int(total) for task, total in pairs}
            decisions.append(decision)
    return decisions


def _group_empty(cluster: StreamsCluster) -> bool:
    """``kafka-consumer-groups.sh --describe --members`` says the group has no member."""
    out = cluster.broker.run_tool(
        CONSUMER_GROUPS,
        "--bootstrap-server",
        cluster.broker.bootstrap_servers,
        "--describe",
        "--group",
        APP_ID,
        "--members",
        check=False,
    )
    return "has no active members" in out.stdout + out.stderr


@dataclass
class Run43:
    """What the 4.3 run left: copies of the closed state directories and what Kafka said."""

    copies: list[Path]
    #: (changelog topic, partition) -> end offset, records, once every store caught up
    ends: dict[tuple[str, int], int]
    #: process id -> store -> partition -> (position, end), reported before the close
    positions: dict[str, dict[str, dict[int, tuple[int, int]]]]
    #: the leader's decisions after the restart: process id -> task -> reported offset sum
    reported: list[dict[str, dict[str, int]]]
    #: collect_state_dirs on the instances' folders while they ran
    live: CollectResult


@pytest.fixture(scope="module")
def state_43(kafka_broker):  # type: ignore[no-untyped-def]
    """Run two 4.3 instances, read their folders live, close them, copy the folders."""
    work = Path(tempfile.mkdtemp(prefix="lag43-"))
    try:
        with StreamsCluster(
            kafka_broker, APP_ID, standbys=1, cp=app_classpath_next(), work_dir=work
        ) as cluster:
            cluster.create_input_topics()
            for _ in range(2):
                cluster.add_instance(threads=1)
            cluster.wait_stable(timeout=180, quiet_ms=2000)
            cluster.produce(RECORDS, customers=32)
            # every instance at the end of every changelog partition it holds, and those ends
            # are what kafka-get-offsets prints
            ends = {
                (key.rsplit(":", 1)[0], int(key.rsplit(":", 1)[1])): offset
                for key, offset in wait_caught_up(cluster).items()
            }
            positions = {i.process_id: i.positions() for i in cluster.instances}
            live = collect_state_dirs([str(i.state_dir) for i in cluster.instances], APP_ID)
            for instance in cluster.instances:
                instance.stop()
            copies = []
            for instance in cluster.instances:
                copy = work / f"copy-{instance.name}"
                shutil.copytree(instance.state_dir, copy)
                copies.append(copy)
            # Restart both on the same state: Kafka 4.3 reads its stores and reports the sums.
            # First let the closed members' sessions expire (close keeps them in the group), so
            # that no stale subscription is merged into a restarted process's offset sums.
            cluster.wait_until(
                lambda: _group_empty(cluster), 120, "the closed members to leave the group", 1.0
            )
            restart_ms = time.time() * 1000
            for instance in cluster.instances:
                instance.start()

            def restarted() -> bool:
                fresh = all(
                    (lines := i.records("assignment")) and lines[-1]["time_ms"] > restart_ms
                    for i in cluster.instances
                )
                return (
                    fresh and cluster.is_stable(2000) and bool(_reported_sums(cluster, restart_ms))
                )

            cluster.wait_until(restarted, 180, "a stable assignment after the restart")
            reported = _reported_sums(cluster, restart_ms)
            for instance in cluster.instances:
                instance.stop()
            yield Run43(copies, ends, positions, reported, live)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_kafka_streams_4_3_writes_no_checkpoint_for_its_rocksdb_stores(state_43) -> None:  # type: ignore[no-untyped-def]
    copies = state_43.copies
    for state_dir in copies:
        app_dir = state_dir / APP_ID
        stores = sorted(app_dir.glob(f"*/{ROCKSDB_DIR}/*"))
        assert len(stores) == len(STORES) * INPUT_PARTITIONS, stores
        checkpoints = sorted(p.name for p in app_dir.rglob(".checkpoint*"))
        assert checkpoints == [], f"Kafka Streams 4.3 wrote {checkpoints} in {app_dir}"
        from rocksdict import Rdict

        for store in stores:
            assert OFFSETS_COLUMN_FAMILY in Rdict.list_cf(str(store)), store


def test_the_reader_gives_the_changelog_end_offsets_and_the_reported_positions(
    state_43,  # type: ignore[no-untyped-def]
) -> None:
    copies, ends, positions = state_43.copies, state_43.ends, state_43.positions
    assert len(ends) == len(STORES) * INPUT_PARTITIONS
    held = sum(len(parts) for stores in positions.values() for parts in stores.values())
    assert held == 2 * len(ends)  # the active's store and the standby's
    assert all(offset > 0 for offset in ends.values()), ends
    result = collect_state_dirs([str(c) for c in copies], APP_ID, snapshot_time=1)
    assert result.errors == []
    assert sorted(result.processes.values()) == sorted(positions)
    for process_id, reported in positions.items():
        rows = [r for r in result.rows if r["process_id"] == process_id]
        got = {(r["topic"], r["partition"]): r["offset"] for r in rows}
        # every changelog partition, once per process (the active's and the standby's store)
        assert got == ends, process_id
        want = {
            (f"{APP_ID}-{store}-changelog", partition): current
            for store, parts in reported.items()
            for partition, (current, _) in parts.items()
        }
        assert got == want, process_id
        for row in rows:
            sub = "1" if "order-totals" in row["topic"] else "2"
            assert row["task_id"] == f"{sub}_{row['partition']}"
            assert "/rocksdb/" in row["source"] and row["line"] is None


def test_streams_lag_collect_writes_the_4_3_offsets(state_43, tmp_path) -> None:  # type: ignore[no-untyped-def]
    copies, ends = state_43.copies, state_43.ends
    out = tmp_path / "offsets.jsonl"
    status = lag_main(["collect", *map(str, copies), "--application-id", APP_ID, "-o", str(out)])
    assert status == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 * len(ends)
    assert {(r["topic"], r["partition"], r["offset"]) for r in rows} == {
        (t, p, o) for (t, p), o in ends.items()
    }


def test_the_collected_offsets_sum_to_what_kafka_4_3_reports_after_a_restart(state_43) -> None:  # type: ignore[no-untyped-def]
    copies, reported = state_43.copies, state_43.reported
    result = collect_state_dirs([str(c) for c in copies], APP_ID)
    sums: dict[str, dict[str, int]] = {}
    for row in result.rows:
        tasks = sums.setdefault(row["process_id"], {})
        tasks[row["task_id"]] = tasks.get(row["task_id"], 0) + row["offset"]
    stateful = {f"{sub}_{p}" for sub in (1, 2) for p in range(INPUT_PARTITIONS)}
    assert all(set(tasks) == stateful for tasks in sums.values()), sums
    # Every sum the leader saw is ours, or -2 (Task.LATEST_OFFSET: an active the process ran
    # by then) ...
    seen = 0
    for decision in reported:
        for process_id, tasks in decision.items():
            for task, total in tasks.items():
                assert total in (-2, sums[process_id][task]), (process_id, task, total)
                seen += total != -2
    # ... and each process reported every stateful task from its stores at least once (its
    # first join after the restart, owning nothing yet).
    for process_id in sums:
        assert any(
            set(d.get(process_id, {})) == stateful and -2 not in d[process_id].values()
            for d in reported
        ), (process_id, reported)
    assert seen >= 2 * len(stateful) and reported


def test_stores_a_running_4_3_instance_holds_open_are_error_rows_not_stale_offsets(
    state_43,  # type: ignore[no-untyped-def]
) -> None:
    live = state_43.live
    # while running, Kafka 4.3 keeps the committed offsets in memory (WAL off): the files hold
    # none yet, and reading them would say "offset sum 0" for caught-up stores
    assert live.rows == []
    assert len(live.errors) == 2 * len(state_43.ends)
    assert {e.reason.split(":")[0] for e in live.errors} == {"unreadable store"}
    assert all("open in a running instance" in e.reason for e in live.errors)
    assert all("/rocksdb/" in e.source for e in live.errors)
