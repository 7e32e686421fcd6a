"""Start-ups of the kafka-python app: how often a member is left behind the group's generation.

Starts the real-broker fixture's group (3 processes x 2 consumers of ``counts_app_sync.py``, 12
partitions, fresh topics) again and again on one broker and waits for it to settle, as
``tests/clients/test_real_broker.py`` does; prints how many start-ups settled, how many left a
member stranded (its latest generation behind the others' when the wait ended: the hang seen in
CI, ``docs/clients.md``), the generations a start-up took and the time to settle.

``--delay-topics S`` creates the topics S seconds after the processes started, on a broker
without topic auto-creation, so every group leader first assigns without the input topic's
partitions: the rebalance that used to strand a member then happens at every start-up.
``--code DIR`` runs the app and library of another checkout, for the figures before the fix::

    git archive 4e2f2f4 streams_assign examples | tar -x -C /tmp/before
    .venv/bin/python benchmarks/clients_startup.py --runs 40 --delay-topics 2 --code /tmp/before

Needs Kafka's jars (``make kafka``) and the ``clients`` extra; one broker (-Xmx512m) for the
whole run, stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "clients"))
sys.path.insert(0, str(REPO))

ARGS = [
    "--assignor",
    "streams",
    "--num-standby-replicas",
    "1",
    "--acceptable-recovery-lag",
    "50",
    "--session-timeout-ms",
    "10000",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--settle-timeout",
        type=float,
        default=90.0,
        help="seconds to wait for each start-up to settle",
    )
    parser.add_argument(
        "--delay-topics",
        type=float,
        default=0.0,
        help="create the topics this many seconds after starting the processes",
    )
    parser.add_argument(
        "--code", type=Path, help="a checkout whose streams_assign/ and examples/ to run"
    )
    args = parser.parse_args()

    import pytest
    from conftest import AppCluster

    from devtools.kafka.broker import KafkaBroker

    script = "counts_app_sync.py"
    if args.code is not None:
        script = str(args.code.resolve() / "examples" / script)
        os.environ["PYTHONPATH"] = str(args.code.resolve())  # inherited by the app processes
    configs = {"auto.create.topics.enable": "false"} if args.delay_topics else None
    settled: list[float] = []
    stranded = 0
    other = 0
    generations: list[int] = []
    root = Path(tempfile.mkdtemp(prefix="clients-startup-"))
    try:
        with KafkaBroker(configs=configs) as broker:
            for run in range(args.runs):
                cluster = AppCluster(broker.bootstrap_servers, root / f"run{run}", script, ARGS)
                cluster.root.mkdir()
                if not args.delay_topics:
                    cluster.create_topics()
                started = time.monotonic()
                for name in ("p1", "p2", "p3"):
                    cluster.start(name)
                if args.delay_topics:
                    time.sleep(args.delay_topics)
                    cluster.create_topics()
                outcome = "settled"
                try:
                    cluster.wait_until(
                        "settled", lambda c=cluster: c.stable(6), timeout=args.settle_timeout
                    )
                    settled.append(time.monotonic() - started)
                except pytest.fail.Exception:
                    latest = {e["generation"] for e in cluster.latest_assignments().values()}
                    if len(latest) >= 2:
                        stranded += 1
                        outcome = f"stranded (latest generations {sorted(latest)})"
                    else:
                        other += 1
                        outcome = "did not settle (no member behind)"
                finally:
                    cluster.stop_all()
                events = [e for p in cluster.processes.values() for e in p.events()]
                generations.append(
                    max((e["generation"] for e in events if e["event"] == "assigned"), default=0)
                )
                print(f"start-up {run + 1}: {outcome}, {generations[-1]} generations", flush=True)
                shutil.rmtree(cluster.root, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    code = str(args.code) if args.code else "this checkout"
    print(
        f"\n{args.runs} start-ups of {code} (topics created "
        f"{f'{args.delay_topics:g} s after the processes' if args.delay_topics else 'first'}): "
        f"{len(settled)} settled, {stranded} left a member stranded, {other} other failures; "
        f"generations per start-up median {statistics.median(generations):g}, "
        f"max {max(generations)}; time to settle median "
        f"{statistics.median(settled) if settled else float('nan'):.1f} s"
    )
    return 0 if stranded == 0 and other == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
