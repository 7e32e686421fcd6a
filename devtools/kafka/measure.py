"""Measuring an assignor on a real cluster: one app, one change, figures from the instances.

Used by ``benchmarks/streams_protocols_side_by_side.py`` (classic HA beside the streams group's
sticky assignor) and ``benchmarks/plugin_real_cluster.py`` (Kafka's assignors beside the
``lag_aware_sticky`` plug-in through KIP-924 and KIP-1357). One *setup* is a door and an
assignor; one *scenario* is a change made to a running group of instances of the project's
Streams app (:mod:`devtools.kafka.streams_app`):

- ``kill``: ``kill -9`` of the first running instance (no close, no LeaveGroup);
- ``add``: one new instance with an empty state directory;
- ``bounce``: a rolling bounce, each running instance in turn closed (SIGTERM,
  ``KafkaStreams#close``), started again on its state directory and waited for.

Per scenario (:class:`StepFigures`): records restored into active tasks' stores (the instances'
``StateRestoreListener``, :mod:`devtools.kafka.restores`), records their standbys loaded, the
seconds from the change until every running instance is ``RUNNING`` with every task active
exactly once (:meth:`StreamsCluster.is_stable`, minus its quiet period), the rebalances the group
leader decided (classic) or the target computations the broker made (streams), the decisions that
asked for a probing rebalance (classic), the active tasks whose process changed between the
stable states (net) and, on classic, from one leader decision to the next (decided, every move
the assignor made, also one undone later), and the spread of tasks per stream thread at the end
with whether it is within Kafka's bound (actives per thread and stateful tasks, active plus
standby, per thread each differ by at most one, as Kafka's ``TaskAssignorConvergenceTest``
checks). Nothing here asserts on time.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from devtools.kafka.broker import KafkaBroker, running_broker
from devtools.kafka.plugin_harness import plugin_jar
from devtools.kafka.streams_app import ProcessAssignment, StreamsCluster, StreamsInstance
from devtools.kafka.streams_group_live import set_group_configs
from streams_assign.simulation.leader_log import read_decisions

__all__ = [
    "BROKER_44_CONFIGS",
    "SCENARIOS",
    "SETUPS",
    "Setup",
    "StepFigures",
    "decided_moves",
    "decisions_in_log",
    "door_broker",
    "leader_decisions",
    "measure_run",
    "measure_runs",
    "measure_step",
    "spreads",
    "stateful_subtopologies",
]

PLUGIN_924 = "io.streamsassign.assignor.LagAwareStickyTaskAssignor"
STICKY_1071 = "org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor"
PLUGIN_1357 = "io.streamsassign.assignor.LagAwareStickyGroupAssignor"
#: The 4.4 broker: streams groups with short sessions, no initial rebalance delay, Kafka's
#: sticky assignor first (the default) and the plug-in second (KIP-1357), every target
#: computation logged (``org.apache.kafka.coordinator.group`` at DEBUG). A group's
#: ``streams.task.offset.interval.ms`` may go down to 1 s (Kafka's minimum is 15 s); the
#: groups keep the 60 s default unless :func:`measure_run` is given another.
BROKER_44_CONFIGS: dict[str, object] = {
    "group.streams.min.task.offset.interval.ms": 1000,
    "group.streams.min.session.timeout.ms": 1000,
    "group.streams.session.timeout.ms": 6000,
    "group.streams.min.heartbeat.interval.ms": 500,
    "group.streams.heartbeat.interval.ms": 1000,
    "group.streams.initial.rebalance.delay.ms": 0,
    "group.streams.assignors": f"{STICKY_1071},{PLUGIN_1357}",
}
SCENARIOS = ("kill", "add", "bounce")


@dataclass(frozen=True)
class Setup:
    """One door and one assignor.

    Attributes
    ----------
    name:
        Label in tables (``KIP-924 HA`` ...).
    protocol:
        ``classic`` (Kafka Streams 4.2 app, 4.2 broker) or ``streams`` (4.4 app,
        ``group.protocol=streams``, 4.4 broker with the plug-in jar on its class path).
    plugin:
        True for ``lag_aware_sticky`` (``task.assignor.class`` on classic, the group config
        ``streams.assignor.name`` on streams), False for Kafka's default assignor
        (``HighAvailabilityTaskAssignor`` / the broker's ``StickyTaskAssignor``).
    """

    name: str
    protocol: str
    plugin: bool


SETUPS = (
    Setup("KIP-924 Kafka HA", "classic", False),
    Setup("KIP-924 lag_aware_sticky", "classic", True),
    Setup("KIP-1357 Kafka sticky", "streams", False),
    Setup("KIP-1357 lag_aware_sticky", "streams", True),
)


@dataclass(frozen=True)
class StepFigures:
    """What one scenario cost, measured from the instances (and the broker's log).

    Attributes
    ----------
    scenario:
        ``kill``, ``add`` or ``bounce``.
    seconds:
        From the change until stable (every running instance RUNNING, each task active once,
        standbys placed), quiet period excluded; for ``bounce`` the whole rolling bounce, the
        quiet periods after all but the last restart included.
    restored:
        Records restored into active tasks' stores (``onRestoreEnd`` / ``onRestoreSuspended``
        totals of every instance) from the change until stable.
    standby_loaded:
        Records the standby tasks loaded in that time (``StandbyUpdateListener``).
    rebalances:
        Classic: assignments the group leader's assignor computed (its log lines); streams: the
        broker's ``Computed a new target assignment`` lines for the group.
    probing:
        Classic: of those, the ones that asked for a follow-up probing rebalance (always 0 on
        streams: the 4.4 broker has no probing rebalance).
    moved:
        Active tasks whose process changed (for ``bounce`` summed over the five restarts; a
        killed instance's tasks count as moved).
    active_spread, stateful_spread:
        Largest minus smallest count per stream thread at the end: active tasks; active plus
        standby tasks of stateful sub-topologies.
    added_actives:
        Active tasks of the added instance at the end (``add`` only, else None).
    decided_moved:
        Classic: active tasks whose process changed from one decision of the group leader's
        assignor to the next (the first against the stable state before the change), summed
        over the scenario's decisions (:func:`decided_moves`), so a task moved away and back
        counts twice; None on streams.
    """

    scenario: str
    seconds: float
    restored: int
    standby_loaded: int
    rebalances: int
    probing: int
    moved: int
    active_spread: int
    stateful_spread: int
    added_actives: int | None
    decided_moved: int | None = None

    @property
    def balanced(self) -> bool:
        """Within Kafka's bound: both spreads at most one task per thread."""
        return self.active_spread <= 1 and self.stateful_spread <= 1


_SUBTOPOLOGY = re.compile(r"^\s*Sub-topology: (\d+)")
_STORES = re.compile(r"\(stores: \[([^\]]*)\]\)")


def stateful_subtopologies(description: str) -> set[int]:
    """Sub-topology ids that own a store, from ``Topology#describe()`` text (the cluster's
    ``topology.txt``)."""
    found, current = set(), None
    for line in description.splitlines():
        match = _SUBTOPOLOGY.match(line)
        if match:
            current = int(match[1])
        stores = _STORES.search(line)
        if current is not None and stores and stores[1].strip():
            found.add(current)
    return found


def spreads(assignments: dict[str, ProcessAssignment], stateful: set[int]) -> tuple[int, int]:
    """(active spread, stateful spread) per stream thread over every thread of ``assignments``
    (process id -> what it runs); tasks are ``<sub-topology>_<partition>``; (0, 0) when empty."""
    actives, loads = [], []
    for runs in assignments.values():
        for active, standby in runs.threads.values():
            actives.append(len(active))
            loads.append(sum(1 for t in active | standby if int(t.split("_")[0]) in stateful))
    if not actives:
        return 0, 0
    return max(actives) - min(actives), max(loads) - min(loads)


def decisions_in_log(lines: list[str], plugin: bool) -> tuple[int, int]:
    """(assignments computed, of them asking for a probing rebalance) in a classic leader's
    ``instance.log`` lines: ``HighAvailabilityTaskAssignor``'s ``Decided on assignment: ...
    with [no ]followup probing rebalance.`` or the plug-in's ``lag_aware_sticky assigned ...;
    probing rebalance: true|false``."""
    if plugin:
        mine = [line for line in lines if "lag_aware_sticky assigned" in line]
        return len(mine), sum(1 for line in mine if "probing rebalance: true" in line)
    mine = [line for line in lines if "Decided on assignment:" in line]
    return len(mine), sum(1 for line in mine if "with followup probing rebalance" in line)


_STAMP = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\]")
_PLUGIN_DECISION = re.compile(r"lag_aware_sticky decision: (?P<doc>\{.*\}) \(")


def leader_decisions(lines: list[str], plugin: bool) -> list[dict[str, frozenset[str]]]:
    """The active tasks per process id of every decision in a classic leader's log lines.

    Parameters
    ----------
    lines:
        ``instance.log`` lines (log4j's ``[yyyy-MM-dd HH:mm:ss,SSS]`` first), of one or several
        instances; the decisions are ordered by their time stamps (a later leader's after an
        earlier one's), lines without a stamp are skipped.
    plugin:
        False: ``HighAvailabilityTaskAssignor``'s ``Decided on assignment: {<process id>=
        [activeTasks: ([1_3, ...]) ...], ...}`` lines (``ClientState#toString``, read by
        :func:`streams_assign.simulation.leader_log.read_decisions`); True: the plug-in's
        ``lag_aware_sticky decision: {"clients": {<process id>: {"active": [...], ...}}, ...}``
        lines (``lag.aware.sticky.log.decisions=true``).

    Returns
    -------
    list of dict
        One per decision, oldest first: process id -> its active task ids (``1_3``).

    Raises
    ------
    StreamsAssignError
        When an HA decision line names no client in ``ClientState`` form.
    json.JSONDecodeError
        When a complete plug-in decision line does not hold JSON.
    """
    stamped = sorted((line for line in lines if _STAMP.match(line)), key=lambda n: n[:25])
    if not plugin:
        mine = [line for line in stamped if "Decided on assignment:" in line]
        return [
            {pid: frozenset(str(t) for t in c.active) for pid, c in d.clients.items()}
            for d in read_decisions(mine, "leader log")
        ]
    found = []
    for line in stamped:
        match = _PLUGIN_DECISION.search(line)
        if match is not None:
            clients = json.loads(match["doc"])["clients"]
            found.append({pid: frozenset(c["active"]) for pid, c in clients.items()})
    return found


def decided_moves(before: dict[str, str], decisions: list[dict[str, frozenset[str]]]) -> int:
    """Active tasks whose process changed, decision after decision, summed.

    ``before`` (task id -> process id, the stable state before the change) is the owner each
    task is compared with in the first decision; each decision's owners are the next one's
    baseline. A task whose owner is gone from a decision (a killed process) counts as moved when
    it runs elsewhere; a task with no earlier owner does not count.
    """
    owners, moved = dict(before), 0
    for decision in decisions:
        now = {t: pid for pid, tasks in decision.items() for t in tasks}
        moved += sum(1 for t, pid in now.items() if owners.get(t) not in (None, pid))
        owners.update(now)
    return moved


class _Counts:
    """Rebalances / computations so far, and whether the latest asked for a probing one."""

    def __init__(self, setup: Setup, cluster: StreamsCluster, broker: KafkaBroker) -> None:
        self.setup, self.cluster, self.broker = setup, cluster, broker

    def __call__(self) -> tuple[int, int]:
        if self.setup.protocol == "streams":
            text = (self.broker.log_dir / "server.log").read_text(errors="replace")
            needle = f"[GroupId {self.cluster.application_id}] Computed a new target assignment"
            return text.count(needle), 0
        lines = [line for i in self.cluster.instances for line in i.log_lines("ssign")]
        return decisions_in_log(lines, self.setup.plugin)

    def decisions(self) -> list[dict[str, frozenset[str]]] | None:
        """Classic: every decision the leaders logged so far (:func:`leader_decisions`); None on
        streams."""
        if self.setup.protocol == "streams":
            return None
        needle = "lag_aware_sticky decision:" if self.setup.plugin else "Decided on assignment:"
        lines = [line for i in self.cluster.instances for line in i.log_lines(needle)]
        return leader_decisions(lines, self.setup.plugin)

    def probing_pending(self) -> bool:
        """Whether the newest classic decision asked for a probing rebalance."""
        if self.setup.protocol == "streams":
            return False
        stamped = []
        for instance in self.cluster.instances:
            stamped += instance.log_lines("ssign")
        stamped.sort()  # lines start with their [timestamp]
        last = [n for n in stamped if "Decided on assignment:" in n or "sticky assigned" in n]
        return bool(last) and (
            "with followup probing rebalance" in last[-1] or "probing rebalance: true" in last[-1]
        )


def _actives(cluster: StreamsCluster) -> dict[str, str]:
    return {t: pid for pid, a in cluster.assignments().items() for t in a.active}


def _moved(before: dict[str, str], after: dict[str, str]) -> int:
    return sum(1 for t, p in after.items() if before.get(t) not in (None, p))


def _settle(cluster: StreamsCluster, counts: _Counts, timeout: float, quiet_ms: int) -> None:
    """Wait until stable and, on classic, until no decision still waits for its probing
    rebalance (Kafka Streams' ``probing.rebalance.interval.ms``, at least 60 s)."""
    deadline = time.monotonic() + timeout
    cluster.wait_stable(timeout=timeout, quiet_ms=quiet_ms)
    while counts.probing_pending():
        seen = counts()[0]

        def probed(seen: int = seen) -> bool:
            return counts()[0] > seen

        cluster.wait_until(probed, deadline - time.monotonic(), "the probing rebalance")
        cluster.wait_stable(timeout=max(1.0, deadline - time.monotonic()), quiet_ms=quiet_ms)


def measure_step(
    cluster: StreamsCluster,
    counts: _Counts,
    scenario: str,
    threads: int,
    stateful: set[int],
    timeout: float = 900.0,
    quiet_ms: int = 3000,
    bounce_down_s: float = 0.0,
) -> StepFigures:
    """Make the change ``scenario`` to a stable ``cluster`` and measure it (:class:`StepFigures`).

    ``bounce_down_s`` (seconds, ``bounce`` only) keeps each instance down that long after its
    close before it starts again, as a slow restart would (longer than the session timeout, the
    group rebalances without it first).

    Raises
    ------
    ValueError
        For a scenario not in :data:`SCENARIOS`.
    StreamsAppError
        When the group is not stable again within ``timeout`` seconds or an instance dies.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario {scenario!r} is not one of {SCENARIOS}")
    before = start_actives = _actives(cluster)
    rebalances0, probing0 = counts()
    decisions0 = counts.decisions()
    since_ms = int(time.time() * 1000)
    loaded0 = sum(s.records for i in cluster.instances for s in i.standby_loads())
    start = time.monotonic()
    moved, added = 0, None
    if scenario == "kill":
        cluster.running_instances()[0].kill()
    elif scenario == "add":
        added = cluster.add_instance(threads=threads).process_id
    else:
        for instance in cluster.running_instances():
            instance.stop()
            time.sleep(bounce_down_s)
            restarted_ms = int(time.time() * 1000)
            instance.start()

            # Its file still ends with the closed JVM's last RUNNING line: wait for the new one.
            def restarted(i: StreamsInstance = instance, t: int = restarted_ms) -> bool:
                return any(line["time_ms"] >= t for line in i.records("assignment"))

            cluster.wait_until(restarted, timeout, f"{instance.name} to start again")
            _settle(cluster, counts, timeout, quiet_ms)
            now = _actives(cluster)
            moved, before = moved + _moved(before, now), now
    _settle(cluster, counts, timeout, quiet_ms)
    seconds = time.monotonic() - start - quiet_ms / 1000
    after = _actives(cluster)
    rebalances, probing = counts()
    decisions = counts.decisions()
    decided = None
    if decisions is not None and decisions0 is not None:
        decided = decided_moves(start_actives, decisions[len(decisions0) :])
    final = cluster.assignments()
    active_spread, stateful_spread = spreads(final, stateful)
    loaded = sum(s.records for i in cluster.instances for s in i.standby_loads()) - loaded0
    return StepFigures(
        scenario=scenario,
        seconds=round(seconds, 1),
        restored=cluster.restored_records(since_ms),
        standby_loaded=loaded,
        rebalances=rebalances - rebalances0,
        probing=probing - probing0,
        moved=moved + _moved(before, after),
        active_spread=active_spread,
        stateful_spread=stateful_spread,
        added_actives=len(final[added].active) if added else None,
        decided_moved=decided,
    )


@contextlib.contextmanager
def door_broker(protocol: str, work_dir: Path | None = None) -> Iterator[KafkaBroker]:
    """A broker for one door: Kafka 4.2 for ``classic``; for ``streams`` Kafka 4.4 with the
    plug-in jar on its class path and :data:`BROKER_44_CONFIGS`, its target computations and the
    plug-in's inputs and decisions logged (``org.apache.kafka.coordinator.group`` and
    ``io.streamsassign`` at DEBUG). Stopped when the block ends."""
    if protocol == "classic":
        with running_broker(work_dir, version="4.2") as broker:
            yield broker
        return
    levels = {"org.apache.kafka.coordinator.group": "DEBUG", "io.streamsassign": "DEBUG"}
    with running_broker(
        work_dir,
        version="4.4",
        configs=BROKER_44_CONFIGS,
        log_levels=levels,
        extra_classpath=[plugin_jar()],
    ) as broker:
        yield broker


def measure_run(
    broker: KafkaBroker,
    setup: Setup,
    app_id: str,
    scenarios: tuple[str, ...],
    instances: int = 5,
    threads: int = 1,
    partitions: int = 6,
    records: int = 20_000,
    work_dir: Path | None = None,
    logs_dir: Path | None = None,
    bounce_down_s: float = 0.0,
    task_offset_interval_ms: int | None = None,
) -> list[StepFigures]:
    """Start ``instances`` instances of the app (``threads`` each, 1 standby, ``partitions``
    input partitions, ``records`` records per input topic), wait until stable, then make the
    ``scenarios`` one after the other on the same group and measure each. The classic plug-in
    logs its inputs and decisions (``lag.aware.sticky.log.decisions=true``). The cluster is
    closed (every JVM killed, its folder removed) when done or on failure; with ``logs_dir``,
    each instance's files (``instance.log``, ``assignment.jsonl``, ``restores.jsonl``) are first
    copied to ``logs_dir/<app_id>/<instance>/``, and ``steps.jsonl`` there holds each measured
    scenario's start and end (epoch ms) and figures. ``bounce_down_s`` goes to
    :func:`measure_step`. ``task_offset_interval_ms`` sets the streams group's
    ``streams.task.offset.interval.ms`` (how often members report their task offsets; at least
    1000 on :func:`door_broker`'s broker); ignored on ``classic``."""
    classic = setup.protocol == "classic"
    configs: dict[str, object] = {}
    if classic and setup.plugin:
        configs["task.assignor.class"] = PLUGIN_924
        configs["lag.aware.sticky.log.decisions"] = "true"
    if not classic:
        configs["group.protocol"] = "streams"
        group: dict[str, object] = {"streams.num.standby.replicas": 1}
        if task_offset_interval_ms is not None:
            group["streams.task.offset.interval.ms"] = task_offset_interval_ms
        if setup.plugin:
            group["streams.assignor.name"] = "lag_aware_sticky"
        set_group_configs(broker, app_id, group)
    with StreamsCluster(
        broker,
        app_id,
        kafka_version="4.2" if classic else "4.4",
        extra_classpath=[plugin_jar()] if classic and setup.plugin else (),
        configs=configs,
        partitions=partitions,
        standbys=1,
        work_dir=work_dir,
    ) as cluster:
        cluster.produce(records)
        for _ in range(instances):
            cluster.add_instance(threads=threads)
        figures: list[StepFigures] = []
        steps: list[dict[str, object]] = []
        try:
            counts = _Counts(setup, cluster, broker)
            _settle(cluster, counts, 900.0, 3000)
            stateful = stateful_subtopologies(cluster.topology_file.read_text())
            for scenario in scenarios:
                start_ms = int(time.time() * 1000)
                figures.append(
                    measure_step(
                        cluster, counts, scenario, threads, stateful, bounce_down_s=bounce_down_s
                    )
                )
                end_ms = int(time.time() * 1000)
                steps.append({"start_ms": start_ms, "end_ms": end_ms, **vars(figures[-1])})
        finally:
            if logs_dir is not None:
                _copy_logs(cluster, logs_dir / app_id, steps)
        return figures


def _copy_logs(cluster: StreamsCluster, target: Path, steps: list[dict[str, object]]) -> None:
    for instance in cluster.instances:
        (target / instance.name).mkdir(parents=True, exist_ok=True)
        for path in (instance.log, instance.out, instance.restores_file):
            if path.exists():
                shutil.copy(path, target / instance.name / path.name)
    (target / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))


