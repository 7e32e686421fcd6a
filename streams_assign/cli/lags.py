"""``streams-assign lags STATE [--rates RESTORE.parquet] [--restore-rate R]``: what are my lags?

One row per (client, stateful task) the client has local state for: its changelog lag in records
(as the state file gives it, ``-2`` = running active), whether that counts as caught up under
``acceptable.recovery.lag`` (Kafka's ``ClientState`` lag rules), and with a restore rate the
time until it would be. Then the tasks no client is caught up on. Base install (``--rates``
needs the ``lag`` extra).
"""

from __future__ import annotations

import argparse
import math

from streams_assign.errors import UsageError

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``lags`` to its parser."""
    parser.add_argument("file", metavar="STATE", help="cluster-state file (JSON or YAML)")
    parser.add_argument(
        "--rates", metavar="RESTORE.parquet", help="restore rates from a streams-lag restore table"
    )
    parser.add_argument(
        "--restore-rate",
        type=float,
        metavar="R",
        help="records/s per task where --rates measures none (for the time to catch up)",
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")


def run(args: argparse.Namespace) -> int:
    """Print the lag of every replica and the tasks with no caught-up client.

    Raises
    ------
    UsageError
        For a bad state or rates file (named, with the JSON path or column and the value), or a
        restore rate <= 0 records/s.
    """
    if args.restore_rate is not None and not args.restore_rate > 0:
        raise UsageError(f"--restore-rate must be > 0 records/s, got {args.restore_rate:g}")
    from streams_assign.cli._common import load_cluster, naming
    from streams_assign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM

    cluster = load_cluster(args.file)
    rates = None
    with naming(args.file):
        if args.rates is not None:
            from streams_assign.simulation.rates import read_restore_rates

            rates = read_restore_rates(args.rates, args.restore_rate)
        elif args.restore_rate is not None:
            from streams_assign.simulation.probing import RestoreRates

            rates = RestoreRates(args.restore_rate)
    acceptable = cluster.configs.acceptable_recovery_lag
    rows = []
    for client in cluster.clients:
        for task in sorted(client.task_lags):
            lag = client.task_lags[task]
            caught_up = cluster.is_caught_up(client, task)
            if lag == LATEST_OFFSET:
                state = "running active"
            elif lag == UNKNOWN_OFFSET_SUM:
                state = "unknown offset sum"
            else:
                state = "caught up" if caught_up else "behind"
            eta_s = None
            if rates is not None and not caught_up and lag > 0:
                eta_s = math.ceil((lag - acceptable) / rates.rate(client.id, task))
            rows.append((client.id, str(task), lag, state, eta_s))
    uncovered = [
        str(task)
        for task in cluster.stateful_tasks
        if not any(cluster.is_caught_up(c, task) for c in cluster.clients)
    ]
    if args.json:
        import json

        print(
            json.dumps(
                {
                    "acceptable_recovery_lag": acceptable,
                    "replicas": [
                        {"client": c, "task": t, "lag": lag, "state": s, "catch_up_s": e}
                        for c, t, lag, s, e in rows
                    ],
                    "tasks_without_caught_up_client": uncovered,
                },
                indent=1,
            )
        )
        return 0
    from streams_assign.views.tables import print_lags

    print_lags(cluster, rows, uncovered, args.file)
    return 0
