"""Kafka's own HighAvailabilityTaskAssignor against ours, timed side by side in one run.

Inputs: the scale scenario (``streams_assign.simulation.generators.scale_scenario``): N clients
x 4 threads, 2000 stateful + 1000 stateless tasks, 1 standby, every stateful task with a
previous active (lag -2) and a previous standby of which about half are caught up; N = 10, 100,
1000, 3000; and 10 000 tasks (6700 stateful + 3300 stateless) at 1000 clients.

Per size it prints the median of:

- Kafka: ``HighAvailabilityTaskAssignor.assign()`` of Kafka 4.2 (``.kafka/lib``) in the warm
  harness JVM (``streams_assign.testing.reference``), fresh ``ClientState``s per run, only the
  ``assign()`` call timed (``System.nanoTime``), after warm-up runs on the same input;
- ours in-process: ``HighAvailabilityTaskAssignor().assign(cluster)`` on the parsed state;
- ours CLI: the whole ``streams-assign assign --json FILE`` process (interpreter start, parse,
  assign, print),

the ratios ours / Kafka, and whether Kafka's output and ours are identical (probing flag, every
client's actives and standbys).

    .venv/bin/python benchmarks/kafka_reference_benchmark.py [--sizes 10,100,1000,3000]
        [--repeat 5] [--big-repeat 1] [--no-10k] [--heap 512m]

Kafka's runs at 1000 clients and above take tens of seconds to minutes each; sizes of 1000
clients or more use ``--big-repeat`` runs without a warm-up of their own (the JVM is warmed on
the 10-client state first; one such run lasts minutes of compiled code).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor
from streams_assign.scenario import parse_cluster_state
from streams_assign.simulation.generators import scale_scenario
from streams_assign.testing.reference import KafkaReference, differences

REPO = Path(__file__).resolve().parents[1]


def seconds_median(run: Any, repeat: int) -> float:
    """Median wall time of ``run()`` over ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cli_seconds(path: Path, repeat: int) -> float:
    """Median wall time of the whole ``streams-assign assign --json`` process, in seconds."""
    command = [sys.executable, "-m", "streams_assign.cli", "assign", "--json", str(path)]

    def run() -> None:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=REPO)

    return seconds_median(run, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000,3000", help="client counts")
    parser.add_argument("--repeat", type=int, default=5, help="runs per side under 1000 clients")
    parser.add_argument("--big-repeat", type=int, default=1, help="runs at 1000 clients or more")
    parser.add_argument("--no-10k", action="store_true", help="skip 10k tasks at 1000 clients")
    parser.add_argument("--heap", default="512m", help="JVM -Xmx for the harness")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    cases = [(int(s), 2000, 1000) for s in args.sizes.split(",") if s]
    if not args.no_10k:
        cases.append((1000, 6700, 3300))

    table = Table(title="HighAvailabilityTaskAssignor: Kafka 4.2.1 (warm JVM) vs ours, median")
    for column in (
        "clients",
        "threads",
        "tasks",
        "runs",
        "Kafka assign() (s)",
        "ours in-process (s)",
        "ours CLI (s)",
        "in-process / Kafka",
        "CLI / Kafka",
        "identical",
    ):
        table.add_column(column, justify="right")
    rows = []
    warm_up = scale_scenario(10, seed=args.seed)
    with (
        KafkaReference(jvm_args=(f"-Xmx{args.heap}", "-XX:+UseSerialGC")) as kafka,
        tempfile.TemporaryDirectory() as tmp,
    ):
        # JIT warm-up of the harness and Kafka's assignor on a small state; at 1000 clients and
        # more one run lasts long enough to be dominated by compiled code anyway.
        kafka.timed_assign(warm_up, "high_availability", repeat=5)
        for clients, stateful, stateless in cases:
            document = scale_scenario(
                clients, stateful_tasks=stateful, stateless_tasks=stateless, seed=args.seed
            )
            path = Path(tmp) / f"scale-{clients}-{stateful + stateless}.json"
            path.write_text(json.dumps(document))
            repeat = args.big_repeat if clients >= 1000 else args.repeat
            if clients < 1000:
                kafka.timed_assign(document, "high_availability", repeat=3)
            theirs, nanos = kafka.timed_assign(document, "high_availability", repeat=repeat)
            kafka_s = statistics.median(nanos) / 1e9
            cluster = parse_cluster_state(document)
            assignor = HighAvailabilityTaskAssignor()
            mine = assignor.assign(cluster).to_json()
            ours_s = seconds_median(lambda c=cluster, a=assignor: a.assign(c), repeat)
            cli_s = cli_seconds(path, repeat)
            identical = not differences(theirs, mine)
            row = (
                clients,
                clients * 4,
                stateful + stateless,
                repeat,
                kafka_s,
                ours_s,
                cli_s,
                ours_s / kafka_s,
                cli_s / kafka_s,
                identical,
            )
            rows.append(row)
            print(
                json.dumps(
                    dict(
                        zip(
                            (
                                "clients",
                                "threads",
                                "tasks",
                                "runs",
                                "kafka_s",
                                "ours_s",
                                "cli_s",
                                "ours_over_kafka",
                                "cli_over_kafka",
                                "identical",
                            ),
                            row,
                            strict=True,
                        )
                    )
                ),
                flush=True,
            )
            table.add_row(
                str(clients),
                str(clients * 4),
                str(stateful + stateless),
                str(repeat),
                f"{kafka_s:.3f}",
                f"{ours_s:.3f}",
                f"{cli_s:.3f}",
                f"{ours_s / kafka_s:.2f}",
                f"{cli_s / kafka_s:.2f}",
                "yes" if identical else "NO",
            )
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
