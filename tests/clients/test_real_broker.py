"""Acceptance on the real single-node broker: placement, kill -9 failover, scale-out.

Each scenario runs once per module (real OS processes of an example app, 12 input partitions,
2 consumers per process) and its tests check different properties of that run. The figures
(records restored, time to resume) are printed; ``docs/clients.md`` records them.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

pytestmark = pytest.mark.kafka

#: Input records before the kill: 300 per partition by default, so each task's changelog gets
#: about 300 records (``benchmarks/clients_failover.py`` raises it).
RECORDS = int(os.environ.get("STREAMS_ASSIGN_CLIENTS_RECORDS", "3600"))
#: Records per 100 ms from the background producer around the kill.
TRICKLE = int(os.environ.get("STREAMS_ASSIGN_CLIENTS_TRICKLE", "24"))
STREAMS_ARGS = [
    "--assignor",
    "streams",
    "--num-standby-replicas",
    "1",
    "--acceptable-recovery-lag",
    "50",
    "--session-timeout-ms",
    "3000",
]
#: kafka-python 3.x heartbeats from an IO thread that shares the GIL with the app's threads; on
#: a loaded 2-core machine 3 s sessions expired now and then, so its runs use 6 s.
KAFKA_PYTHON_SESSION = ["--session-timeout-ms", "10000"]
KAFKA_PYTHON_ARGS = [*STREAMS_ARGS, *KAFKA_PYTHON_SESSION]


@dataclass
class FailoverRun:
    """What one kill -9 run measured."""

    assignor: str
    before: dict[str, dict[str, Any]]
    after: dict[str, dict[str, Any]]
    victim_process: str
    victim_tasks: list[str]
    #: task -> one past the killed process's last record in its changelog partition (what a
    #: new owner has to reach; ``AppCluster.end_of_writes``).
    end_at_kill: dict[str, int]
    #: task -> surviving process that held a copy of its state at the kill (a standby, or a
    #: warmup replica of a pending move: a task can have both) -> that copy's lag at the kill
    #: (end offset at the kill - its last checkpoint), records.
    holders_lag_at_kill: dict[str, dict[str, int]]
    #: task -> its changelog's end offset read as soon as the kill returned (the process
    #: reaped): only reported, it can miss records the broker appends later.
    end_read_at_kill: dict[str, int] = field(default_factory=dict)
    restored: dict[str, int] = field(default_factory=dict)
    resume_s: dict[str, float] = field(default_factory=dict)
    new_owner: dict[str, str] = field(default_factory=dict)
    #: (process, task) of the survivors that kept running across the first rebalance after
    #: the kill ("kept" events; cooperative protocol only).
    kept_across_kill: set[tuple[str, str]] = field(default_factory=set)
    #: (process, task) active in the first generation after the kill.
    active_first_after_kill: set[tuple[str, str]] = field(default_factory=set)

    def assert_moved_to_a_caught_up_copy(self, task: str) -> None:
        """The killed ``task`` went to a survivor that held its state (standby or warmup
        replica) and restored at most that copy's lag at the kill."""
        holders = self.holders_lag_at_kill[task]
        owner = self.new_owner[task]
        assert owner in holders, (task, self.report())
        assert self.restored[task] <= holders[owner], (task, self.report())

    def report(self) -> str:
        lines = [f"[{self.assignor}] kill -9 of one of 3 processes, tasks {self.victim_tasks}"]
        for task in self.victim_tasks:
            held = ", ".join(
                f"{process[:8]} {lag}" for process, lag in self.holders_lag_at_kill[task].items()
            )
            lines.append(
                f"  {task}: changelog {self.end_at_kill[task]} "
                f"({self.end_read_at_kill[task]} read as the kill returned), copies' lag at kill "
                f"[{held or '-'}] (last checkpoint), new owner {self.new_owner[task][:8]} "
                f"restored {self.restored[task]}, "
                f"resumed {self.resume_s[task]:.2f} s after the kill"
            )
        lines.append(
            f"  total restored {sum(self.restored.values())} of "
            f"{sum(self.end_at_kill[t] for t in self.victim_tasks)} changelog records; "
            f"max time to resume {max(self.resume_s.values()):.2f} s"
        )
        return "\n".join(lines)


def start_settled(make: Any, script: str, args: list[str]) -> Any:
    """Start 3 processes x 2 consumers on fresh topics and wait until the group settled.

    No retry: the kafka-python member that used to stop following the group at start-up (a
    rebalance started by the leader's metadata snapshot, left unfinished by kafka-python 3.0.x)
    is fixed in the app and the adapter (``docs/clients.md``,
    ``tests/clients/test_kafka_python_startup.py``); any failure to settle fails the test.
    """
    cluster = make(script, args)
    for name_ in ("p1", "p2", "p3"):
        cluster.start(name_)
    cluster.wait_until("3 processes x 2 consumers settled", lambda: cluster.stable(6))
    return cluster


