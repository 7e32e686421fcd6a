"""End-to-end on the streams protocol: a real Streams app on ``group.protocol=streams`` against
the Kafka 4.4 broker, every target computation the broker makes compared with the twin.

:func:`run_streams_group_scenarios` starts ``instances`` instances of the project's app
(``threads`` stream threads each), then runs, one after the other on the same group:

- **A (join)**: one more instance joins;
- **B (kill -9)**: the first instance is killed (its members leave at session expiry);
- **C (rolling bounce)**: every surviving instance is stopped (``KafkaStreams#close``) and
  started again on its state directory (same process id, new member ids), one at a time.

Each phase records the broker log's line count at its start, the Admin API's description of
the group before and after (:mod:`lag.sources.streams_group_describe`) and what every stream
thread runs once the group is stable. :func:`check_phase` then compares, for the phase:

1. every target computation in the broker log (DEBUG ``GroupMetadataManager``) with
   ``streams_group_sticky`` on the state rebuilt from the log (members, process ids, what each
   held) and the offsets the members reported (the description): member by member;
2. the chain predicted before the change (:mod:`streams_assign.simulation.streams_group_chain`)
   with the broker's first computation of the phase, given the ids the new members drew, and
   what the chain's ``released-only`` reconciliation says each member holds at the second and
   later computations with what the broker's log says they held
   (:func:`reconciliation_differences`, reported), and whether every member's held tasks at
   each computation lie within what reconciliation allows from the previous one
   (:func:`reconciliation_bounds`, checked);
3. the last computation with the description's target assignment and with what every thread
   runs.

Task offsets are not in the coordinator's lines and members report them again whenever their
reconciled assignment changes, so each computation takes every member's offsets from the
heartbeats the broker's request logger wrote (``kafka.request.logger`` at DEBUG), in the order
the broker processed them (:func:`offsets_at`; see ``docs/e2e.md``). A
:class:`~devtools.kafka.streams_group_live.DescribeWatcher` still describes the group every
300 ms; :func:`check_phase` counts the computations where its descriptions would have given
other offsets (``watcher_offsets_differ``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.streams_app import StreamsCluster
from devtools.kafka.streams_group_live import DescribeWatcher, describe, set_group_configs
from lag.sources.streams_group_describe import DescribedGroup, streams_group_state
from lag.sources.streams_group_log import (
    HeartbeatLog,
    TargetComputation,
    computation_state,
    read_heartbeat_log,
    read_target_computations,
)
from streams_assign.assignors.streams_group_sticky import assign_streams_group
from streams_assign.simulation.streams_group_chain import (
    ChainChange,
    StreamsGroupChain,
    predict_chain,
)

__all__ = [
    "Phase",
    "StreamsGroupRun",
    "check_phase",
    "check_startup",
    "offsets_at",
    "reconciliation_bounds",
    "reconciliation_differences",
    "run_streams_group_scenarios",
    "watched_offsets_at",
]


@dataclass
class Phase:
    """One scenario's record: where its log starts, the descriptions, what the threads run."""

    name: str
    change: str
    process_id: str
    log_start: int
    before: DescribedGroup
    after: DescribedGroup | None = None
    running: dict[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)


@dataclass
class StreamsGroupRun:
    """Everything :func:`check_phase` needs, read after the run."""

    application_id: str
    threads: int
    phases: list[Phase]
    log: str
    offsets: dict[str, dict[str, dict[int, int]]]
    watched: list[DescribedGroup] = field(default_factory=list)
    heartbeats: HeartbeatLog | None = None


def _log_lines(broker: KafkaBroker) -> int:
    return len((broker.log_dir / "server.log").read_text(errors="replace").splitlines())


def _running(cluster: StreamsCluster) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """Client id of each stream thread's consumer -> (active, standby) task ids it runs."""
    out = {}
    for instance in cluster.running_instances():
        current = instance.assignment()
        assert current is not None
        for thread, tasks in current.threads.items():
            out[f"{thread}-consumer"] = tasks
    return out


def _settle(broker: KafkaBroker, cluster: StreamsCluster, group: str) -> DescribedGroup:
    """Wait until the instances are stable and the broker's group is stable on its target."""
    cluster.wait_stable(timeout=240, quiet_ms=2000)
    deadline = time.monotonic() + 60
    while True:
        described = describe(broker, group)
        alive = {i.process_id for i in cluster.running_instances()}
        if (
            described.state == "Stable"
            and {m.process_id for m in described.members} == alive
            and all(m.assignment == m.target_assignment for m in described.members)
            and _threads_run_their_assignment(cluster, described)
        ):
            return described
        if time.monotonic() > deadline:
            raise AssertionError(f"group {group} not stable on the broker: {described}")
        time.sleep(0.5)


