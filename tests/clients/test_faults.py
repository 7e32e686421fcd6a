"""Faults on the real broker under the aiokafka and kafka-python adapters.

Each test runs the counts example (3 processes x 2 consumers, 12 input partitions, one standby)
through ``tests/clients/fault_app.py``, whose hooks a test arms by creating a file, injects one
fault and waits until the group has recovered:

- the broker restarted during a rebalance (the leader holds its computed assignment until the
  broker is down; a broker of the test's own, the shared one is not restarted);
- a member killed while it joins a probing rebalance (after a fourth process got warmups);
- the group leader killed right after it computed an assignment, before SyncGroup;
- a process restarted on its state folder without its process id file (it joins as a new
  process id with the old process's local state).

After each: the group is stable (every live member in one generation), every task active on
exactly one member and restored there, each task's standby on another process than its active,
and no warmup beside its active. The time from the fault to the recovered group is printed (a
``[faults]`` line, not asserted); ``benchmarks/clients_faults.py`` collects them for
``docs/reliability.md``.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.clients.conftest import PARTITIONS, AppCluster, AppProcess

pytestmark = pytest.mark.kafka

FAULT_APP = Path(__file__).resolve().parent / "fault_app.py"
#: Input records before the fault: 100 per partition, so a task's changelog is longer than
#: acceptable.recovery.lag (50) and a new process needs warmups.
RECORDS = 1200
COMMON = ["--assignor", "streams", "--num-standby-replicas", "1", "--acceptable-recovery-lag", "50"]
#: adapter -> (example app, its session timeout: kafka-python's IO thread shares the GIL with the
#: app, so its runs use longer sessions, as in test_real_broker.py)
ADAPTERS = {
    "aiokafka": ("counts_app.py", ["--session-timeout-ms", "3000"]),
    "kafka-python": ("counts_app_sync.py", ["--session-timeout-ms", "10000"]),
}
#: Longest wait for a hook to fire, seconds.
FIRE_WAIT_S = 120.0


def app_args(adapter: str, *extra: str) -> list[str]:
    script, session = ADAPTERS[adapter]
    return ["--fault-example", script, *COMMON, *session, *extra]


def start_settled(cluster: AppCluster) -> None:
    """Start p1-p3, wait until settled, count ``RECORDS`` records into the changelog."""
    for name in ("p1", "p2", "p3"):
        cluster.start(name)
    cluster.wait_until("3 processes x 2 consumers settled", lambda: cluster.stable(6))
    cluster.produce(RECORDS)
    cluster.wait_until(
        "every input record counted into the changelog",
        lambda: sum(cluster.end_offsets(cluster.changelog).values()) >= RECORDS,
    )


def arm(cluster: AppCluster, hook: str, content: str = "") -> None:
    """Create the hook's file in one step (a reader never sees it half written)."""
    staging = cluster.root / f".{hook}"
    staging.write_text(content)
    os.rename(staging, cluster.root / hook)


def wait_fired(cluster: AppCluster, hook: str, killed: bool) -> tuple[AppProcess, float]:
    """The process that fired ``hook`` and when; a process that killed itself is reaped."""
    deadline = time.monotonic() + FIRE_WAIT_S
    while time.monotonic() < deadline:
        for process in cluster.processes.values():
            fired = cluster.root / f"{hook}.{process.popen.pid}"
            text = fired.read_text() if fired.exists() else ""
            if text:
                at = float(text)
                if killed:
                    process.popen.wait(timeout=30)
                    assert process.popen.returncode == -signal.SIGKILL, cluster.logs()
                    process.killed_at = at
                return process, at
        time.sleep(0.05)
    pytest.fail(f"hook {hook} did not fire within {FIRE_WAIT_S:.0f} s:\n{cluster.logs()}")


def recovered(cluster: AppCluster, members: int, since: float) -> tuple[dict[str, Any], float]:
    """Wait for the recovered group; check the rules; return it and when it resumed every task.

    ``AppCluster.stable`` gives one generation of ``members`` live members after ``since`` with
    every task active on exactly one of them and restored (or kept) there; this adds that each
    task has exactly one standby (num.standby.replicas=1), on another process, and no warmup on
    its active's process. Resumed: the last of those restores.
    """
    latest = cluster.wait_until(
        f"{members} members recovered after the fault", lambda: cluster.stable(members, since)
    )
    active_process = {t: e["process"] for e in latest.values() for t in e["active"]}
    assert sorted(active_process) == sorted(f"0_{p}" for p in range(PARTITIONS))
    standbys = Counter()
    for event in latest.values():
        for task in event["standby"]:
            assert active_process[task] != event["process"], (task, latest)
            if task not in event["warmup"]:
                standbys[task] += 1
        for task in event["warmup"]:
            assert active_process[task] != event["process"], (task, latest)
    assert standbys == Counter(set(active_process)), latest
    resumed = [e["t"] for e in latest.values()]
    done = [e for p in cluster.live() for e in p.events() if e["event"] in ("restored", "kept")]
    for event in latest.values():
        for task in event["active"]:
            resumed.append(
                min(
                    r["t"]
                    for r in done
                    if r["member"] == event["member"] and r["task"] == task and r["t"] >= event["t"]
                )
            )
    return latest, max(resumed)


def report(adapter: str, fault: str, seconds: float, detail: str) -> None:
    print(f"\n[faults] {adapter} {fault}: recovered in {seconds:.2f} s ({detail})")


