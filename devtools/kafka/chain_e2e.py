"""End to end: ``streams-assign plan``'s rebalance chain against Kafka's group leader's log.

:func:`run_chain` runs ``streamsassign.app.ClicksApp`` (:data:`~.streams_app.CLICKS_APP`: three
sources in one sub-topology, a window store, two repartition topics, a stateless sub-topology)
as 5 instances x 3 stream threads with ``num.standby.replicas=2``, client tags
(``client.tag.zone``) and ``rack.aware.assignment.tags=zone`` on a real broker, until it is
stable and caught up. It then collects the operator's view as :mod:`.e2e` does (members,
changelog end offsets, topology, offsets with the running tasks' positions), turns it into a
cluster state with ``streams-lag compute``, adds what the leader also knows and the view holds
(each client's tags and stream threads with the partitions they own, the tasks' source
partitions, the changelog end offset sums), writes the application's properties file, and runs
``streams-assign plan --json`` for the change: ``--kill`` one instance (kill -9), or ``--add 1
--add-id`` with the process id the new instance will use (written into its state directory
before it starts, ``StateDirectory#initializeProcessId`` reads it). Then it makes the change
and collects every decision the group leader logs until the group is stable and no rebalance
is pending (``HighAvailabilityTaskAssignor``: "Decided on assignment: ... with [no] followup
probing rebalance").
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.e2e import (
    Decision,
    _decisions,
    _sorted_tasks,
    changelog_end_offsets,
    collect_operator_view,
    predict,
)
from devtools.kafka.streams_app import (
    CLICKS_APP,
    StreamsAppError,
    StreamsCluster,
)
from streams_assign.simulation.leader_log import LoggedDecision, read_decisions

__all__ = ["ChainRun", "leader_records", "run_chain"]

ZONES = ("zone-a", "zone-b", "zone-c")
Clients = dict[str, tuple[list[str], list[str]]]


@dataclass
class ChainRun:
    """The planned chain beside the leader's decisions.

    Attributes
    ----------
    scenario:
        ``kill`` or ``add``.
    plan:
        ``streams-assign plan --json``.
    decisions:
        The leader's decisions after the change, oldest first.
    trigger_ms:
        When the change was made (epoch ms).
    stable_ms:
        Milliseconds from the change until the group was stable with no rebalance pending.
    folder:
        The view, the state, the properties file and the plan.
    """

    scenario: str
    plan: dict[str, Any]
    decisions: list[Decision]
    trigger_ms: float
    stable_ms: float
    folder: Path
    rebalance_gaps_ms: list[float] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    settled_plan: dict[str, Any] = field(default_factory=dict)
    logged: list[LoggedDecision] = field(default_factory=list)

    @property
    def chain(self) -> dict[str, Any]:
        """The high_availability chain of the plan made before the change (the prediction)."""
        return self.plan["chains"][0]

    @property
    def settled(self) -> dict[str, Any]:
        """The same plan with its timing races settled by the leader's logged inputs
        (``plan --race-evidence``)."""
        return self.settled_plan["chains"][0]

    def predicted(self, settled: bool = False) -> list[Clients]:
        """Each planned decision: process id -> (active, standby incl. warmups)."""
        chain = self.settled if settled else self.chain
        return [
            {
                pid: (_sorted_tasks(c["active"]), _sorted_tasks(c["standby"]))
                for pid, c in r["decided"].items()
            }
            for r in chain["chain"]
        ]

    def real(self) -> list[Clients]:
        """Each logged decision."""
        return [d.clients for d in self.decisions]

    def input_differences(self, number: int, settled: bool = True) -> list[str]:
        """Rebalance ``number``'s planned input beside the leader's logged one (``taskLagTotals``
        per client and task), one line per client that differs."""
        chain = self.settled if settled else self.chain
        if number > min(len(chain["chain"]), len(self.logged)):
            return []
        planned = chain["chain"][number - 1]["lags"]
        logged = self.logged[number - 1].clients
        lines = []
        for pid in sorted(set(planned) | set(logged)):
            want = planned.get(pid, {})
            got = {str(t): lag for t, lag in logged[pid].lags.items()} if pid in logged else {}
            differ = {
                t: (want.get(t), got.get(t))
                for t in sorted(set(want) | set(got))
                if want.get(t) != got.get(t)
            }
            if differ:
                lines.append(f"input {number} {pid[:8]} (planned, logged): {differ}")
        return lines

    def differences(self, settled: bool = True) -> list[str]:
        """One line per decision (and per process in it) where plan and log differ, then the
        inputs of the first differing decision."""
        predicted, real = self.predicted(settled), self.real()
        lines = []
        if len(predicted) != len(real):
            lines.append(f"rebalances: planned {len(predicted)}, logged {len(real)}")
        for number, (want, got) in enumerate(zip(predicted, real, strict=False), start=1):
            for pid in sorted(set(want) | set(got)):
                if want.get(pid) != got.get(pid):
                    lines.append(
                        f"decision {number} {pid[:8]}: planned {want.get(pid)}, logged "
                        f"{got.get(pid)}"
                    )
        first = next(
            (n for n, (w, g) in enumerate(zip(predicted, real, strict=False), 1) if w != g), None
        )
        if first is not None:
            lines += self.input_differences(first, settled)
        return lines

    def logged_kinds(self) -> list[str]:
        """Each logged decision's kind: the first a membership change, then a probing rebalance
        when it came at least nine tenths of ``probing.rebalance.interval.ms`` after the
        previous decision, else an immediate follow-up."""
        interval = self.plan["probing_rebalance_interval_ms"]
        kinds = []
        for number, decision in enumerate(self.decisions):
            if number == 0:
                kinds.append("membership change")
                continue
            gap = decision.time_ms - self.decisions[number - 1].time_ms
            kinds.append("probing" if gap >= 0.9 * interval else "immediate follow-up")
        return kinds

    def kinds(self, settled: bool = True) -> list[str]:
        """Each planned rebalance's kind."""
        chain = self.settled if settled else self.chain
        return [r["kind"] for r in chain["chain"]]

    def equal_decisions(self, settled: bool = True) -> int:
        """Decisions equal to the logged ones, in order, before the first that differs."""
        count = 0
        for want, got in zip(self.predicted(settled), self.real(), strict=False):
            if want != got:
                break
            count += 1
        return count

    def summary(self) -> dict[str, Any]:
        """Counts, times, planned beside logged: the plan with its races settled by the
        leader's log, then the prediction made before the change."""
        kinds = [r["kind"] for r in self.settled["chain"]]
        return {
            "scenario": self.scenario,
            "planned_rebalances": len(kinds),
            "planned_kinds": kinds,
            "logged_kinds": self.logged_kinds(),
            "kinds_equal": kinds == self.logged_kinds(),
            "logged_rebalances": len(self.decisions),
            "logged_times_ms": [round(d.time_ms - self.trigger_ms) for d in self.decisions],
            "planned_times_ms": [r["time_ms"] for r in self.settled["chain"]],
            "logged_probing": [d.probing for d in self.decisions],
            "planned_stable_ms": self.settled["stable_ms"],
            "real_stable_ms": round(self.stable_ms),
            "equal_decisions": self.equal_decisions(),
            "first_equal": bool(self.decisions) and self.predicted()[0] == self.real()[0],
            "final_equal": bool(self.decisions) and self.predicted(True)[-1] == self.real()[-1],
            "racing_rebalances": self.settled["racing_rebalances"],
            "races": sum(len(r["races"]) for r in self.settled["chain"]),
            "unsettled": [
                (r["rebalance"], u) for r in self.settled["chain"] for u in r["unsettled"]
            ],
            "differences": self.differences(),
            "prediction": {
                "rebalances": len(self.chain["chain"]),
                "kinds": [r["kind"] for r in self.chain["chain"]],
                "equal_decisions": self.equal_decisions(settled=False),
                "final_equal": bool(self.decisions)
                and self.predicted(False)[-1] == self.real()[-1],
                "stable_ms": self.chain["stable_ms"],
                "racing_rebalances": self.chain["racing_rebalances"],
                "if_late": self.chain["if_late"],
            },
            "phase_seconds": self.phases,
        }