def run_failover(make: Any, trickle: Any, script: str, args: list[str], name: str) -> FailoverRun:
    """3 processes x 2 consumers; stable; data; kill -9 one; wait until every task resumed."""
    cluster = start_settled(make, script, args)
    cluster.produce(RECORDS)
    cluster.wait_until(
        "every input record counted into the changelog",
        lambda: sum(cluster.end_offsets(cluster.changelog).values()) >= RECORDS,
        timeout=120 + RECORDS / 500,
    )
    with trickle(cluster, TRICKLE):
        time.sleep(1.0)
        before = cluster.wait_until("the group settled with data", lambda: cluster.stable(6))
        victim = cluster.processes["p3"]
        victim_id = victim.process_id()
        victim_tasks = sorted(
            (t for e in before.values() if e["process"] == victim_id for t in e["active"]),
            key=lambda t: int(t.split("_")[1]),
        )
        # Every surviving copy's last checkpoint just before the kill: a copy's position only
        # grows, so (end at the kill - this) bounds what its promotion can have to restore. A
        # task can have a standby and a warmup replica on two survivors; either can take it.
        checkpointed: dict[str, dict[str, int]] = {t: {} for t in victim_tasks}
        for event in before.values():
            for task in (*event["standby"], *event["warmup"]):
                if task in victim_tasks and event["process"] != victim_id:
                    holder = cluster.by_process_id(event["process"])
                    offset = cluster.checkpoint_offset(holder, task)
                    checkpointed[task][event["process"]] = offset
        killed_at = cluster.kill("p3")
        read_at_kill = cluster.end_offsets(cluster.changelog)
        after = cluster.wait_until(
            "the survivors to settle and resume every task",
            lambda: cluster.stable(4, since=killed_at),
        )
        # What a new owner has to reach: the killed process's last changelog record, told by
        # its writer header. Not the end offsets read once the process is reaped: produce
        # requests it had already sent are appended by the broker after the kill (a run read
        # 310 at the kill while the new owner restored 312). See AppCluster.end_of_writes.
        partitions = [int(t.split("_")[1]) for t in victim_tasks]
        ends = cluster.wait_until(
            "a survivor's changelog record after the killed process's last one",
            lambda: cluster.end_of_writes(str(victim_id), partitions),
        )
        end_at_kill = {t: ends[int(t.split("_")[1])] for t in victim_tasks}
        lag = {
            t: {process: end_at_kill[t] - offset for process, offset in copies.items()}
            for t, copies in checkpointed.items()
        }
    run = FailoverRun(name, before, after, victim_id, victim_tasks, end_at_kill, lag)
    run.end_read_at_kill = {t: read_at_kill[int(t.split("_")[1])] for t in victim_tasks}
    restored_events = [e for p in cluster.live() for e in p.events() if e["event"] == "restored"]
    after_kill = [e for p in cluster.live() for e in p.events() if e["t"] >= killed_at]
    first_generation = min(
        (e["generation"] for e in after_kill if e["event"] == "assigned"), default=-1
    )
    run.active_first_after_kill = {
        (e["process"], t)
        for e in after_kill
        if e["event"] == "assigned" and e["generation"] == first_generation
        for t in e["active"]
    }
    run.kept_across_kill = {
        (e["process"], e["task"])
        for e in after_kill
        if e["event"] == "kept" and e["generation"] == first_generation
    }
    for task in victim_tasks:
        # All the restoring a task needed after the kill (a further rebalance may move it
        # again), and when it first resumed.
        events = sorted(
            (r for r in restored_events if r["task"] == task and r["t"] >= killed_at),
            key=lambda r: r["t"],
        )
        run.restored[task] = sum(r["records"] for r in events)
        run.resume_s[task] = events[0]["t"] - killed_at
        run.new_owner[task] = events[0]["process"]  # the first owner after the kill
    print("\n" + run.report())
    return run


@pytest.fixture(scope="module")
def streams_failover(app_cluster: Any, trickle: Any) -> FailoverRun:
    return run_failover(app_cluster, trickle, "counts_app.py", STREAMS_ARGS, "streams-assign")


@pytest.fixture(scope="module", params=["roundrobin", "sticky"])
def baseline_failover(
    request: pytest.FixtureRequest, app_cluster: Any, trickle: Any
) -> FailoverRun:
    args = ["--assignor", request.param, "--session-timeout-ms", "3000"]
    return run_failover(app_cluster, trickle, "counts_app.py", args, f"aiokafka {request.param}")


def _process_loads(assignments: dict[str, dict[str, Any]]) -> Counter[str]:
    return Counter({e["process"]: 0 for e in assignments.values()}) + Counter(
        e["process"] for e in assignments.values() for _ in e["active"]
    )