def _threads_run_their_assignment(cluster: StreamsCluster, described: DescribedGroup) -> bool:
    """Whether every stream thread has logged running what the broker says it acknowledged: a
    member's heartbeat acknowledges its tasks before the instance has written its next
    assignment line, so the broker can be stable on the target a moment before the threads'
    own record of it."""
    running = _running(cluster)
    for member in described.members:
        want = (
            frozenset(f"{s}_{p}" for s, ps in member.assignment.active.items() for p in ps),
            frozenset(f"{s}_{p}" for s, ps in member.assignment.standby.items() for p in ps),
        )
        if running.get(member.client_id) != want:
            return False
    return True


def run_streams_group_scenarios(
    broker: KafkaBroker,
    application_id: str,
    *,
    instances: int = 3,
    threads: int = 2,
    partitions: int = 6,
    standbys: int = 1,
    records: int = 300,
    bounces: int = 1,
    joining_threads: int | None = None,
) -> StreamsGroupRun:
    """Run A, B and C (``bounces`` instances restarted) on one streams group of the 4.4
    ``broker`` and record them."""
    set_group_configs(
        broker,
        application_id,
        {"streams.num.standby.replicas": standbys, "streams.session.timeout.ms": 6000},
    )
    phases: list[Phase] = []
    offsets: dict[str, dict[str, dict[int, int]]] = {}

    def remember(described: DescribedGroup) -> DescribedGroup:
        for m in described.members:
            offsets[m.member_id] = {s: dict(p) for s, p in (m.task_offsets or {}).items()}
        return described

    with (
        StreamsCluster(
            broker,
            application_id,
            kafka_version="4.4",
            configs={"group.protocol": "streams"},
            partitions=partitions,
        ) as cluster,
        DescribeWatcher(broker, application_id, cluster.root / "watch.jsonl") as watch,
    ):
        cluster.produce(records)
        for _ in range(instances):
            cluster.add_instance(threads=threads)
        before = remember(_settle(broker, cluster, application_id))

        new = cluster.add_instance(threads=joining_threads or threads, start=False)
        phases.append(Phase("A", "join", new.process_id, _log_lines(broker), before))
        new.start()
        before = phases[-1].after = remember(_settle(broker, cluster, application_id))
        phases[-1].running = _running(cluster)

        victim = cluster.instances[0]
        phases.append(Phase("B", "kill", victim.process_id, _log_lines(broker), before))
        victim.kill()
        before = phases[-1].after = remember(_settle(broker, cluster, application_id))
        phases[-1].running = _running(cluster)

        for instance in list(cluster.running_instances())[:bounces]:
            phases.append(Phase("C", "bounce", instance.process_id, _log_lines(broker), before))
            instance.stop()
            instance.start()
            before = phases[-1].after = remember(_settle(broker, cluster, application_id))
            phases[-1].running = _running(cluster)
        watch.__exit__(None, None, None)
        watched = watch.descriptions()
    log = (broker.log_dir / "server.log").read_text(errors="replace")
    return StreamsGroupRun(application_id, threads, phases, log, offsets, watched)


def _tasks_json(tasks: Mapping[str, tuple[int, ...]]) -> dict[str, list[int]]:
    return {s: list(p) for s, p in sorted(tasks.items()) if p}


def _differences(
    computation: TargetComputation, decided: Mapping[str, Any], label: str
) -> list[str]:
    out = []
    for member, real in computation.target.items():
        ours = decided[member]
        for kind in ("active", "standby"):
            if _tasks_json(getattr(real, kind)) != _tasks_json(getattr(ours, kind)):
                out.append(
                    f"{label} epoch {computation.epoch} member {member} {kind}: broker "
                    f"{_tasks_json(getattr(real, kind))}, ours {_tasks_json(getattr(ours, kind))}"
                )
    return out


def _offsets_of(member: Any) -> dict[str, dict[int, int]]:
    return {s: dict(p) for s, p in (member.task_offsets or {}).items()}


def _log_ms(stamp: str) -> int:
    moment = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def watched_offsets_at(
    run: StreamsGroupRun, computation: TargetComputation
) -> dict[str, dict[str, dict[int, int]]]:
    """Each member's offsets as the watcher last described them before the computation's log
    time (its first description after it when none before): what the replay used before the
    broker's request log was read, kept to count how often it differs from
    :func:`offsets_at`."""
    at = _log_ms(computation.time)
    out: dict[str, dict[str, dict[int, int]]] = {}
    for member in computation.members:
        seen = [
            (d.observed_at_ms is not None and d.observed_at_ms <= at, m)
            for d in run.watched
            for m in d.members
            if m.member_id == member
        ]
        before = [m for early, m in seen if early]
        if before or seen:
            out[member] = _offsets_of(before[-1] if before else seen[0][1])
    return out