def _completed_state(document: dict[str, Any], zones: dict[str, str]) -> dict[str, Any]:
    """The snapshot with the one config the leader knows that the group does not carry
    (``rack.aware.assignment.tags``, given to ``plan`` in the properties file too); the client
    tags, threads and partitions are the group's own (``streams-lag snapshot``).

    Raises
    ------
    StreamsAppError
        When a process's tags in the group are not the zone it was started in.
    """
    document.setdefault("configs", {})["rack_aware_assignment_tags"] = ["zone"]
    for client in document["clients"]:
        if client.get("tags") != {"zone": zones[client["id"]]}:
            raise StreamsAppError(
                f"process {client['id']}: the group reports tags {client.get('tags')}, "
                f"started in {zones[client['id']]}"
            )
    return document


def _properties(cluster: StreamsCluster) -> str:
    return "\n".join(
        [
            f"application.id={cluster.application_id}",
            f"num.standby.replicas={cluster.standbys}",
            f"acceptable.recovery.lag={cluster.acceptable_recovery_lag}",
            f"max.warmup.replicas={cluster.max_warmup_replicas}",
            f"probing.rebalance.interval.ms={cluster.probing_rebalance_interval_ms}",
            f"consumer.session.timeout.ms={cluster.session_timeout_ms}",
            "rack.aware.assignment.tags=zone",
            "",
        ]
    )


