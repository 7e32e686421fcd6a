"""Our consumer and Connect assignors beside Kafka's own (a warm JVM), on the shared corpora.

For every shared consumer state and Connect sequence: our decision in-process and Kafka's
through the live harness (``devtools.kafka.groups_reference``; the JVM is warmed up
first, its times include one JSON line each way), the agreement, and the time per state or per
round. Needs Kafka's jars (``make kafka``) and a JDK.

Usage: ``python benchmarks/groups_reference_benchmark.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.kafka.groups_reference import KafkaGroupsReference  # noqa: E402
from devtools.paths import CORPORA  # noqa: E402
from streams_assign.connect import replay_connect, rounds_to_json  # noqa: E402
from streams_assign.consumer import assign_consumer_group  # noqa: E402
from streams_assign.formats.connect_sequence import parse_connect_sequence  # noqa: E402
from streams_assign.formats.consumer_group import assignment_to_json, parse_consumer_state  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    consumer_docs = [
        json.loads(p.read_text())
        for p in sorted((CORPORA / "kafka-consumer" / "input").glob("*.json"))
    ]
    sequences = [
        parse_connect_sequence(json.loads(p.read_text()))
        for p in sorted((CORPORA / "kafka-connect" / "input").glob("*.json"))
    ]
    rounds = sum(len(s.rounds) for s in sequences)
    with KafkaGroupsReference() as kafka:
        for doc in consumer_docs:  # warm-up
            kafka.consumer(doc)
        for sequence in sequences:
            kafka.connect(sequence)
        timings: dict[str, list[float]] = {
            k: [] for k in ("c-ours", "c-kafka", "k-ours", "k-kafka")
        }
        agree_consumer = agree_connect = 0
        for _ in range(args.repeat):
            start = time.perf_counter()
            ours_c = [
                assignment_to_json(assign_consumer_group(parse_consumer_state(d)))
                for d in consumer_docs
            ]
            timings["c-ours"].append(time.perf_counter() - start)
            start = time.perf_counter()
            kafka_c = [kafka.consumer(d) for d in consumer_docs]
            timings["c-kafka"].append(time.perf_counter() - start)
            start = time.perf_counter()
            ours_k = [rounds_to_json(replay_connect(s)) for s in sequences]
            timings["k-ours"].append(time.perf_counter() - start)
            start = time.perf_counter()
            kafka_k = [kafka.connect(s) for s in sequences]
            timings["k-kafka"].append(time.perf_counter() - start)
            agree_consumer = sum(a == b for a, b in zip(ours_c, kafka_c, strict=True))
            agree_connect = sum(
                [{k: v for k, v in r.items() if k != "debug"} for r in a["rounds"]] == b["rounds"]
                for a, b in zip(ours_k, kafka_k, strict=True)
            )
    best = {k: min(v) for k, v in timings.items()}
    print(f"{'corpus':<28}{'agree':>10}{'ours ms/item':>16}{'Kafka JVM ms/item':>20}")
    n = len(consumer_docs)
    print(
        f"{'consumer states':<28}{f'{agree_consumer}/{n}':>10}"
        f"{best['c-ours'] * 1000 / n:>16.3f}{best['c-kafka'] * 1000 / n:>20.3f}"
    )
    print(
        f"{'Connect rounds':<28}{f'{agree_connect}/{len(sequences)}':>10}"
        f"{best['k-ours'] * 1000 / rounds:>16.3f}{best['k-kafka'] * 1000 / rounds:>20.3f}"
    )
    print(f"(best of {args.repeat}; Kafka's times include the JSON line to and from the JVM)")


if __name__ == "__main__":
    main()
