"""Speed of the HA assignor on the scale scenario (issue #2 "Speed").

Clients 10, 100, 1000 x capacity 4; 2000 stateful + 1000 stateless tasks; 1 standby; every
stateful task has a previous active (lag -2) and a previous standby, about half of which are
caught up (``devtools.generators.cluster_states.scale_scenario``).

Prints the median wall time of ``HighAvailabilityTaskAssignor.assign`` per size, and with
``--literal`` also the time of the Kafka-literal structures (Java priority queues read lazily,
the all-pairs balancing loop) and whether both outputs are identical.

    .venv/bin/python benchmarks/assign_benchmark.py [--sizes 10,100,1000] [--repeat 5] [--literal]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.cluster_states import scale_scenario  # noqa: E402
from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor  # noqa: E402
from streams_assign.formats.cluster_state import parse_cluster_state  # noqa: E402

#: Kafka's Java assignor on this machine class (from the issue), seconds.
KAFKA_JAVA_SECONDS = {10: 0.064, 100: 0.85, 1000: 19.9}


def median_seconds(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000", help="client counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=5, help="runs per size (median reported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--literal", action="store_true", help="also time the Kafka-literal mode")
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    table = Table(title="HighAvailabilityTaskAssignor.assign, scale scenario (median)")
    for column in ("clients", "threads", "tasks", "ours (s)", "Kafka Java (s, issue)"):
        table.add_column(column, justify="right")
    if args.literal:
        table.add_column("Kafka-literal Python (s)", justify="right")
        table.add_column("identical", justify="center")
    for size in (int(s) for s in args.sizes.split(",")):
        cluster = parse_cluster_state(scale_scenario(size, seed=args.seed))
        fast = HighAvailabilityTaskAssignor()
        seconds = median_seconds(lambda c=cluster, a=fast: a.assign(c), args.repeat)
        row = [
            str(size),
            str(size * 4),
            str(len(cluster.all_tasks)),
            f"{seconds:.3f}",
            f"{KAFKA_JAVA_SECONDS[size]:.3f}" if size in KAFKA_JAVA_SECONDS else "-",
        ]
        if args.literal:
            literal = HighAvailabilityTaskAssignor(literal=True)
            start = time.perf_counter()
            expected = literal.assign(cluster)
            row.append(f"{time.perf_counter() - start:.2f}")
            row.append("yes" if fast.assign(cluster) == expected else "NO")
        table.add_row(*row)
    Console().print(table)


if __name__ == "__main__":
    main()