@pytest.fixture(scope="module")
def own_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A broker of this module's own, for the restart (the shared one keeps running)."""
    from devtools.kafka.broker import running_broker

    with running_broker(work_dir=tmp_path_factory.mktemp("own-broker")) as broker:
        yield broker


def _clusters(bootstrap: str, root: Path) -> Iterator[Callable[[list[str]], AppCluster]]:
    made: list[AppCluster] = []

    def make(args: list[str]) -> AppCluster:
        cluster = AppCluster(bootstrap, root, str(FAULT_APP), args)
        cluster.create_topics()
        made.append(cluster)
        return cluster

    try:
        yield make
    finally:  # at the end of each test: the next one runs without this one's processes
        for cluster in made:
            cluster.stop_all()


@pytest.fixture
def own_cluster(own_broker: Any, tmp_path: Path) -> Iterator[Callable[[list[str]], AppCluster]]:
    """Make app clusters on the module's own broker; their processes stop with the test."""
    yield from _clusters(own_broker.bootstrap_servers, tmp_path)


@pytest.fixture
def cluster_of(kafka_broker: Any, tmp_path: Path) -> Iterator[Callable[[list[str]], AppCluster]]:
    """Make app clusters on the shared broker; their processes stop with the test."""
    yield from _clusters(kafka_broker.bootstrap_servers, tmp_path)


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_broker_restarted_during_a_rebalance(
    adapter: str, own_broker: Any, own_cluster: Callable[[list[str]], AppCluster]
) -> None:
    cluster = own_cluster(app_args(adapter))
    start_settled(cluster)
    arm(cluster, "pause-leader")
    cluster.start("p4")  # a rebalance; its leader computes and holds the assignment
    leader, _ = wait_fired(cluster, "pause-leader", killed=False)
    fault_at = time.time()
    down_at: list[float] = []

    def release() -> None:
        down_at.append(time.time())
        (cluster.root / "release").touch()

    own_broker.restart(while_down=release)
    up_at = time.time()
    _, resumed = recovered(cluster, 8, since=fault_at)
    report(
        adapter,
        "broker restart during a rebalance",
        resumed - fault_at,
        f"broker stopped in {down_at[0] - fault_at:.2f} s, back {up_at - down_at[0]:.2f} s "
        f"later; leader {leader.name} held its assignment until it was down",
    )


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_member_killed_during_a_probing_rebalance(
    adapter: str, cluster_of: Callable[[list[str]], AppCluster]
) -> None:
    args = app_args(adapter, "--probing-interval-ms", "2000", "--max-warmup-replicas", "2")
    cluster = cluster_of(args)
    start_settled(cluster)
    joined_at = time.time()
    cluster.start("p4")

    def probing_scheduled() -> int | None:
        latest = cluster.latest_assignments()
        if len(latest) != 8 or any(e["t"] < joined_at for e in latest.values()):
            return None
        if len({e["generation"] for e in latest.values()}) != 1:
            return None
        deadlines = {e["next_probing_ms"] for e in latest.values()}
        return deadlines.pop() if len(deadlines) == 1 and -1 not in deadlines else None

    deadline_ms = cluster.wait_until("warmups and a probing rebalance scheduled", probing_scheduled)
    victim = cluster.processes["p2"]
    arm(cluster, "kill-member", str(victim.process_id()))
    killed, killed_at = wait_fired(cluster, "kill-member", killed=True)
    assert killed is victim
    # A member joins again only in a rebalance, and the next one is the probing rebalance,
    # which no member asks for before the deadline the leader gave them all.
    assert killed_at * 1000 >= deadline_ms
    _, resumed = recovered(cluster, 6, since=killed_at)
    report(
        adapter,
        "member killed during a probing rebalance",
        resumed - killed_at,
        f"killed {killed_at * 1000 - deadline_ms:.0f} ms after the probing deadline",
    )


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_leader_killed_after_computing_an_assignment(
    adapter: str, cluster_of: Callable[[list[str]], AppCluster]
) -> None:
    cluster = cluster_of(app_args(adapter))
    start_settled(cluster)
    arm(cluster, "kill-leader")
    cluster.start("p4")  # a rebalance; its leader dies once it has decided
    leader, killed_at = wait_fired(cluster, "kill-leader", killed=True)
    _, resumed = recovered(cluster, 6, since=killed_at)
    report(
        adapter, "leader killed after its assignment", resumed - killed_at, f"leader {leader.name}"
    )


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_process_without_its_process_id_file_rejoins_as_a_new_process(
    adapter: str, cluster_of: Callable[[list[str]], AppCluster]
) -> None:
    from streams_assign.clients.state import PROCESS_FILE

    cluster = cluster_of(app_args(adapter))
    start_settled(cluster)
    old_id = cluster.processes["p3"].process_id()
    killed_at = cluster.kill("p3")
    # The same state folder (its stores and checkpoints) under a new name, without the id file.
    (cluster.root / "p3").rename(cluster.root / "p3-again")
    (cluster.root / "p3-again" / cluster.application_id / PROCESS_FILE).unlink()
    restarted_at = time.time()
    again = cluster.start("p3-again")
    latest, resumed = recovered(cluster, 6, since=killed_at)
    new_id = again.process_id()
    assert new_id is not None and new_id != old_id
    assert {e["process"] for e in latest.values()} == {
        cluster.processes["p1"].process_id(),
        cluster.processes["p2"].process_id(),
        new_id,
    }
    report(
        adapter,
        "process id file deleted, rejoined",
        resumed - restarted_at,
        f"{resumed - killed_at:.2f} s after the kill",
    )
