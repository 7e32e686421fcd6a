"""Acceptance of the task runtime on the real broker: kill -9 of one of 3 processes, then a
new one joins.

``examples/counts_app.py`` (a per-key count on :mod:`streams_assign.clients.runtime`, aiokafka,
2 consumers per process, 1 standby, ``lag_aware_sticky``) counts 12 input partitions while a
background producer runs; one process is killed with ``kill -9``, then a new process joins
(warmups, probing rebalances every 2 s, moves) while records keep coming. Every changelog record
names
its writer and the input record it came from (``writer`` and ``source`` headers), so the run
is checked against the input record by record: nothing lost, state carried across the move,
and double counts only inside the at-least-once window (the records the killed process handled
after its last commit). The figures (records restored, seconds until serving) are printed;
``benchmarks/clients_runtime.py`` runs this module bigger.
"""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest

pytestmark = pytest.mark.kafka

PARTITIONS = 12
RECORDS = int(os.environ.get("STREAMS_ASSIGN_RUNTIME_RECORDS", "2400"))
TRICKLE = int(os.environ.get("STREAMS_ASSIGN_RUNTIME_TRICKLE", "24"))
#: The app: ``counts_app.py`` (aiokafka) or ``counts_app_sync.py`` (kafka-python, 10 s sessions
#: as in ``test_real_broker.py``); ``benchmarks/clients_runtime.py --app`` picks it.
APP = os.environ.get("STREAMS_ASSIGN_RUNTIME_APP", "counts_app.py")
ACCEPTABLE_RECOVERY_LAG = 50
ARGS = [
    "--num-standby-replicas",
    "1",
    "--acceptable-recovery-lag",
    str(ACCEPTABLE_RECOVERY_LAG),
    "--session-timeout-ms",
    "10000" if APP == "counts_app_sync.py" else "3000",
    "--streams-assignor",
    "lag_aware_sticky",
    "--probing-interval-ms",
    "2000",
    "--max-warmup-replicas",
    "2",
]


@dataclass(frozen=True)
class Written:
    """One changelog record: the count it wrote and where it came from."""

    key: str
    count: int
    writer: str
    source: int  # the input record's offset in the same partition


@dataclass
class RuntimeRun:
    victim: str
    victim_tasks: list[str]
    #: task -> surviving holder of a copy at the kill -> its lag then (end - last checkpoint).
    lag_at_kill: dict[str, dict[str, int]]
    restored: dict[str, int] = field(default_factory=dict)
    serving_s: dict[str, float] = field(default_factory=dict)
    new_owner: dict[str, str] = field(default_factory=dict)
    #: partition -> the input records' keys, by offset.
    input_keys: dict[int, list[str]] = field(default_factory=dict)
    #: partition -> the changelog records, by offset.
    changelog: dict[int, list[Written]] = field(default_factory=dict)
    #: Rebalances after a new process joined, and how many scheduled a probing rebalance.
    scale_out_generations: int = 0
    probing_generations: int = 0
    #: Per live process, its log (warnings of the runtime: refused commits ...).
    logs: dict[str, str] = field(default_factory=dict)

    def duplicates(self, partition: int) -> Counter[int]:
        """Input offsets of ``partition`` counted more than once, with how many times."""
        counts = Counter(w.source for w in self.changelog[partition])
        return Counter({offset: n for offset, n in counts.items() if n > 1})

    def report(self) -> str:
        window = sum(sum(n - 1 for n in self.duplicates(p).values()) for p in range(PARTITIONS))
        lines = [f"[runtime {APP} lag_aware_sticky] kill -9 of 1 of 3, {self.victim_tasks}"]
        for task in self.victim_tasks:
            lines.append(
                f"  {task}: copies' lag at the kill {self.lag_at_kill[task]}, new owner "
                f"{self.new_owner[task][:8]} restored {self.restored[task]}, serving "
                f"{self.serving_s[task]:.2f} s after the kill"
            )
        lines.append(
            f"  then a new process joined: {self.scale_out_generations} rebalances, "
            f"{self.probing_generations} scheduling a probing rebalance"
        )
        lines.append(
            f"  restored {sum(self.restored.values())} records in total; serving after at most "
            f"{max(self.serving_s.values()):.2f} s; {window} input records counted twice "
            f"(the at-least-once window) of {sum(len(k) for k in self.input_keys.values())}"
        )
        return "\n".join(lines)


