"""Failover of an app written on the task runtime: records restored and seconds until serving.

Runs ``tests/clients/test_runtime.py`` (``examples/counts_app.py`` on
``streams_assign.clients.runtime``: 3 processes x 2 consumers, 12 partitions, 1 standby,
``lag_aware_sticky``, kill -9 of one process) at a chosen size and prints what it measured:
per killed task, its copies' lag at the kill, the records its new owner restored and the
seconds from the kill until it served again, and how many input records the at-least-once
window counted twice. The run's own checks (nothing lost, counts carried across, double counts
only inside the window) must pass. Needs Kafka's jars (``make kafka``) and the ``clients`` extra.

    .venv/bin/python benchmarks/clients_runtime.py [--records 24000] [--trickle 100] [--runs 1]
        [--app counts_app.py|counts_app_sync.py]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_once(records: int, trickle: int, app: str) -> int:
    env = {
        **os.environ,
        "STREAMS_ASSIGN_RUNTIME_APP": app,
        "STREAMS_ASSIGN_RUNTIME_RECORDS": str(records),
        "STREAMS_ASSIGN_RUNTIME_TRICKLE": str(trickle),
    }
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/clients/test_runtime.py",
        "-q",
        "-s",
        "-p",
        "no:warnings",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
    ]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    keep = False
    for line in result.stdout.splitlines():
        if line.startswith("["):
            keep = True
        elif not line.startswith("  "):
            keep = False
        if keep:
            print(line)
    if result.returncode != 0:
        print(result.stdout[-4000:], result.stderr[-2000:], sep="\n", file=sys.stderr)
    return result.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=24_000, help="input records before the kill")
    parser.add_argument(
        "--trickle", type=int, default=100, help="records per 100 ms from the background producer"
    )
    parser.add_argument("--runs", type=int, default=1, help="independent runs (fresh broker each)")
    parser.add_argument(
        "--app",
        choices=("counts_app.py", "counts_app_sync.py"),
        default="counts_app.py",
        help="the aiokafka or the kafka-python example",
    )
    args = parser.parse_args()
    print(f"{args.records} records before the kill, {args.trickle} per 100 ms around it")
    worst = 0
    for _ in range(args.runs):
        worst = max(worst, run_once(args.records, args.trickle, args.app))
    return worst


if __name__ == "__main__":
    sys.exit(main())