def offsets_at(
    run: StreamsGroupRun, computation: TargetComputation
) -> tuple[dict[str, dict[str, dict[int, int]]], int]:
    """Each member's offsets as the broker held them at the computation, read from its
    request log (:meth:`~lag.sources.streams_group_log.HeartbeatLog.offsets_at`); the second
    value is 1 when the watcher's descriptions (:func:`watched_offsets_at`) would have given
    other offsets, else 0."""
    if run.heartbeats is None:
        run.heartbeats = read_heartbeat_log(run.log, run.application_id, "server.log")
    exact = run.heartbeats.offsets_at(computation)
    return exact, int(bool(run.watched) and watched_offsets_at(run, computation) != exact)


def check_phase(run: StreamsGroupRun, index: int) -> dict[str, Any]:
    """Compare one recorded phase; return the figures and every difference (none expected).

    Returns
    -------
    dict
        ``computations`` (count), ``replayed_equal`` (count), ``chain_first_equal`` (bool),
        ``threads_checked`` (count), ``differences`` (list of one-line strings),
        ``watcher_offsets_differ`` / ``watcher_replay_differs`` (computations where the 300 ms
        watcher's offsets differed from the request log's / would have given another target).
    """
    phase = run.phases[index]
    end = run.phases[index + 1].log_start if index + 1 < len(run.phases) else None
    text = "\n".join(run.log.splitlines()[:end])
    comps = [
        c
        for c in read_target_computations(text, run.application_id, "server.log")
        if c.line > phase.log_start
    ]
    assert phase.after is not None and phase.before.topology is not None
    standbys = int(phase.before.configs["streams.num.standby.replicas"] or 0)
    differences: list[str] = []
    equal = 0
    watcher_differs = watcher_wrong = 0
    for c in comps:
        offsets, differs = offsets_at(run, c)
        watcher_differs += differs
        state = computation_state(c, phase.before.topology, standbys, offsets)
        diff = _differences(c, assign_streams_group(state).members, "replay")
        equal += not diff
        differences += diff
        if differs:  # reported only: would the watcher's offsets have given the broker's target?
            watched = computation_state(
                c, phase.before.topology, standbys, watched_offsets_at(run, c)
            )
            watcher_wrong += bool(_differences(c, assign_streams_group(watched).members, "w"))
    # The chain, predicted from the description before the change (new ids as they were drawn).
    first = comps[0]
    before_state = streams_group_state(phase.before)
    known = {m.member_id for m in before_state.members}
    new_ids = tuple(m for m in first.members if m not in known)
    gone = tuple(m.member_id for m in before_state.members if m.member_id not in first.members)
    # Every member the changed process gained in the phase, in the order they first appear.
    joined = tuple(
        dict.fromkeys(
            m
            for c in comps
            for m in c.members
            if m not in known and c.process_ids.get(m) == phase.process_id
        )
    )
    first_join = next((c for c in comps if set(c.members) & set(joined)), first)
    alone = len(set(first_join.members) & set(joined))
    if phase.change == "kill":
        change = ChainChange("kill", phase.process_id, leaving_first=gone)
    elif phase.change == "join":
        change = ChainChange(
            "join", phase.process_id, threads=len(joined), member_ids=joined, first_alone=alone
        )
    elif joined:
        change = ChainChange(
            "bounce",
            phase.process_id,
            threads=len(joined),
            member_ids=joined,
            first_alone=alone,
            leaving_first=gone,
        )
    else:
        change = ChainChange("leave", phase.process_id, leaving_first=gone)
    chain = predict_chain(before_state, change)
    chain_diff = _differences(first, chain.computations[0].target.members, "chain")
    differences += chain_diff
    held_compared, held_diff = reconciliation_differences(chain, comps)
    held_pairs, held_outside = reconciliation_bounds(comps)
    # The last computation is the description's target and what the threads run.
    last = comps[-1]
    by_member = {m.member_id: m for m in phase.after.members}
    threads = 0
    for member, real in last.target.items():
        described = by_member.get(member)
        if (
            described is None
            or described.target_assignment.active != dict(real.active)
            or (described.target_assignment.standby != dict(real.standby))
        ):
            differences.append(f"describe: member {member} target differs from the log's last")
            continue
        runs = phase.running.get(described.client_id)
        want = (
            frozenset(f"{s}_{p}" for s, ps in real.active.items() for p in ps),
            frozenset(f"{s}_{p}" for s, ps in real.standby.items() for p in ps),
        )
        if runs != want:
            differences.append(f"threads: {described.client_id} runs {runs}, target {want}")
        threads += 1
    return {
        "phase": f"{phase.name} ({phase.change} {phase.process_id[:8]})",
        "computations": len(comps),
        "replayed_equal": equal,
        "chain_first_equal": not chain_diff,
        "new_member_ids": list(new_ids),
        "first_members": len(first.members),
        "threads_checked": threads,
        "watcher_offsets_differ": watcher_differs,
        "watcher_replay_differs": watcher_wrong,
        "differences": differences,
        "chain_computations": len(chain.computations),
        "held_compared": held_compared,
        "held_differences": held_diff,
        "held_pairs": held_pairs,
        "held_outside_bounds": held_outside,
    }


