"""One assignment at scale in the JVM: the plug-in beside Kafka's own assignors, in one run.

The classic shape (``scale_scenario``: ``--processes`` processes x 4 stream threads, 2000
stateful + 1000 stateless tasks, 1 standby, half of the standbys caught up) is decided by

- the plug-in's core (``LagAwareSticky.assign``, the KIP-924 adapter's decision) in its
  harness JVM, and
- Kafka 4.2's ``HighAvailabilityTaskAssignor.assign`` in the reference harness JVM
  (:class:`devtools.kafka.reference.KafkaReference`),

and the streams-group shape of the same size (``scale_streams_group``) by

- the plug-in's broker form (``GroupDecision.assign``, the KIP-1357 adapter's decision), and
- Kafka 4.4's broker-side ``StickyTaskAssignor.assign`` (the streams-group harness JVM).

Each JVM runs ``--warmup`` untimed decisions first, then ``--runs`` timed ones; the median
wall-clock time of the assign call alone is printed (JSON parsing outside), with the Python
reference's time on the same classic state for scale. The machine is shared: run it with
``nice`` and read the figures with the load average printed beside them::

    .venv/bin/python benchmarks/plugin_benchmark.py [--processes 1000] [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.cluster_states import scale_scenario  # noqa: E402
from devtools.generators.streams_groups import scale_streams_group  # noqa: E402
from devtools.kafka.plugin_harness import PluginHarness, cluster_request  # noqa: E402
from devtools.kafka.reference import KafkaReference  # noqa: E402
from devtools.kafka.streams_group_harness import streams_group_harness  # noqa: E402
from streams_assign.assignors.lag_aware_sticky import LagAwareStickyTaskAssignor  # noqa: E402
from streams_assign.formats.cluster_state import parse_cluster_state  # noqa: E402


def _median_ms(nanos: list[int]) -> float:
    return statistics.median(nanos) / 1e6


def main(argv: list[str] | None = None) -> int:
    """Time the four assignors and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--runs", type=int, default=7, help="timed runs (median)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed runs first")
    parser.add_argument(
        "--kafka-runs", type=int, default=3, help="timed runs of Kafka's HA (seconds each)"
    )
    parser.add_argument("--kafka-warmup", type=int, default=2, help="untimed HA runs first")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    document = scale_scenario(args.processes, capacity=args.threads, seed=args.seed)
    cluster = parse_cluster_state(document)
    group = scale_streams_group(
        random.Random(args.seed), processes=args.processes, threads=args.threads
    )
    tasks = len(cluster.stateful_tasks) + len(cluster.stateless_tasks)
    group_tasks = sum(t["partitions"] for t in group["topology"].values())
    print(
        f"{args.processes} processes x {args.threads} threads; classic {tasks} tasks, "
        f"streams group {group_tasks} tasks; load average {os.getloadavg()[0]:.1f}"
    )
    heap = ("-Xmx1g", "-XX:+UseSerialGC")
    python = []
    for _ in range(3):
        start = time.perf_counter()
        LagAwareStickyTaskAssignor().assign(cluster)
        python.append(time.perf_counter() - start)
    python_ms = statistics.median(python) * 1e3
    print(f"  classic  Python lag_aware_sticky (reference)   {python_ms:9.1f} ms", flush=True)
    with PluginHarness(jvm_args=heap) as plugin:
        request = cluster_request(cluster)
        plugin.request({**request, "repeat": args.warmup})
        ours = plugin.request({**request, "repeat": args.runs})["nanos"]
        print(
            f"  classic  plug-in lag_aware_sticky (JVM)         {_median_ms(ours):9.1f} ms",
            flush=True,
        )
        plugin.request({"group": group, "repeat": args.warmup})
        ours_group = plugin.request({"group": group, "repeat": args.runs})["nanos"]
        print(
            f"  group    plug-in lag_aware_sticky broker form  {_median_ms(ours_group):9.1f} ms",
            flush=True,
        )
    with streams_group_harness(heap="-Xmx1g") as broker:
        answer = broker.request(
            {"op": "time", "state": group, "runs": args.runs, "warmup": args.warmup}
        )
        sticky_ms = _median_ms(answer["nanos"])
        print(f"  group    Kafka 4.4 StickyTaskAssignor (broker) {sticky_ms:9.1f} ms", flush=True)
    with KafkaReference(jvm_args=heap) as kafka:
        kafka.timed_assign(document, "high_availability", repeat=args.kafka_warmup)
        _, ha = kafka.timed_assign(document, "high_availability", repeat=args.kafka_runs)
        print(
            f"  classic  Kafka HighAvailabilityTaskAssignor    {_median_ms(ha):9.1f} ms", flush=True
        )
    print(
        f"  load average after {os.getloadavg()[0]:.1f}; medians of {args.runs} runs "
        f"({args.kafka_runs} for HA)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
