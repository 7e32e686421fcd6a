"""A faust-streaming worker whose partitions are placed by streams-assign.

A count per key in a RocksDB table (``<app>-counts-changelog``) over one input topic; the one
line that matters is ``PartitionAssignor=`` in :func:`make_app`. Run several workers with the
same ``--application-id``::

    python examples/faust_app.py --bootstrap-servers 127.0.0.1:9092 --application-id shop \
        --input-topic shop-in --datadir /tmp/w1 --web-port 6067 --standbys 1

``--assignor high_availability`` (default) or ``lag_aware_sticky`` runs streams-assign at the
group leader; ``--assignor faust`` runs faust's own assignor. ``--events FILE`` writes JSON
lines the tests and ``benchmarks/clients_faust.py`` read: ``assigned`` (the worker's active and
standby table partitions after a rebalance), ``recovered`` (the table serves its active
partitions again: the changelog records restored into each since the rebalance) and ``table``
(the keys and counts of its active partitions, after each recovery).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

import faust

from streams_assign.clients.faust import StreamsPartitionAssignor


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--application-id", required=True)
    parser.add_argument("--input-topic", required=True)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--datadir", required=True)
    parser.add_argument("--web-port", type=int, required=True)
    parser.add_argument("--events", default=None, help="JSON lines of rebalances and recoveries")
    parser.add_argument(
        "--assignor", default="high_availability", help="a registered assignor, or faust"
    )
    parser.add_argument("--standbys", type=int, default=1, help="table_standby_replicas")
    parser.add_argument("--acceptable-recovery-lag", type=int, default=10_000)
    parser.add_argument("--max-warmup-replicas", type=int, default=2)
    parser.add_argument("--probing-interval-ms", type=int, default=600_000)
    parser.add_argument("--session-timeout-s", type=float, default=6.0)
    return parser.parse_args(argv)


def make_app(args: argparse.Namespace) -> faust.App:
    """The faust app: streams-assign's assignor unless ``--assignor faust``."""
    if args.assignor == "faust":
        assignor: Any = "faust.assignor:PartitionAssignor"
    else:
        assignor = StreamsPartitionAssignor.with_settings(
            assignor=args.assignor,
            acceptable_recovery_lag=args.acceptable_recovery_lag,
            max_warmup_replicas=args.max_warmup_replicas,
            probing_rebalance_interval_ms=args.probing_interval_ms,
        )
    return faust.App(
        args.application_id,
        broker=f"kafka://{args.bootstrap_servers}",
        datadir=args.datadir,
        store="rocksdb://",
        table_standby_replicas=args.standbys,
        topic_partitions=args.partitions,
        topic_replication_factor=1,
        web_enabled=False,
        web_port=args.web_port,
        canonical_url=f"http://127.0.0.1:{args.web_port}",
        broker_session_timeout=args.session_timeout_s,
        broker_heartbeat_interval=0.5,
        broker_request_timeout=max(40.0, args.session_timeout_s * 2),
        broker_commit_every=50,
        PartitionAssignor=assignor,
    )


class Events:
    """The worker's JSON lines (one ``write`` per line, flushed, so a ``kill -9`` loses none)."""

    def __init__(self, path: str | None) -> None:
        self.path = path

    def write(self, event: str, **fields: Any) -> None:
        if self.path is None:
            return
        line = json.dumps({"event": event, "t": time.time(), "pid": os.getpid(), **fields})
        with open(self.path, "a") as out:
            out.write(line + "\n")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    app = make_app(args)
    events = Events(args.events)
    source = app.topic(args.input_topic, partitions=args.partitions, value_serializer="raw")
    counts = app.Table("counts", default=int, partitions=args.partitions)
    changelog = counts.changelog_topic.get_topic_name()
    restored: Counter[int] = Counter()

    def table_partitions(tps: Iterable[Any]) -> list[int]:
        return sorted(tp.partition for tp in tps if tp.topic == changelog)

    apply_batch = counts.apply_changelog_batch

    def counting_apply(batch: Iterable[Any]) -> None:
        batch = list(batch)
        actives = set(table_partitions(app.assignor.assigned_actives()))
        for event in batch:
            if event.message.partition in actives:
                restored[event.message.partition] += 1
        apply_batch(batch)

    counts.apply_changelog_batch = counting_apply  # type: ignore[method-assign]

    def warmups() -> list[int]:
        # streams-assign's warmups (standbys catching up before a move); faust's own has none.
        extension = getattr(app.assignor, "extension", None)
        return sorted(extension.warmups.get(changelog, [])) if extension is not None else []

    def decided_by() -> str | None:
        # Which assignor the group leader ran; None on a worker running faust's own assignor.
        if not isinstance(app.assignor, StreamsPartitionAssignor):
            return None
        extension = app.assignor.extension
        return "faust" if extension is None else extension.assignor

    @app.on_partitions_assigned.connect
    async def on_assigned(sender: Any, assigned: Any, **kwargs: Any) -> None:
        restored.clear()
        events.write(
            "assigned",
            generation=app.consumer_generation_id,
            active=table_partitions(app.assignor.assigned_actives()),
            standby=table_partitions(app.assignor.assigned_standbys()),
            warmups=warmups(),
            decided_by=decided_by(),
        )

    @counts.on_recover
    async def on_recovered() -> None:
        active = table_partitions(app.assignor.assigned_actives())
        events.write(
            "recovered",
            generation=app.consumer_generation_id,
            active=active,
            standby=table_partitions(app.assignor.assigned_standbys()),
            restored={str(p): restored[p] for p in active},
        )
        keys: dict[str, dict[str, int]] = {str(p): {} for p in active}
        for key, value in counts.items():
            partition = str(key).split(":")[0]  # keys are "<partition>:<n>"
            if partition in keys:
                keys[partition][str(key)] = int(value)
        events.write("table", generation=app.consumer_generation_id, keys=keys)

    @app.agent(source)
    async def count(stream: Any) -> None:
        async for key, _ in stream.items():
            counts[key.decode()] += 1

    app.finalize()
    app.conf.autodiscover = False
    worker = faust.Worker(app, loglevel="INFO", override_logging=False)
    worker.execute_from_commandline()


if __name__ == "__main__":
    main()
