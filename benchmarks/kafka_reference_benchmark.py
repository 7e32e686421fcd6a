"""Kafka's own HighAvailabilityTaskAssignor against ours, timed side by side in one run.

Inputs: the scale scenario (``devtools.generators.cluster_states.scale_scenario``): N clients
x 4 threads, 2000 stateful + 1000 stateless tasks, 1 standby, every stateful task with a
previous active (lag -2) and a previous standby of which about half are caught up; N = 10, 100,
1000, 3000; and 10 000 tasks (6700 stateful + 3300 stateless) at 1000 clients.

Per size it prints the median of:

- Kafka: ``HighAvailabilityTaskAssignor.assign()`` of Kafka 4.2 (``.kafka/lib``) in the warm
  harness JVM (``devtools.kafka.reference``), fresh ``ClientState``s per run, only the
  ``assign()`` call timed (``System.nanoTime``), after warm-up runs on the same input;
- ours in-process: ``HighAvailabilityTaskAssignor().assign(cluster)`` on the parsed state;
- ours CLI: the whole ``streams-assign assign --json FILE`` process (interpreter start, parse,
  assign, print),

the ratios ours / Kafka, and whether Kafka's output and ours are identical (probing flag, every
client's actives and standbys).

    .venv/bin/python benchmarks/kafka_reference_benchmark.py [--sizes 10,100,1000,3000]
        [--repeat 5] [--big-repeat 1] [--no-10k] [--heap 512m] [--big-heap 4g]
        [--kafka-timeout 1200]

Kafka's runs at 1000 clients and above take tens of seconds to minutes each; sizes of 1000
clients or more use ``--big-repeat`` runs without a warm-up of their own (the JVM is warmed on
the 10-client state first; one such run lasts minutes of compiled code). The 10k-task row and
the rows above 1000 clients run in a second JVM with ``--big-heap`` (Kafka's assignor needs
more than 512 MiB there: ``OutOfMemoryError`` in ``tasksToClientByLag`` at 10k tasks). A Kafka
run still going after ``--kafka-timeout`` seconds is stopped (its JVM killed) and reported as
not finished; our side of that row is still measured.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.cluster_states import scale_scenario  # noqa: E402
from devtools.kafka.java import JavaError  # noqa: E402
from devtools.kafka.reference import KafkaReference, differences  # noqa: E402
from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor  # noqa: E402
from streams_assign.formats.cluster_state import parse_cluster_state  # noqa: E402


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


def kafka_with_deadline(
    kafka: KafkaReference, document: dict[str, Any], repeat: int, timeout_s: float
) -> tuple[dict[str, Any], list[int]] | None:
    """Kafka's ``timed_assign``, or ``None`` when it has not answered within ``timeout_s``.

    On a time-out the harness JVM is closed (killed after 10 s); the caller starts a new one.
    """
    timer = threading.Timer(timeout_s, kafka.close)
    timer.start()
    try:
        return kafka.timed_assign(document, "high_availability", repeat=repeat)
    except (JavaError, ValueError, OSError):
        if timer.is_alive():
            raise
        return None
    finally:
        timer.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000,3000", help="client counts")
    parser.add_argument("--repeat", type=int, default=5, help="runs per side under 1000 clients")
    parser.add_argument("--big-repeat", type=int, default=1, help="runs at 1000 clients or more")
    parser.add_argument("--no-10k", action="store_true", help="skip 10k tasks at 1000 clients")
    parser.add_argument("--heap", default="512m", help="JVM -Xmx for the harness")
    parser.add_argument(
        "--big-heap", default="4g", help="JVM -Xmx for the 10k-task row and above 1000 clients"
    )
    parser.add_argument(
        "--kafka-timeout", type=float, default=1200.0, help="seconds before a Kafka run is stopped"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    sizes = [int(s) for s in args.sizes.split(",") if s]
    cases = [(n, 2000, 1000) for n in sizes if n <= 1000]
    if not args.no_10k:
        cases.append((1000, 6700, 3300))
    cases += [(n, 2000, 1000) for n in sizes if n > 1000]

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
        "Kafka heap",
    ):
        table.add_column(column, justify="right")
    rows = []
    warm_up = scale_scenario(10, seed=args.seed)
    jvms: dict[str, KafkaReference] = {}

    def jvm(heap: str) -> KafkaReference:
        """The harness JVM with this heap, started and JIT-warmed on first use."""
        kafka = jvms.get(heap)
        if kafka is None:
            kafka = KafkaReference(jvm_args=(f"-Xmx{heap}", "-XX:+UseSerialGC"))
            jvms[heap] = kafka.__enter__()
            # JIT warm-up of the harness and Kafka's assignor on a small state; at 1000
            # clients and more one run lasts long enough to be dominated by compiled code.
            kafka.timed_assign(warm_up, "high_availability", repeat=5)
        return kafka

    with tempfile.TemporaryDirectory() as tmp:
        try:
            for clients, stateful, stateless in cases:
                big = clients > 1000 or stateful + stateless > 3000
                heap = args.big_heap if big else args.heap
                document = scale_scenario(
                    clients, stateful_tasks=stateful, stateless_tasks=stateless, seed=args.seed
                )
                path = Path(tmp) / f"scale-{clients}-{stateful + stateless}.json"
                path.write_text(json.dumps(document))
                repeat = args.big_repeat if clients >= 1000 else args.repeat
                kafka = jvm(heap)
                if clients < 1000:
                    kafka.timed_assign(document, "high_availability", repeat=3)
                started = time.perf_counter()
                answer = kafka_with_deadline(kafka, document, repeat, args.kafka_timeout)
                if answer is None:
                    jvms.pop(heap).__exit__(None, None, None)
                    waited = time.perf_counter() - started
                cluster = parse_cluster_state(document)
                assignor = HighAvailabilityTaskAssignor()
                mine = assignor.assign(cluster).to_json()
                ours_s = seconds_median(lambda c=cluster, a=assignor: a.assign(c), repeat)
                cli_s = cli_seconds(path, repeat)
                if answer is None:
                    kafka_s = float("nan")
                    identical: bool | None = None
                else:
                    theirs, nanos = answer
                    kafka_s = statistics.median(nanos) / 1e9
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
                    heap,
                )
                rows.append(row)
                record = dict(
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
                            "kafka_heap",
                        ),
                        row,
                        strict=True,
                    )
                )
                if answer is None:
                    record["kafka_not_finished_after_s"] = round(waited, 1)
                print(json.dumps(record), flush=True)
                table.add_row(
                    str(clients),
                    str(clients * 4),
                    str(stateful + stateless),
                    str(repeat),
                    f"{kafka_s:.3f}" if answer else f"not finished in {waited:.0f} s",
                    f"{ours_s:.3f}",
                    f"{cli_s:.3f}",
                    f"{ours_s / kafka_s:.2f}" if answer else "-",
                    f"{cli_s / kafka_s:.2f}" if answer else "-",
                    "-" if identical is None else ("yes" if identical else "NO"),
                    heap,
                )
        finally:
            for kafka in jvms.values():
                kafka.__exit__(None, None, None)
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