def _plan(
    state: Path, properties: Path, change: list[str], follow_up_ms: int, *extra: str
) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "streams_assign.cli",
        "plan",
        str(state),
        *change,
        "--assignor",
        "high_availability",
        "--streams-config",
        str(properties),
        "--follow-up-ms",
        str(follow_up_ms),
        "--json",
        *extra,
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise StreamsAppError(f"streams-assign plan failed:\n{result.stderr[-3000:]}")
    plan: dict[str, Any] = json.loads(result.stdout)
    return plan


def _wait_caught_up(cluster: StreamsCluster, timeout: float) -> None:
    """Every running instance's store positions equal the changelog end offsets."""

    def caught_up() -> bool:
        ends = changelog_end_offsets(cluster)
        for instance in cluster.running_instances():
            for store, parts in instance.positions().items():
                for part, (position, _end) in parts.items():
                    key = f"{cluster.application_id}-{store}-changelog:{part}"
                    if ends.get(key) != position:
                        return False
        return True

    cluster.wait_until(caught_up, timeout, "every store caught up with its changelog", poll=2.0)


def _leader_finished_stable(cluster: StreamsCluster, after_ms: float) -> bool:
    """Whether the leader's last assignment after ``after_ms`` scheduled no follow-up of any
    kind (``StreamsPartitionAssignor``: "Finished stable assignment of tasks, no followup
    rebalances required", not "Finished unstable assignment ..., a followup rebalance will be
    scheduled", which covers immediate follow-ups and probing rebalances alike). True when no
    assignment was logged after ``after_ms``."""
    from datetime import datetime

    lines = sorted(
        line
        for instance in cluster.instances
        for line in instance.log_lines("assignment of tasks")
        if "Finished" in line
    )
    late = [
        line
        for line in lines
        if datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000 >= after_ms
    ]
    return not late or "Finished stable assignment" in late[-1]


