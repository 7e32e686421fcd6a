"""Count records per key: a stateful stream app on aiokafka, on streams-assign's task runtime.

Task ``0_p`` is partition ``p`` of the input topic; its state (count per key) is a store backed
by partition ``p`` of ``<application.id>-counts-changelog``. The runtime
(:mod:`streams_assign.clients.runtime`) keeps standbys and warmups up to date, restores a
promoted task from where its store is, checkpoints and commits; the app is :func:`count`.
``--assignor roundrobin|sticky`` runs aiokafka's own assignors instead (the baseline: no
standbys, a new owner restores the whole changelog).

Run several processes with the same ``--application-id``; each writes the runtime's events
(``assigned``, ``restored`` ...) as JSON lines to ``--events``::

    python examples/counts_app.py --bootstrap-servers 127.0.0.1:9092 \\
        --application-id counts --input-topic words --state-dir /tmp/p1 --events /tmp/p1.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import faulthandler
import json
import logging
import signal
import sys
from typing import Any

from streams_assign.clients import StreamsSettings, Subtopology, Topology
from streams_assign.clients.runtime import RuntimeConfig, StreamsApp, TaskContext


def count(ctx: TaskContext, record: Any) -> None:
    """The whole app: one more for the record's key."""
    key = record.key.decode()
    ctx.put(key, str(int(ctx.get(key) or 0) + 1))


def topology(args: argparse.Namespace) -> Topology:
    changelog = f"{args.application_id}-counts-changelog"
    return Topology((Subtopology(0, (args.input_topic,), (changelog,)),))


def config(args: argparse.Namespace, client_assignor: Any = None) -> RuntimeConfig:
    """The runtime's settings from the command line; events go to ``--events``."""
    events = open(args.events, "a", encoding="utf-8") if args.events else None  # noqa: SIM115

    def write_event(name: str, record: dict[str, Any]) -> None:
        if events is not None:
            events.write(json.dumps(record) + "\n")
            events.flush()

    settings = StreamsSettings(
        num_standby_replicas=args.num_standby_replicas,
        acceptable_recovery_lag=args.acceptable_recovery_lag,
        max_warmup_replicas=args.max_warmup_replicas,
        probing_rebalance_interval_ms=args.probing_interval_ms,
        assignor=args.streams_assignor,
    )
    return RuntimeConfig(
        args.bootstrap_servers,
        args.application_id,
        args.state_dir,
        consumers=args.consumers,
        settings=settings,
        store=args.store,
        session_timeout_ms=args.session_timeout_ms,
        endpoint=args.endpoint,
        client_assignor=client_assignor,
        cooperative=args.cooperative,
        on_event=write_event,
    )


def aiokafka_assignor(name: str) -> Any:
    if name == "roundrobin":
        from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        return RoundRobinPartitionAssignor
    if name == "sticky":
        from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

        return StickyPartitionAssignor
    return None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--application-id", required=True)
    parser.add_argument("--input-topic", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--events")
    parser.add_argument("--consumers", type=int, default=2)
    parser.add_argument(
        "--assignor", choices=("streams", "roundrobin", "sticky"), default="streams"
    )
    parser.add_argument(
        "--streams-assignor",
        default="high_availability",
        help="with --assignor streams: a name in streams_assign.assignors.ASSIGNORS",
    )
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--num-standby-replicas", type=int, default=1)
    parser.add_argument("--acceptable-recovery-lag", type=int, default=10_000)
    parser.add_argument("--max-warmup-replicas", type=int, default=2)
    parser.add_argument("--probing-interval-ms", type=int, default=600_000)
    parser.add_argument("--session-timeout-ms", type=int, default=3_000)
    parser.add_argument("--endpoint")
    parser.add_argument(
        "--cooperative",
        action="store_true",
        help="kafka-python only: the cooperative protocol (KIP-429)",
    )
    return parser.parse_args(argv)


def setup(argv: list[str] | None) -> argparse.Namespace:
    """Parse the arguments, log warnings to stderr, dump stacks on SIGUSR1 (for the tests)."""
    logging.basicConfig(
        level=logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    return parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = setup(argv)
    app = StreamsApp(config(args, aiokafka_assignor(args.assignor)), topology(args), count)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(app.run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