def read_topic(bootstrap: str, topic: str) -> dict[int, list[Any]]:
    """Every record of ``topic`` up to its end offsets at the call, per partition."""
    from kafka import KafkaConsumer, TopicPartition

    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        ends = consumer.end_offsets(tps)
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        result: dict[int, list[Any]] = {p: [] for p in range(PARTITIONS)}
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            for tp, records in consumer.poll(timeout_ms=500).items():
                result[tp.partition].extend(r for r in records if r.offset < ends[tp])
    finally:
        consumer.close()
    return result


def read_changelog(bootstrap: str, topic: str) -> dict[int, list[Written]]:
    written: dict[int, list[Written]] = {}
    for partition, records in read_topic(bootstrap, topic).items():
        column = []
        for record in records:
            headers = dict(record.headers or [])
            source_topic, source_partition, offset = headers["source"].decode().rsplit("/", 2)
            assert int(source_partition) == partition, record
            column.append(
                Written(
                    record.key.decode(), int(record.value), headers["writer"].decode(), int(offset)
                )
            )
        written[partition] = column
    return written


def converged_after(cluster: Any, moment: float) -> dict[str, dict[str, Any]] | None:
    """The latest assignments once 3 processes x 2 consumers (2 survivors and the newcomer)
    settled with no probing pending."""
    latest = cluster.stable(6, since=moment)
    if latest is None or any(e["next_probing_ms"] != -1 for e in latest.values()):
        return None
    return latest


def every_input_counted(cluster: Any, input_ends: dict[int, int]) -> dict[int, list[Written]]:
    changelog = read_changelog(cluster.bootstrap, cluster.changelog)
    for partition, end in input_ends.items():
        if {w.source for w in changelog[partition]} != set(range(end)):
            return {}
    return changelog


@pytest.fixture(scope="module")
def runtime_run(app_cluster: Any, trickle: Any) -> RuntimeRun:
    cluster = app_cluster(APP, ARGS)
    for name in ("p1", "p2", "p3"):
        cluster.start(name)
    cluster.wait_until("3 processes x 2 consumers settled", lambda: cluster.stable(6))
    cluster.produce(RECORDS)
    cluster.wait_until(
        "every input record counted",
        lambda: sum(cluster.end_offsets(cluster.changelog).values()) >= RECORDS,
    )
    with trickle(cluster, TRICKLE):
        time.sleep(1.0)
        before = cluster.wait_until("the group settled with data", lambda: cluster.stable(6))
        victim_id = str(cluster.processes["p3"].process_id())
        victim_tasks = sorted(
            (t for e in before.values() if e["process"] == victim_id for t in e["active"]),
            key=lambda t: int(t.split("_")[1]),
        )
        checkpointed: dict[str, dict[str, int]] = {t: {} for t in victim_tasks}
        for event in before.values():
            for task in (*event["standby"], *event["warmup"]):
                if task in checkpointed and event["process"] != victim_id:
                    holder = cluster.by_process_id(event["process"])
                    checkpointed[task][event["process"]] = cluster.checkpoint_offset(holder, task)
        killed_at = cluster.kill("p3")
        cluster.wait_until(
            "the survivors to serve every task", lambda: cluster.stable(4, since=killed_at)
        )
        partitions = [int(t.split("_")[1]) for t in victim_tasks]
        ends = cluster.wait_until(
            "a survivor's changelog record after the killed process's last one",
            lambda: cluster.end_of_writes(victim_id, partitions),
        )
        joined_at = time.time()
        cluster.start("p4")  # warmups, probing rebalances, moves, while records keep coming
        converged = cluster.wait_until(
            "the survivors and the newcomer to converge (no probing pending)",
            lambda: converged_after(cluster, joined_at),
        )
    lag = {
        t: {p: ends[int(t.split("_")[1])] - offset for p, offset in copies.items()}
        for t, copies in checkpointed.items()
    }
    run = RuntimeRun(victim_id, victim_tasks, lag)
    input_ends = cluster.end_offsets(cluster.input_topic)
    run.changelog = cluster.wait_until(
        "every input record counted after the kill",
        lambda: every_input_counted(cluster, input_ends),
    )
    run.input_keys = {
        p: [r.key.decode() for r in records]
        for p, records in read_topic(cluster.bootstrap, cluster.input_topic).items()
    }
    restored = [e for p in cluster.live() for e in p.events() if e["event"] == "restored"]
    for task in victim_tasks:
        events = sorted(
            (r for r in restored if r["task"] == task and r["t"] >= killed_at), key=lambda r: r["t"]
        )
        run.restored[task] = sum(r["records"] for r in events)
        run.serving_s[task] = events[0]["t"] - killed_at
        run.new_owner[task] = events[0]["process"]
    assigned = [
        e
        for p in cluster.live()
        for e in p.events()
        if e["event"] == "assigned" and e["t"] >= joined_at
    ]
    run.scale_out_generations = len({e["generation"] for e in assigned})
    run.probing_generations = len({e["generation"] for e in assigned if e["next_probing_ms"] != -1})
    assert len({e["process"] for e in converged.values()}) == 3
    run.logs = {p.name: p.log_path.read_text(errors="replace") for p in cluster.live()}
    print("\n" + run.report())
    return run


