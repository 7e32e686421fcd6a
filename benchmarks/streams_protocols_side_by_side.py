"""Classic (HighAvailabilityTaskAssignor, Kafka 4.2) beside streams groups (the broker's
StickyTaskAssignor, Kafka 4.4) on the same app and data: kill one of five instances, then add one.

Measured from the instances (``devtools/kafka/measure.py``): records restored into active tasks'
stores (the instances' ``StateRestoreListener``) and loaded by standbys, seconds from the action
until every running instance is RUNNING with every task active exactly once (3 s quiet), the
active tasks that changed process, the added instance's actives, and the target computations
(streams: the broker's DEBUG log) or rebalances decided (classic: the leader's ``Decided on
assignment`` lines). Prints one table row per protocol and step; not a test.

    python benchmarks/streams_protocols_side_by_side.py [--instances 5] [--threads 1]
        [--protocol classic|streams|both]
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import sys

from devtools.kafka.measure import SETUPS, Setup, StepFigures, measure_runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--protocol", choices=("classic", "streams", "both"), default="both")
    args = parser.parse_args()
    # A SIGTERM ends the run through the clusters' and brokers' clean-up, as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if min(args.instances, args.threads, args.partitions) < 1 or args.records < 0:
        parser.error("--instances, --threads and --partitions must be at least 1")
    print(f"started {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC", flush=True)
    print(
        "| protocol | step | seconds to all RUNNING | restored records | standby records "
        "| actives moved | added instance's actives | computations / decisions | load |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    names = {"kill": "kill 1 of 5", "add": "add 1"}

    def show(setup: Setup, run: int, step: StepFigures) -> None:
        added = step.added_actives if step.added_actives is not None else "-"
        print(
            f"| {setup.protocol} | {names.get(step.scenario, 'kill 1 of 5')} | {step.seconds} "
            f"| {step.restored:,} | {step.standby_loaded:,} | {step.moved} | {added} "
            f"| {step.rebalances} | {os.getloadavg()[0]:.1f} |",
            flush=True,
        )

    kafka_own = tuple(s for s in SETUPS if not s.plugin and args.protocol in ("both", s.protocol))
    measure_runs(
        kafka_own,
        ("kill", "add"),
        1,
        show,
        instances=args.instances,
        threads=args.threads,
        partitions=args.partitions,
        records=args.records,
    )


if __name__ == "__main__":
    main()
