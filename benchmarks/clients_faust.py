"""faust-streaming workers: streams-assign's assignor against faust's own, on the real broker.

Runs the scenarios of ``tests/clients/test_faust.py`` (three workers of
``examples/faust_app.py``, a RocksDB table with data in every partition, ``kill -9`` of one
worker, then a fourth joins; streams-assign's HA, faust's own assignor and a mixed group at the
same time) ``--runs`` times and prints, per run and assignor, the changelog records restored
and the seconds until every table partition served again, after the kill and after the join.
Needs Kafka's jars (``make kafka``) and the ``faust`` extra.

    .venv/bin/python benchmarks/clients_faust.py [--records 12000] [--runs 3]
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
        default=1200,
        help="input records before the kill (one changelog record each; 120 keys)",
    )
    parser.add_argument("--runs", type=int, default=1, help="how many times to run the scenarios")
    args = parser.parse_args()
    env = {**os.environ, "STREAMS_ASSIGN_FAUST_RECORDS": str(args.records)}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/clients/test_faust.py",
        "-q",
        "-s",
        "-p",
        "no:warnings",
        "-p",
        "no:cacheprovider",
    ]
    failed = False
    for run in range(1, args.runs + 1):
        result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
        print(f"run {run} ({args.records} input records):")
        for line in result.stdout.splitlines():
            if line.startswith("[faust"):
                print("  " + line)
        if result.returncode != 0:
            failed = True
            print(result.stdout[-6000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