def _quiet(cluster: StreamsCluster, processes: int, after_ms: float, timeout: float) -> float:
    """Wait until the group is stable and the leader's last assignment scheduled no follow-up
    (immediate or probing), or none was logged after ``after_ms``; return when the last
    decision was."""

    def settled() -> bool:
        if len(cluster.running_instances()) != processes or not cluster.is_stable(3000):
            return False
        decisions = _decisions(cluster, after_ms)
        if decisions and decisions[-1].probing:
            return False
        return _leader_finished_stable(cluster, after_ms)

    cluster.wait_until(settled, timeout, f"a stable group of {processes} with no follow-up pending")
    decisions = _decisions(cluster, after_ms)
    return decisions[-1].time_ms if decisions else after_ms


def run_chain(
    broker: KafkaBroker,
    scenario: str,
    folder: Path,
    *,
    instances: int = 5,
    threads: int = 3,
    standbys: int = 2,
    records: int = 2000,
    acceptable_recovery_lag: int = 50,
    probing_rebalance_interval_ms: int = 60_000,
    session_timeout_ms: int = 10_000,
    follow_up_ms: int = 1000,
    victim: int = 1,
    kafka_version: str = "4.2",
) -> ChainRun:
    """Run one change end to end and return the planned chain beside the logged one.

    Parameters
    ----------
    broker:
        A running broker.
    scenario:
        ``kill`` (SIGKILL one instance) or ``add`` (one more instance, its id given to plan).
    folder:
        Where the view, the state, ``app.properties`` and ``plan.json`` are written.
    instances, threads, standbys:
        The fleet (zones ``zone-a``, ``zone-b``, ``zone-c`` in turn).
    records:
        Records produced to each input topic.
    acceptable_recovery_lag, probing_rebalance_interval_ms, session_timeout_ms:
        The Kafka Streams configs of those names.
    follow_up_ms:
        ``plan --follow-up-ms``.
    victim:
        Index of the instance killed.
    kafka_version:
        The Kafka Streams version the instances run (``"4.2"`` or ``"4.4"``, classic rebalance
        protocol either way), which must be the broker's.

    Raises
    ------
    StreamsAppError
        When the application does not settle, an instance dies, or ``plan`` fails.
    """
    if scenario not in ("kill", "add"):
        raise ValueError(f"scenario must be kill or add, got {scenario!r}")
    app_id = f"chain-{scenario}-{int(time.time() * 1000) % 10**8}"
    cluster = StreamsCluster(
        broker,
        app_id,
        standbys=standbys,
        acceptable_recovery_lag=acceptable_recovery_lag,
        probing_rebalance_interval_ms=probing_rebalance_interval_ms,
        session_timeout_ms=session_timeout_ms,
        heartbeat_interval_ms=1000,
        app=CLICKS_APP,
        jmx=True,
        kafka_version=kafka_version,
    )
    zones: dict[str, str] = {}

    def configs(index: int) -> dict[str, str]:
        return {"client.tag.zone": ZONES[index % len(ZONES)], "rack.aware.assignment.tags": "zone"}

    phases: dict[str, float] = {}
    started = time.monotonic()

    def phase(name: str) -> None:
        phases[name] = round(time.monotonic() - started - sum(phases.values()), 1)

    try:
        folder.mkdir(parents=True, exist_ok=True)
        cluster.create_input_topics()
        for index in range(instances):
            instance = cluster.add_instance(threads=threads, configs=configs(index))
            zones[instance.process_id] = ZONES[index % len(ZONES)]
        cluster.wait_stable(240)
        phase("start")
        cluster.produce(records, customers=40)
        _quiet(cluster, instances, 0, 240 + probing_rebalance_interval_ms / 1000)
        _wait_caught_up(cluster, 180)
        _quiet(cluster, instances, 0, 60 + probing_rebalance_interval_ms / 1000)

        phase("produce and settle")
        view = collect_operator_view(cluster, folder)
        document, _ = predict(cluster, view)
        state = folder / "state.json"
        state.write_text(json.dumps(_completed_state(document, zones), indent=1))
        properties = folder / "app.properties"
        properties.write_text(_properties(cluster))
        if scenario == "kill":
            target = cluster.instances[victim]
            change = ["--kill", target.process_id]
            processes = instances - 1
        else:
            index = len(cluster.instances)
            newcomer = cluster.add_instance(threads=threads, start=False, configs=configs(index))
            zones[newcomer.process_id] = ZONES[index % len(ZONES)]
            zone = ZONES[index % len(ZONES)]
            change = ["--add", "1", "--add-id", newcomer.process_id, "--capacity", str(threads)]
            change += ["--zone", zone]
            processes = instances + 1
        plan = _plan(state, properties, change, follow_up_ms)
        (folder / "plan.json").write_text(json.dumps(plan, indent=1))
        phase("view and plan")

        trigger_ms = time.time() * 1000
        if scenario == "kill":
            target.kill()
        else:
            newcomer.start()
        timeout = 240 + 6 * probing_rebalance_interval_ms / 1000
        last = _quiet_after_change(cluster, processes, trigger_ms, timeout)
        decisions = _decisions(cluster, trigger_ms)
        phase("change until stable")
        lines = [line for i in cluster.instances for line in i.log_lines("Decided on assignment")]
        (folder / "decisions.log").write_text("\n".join(sorted(lines)) + "\n")
        evidence = folder / "leader-after-change.log"
        leader = leader_records([i.log for i in cluster.instances if i.log.exists()], trigger_ms)
        evidence.write_text("\n".join(leader) + "\n")
        logged = read_decisions(leader, str(evidence))
        settled = _plan(state, properties, change, follow_up_ms, "--race-evidence", str(evidence))
        (folder / "plan-settled.json").write_text(json.dumps(settled, indent=1))
        run = ChainRun(scenario, plan, decisions, trigger_ms, last - trigger_ms, folder)
        run.settled_plan, run.logged = settled, logged
        run.phases = phases
        run.rebalance_gaps_ms = [
            round(b.time_ms - a.time_ms) for a, b in zip(decisions, decisions[1:], strict=False)
        ]
        (folder / "result.json").write_text(json.dumps(run.summary(), indent=1))
        (folder / "decisions.json").write_text(json.dumps([vars(d) for d in decisions]))
        return run
    finally:
        _keep_logs(cluster, folder)
        cluster.close()


