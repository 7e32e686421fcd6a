"""Failover of a Python stream app: streams-assign standbys against the clients' own assignors.

Runs the real-broker acceptance scenario of ``tests/clients/test_real_broker.py`` (3 app
processes x 2 consumers, 12 partitions, kill -9 of one process) with bigger changelogs and a
busier background producer, and prints, per client and assignor, the changelog records the new
owners restored before resuming and the time from the kill to the resumption, beside the
standbys' lag at the kill. Needs Kafka's jars (``make kafka``) and the ``clients`` extra.

    .venv/bin/python benchmarks/clients_failover.py [--records 60000] [--trickle 200]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--records",
        type=int,
        default=60_000,
        help="input records before the kill (one changelog record each)",
    )
    parser.add_argument(
        "--trickle", type=int, default=200, help="records per 100 ms from the background producer"
    )
    parser.add_argument(
        "-k", default="restores", help="pytest -k expression choosing the scenarios"
    )
    args = parser.parse_args()
    env = {
        **os.environ,
        "STREAMS_ASSIGN_CLIENTS_RECORDS": str(args.records),
        "STREAMS_ASSIGN_CLIENTS_TRICKLE": str(args.trickle),
    }
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/clients/test_real_broker.py",
        "-q",
        "-s",
        "-p",
        "no:warnings",
        "-p",
        "no:randomly",
        "-k",
        args.k,
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


if __name__ == "__main__":
    sys.exit(main())