def measure_runs(
    setups: tuple[Setup, ...],
    scenarios: tuple[str, ...],
    runs: int,
    on_row: Callable[[Setup, int, StepFigures], None],
    **options: object,
) -> None:
    """``runs`` runs of every setup, interleaved (run 1 of each setup, then run 2 ...) so that
    the machine's load falls alike on each; one broker per door for all runs. ``on_row`` gets
    each measured scenario as it is done; ``options`` go to :func:`measure_run`. With a
    ``logs_dir`` option the broker's ``server.log`` is copied there too, as
    ``<protocol>-server.log``."""
    logs_dir = options.get("logs_dir")
    for protocol in dict.fromkeys(s.protocol for s in setups):
        with door_broker(protocol) as broker:
            try:
                for run in range(1, runs + 1):
                    for setup in (s for s in setups if s.protocol == protocol):
                        tag = "plugin" if setup.plugin else "kafka"
                        app_id = f"m-{protocol}-{tag}-{run}"
                        for row in measure_run(broker, setup, app_id, scenarios, **options):  # type: ignore[arg-type]
                            on_row(setup, run, row)
            finally:
                if isinstance(logs_dir, Path):
                    logs_dir.mkdir(parents=True, exist_ok=True)
                    shutil.copy(broker.log_dir / "server.log", logs_dir / f"{protocol}-server.log")
