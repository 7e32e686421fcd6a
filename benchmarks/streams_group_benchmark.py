"""Timings: our ``streams_group_sticky`` twin against Kafka 4.4's ``StickyTaskAssignor``.

For 10 / 100 / 1000 members (processes of 4 stream threads; 2000 stateful + 1000 stateless
tasks, 1 standby, a steady previous assignment with half of the standbys caught up) it times, in
one run on one machine:

- Kafka: ``StickyTaskAssignor.assign`` in the harness JVM (warm: untimed runs first), the
  median of the timed runs, measured inside the JVM;
- ours in-process: ``assign_streams_group`` on the parsed state (median of the same number of
  runs), and parse + assign from the JSON text;
- ours through the CLI: ``streams-assign assign --json FILE`` as a fresh process, once;

checks that both outputs are identical at every size, and prints the table with the ratios.

Usage: ``python benchmarks/streams_group_benchmark.py [--runs 7] [--sizes 10,100,1000]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.streams_groups import scale_streams_group  # noqa: E402
from devtools.kafka.streams_group_harness import streams_group_harness  # noqa: E402
from streams_assign.assignors.streams_group_sticky import assign_streams_group  # noqa: E402
from streams_assign.formats.streams_group import loads_streams_group, parse_streams_group  # noqa: E402


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per size (median)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed runs per size first")
    parser.add_argument("--sizes", default="10,100,1000", help="member counts")
    parser.add_argument("--threads", type=int, default=4, help="stream threads per process")
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args(argv)

    rows = []
    identical = True
    with streams_group_harness(heap="-Xmx512m") as kafka:
        for members in (int(s) for s in args.sizes.split(",")):
            rng = random.Random(args.seed + members)
            document = scale_streams_group(
                rng, processes=max(1, members // args.threads), threads=args.threads
            )
            text = json.dumps(document)
            state = parse_streams_group(document)

            answer = kafka.request(
                {"op": "time", "state": document, "runs": args.runs, "warmup": args.warmup}
            )
            kafka_ms = statistics.median(answer["nanos"]) / 1e6
            kafka_cpu_ms = statistics.median(answer["cpu_nanos"]) / 1e6
            kafka_cpu_min = min(answer["cpu_nanos"]) / 1e6

            for _ in range(min(args.warmup, 3)):
                assign_streams_group(state)
            ours, ours_cpu, ours_parse = [], [], []
            for _ in range(args.runs):
                cpu = time.process_time()
                start = time.perf_counter()
                result = assign_streams_group(state)
                ours.append(time.perf_counter() - start)
                ours_cpu.append(time.process_time() - cpu)
                start = time.perf_counter()
                assign_streams_group(loads_streams_group(text))
                ours_parse.append(time.perf_counter() - start)
            same = result.to_json() == answer["result"]
            identical &= same

            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "state.json"
                path.write_text(text)
                start = time.perf_counter()
                cli = subprocess.run(
                    [sys.executable, "-m", "streams_assign.cli", "assign", "--json", str(path)],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                cli_s = time.perf_counter() - start
            if cli.returncode != 0 or json.loads(cli.stdout) != answer["result"]:
                identical = same = False
            tasks = sum(t["partitions"] for t in document["topology"].values())
            rows.append(
                (
                    members,
                    len({m["process_id"] for m in document["members"]}),
                    tasks,
                    kafka_ms,
                    _median_ms(ours),
                    kafka_cpu_ms,
                    _median_ms(ours_cpu),
                    min(ours_cpu) * 1000 / kafka_cpu_min,
                    _median_ms(ours_parse),
                    cli_s * 1000,
                    same,
                )
            )

    print(
        "| members | processes | tasks | Kafka wall ms | ours wall ms | ratio | Kafka CPU ms "
        "| ours CPU ms | ratio | best-of ratio | parse + ours ms | CLI ms | identical |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for row in rows:
        members, procs, tasks, k_ms, o_ms, k_cpu, o_cpu, best, parse_ms, cli_ms, same = row
        print(
            f"| {members} | {procs} | {tasks} | {k_ms:.1f} | {o_ms:.1f} | {o_ms / k_ms:.2f}x "
            f"| {k_cpu:.1f} | {o_cpu:.1f} | {o_cpu / k_cpu:.2f}x | {best:.2f}x | {parse_ms:.1f} "
            f"| {cli_ms:.0f} | {'yes' if same else 'NO'} |"
        )
    print(
        f"(median of {args.runs} runs after {args.warmup} warm-up runs; ratio = ours / Kafka; "
        "CPU = the calling thread's CPU time, less sensitive to a shared machine; best-of = "
        "fastest CPU run of ours / fastest of Kafka's)"
    )
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