def test_caught_up_standbys_take_over_restoring_nothing(runtime_run: RuntimeRun) -> None:
    """Each killed task goes to a survivor holding a copy within acceptable.recovery.lag; that
    copy's reader followed the changelog through the session timeout, so nothing is restored."""
    for task in runtime_run.victim_tasks:
        holders = runtime_run.lag_at_kill[task]
        owner = runtime_run.new_owner[task]
        assert owner in holders, runtime_run.report()
        assert holders[owner] <= ACCEPTABLE_RECOVERY_LAG, runtime_run.report()
        assert runtime_run.restored[task] == 0, runtime_run.report()


def test_no_input_record_is_lost(runtime_run: RuntimeRun) -> None:
    for partition, keys in runtime_run.input_keys.items():
        sources = {w.source for w in runtime_run.changelog[partition]}
        assert sources == set(range(len(keys))), partition


def test_each_count_continues_from_the_last_one(runtime_run: RuntimeRun) -> None:
    """Per task and key the changelog reads 1, 2, 3 ...: every owner, the new ones included,
    started from the state its predecessor left."""
    for partition, column in runtime_run.changelog.items():
        last: dict[str, int] = defaultdict(int)
        for written in column:
            assert written.count == last[written.key] + 1, (partition, written)
            last[written.key] = written.count


def test_double_counts_stay_inside_the_at_least_once_window(runtime_run: RuntimeRun) -> None:
    """Only the killed process's tasks count records twice, each at most twice: first by the
    killed process, then by the new owner, which resumed at the last committed offset. Tasks
    moved by the rebalances after the join count nothing twice (their commits went through)."""
    victim_partitions = {int(t.split("_")[1]) for t in runtime_run.victim_tasks}
    for partition, column in runtime_run.changelog.items():
        duplicates = runtime_run.duplicates(partition)
        if partition not in victim_partitions:
            assert not duplicates, (partition, duplicates)
            continue
        assert set(duplicates.values()) <= {2}, (partition, duplicates)
        victims = [i for i, w in enumerate(column) if w.writer == runtime_run.victim]
        resumed = column[victims[-1] + 1].source  # the new owner's first record
        window = set(range(resumed, column[victims[-1]].source + 1))
        assert set(duplicates) == window, (partition, resumed, sorted(duplicates))
        for offset in duplicates:
            writers = [w.writer for w in column if w.source == offset]
            assert writers[0] == runtime_run.victim != writers[1], (partition, offset, writers)


def test_commits_go_through_the_rebalances(runtime_run: RuntimeRun) -> None:
    """No member had a commit refused: around the failover, the warmups' probing rebalances and
    the moves to the new process, every batch committed in its own generation."""
    assert runtime_run.probing_generations > 0, runtime_run.report()
    for name, log in runtime_run.logs.items():
        assert "commit failed" not in log, (name, log[-4000:])


def test_final_counts_are_the_input_plus_the_window(runtime_run: RuntimeRun) -> None:
    for partition, keys in runtime_run.input_keys.items():
        column = runtime_run.changelog[partition]
        final = {w.key: w.count for w in column}
        twice = Counter(keys[offset] for offset in runtime_run.duplicates(partition))
        assert final == dict(Counter(keys) + twice), partition
