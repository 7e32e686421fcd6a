"""The ``lag_aware_sticky`` plug-in beside Kafka's assignor on a real cluster, through both doors.

KIP-924 (classic protocol, Kafka Streams 4.2 app on a 4.2 broker): Kafka's
``HighAvailabilityTaskAssignor`` vs ``task.assignor.class=io.streamsassign.assignor.
LagAwareStickyTaskAssignor``. KIP-1357 (``group.protocol=streams``, 4.4 app on a 4.4 broker with
the plug-in jar on its class path): the broker's ``StickyTaskAssignor`` vs
``streams.assignor.name=lag_aware_sticky``. Same app and data for all (5 instances of the
project's Streams app, 1 stream thread each, 1 standby, 6 input partitions, 20,000 records per
input topic); per run, one group goes through kill -9 of one instance, adding one, and a rolling
bounce of all five, measured from the instances (``devtools/kafka/measure.py``). Prints one
Markdown table row per scenario with the load average; not a test. Actives moved are given
twice: net between the stable states, and as the leader decided them (classic; ``-`` on
streams). ``--logs DIR`` keeps every instance's log and the brokers' ``server.log`` there;
``--scenarios`` picks some of the three; ``--bounce-down S`` keeps each bounced instance down
``S`` seconds after its close (a slow restart).

    python benchmarks/plugin_real_cluster.py [--runs 3] [--door classic|streams|both] [--logs DIR]
        [--scenarios kill add bounce] [--bounce-down S] [--task-offset-interval-ms MS]

``--task-offset-interval-ms`` sets the streams groups' ``streams.task.offset.interval.ms`` (both
assignors' groups alike; 60,000 by default, at least 1,000 here) so that members report fresh
task offsets before each change; the classic door ignores it.
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import sys
from pathlib import Path

from devtools.kafka.measure import SCENARIOS, SETUPS, Setup, StepFigures, measure_runs

HEADER = (
    "| setup | run | scenario | restored records | standby records | seconds | rebalances "
    "(probing) | actives moved (net) | actives moved (decided) | spread active / stateful "
    "| balanced | load |\n"
    "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"
)


def row(setup: Setup, run: int, step: StepFigures) -> str:
    """One Markdown table row of a measured scenario, with the 1-minute load average now."""
    return (
        f"| {setup.name} | {run} | {step.scenario} | {step.restored:,} | {step.standby_loaded:,} "
        f"| {step.seconds} | {step.rebalances} ({step.probing}) | {step.moved} "
        f"| {'-' if step.decided_moved is None else step.decided_moved} "
        f"| {step.active_spread} / {step.stateful_spread} | {'yes' if step.balanced else 'NO'} "
        f"| {os.getloadavg()[0]:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--door", choices=("classic", "streams", "both"), default="both")
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--logs", type=Path, default=None, help="keep the logs in this folder")
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--bounce-down", type=float, default=0.0, help="seconds down per restart")
    parser.add_argument("--task-offset-interval-ms", type=int, default=None)
    args = parser.parse_args()
    # A SIGTERM ends the run through the clusters' and brokers' clean-up, as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if min(args.runs, args.instances, args.threads, args.partitions) < 1 or args.records < 0:
        parser.error("--runs, --instances, --threads and --partitions must be at least 1")
    if args.bounce_down < 0:
        parser.error("--bounce-down must be at least 0")
    if args.task_offset_interval_ms is not None and args.task_offset_interval_ms < 1000:
        parser.error("--task-offset-interval-ms must be at least 1000 (the broker's minimum here)")
    setups = tuple(s for s in SETUPS if args.door in ("both", s.protocol))
    interval = args.task_offset_interval_ms
    print(
        f"started {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; "
        f"streams.task.offset.interval.ms {interval if interval is not None else 'default'}",
        flush=True,
    )
    print(HEADER, flush=True)
    measure_runs(
        setups,
        tuple(args.scenarios),
        args.runs,
        lambda setup, run, step: print(row(setup, run, step), flush=True),
        instances=args.instances,
        threads=args.threads,
        partitions=args.partitions,
        records=args.records,
        logs_dir=args.logs,
        bounce_down_s=args.bounce_down,
        task_offset_interval_ms=args.task_offset_interval_ms,
    )


if __name__ == "__main__":
    main()