def leader_records(logs: list[Path], after_ms: float) -> list[str]:
    """The leader's "Decided on assignment" lines and "Client ... per-consumer assignment"
    blocks (a log4j record with its continuation lines) logged at or after ``after_ms``, from
    the instances' logs, in time order: the ``--race-evidence`` input."""
    from datetime import datetime

    records: list[list[str]] = []
    for path in logs:
        current: list[str] | None = None
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("["):
                current = [line]
                records.append(current)
            elif current is not None:
                current.append(line)
    wanted = []
    for record in records:
        head = record[0]
        if "Decided on assignment" not in head and "per-consumer assignment" not in head:
            continue
        try:
            when = datetime.strptime(head[1:24], "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000
        except ValueError:
            continue
        if when >= after_ms:
            wanted.append((head[1:24], record))
    wanted.sort(key=lambda item: item[0])
    return [line for _, record in wanted for line in record]


def _keep_logs(cluster: StreamsCluster, folder: Path) -> None:
    """Copy every instance's log into ``folder/logs`` (the cluster's folder is removed): the
    leader's per-consumer assignments and "Requesting followup rebalance" lines explain a
    follow-up the plan did not expect."""
    import shutil

    logs = folder / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for number, instance in enumerate(cluster.instances, start=1):
        if instance.log.exists():
            shutil.copyfile(instance.log, logs / f"instance-{number}-{instance.process_id[:8]}.log")


def _quiet_after_change(
    cluster: StreamsCluster, processes: int, trigger_ms: float, timeout: float
) -> float:
    """Wait for the first decision after the change, then for a settled group."""
    cluster.wait_until(
        lambda: bool(_decisions(cluster, trigger_ms)), timeout, "the leader's first decision"
    )
    return _quiet(cluster, processes, trigger_ms, timeout)