def reconciliation_differences(
    chain: StreamsGroupChain, comps: list[TargetComputation]
) -> tuple[int, list[str]]:
    """Compare what the chain model says each member holds at its second and later
    computations (``reconciliation="released-only"``) with what the broker's log says the
    members held (``assignedTasks``) when it made the same computation.

    The k-th predicted computation is compared only while every earlier predicted target equals
    the broker's (otherwise the model's input differs for another reason). Returns the members
    compared and one line per difference (a member in one input and not the other, or its
    active or standby tasks).
    """
    compared = 0
    out: list[str] = []
    for k in range(1, min(len(chain.computations), len(comps))):
        if _differences(comps[k - 1], chain.computations[k - 1].target.members, "chain"):
            break
        model = {m.member_id: m for m in chain.computations[k].state.members}
        real = comps[k]
        for member in sorted(set(model) ^ set(real.held)):
            where = "the broker's input only" if member in real.held else "the model's only"
            out.append(f"held epoch {real.epoch} member {member}: in {where}")
        for member in sorted(set(model) & set(real.held)):
            compared += 1
            ours = model[member]
            for kind, theirs, mine in (
                ("active", real.held[member].active, ours.active_tasks),
                ("standby", real.held[member].standby, ours.standby_tasks),
            ):
                if _tasks_json(theirs) != _tasks_json(mine):
                    out.append(
                        f"held epoch {real.epoch} member {member} {kind}: broker "
                        f"{_tasks_json(theirs)}, released-only model {_tasks_json(mine)}"
                    )
    return compared, out


def reconciliation_bounds(comps: list[TargetComputation]) -> tuple[int, list[str]]:
    """Check what each member held at a computation against the previous one, as Kafka's
    streams reconciliation (``CurrentAssignmentBuilder``) allows: per kind (active, standby),
    either what it held then (it had not heartbeated since that target), or at least what it
    kept of it (held then and in that target) and at most that target.

    Every consecutive pair of ``comps`` is checked for the members logged in both. Returns the
    member states checked and one line per state outside those bounds.
    """
    checked = 0
    out: list[str] = []
    for before, now in itertools.pairwise(comps):
        for member in sorted(set(before.held) & set(now.held) & set(before.target)):
            checked += 1
            for kind in ("active", "standby"):
                prev = _task_pairs(getattr(before.held[member], kind))
                target = _task_pairs(getattr(before.target[member], kind))
                held = _task_pairs(getattr(now.held[member], kind))
                if held != prev and not prev & target <= held <= target:
                    out.append(
                        f"held epoch {now.epoch} member {member} {kind}: {sorted(held)} is "
                        f"neither {sorted(prev)} nor between {sorted(prev & target)} and "
                        f"{sorted(target)}"
                    )
    return checked, out


def _task_pairs(tasks: Mapping[str, tuple[int, ...]]) -> set[tuple[str, int]]:
    return {(s, p) for s, ps in tasks.items() for p in ps}


def check_startup(run: StreamsGroupRun) -> dict[str, Any]:
    """Replay every target computation before scenario A (the instances starting) as
    :func:`check_phase` does; returns ``computations``, ``replayed_equal`` and ``differences``."""
    first = run.phases[0]
    assert first.before.topology is not None
    standbys = int(first.before.configs["streams.num.standby.replicas"] or 0)
    text = "\n".join(run.log.splitlines()[: first.log_start])
    comps = read_target_computations(text, run.application_id, "server.log")
    differences: list[str] = []
    equal = 0
    for c in comps:
        offsets, _ = offsets_at(run, c)
        state = computation_state(c, first.before.topology, standbys, offsets)
        diff = _differences(c, assign_streams_group(state).members, "start-up replay")
        equal += not diff
        differences += diff
    return {"computations": len(comps), "replayed_equal": equal, "differences": differences}
