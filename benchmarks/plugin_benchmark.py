"""One assignment at scale in the JVM: the plug-in beside Kafka's own assignors, in one run.

The classic shape (``scale_scenario``: ``--processes`` processes x 4 stream threads, 2000
stateful + 1000 stateless tasks, 1 standby, half of the standbys caught up) is decided by

- the plug-in's core (``LagAwareSticky.assign``, the KIP-924 adapter's decision) in its
  harness JVM, and
- Kafka 4.2's ``HighAvailabilityTaskAssignor.assign`` in the reference harness JVM
  (:class:`devtools.kafka.reference.KafkaReference`),

and the streams-group shape of the same size (``scale_streams_group``), in one JVM holding the
plug-in jar and Kafka 4.4's group coordinator (``.kafka/lib-gc``), by

- the plug-in's broker adapter ``LagAwareStickyGroupAssignor.assign(GroupSpec,
  TopologyDescriber)`` (KIP-1357) and
- Kafka 4.4's broker-side ``StickyTaskAssignor.assign`` on the same ``GroupSpec`` object,

alternating call by call (the harness's ``bench_group`` request): ``--warmup`` untimed calls of
each first, then ``--rounds`` rounds of ``--runs`` timed calls of each, so JIT warm-up and the
machine's load fall on both alike; then each again alone in a JVM of its own (the same
warm-up and rounds), since in a shared JVM each one's code changes the JIT profile of the
other's (the JDK's collections are compiled for both). Each line prints the median over
every timed call of the wall-clock time and of the calling thread's CPU time
(``ThreadMXBean``; garbage collection runs on other threads and is in neither), and the range
of the rounds' medians. The machine is
shared: read the figures with the load averages printed before and after; CPU time is the
fairer measure under load::

    .venv/bin/python benchmarks/plugin_benchmark.py [--processes 1000] [--rounds 3] [--runs 15]

``--jar`` times another build of the plug-in (an older commit's, for a before/after).
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
from devtools.kafka.java import JavaBatch, kafka_lib  # noqa: E402
from devtools.kafka.plugin_harness import HARNESS_CLASS, cluster_request, plugin_jar  # noqa: E402
from devtools.kafka.reference import KafkaReference  # noqa: E402
from streams_assign.assignors.lag_aware_sticky import LagAwareStickyTaskAssignor  # noqa: E402
from streams_assign.formats.cluster_state import parse_cluster_state  # noqa: E402


def _ms(nanos: list[int]) -> float:
    return statistics.median(nanos) / 1e6


def _line(label: str, rounds: list[dict[str, list[int]]]) -> str:
    """Median wall and CPU over every timed call, and the range of the rounds' CPU medians."""
    wall = [n for r in rounds for n in r["nanos"]]
    cpu = [n for r in rounds for n in r["cpu_nanos"]]
    per_round = [_ms(r["cpu_nanos"]) for r in rounds]
    return (
        f"  {label:<48} wall {_ms(wall):8.1f} ms  cpu {_ms(cpu):7.1f} ms "
        f"(round medians {min(per_round):.1f}-{max(per_round):.1f}; {len(cpu)} calls)"
    )


def _bench_classpath(jar: Path) -> str:
    """The plug-in jar, then Kafka 4.4's group coordinator and the jars it needs (``lib-gc``)."""
    return os.pathsep.join([str(jar), *(str(p) for p in sorted(kafka_lib("lib-gc").glob("*.jar")))])


def main(argv: list[str] | None = None) -> int:
    """Time the four assignors and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of timed calls")
    parser.add_argument("--runs", type=int, default=15, help="timed calls per round")
    parser.add_argument("--warmup", type=int, default=40, help="untimed calls of each first")
    parser.add_argument(
        "--kafka-runs", type=int, default=3, help="timed runs of Kafka's HA (seconds each)"
    )
    parser.add_argument("--kafka-warmup", type=int, default=2, help="untimed HA runs first")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-ha", action="store_true", help="leave out Kafka's HA (minutes)")
    parser.add_argument(
        "--jar", type=Path, default=None, help="time this build of the plug-in (default: built)"
    )
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
        f"streams group {group_tasks} tasks; load average {os.getloadavg()[0]:.1f} "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"
    )
    heap = ("-Xmx1g", "-XX:+UseSerialGC")
    python = []
    for _ in range(3):
        start = time.perf_counter()
        LagAwareStickyTaskAssignor().assign(cluster)
        python.append(time.perf_counter() - start)
    python_ms = statistics.median(python) * 1e3
    print(
        f"  classic  Python lag_aware_sticky (reference)      wall {python_ms:8.1f} ms", flush=True
    )
    jar = plugin_jar() if args.jar is None else args.jar
    with JavaBatch(HARNESS_CLASS, _bench_classpath(jar), jvm_args=heap) as jvm:
        request = cluster_request(cluster)
        jvm.request({**request, "repeat": args.warmup})
        rounds = [jvm.request({**request, "repeat": args.runs}) for _ in range(args.rounds)]
        print(_line("classic  plug-in core LagAwareSticky (JVM)", rounds), flush=True)
        jvm.request({"bench_group": group, "warmup": args.warmup, "repeat": 1})
        answers = [
            jvm.request({"bench_group": group, "warmup": 0, "repeat": args.runs})
            for _ in range(args.rounds)
        ]
        for key, label in (
            ("lag_aware_sticky", "group    plug-in LagAwareStickyGroupAssignor"),
            ("kafka_sticky", "group    Kafka 4.4 StickyTaskAssignor (broker)"),
        ):
            if any(a[key]["members"] != len(group["members"]) for a in answers):
                raise SystemExit(f"{key} did not assign every member")
            print(_line(label, [a[key] for a in answers]), flush=True)
    for key, label in (
        ("lag_aware_sticky", "group    plug-in broker adapter, own JVM"),
        ("kafka_sticky", "group    Kafka 4.4 sticky (broker), own JVM"),
    ):
        with JavaBatch(HARNESS_CLASS, _bench_classpath(jar), jvm_args=heap) as jvm:
            only = {"bench_group": group, "only": key}
            jvm.request({**only, "warmup": args.warmup, "repeat": 1})
            answers = [
                jvm.request({**only, "warmup": 0, "repeat": args.runs}) for _ in range(args.rounds)
            ]
            print(_line(label, [a[key] for a in answers]), flush=True)
    if not args.no_ha:
        with KafkaReference(jvm_args=heap) as kafka:
            kafka.timed_assign(document, "high_availability", repeat=args.kafka_warmup)
            _, ha = kafka.timed_assign(document, "high_availability", repeat=args.kafka_runs)
            print(
                f"  {'classic  Kafka 4.2 HighAvailabilityTaskAssignor':<48} wall {_ms(ha):8.1f} ms "
                f"({args.kafka_runs} runs)",
                flush=True,
            )
    print(f"  load average after {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