def test_each_task_is_active_on_exactly_one_member(streams_failover: FailoverRun) -> None:
    actives = Counter(t for e in streams_failover.before.values() for t in e["active"])
    assert sorted(actives, key=lambda t: int(t.split("_")[1])) == [f"0_{p}" for p in range(12)]
    assert set(actives.values()) == {1}


def test_standbys_are_never_on_their_actives_process(streams_failover: FailoverRun) -> None:
    before = streams_failover.before.values()
    active_process = {t: e["process"] for e in before for t in e["active"]}
    standbys = [(t, e["process"]) for e in before for t in e["standby"]]
    assert sorted(t for t, _ in standbys) == sorted(active_process)  # one standby per task
    for task, process in standbys:
        assert process != active_process[task]


def test_process_and_member_loads_are_balanced(streams_failover: FailoverRun) -> None:
    loads = _process_loads(streams_failover.before)
    assert len(loads) == 3 and max(loads.values()) - min(loads.values()) <= 1
    member_loads = [len(e["active"]) for e in streams_failover.before.values()]
    assert max(member_loads) - min(member_loads) <= 1


def test_killed_tasks_move_to_their_caught_up_standbys(streams_failover: FailoverRun) -> None:
    for task in streams_failover.victim_tasks:
        streams_failover.assert_moved_to_a_caught_up_copy(task)


def test_failover_restores_at_most_the_standby_lag(streams_failover: FailoverRun) -> None:
    run = streams_failover
    for task in run.victim_tasks:
        lag = run.holders_lag_at_kill[task].get(run.new_owner[task])
        assert lag is not None and run.restored[task] <= lag, (task, run.report())


def test_baseline_restores_the_whole_changelog(
    baseline_failover: FailoverRun, streams_failover: FailoverRun
) -> None:
    for task in baseline_failover.victim_tasks:
        assert baseline_failover.restored[task] == baseline_failover.end_at_kill[task] > 0
    assert sum(streams_failover.restored.values()) < sum(baseline_failover.restored.values())


@dataclass
class ScaleOutRun:
    """What adding a fourth process measured."""

    joined_at: float
    converged: dict[str, dict[str, Any]]
    newcomer: str
    generations: list[int]
    warmups_on_newcomer: set[str]
    probing_generations: list[int]
    moves: list[dict[str, Any]]  # restored events of tasks that changed process
    converge_s: float

    def report(self) -> str:
        restored = [m["records"] for m in self.moves]
        restore_ms = [m["ms"] for m in self.moves]
        return (
            f"[streams-assign] 4th process joins: {len(self.generations)} rebalances "
            f"({len(self.probing_generations)} asked for a probing rebalance), warmups on the "
            f"newcomer {sorted(self.warmups_on_newcomer, key=lambda t: int(t[2:]))}, "
            f"{len(self.moves)} active moves restoring at most {max(restored, default=0)} "
            f"records (at most {max(restore_ms, default=0):.0f} ms each), converged "
            f"{self.converge_s:.1f} s after the join"
        )


@pytest.fixture(scope="module")
def scale_out(app_cluster: Any) -> ScaleOutRun:
    args = [*STREAMS_ARGS, "--probing-interval-ms", "2000", "--max-warmup-replicas", "2"]
    cluster = app_cluster("counts_app.py", args)
    for name in ("p1", "p2", "p3"):
        cluster.start(name)
    cluster.wait_until("3 processes x 2 consumers settled", lambda: cluster.stable(6))
    cluster.produce(RECORDS)
    cluster.wait_until(
        "every input record counted into the changelog",
        lambda: sum(cluster.end_offsets(cluster.changelog).values()) >= RECORDS,
    )
    joined_at = time.time()
    newcomer = cluster.start("p4")

    def converged() -> dict[str, dict[str, Any]] | None:
        latest = cluster.stable(8, since=joined_at)
        if latest is None or any(e["next_probing_ms"] != -1 for e in latest.values()):
            return None
        return latest

    final = cluster.wait_until("the 4 processes to converge (no probing pending)", converged)
    newcomer_id = newcomer.process_id()
    events = [e for p in cluster.live() for e in p.events() if e["t"] >= joined_at]
    assigned = [e for e in events if e["event"] == "assigned"]
    generations = sorted({e["generation"] for e in assigned})
    previous_process: dict[str, str] = {}
    for e in cluster.latest_assignments_before(joined_at).values():
        for task in e["active"]:
            previous_process[task] = e["process"]
    moves = []
    for e in sorted(assigned, key=lambda e: e["generation"]):
        for task in e["active"]:
            if previous_process.get(task) not in (None, e["process"]):
                restored = next(
                    r
                    for r in events
                    if r["event"] == "restored"
                    and r["member"] == e["member"]
                    and r["task"] == task
                    and r["t"] >= e["t"]
                )
                moves.append({**restored, "generation": e["generation"]})
            previous_process[task] = e["process"]
    run = ScaleOutRun(
        joined_at=joined_at,
        converged=final,
        newcomer=str(newcomer_id),
        generations=generations,
        warmups_on_newcomer={
            t for e in assigned if e["process"] == newcomer_id for t in e["warmup"]
        },
        probing_generations=sorted(
            {e["generation"] for e in assigned if e["next_probing_ms"] != -1}
        ),
        moves=moves,
        converge_s=max(e["t"] for e in final.values()) - joined_at,
    )
    print("\n" + run.report())
    return run


