"""End to end: what ``streams-lag`` + ``streams-assign`` predict against what Kafka Streams does.

One check (:func:`run_scenario`) runs a real Kafka Streams application (:mod:`.streams_app`)
on a real broker (:mod:`.kafka`) until its assignment is stable and every standby has caught
up, then collects **only what an operator has**, no hook in the application:

- the group's own state: ``DescribeGroups`` (every member's ``SubscriptionInfo`` and
  ``AssignmentInfo``) and the changelogs' end offsets (``ListOffsets``), read by
  ``streams-lag snapshot``;
- ``metrics-<instance>.txt``: Kafka's ``JmxTool`` over each running instance's JMX port (the
  restore consumers' ``records-lag``, ``last-rebalance-seconds-ago``, ``stream-state-metrics``):
  the positions of running standbys, which Kafka's group leader reads from memory
  (``TaskManager#getTaskOffsetSums``) and which no ``.checkpoint`` holds (a standby writes one
  only every 10,000 records or on close, ``StateManagerUtil#checkpointNeeded``);
- the instances' state directories (``.checkpoint`` files and their modification times).

``streams-lag snapshot`` keeps, per (process, task), the freshest of these. Then
``streams-assign assign --json`` on that cluster state predicts the next assignment, the
rebalance is triggered (A: a fourth instance joins; B: one instance is killed with SIGKILL and
its session times out; C: one instance is stopped and restarted, a rolling bounce), and the
prediction is compared with what each instance reports from
``KafkaStreams#metadataForLocalThreads()`` (active and standby tasks per process; warmup
replicas are standbys there) and with whether the group leader's ``HighAvailabilityTaskAssignor``
decided on a follow-up probing rebalance.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
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
JMX_TOOL = "org.apache.kafka.tools.JmxTool"
JMX_FETCH = "kafka.consumer:type=consumer-fetch-manager-metrics"
JMX_COORDINATOR = "kafka.consumer:type=consumer-coordinator-metrics"
#: Scenario letters and what triggers their rebalance.
SCENARIOS = {
    "A": "a fourth instance joins",
    "B": "one instance is killed (SIGKILL) and its session times out",
    "C": "one instance is stopped (KafkaStreams#close) and restarted: a rolling bounce",
}
_DECISION = re.compile(r"Decided on assignment: .* with (?P<no>no )?followup probing rebalance")
_CLIENT = re.compile(
    r"([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})=\[activeTasks: \(\[([^\]]*)\]\) "
    r"standbyTasks: \(\[([^\]]*)\]\)"
)
_LOG_TIME = re.compile(r"^\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")


@dataclass
class OperatorView:
    """What a user collects before the rebalance (files inside one folder).

    Attributes
    ----------
    folder:
        Where the files are.
    metrics:
        One ``JmxTool`` output per running instance.
    state_dirs:
        Every instance's ``state.dir`` that exists.
    live:
        The group and the changelogs' end offsets as the cluster answered
        (:class:`lag.sources.live_cluster.LiveGroup`), read when the view was collected.
    """

    folder: Path
    metrics: list[Path] = field(default_factory=list)
    state_dirs: list[Path] = field(default_factory=list)
    live: Any = None


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


def scrape_metrics(cluster: StreamsCluster, folder: Path) -> list[Path]:
    """Kafka's ``JmxTool`` over each running instance's JMX port, one file per instance: the
    restore consumers' ``records-lag``, the stream threads' ``last-rebalance-seconds-ago`` and
    which task holds which store (``stream-state-metrics``)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for instance in cluster.running_instances():
        url = f"service:jmx:rmi:///jndi/rmi://127.0.0.1:{instance.jmx_port}/jmxrmi"
        text = cluster.broker.run_tool(
            JMX_TOOL,
            "--jmx-url",
            url,
            *("--object-name", f"{JMX_FETCH},client-id=*,topic=*,partition=*"),
            *("--object-name", f"{JMX_COORDINATOR},client-id=*"),
            *("--object-name", "kafka.streams:type=stream-state-metrics,*"),
            *("--attributes", "records-lag,last-rebalance-seconds-ago,put-rate"),
            *("--one-time", "true"),
        ).stdout
        path = folder / f"metrics-{instance.name}.txt"
        path.write_text(text)
        written.append(path)
    return written


def read_group(cluster: StreamsCluster) -> Any:
    """``DescribeGroups`` and ``ListOffsets`` now
    (:func:`lag.sources.live_cluster.read_live_group`)."""
    from lag.sources.live_cluster import read_live_group

    return read_live_group(cluster.broker.bootstrap_servers, cluster.application_id)


