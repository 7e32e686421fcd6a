"""End to end: what ``streams-lag`` + ``streams-assign`` predict against what Kafka Streams does.

One check (:func:`run_scenario`) runs a real Kafka Streams application (:mod:`.streams_app`)
on a real broker (:mod:`.kafka`) until its assignment is stable and every standby has caught
up, then collects **the operator's view**, exactly what a user can fetch:

- ``members.txt``: ``kafka-consumer-groups.sh --describe --group <app> --members --verbose``;
- ``end-offsets.txt``: ``kafka-get-offsets.sh --topic '<app>-.*-changelog'``;
- ``topology.txt``: ``Topology#describe()`` as the application printed it;
- ``offsets.jsonl``: offset rows (``streams-lag collect`` over the state directories), in which
  the tasks each running instance currently runs are replaced by what that instance reports
  through ``KafkaStreams#allLocalStorePartitionLags()`` (standby tasks: their current changelog
  position) and ``-2`` for its running active tasks (``Task.LATEST_OFFSET``).

The last step is needed because Kafka's group leader reads the offsets of running tasks from
memory (``TaskManager#getTaskOffsetSums``), while a standby writes its ``.checkpoint`` only when
its changelog offsets moved by more than 10,000 records since the last one
(``StateManagerUtil#checkpointNeeded``) or when it is closed. The checkpoint files alone would
show a standby further behind than Kafka knows it is.

Then ``streams-lag compute`` turns the view into a cluster state, ``streams-assign
assign --json`` predicts the next assignment, the rebalance is triggered (A: a fourth instance
joins; B: one instance is killed with SIGKILL and its session times out; C: one instance is
stopped and restarted, a rolling bounce), and the prediction is compared with what each
instance reports from ``KafkaStreams#metadataForLocalThreads()`` (active and standby tasks per
process; warmup replicas are standbys there) and with whether the group leader's
``HighAvailabilityTaskAssignor`` decided on a follow-up probing rebalance.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.streams_app import (
    INPUT_PARTITIONS,
    ProcessAssignment,
    StreamsAppError,
    StreamsCluster,
    StreamsInstance,
)

__all__ = [
    "SCENARIOS",
    "OperatorView",
    "Decision",
    "ScenarioResult",
    "collect_operator_view",
    "parse_decision",
    "predict",
    "run_scenario",
]

CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
#: Scenario letters and what triggers their rebalance.
SCENARIOS = {
    "A": "a fourth instance joins",
    "B": "one instance is killed (SIGKILL) and its session times out",
    "C": "one instance is stopped (KafkaStreams#close) and restarted: a rolling bounce",
}
_SPARK_LOCK = threading.Lock()
_DECISION = re.compile(r"Decided on assignment: .* with (?P<no>no )?followup probing rebalance")
_CLIENT = re.compile(
    r"([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})=\[activeTasks: \(\[([^\]]*)\]\) "
    r"standbyTasks: \(\[([^\]]*)\]\)"
)
_LOG_TIME = re.compile(r"^\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")


@dataclass
class OperatorView:
    """The files a user collects before the rebalance (paths inside one folder)."""

    folder: Path
    members: Path
    end_offsets: Path
    topology: Path
    offsets: Path
    end_offset_sums: dict[str, int] = field(default_factory=dict)


@dataclass
class ScenarioResult:
    """One scenario's prediction beside what Kafka Streams did.

    Attributes
    ----------
    scenario:
        ``A``, ``B`` or ``C``.
    predicted:
        Process id -> (active task ids, standby task ids), warmups among the standbys.
    real:
        The same, as the group leader decided it in the first rebalance after the trigger
        (:class:`Decision`); empty when no decision was logged.
    settled:
        What the processes run once the group is stable again
        (``KafkaStreams#metadataForLocalThreads()``). It equals the leader's last decision
        (:attr:`last`); that is ``real`` unless further rebalances decided differently
        (cooperative follow-ups on new inputs, or a member that fell out of the group on a busy
        machine; see docs/e2e.md).
    predicted_probing, real_probing:
        Whether a follow-up probing rebalance is (was, in that first decision) decided.
    cluster_state:
        The cluster-state document the prediction was computed from.
    decisions:
        Every decision the group leader logged after the trigger, oldest first.
    """

    scenario: str
    predicted: dict[str, tuple[list[str], list[str]]]
    real: dict[str, tuple[list[str], list[str]]]
    settled: dict[str, tuple[list[str], list[str]]]
    predicted_probing: bool
    real_probing: bool | None
    cluster_state: dict[str, Any]
    folder: Path
    seconds: float = 0.0
    decisions: list[Decision] = field(default_factory=list)

    @property
    def last(self) -> dict[str, tuple[list[str], list[str]]]:
        """The leader's last decision after the trigger (empty when none was logged)."""
        return self.decisions[-1].clients if self.decisions else {}

    @property
    def matched(self) -> bool:
        """Prediction equal to the real assignment and the probing flag equal."""
        return self.predicted == self.real and self.predicted_probing == self.real_probing

    def differences(self) -> list[str]:
        """One line per process (or flag) where prediction and reality differ."""
        lines = []
        for pid in sorted(set(self.predicted) | set(self.real)):
            want, got = self.predicted.get(pid), self.real.get(pid)
            if want != got:
                lines.append(f"{pid}: predicted {want}, real {got}")
        if self.predicted_probing != self.real_probing:
            lines.append(
                f"probing rebalance: predicted {self.predicted_probing}, real {self.real_probing}"
            )
        return lines


def _as_lists(assignments: dict[str, ProcessAssignment]) -> dict[str, tuple[list[str], list[str]]]:
    return {
        pid: (_sorted_tasks(a.active), _sorted_tasks(a.standby)) for pid, a in assignments.items()
    }


def _sorted_tasks(tasks: Any) -> list[str]:
    return sorted(tasks, key=lambda t: tuple(int(x) for x in t.split("_")))


# ---------------------------------------------------------------------- collection
def wait_caught_up(cluster: StreamsCluster, timeout: float = 180.0) -> dict[str, int]:
    """Wait until every running instance reports, for every local store partition, a current
    position equal to the changelog's end offset, and those end offsets are what
    ``kafka-get-offsets`` prints; return them (``topic:partition`` -> offset)."""
    deadline = time.monotonic() + timeout
    reported: dict[str, int] = {}
    while True:

        def caught_up() -> bool:
            reported.clear()
            for instance in cluster.running_instances():
                current = instance.assignment()
                if current is None:
                    return False
                positions = instance.positions()
                stateful = {t for t in current.active | current.standby if not t.startswith("0_")}
                if sum(len(parts) for parts in positions.values()) != len(stateful):
                    return False
                for store, parts in positions.items():
                    for part, (position, end) in parts.items():
                        key = f"{cluster.application_id}-{store}-changelog:{part}"
                        if position != end or reported.setdefault(key, end) != end:
                            return False
            return True

        cluster.wait_until(
            caught_up,
            max(1.0, deadline - time.monotonic()),
            "every store caught up with its changelog",
        )
        ends = changelog_end_offsets(cluster)
        if (
            all(ends.get(key) == end for key, end in reported.items())
            and len(ends) == len(cluster.changelog_topics()) * INPUT_PARTITIONS
        ):
            return ends
        if time.monotonic() > deadline:
            raise StreamsAppError(f"end offsets {ends} differ from the instances' {reported}")
        time.sleep(1.0)


def changelog_end_offsets(cluster: StreamsCluster) -> dict[str, int]:
    """``kafka-get-offsets`` for the application's changelogs, parsed."""
    text = _get_offsets_text(cluster)
    out = {}
    for line in text.split():
        topic, part, offset = line.rsplit(":", 2)
        out[f"{topic}:{part}"] = int(offset)
    return out


def _get_offsets_text(cluster: StreamsCluster) -> str:
    return cluster.broker.run_tool(
        GET_OFFSETS,
        "--bootstrap-server",
        cluster.broker.bootstrap_servers,
        "--topic",
        f"{cluster.application_id}-.*-changelog",
    ).stdout


def collect_operator_view(
    cluster: StreamsCluster,
    folder: Path,
    members_text: str | None = None,
    end_offsets_text: str | None = None,
) -> OperatorView:
    """Write the operator's view of ``cluster`` into ``folder`` (see the module's notes).

    ``members_text`` / ``end_offsets_text`` are tool outputs fetched earlier (scenario C
    fetches them before stopping the instance it bounces); None runs the tools now.
    """
    from lag.sources.checkpoints import collect_state_dirs, write_offset_rows
    from lag.sources.topology import parse_topology

    folder.mkdir(parents=True, exist_ok=True)
    broker = cluster.broker
    if members_text is None:
        members_text = broker.run_tool(
            CONSUMER_GROUPS,
            "--bootstrap-server",
            broker.bootstrap_servers,
            "--describe",
            "--group",
            cluster.application_id,
            "--members",
            "--verbose",
        ).stdout
    if end_offsets_text is None:
        end_offsets_text = _get_offsets_text(cluster)
    view = OperatorView(
        folder,
        folder / "members.txt",
        folder / "end-offsets.txt",
        folder / "topology.txt",
        folder / "offsets.jsonl",
    )
    view.members.write_text(members_text)
    view.end_offsets.write_text(end_offsets_text)
    topology_text = cluster.topology_file.read_text()
    view.topology.write_text(topology_text)
    for line in end_offsets_text.split():
        topic, part, offset = line.rsplit(":", 2)
        view.end_offset_sums[f"{topic}:{part}"] = int(offset)

    changelogs = parse_topology(topology_text).changelog_topics(cluster.application_id)
    store_sub = {store: sub for _topic, (sub, store) in changelogs.items()}
    dirs = [i.state_dir for i in cluster.instances if i.state_dir.exists()]
    collected = collect_state_dirs(list(dirs), cluster.application_id)
    rows = collected.rows
    for instance in cluster.running_instances():
        rows = _with_running_tasks(rows, instance, cluster.application_id, store_sub)
    write_offset_rows(rows, view.offsets)
    return view


def _with_running_tasks(
    rows: list[dict[str, Any]],
    instance: StreamsInstance,
    application_id: str,
    store_sub: dict[str, int],
) -> list[dict[str, Any]]:
    """Replace the checkpoint rows of the tasks ``instance`` runs by what it reports."""
    current = instance.assignment()
    if current is None:
        raise StreamsAppError(f"{instance.name} has reported no assignment")
    running = current.active | current.standby
    kept = [
        r for r in rows if r["process_id"] != instance.process_id or r.get("task_id") not in running
    ]
    for store, parts in instance.positions().items():
        sub = store_sub[store]
        for part, (position, _end) in parts.items():
            task = f"{sub}_{part}"
            if task not in running:
                continue
            kept.append(
                {
                    "process_id": instance.process_id,
                    "task_id": task,
                    "topic": f"{application_id}-{store}-changelog",
                    "partition": part,
                    "offset": -2 if task in current.active else position,
                    "snapshot_time": None,
                    "source": f"{instance.name}: KafkaStreams#allLocalStorePartitionLags",
                    "line": None,
                }
            )
    return kept


# ---------------------------------------------------------------------- prediction
def predict(
    cluster: StreamsCluster,
    view: OperatorView,
    spark: Any = None,
    joining: list[StreamsInstance] = (),  # type: ignore[assignment]
    leaving: list[str] = (),  # type: ignore[assignment]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``streams-lag compute`` on the view, adjusted for the instances the operator
    adds (``joining``: no state, ``num.stream.threads`` threads) or removes (``leaving``:
    process ids), then ``streams-assign assign --json``.

    Returns
    -------
    (cluster state document, assignment document)
    """
    from lag.pipeline import ComputeRequest, run_compute

    output = view.folder / "cluster.json"
    request = ComputeRequest(
        application_id=cluster.application_id,
        topology=str(view.topology),
        members=[str(view.members)],
        end_offsets=[str(view.end_offsets)],
        offsets=[str(view.offsets)],
        output=str(output),
        errors_table=str(view.folder / "errors.jsonl"),
        configs={
            "acceptable_recovery_lag": cluster.acceptable_recovery_lag,
            "max_warmup_replicas": cluster.max_warmup_replicas,
            "num_standby_replicas": cluster.standbys,
            "probing_rebalance_interval_ms": cluster.probing_rebalance_interval_ms,
        },
    )
    with _SPARK_LOCK:  # scenarios may run in threads; one Spark job at a time
        run_compute(request, spark=spark)
    document = json.loads(output.read_text())
    document["clients"] = [c for c in document["clients"] if c["id"] not in set(leaving)]
    for instance in joining:
        document["clients"].append(
            {
                "id": instance.process_id,
                "capacity": instance.threads,
                "prev_active": [],
                "prev_standby": [],
                "task_lags": {},
            }
        )
    state_path = view.folder / "cluster-adjusted.json"
    state_path.write_text(json.dumps(document, indent=1))
    result = subprocess.run(
        [sys.executable, "-m", "streams_assign.cli", "assign", str(state_path), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise StreamsAppError(f"streams-assign assign failed:\n{result.stderr[-3000:]}")
    assignment = json.loads(result.stdout)
    (view.folder / "predicted.json").write_text(result.stdout)
    return document, assignment


# ---------------------------------------------------------------------- the real group
@dataclass(frozen=True)
class Decision:
    """One assignment the group leader's ``HighAvailabilityTaskAssignor`` decided (its INFO
    line ``Decided on assignment: {<process>=[activeTasks: (...) standbyTasks: (...) ...]}
    with [no] followup probing rebalance``).

    Attributes
    ----------
    time_ms:
        When it was logged (epoch milliseconds).
    probing:
        Whether a follow-up probing rebalance was decided.
    clients:
        Process id -> (active task ids, standby task ids); warmups are among the standbys, as
        in Kafka's ``ClientState``. Before Kafka Streams withholds, for one more rebalance, the
        active tasks another process must first revoke (cooperative rebalancing).
    """

    time_ms: float
    probing: bool
    clients: dict[str, tuple[list[str], list[str]]]


def parse_decision(line: str) -> Decision | None:
    """The :class:`Decision` in one line of an instance's log, or None if it holds none."""
    from datetime import datetime

    match, when = _DECISION.search(line), _LOG_TIME.match(line)
    if match is None or when is None:
        return None
    moment = datetime.strptime(when["time"], "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000
    clients = {
        pid: (_sorted_tasks(_task_list(active)), _sorted_tasks(_task_list(standby)))
        for pid, active, standby in _CLIENT.findall(line)
    }
    return Decision(moment, match["no"] is None, clients)


def _decisions(cluster: StreamsCluster, after_ms: float) -> list[Decision]:
    """Every decision the group leader logged after ``after_ms``, oldest first."""
    found = []
    for instance in cluster.instances:
        for line in instance.log_lines("Decided on assignment"):
            decision = parse_decision(line)
            if decision is not None and decision.time_ms >= after_ms:
                found.append(decision)
    return sorted(found, key=lambda d: d.time_ms)


def _task_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _stable_now(cluster: StreamsCluster, processes: int, timeout: float) -> dict[str, Any]:
    def settled() -> bool:
        return len(cluster.running_instances()) == processes and cluster.is_stable(3000)

    cluster.wait_until(settled, timeout, f"a stable assignment over {processes} processes")
    return cluster.assignments()


def run_scenario(
    broker: KafkaBroker,
    scenario: str,
    folder: Path,
    *,
    instances: int = 3,
    threads: int = 2,
    standbys: int = 1,
    records: int = 3000,
    acceptable_recovery_lag: int = 500,
    victim: int = 0,
    spark: Any = None,
    session_timeout_ms: int | None = None,
    application_id: str | None = None,
    joining_threads: int | None = None,
    cp: str | None = None,
) -> ScenarioResult:
    """Run one scenario end to end and return the prediction beside the real outcome.

    Parameters
    ----------
    broker:
        A running broker; the input topics are created on it when missing.
    scenario:
        ``A`` (add an instance), ``B`` (kill one), ``C`` (bounce one); see :data:`SCENARIOS`.
    folder:
        Where the operator's view, the cluster state and the prediction are written.
    instances, threads, standbys:
        Processes before the rebalance, ``num.stream.threads`` each, ``num.standby.replicas``.
    records:
        Records produced to ``orders`` and to ``payments`` before the view is collected.
    acceptable_recovery_lag:
        ``acceptable.recovery.lag`` (records).
    victim:
        Index of the instance killed (B) or bounced (C).
    spark:
        Spark session for ``streams-lag compute`` (None: :func:`lag.spark.session.get_spark`).
    session_timeout_ms:
        The consumers' ``session.timeout.ms``; default 10 s, 20 s in C (the bounced instance
        must be back, JVM start included, before its old members' sessions expire, or the
        group would rebalance once without it).
    application_id:
        Defaults to ``e2e-<scenario>-<time>`` so scenarios never share a group.
    joining_threads:
        Threads of the instance that joins in A (default ``threads``).
    cp:
        Class path of the instances (default: Kafka Streams of ``.kafka/lib``;
        :func:`~devtools.kafka.streams_app.app_classpath_next` runs Kafka Streams 4.3,
        whose stores keep their offsets inside, KIP-1035).

    Raises
    ------
    StreamsAppError
        When the application does not reach a stable, caught-up state, or an instance dies.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario must be one of {sorted(SCENARIOS)}, got {scenario!r}")
    started = time.monotonic()
    if session_timeout_ms is None:
        session_timeout_ms = 20_000 if scenario == "C" else 10_000
    app_id = application_id or f"e2e-{scenario.lower()}-{int(time.time() * 1000) % 10**8}"
    cluster = StreamsCluster(
        broker,
        app_id,
        standbys=standbys,
        acceptable_recovery_lag=acceptable_recovery_lag,
        session_timeout_ms=session_timeout_ms,
        heartbeat_interval_ms=1000,
        cp=cp,
    )
    try:
        cluster.create_input_topics()
        for _ in range(instances):
            cluster.add_instance(threads=threads)
        _stable_now(cluster, instances, 240)
        cluster.produce(records)
        _stable_now(cluster, instances, 240)
        wait_caught_up(cluster)
        _stable_now(cluster, instances, 60)

        joining: list[StreamsInstance] = []
        leaving: list[str] = []
        target = cluster.instances[victim] if scenario != "A" else None
        if scenario == "C":
            assert target is not None
            members_text = broker.run_tool(
                CONSUMER_GROUPS,
                "--bootstrap-server",
                broker.bootstrap_servers,
                "--describe",
                "--group",
                app_id,
                "--members",
                "--verbose",
            ).stdout
            ends_text = _get_offsets_text(cluster)
            target.stop()
            view = collect_operator_view(cluster, folder, members_text, ends_text)
            trigger_ms = time.time() * 1000
            target.start()
        else:
            view = collect_operator_view(cluster, folder)
        if scenario == "A":
            newcomer = cluster.add_instance(threads=joining_threads or threads, start=False)
            joining.append(newcomer)
        elif scenario == "B":
            assert target is not None
            leaving.append(target.process_id)

        document, predicted = predict(cluster, view, spark, joining, leaving)

        if scenario == "A":
            trigger_ms = time.time() * 1000
            joining[0].start()
        elif scenario == "B":
            assert target is not None
            trigger_ms = time.time() * 1000
            target.kill()
        processes = len(cluster.running_instances()) if scenario != "C" else instances
        real = _stable_now(cluster, processes, 240)
        decisions = _decisions(cluster, trigger_ms)
        if (
            scenario == "C"
            and target is not None
            and any(target.process_id not in d.clients for d in decisions)
        ):
            raise StreamsAppError(
                f"the group rebalanced without the bounced instance {target.process_id}: its "
                f"restart took longer than session.timeout.ms={session_timeout_ms}; "
                f"decisions {decisions}"
            )
        first = decisions[0] if decisions else None
        result = ScenarioResult(
            scenario=scenario,
            predicted={
                pid: (_sorted_tasks(c["active"]), _sorted_tasks(c["standby"]))
                for pid, c in predicted["clients"].items()
            },
            real=first.clients if first else {},
            settled=_as_lists(real),
            predicted_probing=bool(predicted["probing_rebalance_needed"]),
            real_probing=first.probing if first else None,
            cluster_state=document,
            folder=folder,
            seconds=time.monotonic() - started,
            decisions=decisions,
        )
        fields = ("scenario", "matched", "predicted", "real", "settled", "predicted_probing")
        report = {name: getattr(result, name) for name in (*fields, "real_probing")}
        report |= {
            "decisions": [vars(d) for d in decisions],
            "differences": result.differences(),
            "settled_equals_first_decision": result.settled == result.real,
            "settled_equals_last_decision": result.settled == result.last,
        }
        (folder / "result.json").write_text(json.dumps(report, indent=1))
        return result
    finally:
        cluster.close()