def test_scale_out_places_warmups_on_the_new_process(scale_out: ScaleOutRun) -> None:
    assert scale_out.warmups_on_newcomer


def test_scale_out_is_followed_by_probing_rebalances(scale_out: ScaleOutRun) -> None:
    assert scale_out.probing_generations
    assert len(scale_out.generations) > len(scale_out.probing_generations)


def test_scale_out_converges_to_balance(scale_out: ScaleOutRun) -> None:
    loads = _process_loads(scale_out.converged)
    assert len(loads) == 4 and set(loads.values()) == {3}
    assert loads[scale_out.newcomer] == 3


def test_no_task_waits_for_a_full_restore_while_it_moves(scale_out: ScaleOutRun) -> None:
    """A moved active restores at most acceptable.recovery.lag (50): it was a caught-up warmup."""
    assert scale_out.moves
    for move in scale_out.moves:
        assert move["records"] <= 50, move


@pytest.fixture(scope="module")
def kafka_python_failover(app_cluster: Any, trickle: Any) -> FailoverRun:
    return run_failover(
        app_cluster,
        trickle,
        "counts_app_sync.py",
        KAFKA_PYTHON_ARGS,
        "kafka-python streams-assign",
    )


def test_kafka_python_places_tasks_and_standbys(kafka_python_failover: FailoverRun) -> None:
    before = kafka_python_failover.before.values()
    actives = Counter(t for e in before for t in e["active"])
    assert set(actives.values()) == {1} and len(actives) == 12
    active_process = {t: e["process"] for e in before for t in e["active"]}
    standbys = [(t, e["process"]) for e in before for t in e["standby"]]
    assert sorted(t for t, _ in standbys) == sorted(active_process)
    assert all(process != active_process[task] for task, process in standbys)
    loads = _process_loads(kafka_python_failover.before)
    assert len(loads) == 3 and max(loads.values()) - min(loads.values()) <= 1


def test_kafka_python_failover_restores_at_most_the_standby_lag(
    kafka_python_failover: FailoverRun,
) -> None:
    run = kafka_python_failover
    for task in run.victim_tasks:
        run.assert_moved_to_a_caught_up_copy(task)


@pytest.fixture(scope="module")
def kafka_python_baseline(app_cluster: Any, trickle: Any) -> FailoverRun:
    args = ["--assignor", "roundrobin", *KAFKA_PYTHON_SESSION]
    return run_failover(app_cluster, trickle, "counts_app_sync.py", args, "kafka-python roundrobin")


def test_kafka_python_baseline_restores_the_whole_changelog(
    kafka_python_baseline: FailoverRun, kafka_python_failover: FailoverRun
) -> None:
    for task in kafka_python_baseline.victim_tasks:
        assert kafka_python_baseline.restored[task] == kafka_python_baseline.end_at_kill[task] > 0
    assert sum(kafka_python_failover.restored.values()) < sum(
        kafka_python_baseline.restored.values()
    )


@pytest.fixture(scope="module")
def kafka_python_cooperative_failover(app_cluster: Any, trickle: Any) -> FailoverRun:
    return run_failover(
        app_cluster,
        trickle,
        "counts_app_sync.py",
        [*KAFKA_PYTHON_ARGS, "--cooperative"],
        "kafka-python cooperative streams-assign",
    )


def test_kafka_python_cooperative_failover_keeps_survivors_tasks_running(
    kafka_python_cooperative_failover: FailoverRun,
) -> None:
    """Under KIP-429 the survivors keep running their own tasks through the rebalance after
    the kill (no revocation, no restore); the killed ones go to their standbys."""
    run = kafka_python_cooperative_failover
    for task in run.victim_tasks:
        run.assert_moved_to_a_caught_up_copy(task)
    survivors_tasks = {
        (e["process"], t)
        for e in run.before.values()
        for t in e["active"]
        if e["process"] != run.victim_process
    }
    stayed = survivors_tasks & run.active_first_after_kill
    assert stayed  # most of the survivors' tasks stay where they are
    assert run.kept_across_kill == stayed