def collect_operator_view(
    cluster: StreamsCluster, folder: Path, live: Any = None, metrics: list[Path] | None = None
) -> OperatorView:
    """The operator's sources of ``cluster`` (see the module's notes), files in ``folder``.

    ``live`` / ``metrics`` are the group state and scrapes taken earlier (scenario C takes them
    before stopping the instance it bounces); None reads them now.
    """
    folder.mkdir(parents=True, exist_ok=True)
    return OperatorView(
        folder,
        metrics=scrape_metrics(cluster, folder) if metrics is None else metrics,
        state_dirs=[i.state_dir for i in cluster.instances if i.state_dir.exists()],
        live=read_group(cluster) if live is None else live,
    )


# ---------------------------------------------------------------------- prediction
def snapshot(cluster: StreamsCluster, view: OperatorView) -> dict[str, Any]:
    """``streams-lag snapshot``'s document from the view (written to ``cluster.json``), with
    the configs the application was started with, given as its properties file."""
    from lag.job.snapshot import build_snapshot
    from lag.sources.checkpoints import collect_state_dirs
    from lag.sources.metrics import read_metrics
    from lag.sources.streams_config import resolve_configs
    from streams_assign.model import AssignmentConfigs

    properties = view.folder / "app.properties"
    properties.write_text(
        f"acceptable.recovery.lag={cluster.acceptable_recovery_lag}\n"
        f"max.warmup.replicas={cluster.max_warmup_replicas}\n"
        f"num.standby.replicas={cluster.standbys}\n"
        f"probing.rebalance.interval.ms={cluster.probing_rebalance_interval_ms}\n"
    )
    configs = resolve_configs({}, str(properties))
    rows = collect_state_dirs(view.state_dirs, cluster.application_id).rows
    result = build_snapshot(
        view.live,
        AssignmentConfigs(**configs.values),
        dumps=[read_metrics(p) for p in view.metrics],
        checkpoint_rows=rows,
        description=configs.description(),
    )
    (view.folder / "cluster.json").write_text(json.dumps(result.document, indent=1))
    (view.folder / "provenance.json").write_text(
        json.dumps([vars_of(row) for row in result.provenance], indent=1)
    )
    return result.document


def vars_of(row: Any) -> dict[str, Any]:
    """A slotted dataclass as a dict."""
    return {name: getattr(row, name) for name in row.__slots__}


def predict(
    cluster: StreamsCluster,
    view: OperatorView,
    joining: list[StreamsInstance] = (),  # type: ignore[assignment]
    leaving: list[str] = (),  # type: ignore[assignment]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The snapshot of the view, adjusted for the instances the operator adds (``joining``:
    no state, ``num.stream.threads`` threads) or removes (``leaving``: process ids), then
    ``streams-assign assign --json``.

    Returns
    -------
    (cluster state document, assignment document)
    """
    document = snapshot(cluster, view)
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
    # The leader logs its task assignor's per-process decision ("Decided on assignment"),
    # before the thread-level step withholds tasks whose partitions another thread still owns;
    # that decision is what is compared, so the threads and partitions are left out here.
    decided = {k: v for k, v in document.items() if k != "task_partitions"}
    decided["clients"] = [
        {k: v for k, v in c.items() if k != "consumers"} for c in document["clients"]
    ]
    state_path = view.folder / "cluster-adjusted.json"
    state_path.write_text(json.dumps(decided, indent=1))
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
        jmx=True,
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
            # The group's state and the metrics as they were before the stop; the state
            # directories after it (KafkaStreams#close checkpoints every store).
            live = read_group(cluster)
            metrics = scrape_metrics(cluster, folder)
            target.stop()
            view = collect_operator_view(cluster, folder, live, metrics)
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

        document, predicted = predict(cluster, view, joining, leaving)

        if scenario == "A":
            trigger_ms = time.time() * 1000
            joining[0].start()
        elif scenario == "B":
            assert target is not None
            trigger_ms = time.time() * 1000
            target.kill()
        processes = len(cluster.running_instances()) if scenario != "C" else instances
        if scenario == "C":
            assert target is not None
            # Until the restarted JVM reports, its last line is the one from before the stop,
            # and the group would look stable before it even rejoined.
            cluster.wait_until(
                lambda: any(r["time_ms"] >= trigger_ms for r in target.records("assignment")),
                240,
                "the bounced instance's first assignment after its restart",
            )
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
