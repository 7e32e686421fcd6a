"""Compare the simulator with a real broker: three kafka-python consumers, a rolling bounce.

Starts a single-node Kafka 4.2 broker (``devtools.kafka.broker``, jars from
``make kafka``), creates a topic of 12 partitions, runs three consumers of one group (eager
``range`` assignor, 10 s sessions, 3 s heartbeats) and bounces each once: ``close()`` (which
sends LeaveGroup), 10 s down, restart; one every 30 s. It records every revocation and
assignment with the generation, then runs the same timeline through the simulator (eager,
``consumer:range``) and prints both side by side: rebalances (generations), and per rebalance
the pause (from the first member's revocation to the last member's assignment).

kafka-python speaks only the eager protocol, so the cooperative half of the comparison is not
made here. Needs the ``clients`` extra (kafka-python) and ``make kafka``. Usage:
``python benchmarks/protocol_real_broker.py``
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from streams_assign.protocol.timeline import simulate  # noqa: E402

TOPIC = "protocol-check"
PARTITIONS = 12
GROUP = "protocol-check"
DOWN_S = 10.0
INTERVAL_S = 30.0
SETTLE_S = 25.0


class _Member(threading.Thread):
    def __init__(self, name: str, bootstrap: str, events: list[dict[str, Any]], t0: float):
        super().__init__(daemon=True)
        self.name_ = name
        self.bootstrap = bootstrap
        self.events = events
        self.t0 = t0
        self.stop_flag = threading.Event()

    def run(self) -> None:
        from kafka import ConsumerRebalanceListener, KafkaConsumer

        consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=GROUP,
            client_id=self.name_,
            session_timeout_ms=10_000,
            heartbeat_interval_ms=3_000,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        member = self

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                member._record("revoked", consumer, revoked)

            def on_partitions_assigned(self, assigned: Any) -> None:
                member._record("assigned", consumer, assigned)

        consumer.subscribe([TOPIC], listener=Listener())
        while not self.stop_flag.is_set():
            consumer.poll(timeout_ms=100)
        consumer.close()

    def _record(self, kind: str, consumer: Any, partitions: Any) -> None:
        generation = consumer._coordinator._generation.generation_id  # private, read only
        self.events.append(
            {
                "t": time.monotonic() - self.t0,
                "member": self.name_,
                "kind": kind,
                "generation": generation,
                "partitions": len(partitions),
            }
        )


def real_run() -> list[dict[str, Any]]:
    """The rolling bounce against a real broker; returns the recorded callbacks."""
    from devtools.kafka.broker import running_broker

    events: list[dict[str, Any]] = []
    with running_broker() as broker:
        broker.create_topic(TOPIC, partitions=PARTITIONS)
        t0 = time.monotonic()
        members = {n: _Member(n, broker.bootstrap_servers, events, t0) for n in ("m1", "m2", "m3")}
        for m in members.values():
            m.start()
        time.sleep(INTERVAL_S)
        for name in ("m1", "m2", "m3"):
            members[name].stop_flag.set()
            members[name].join(timeout=30)
            time.sleep(DOWN_S)
            members[name] = _Member(name, broker.bootstrap_servers, events, t0)
            members[name].start()
            time.sleep(INTERVAL_S - DOWN_S)
        time.sleep(SETTLE_S)
        for m in members.values():
            m.stop_flag.set()
        for m in members.values():
            m.join(timeout=30)
    return events


def pauses(events: list[dict[str, Any]]) -> dict[int, float]:
    """Per generation, seconds from the rebalance's first revocation to its last assignment."""
    out: dict[int, float] = {}
    window_start: float | None = None
    last_kind = "assigned"
    for e in sorted(events, key=lambda e: e["t"]):
        if e["kind"] == "revoked" and (window_start is None or last_kind == "assigned"):
            window_start = e["t"]
        if e["kind"] == "assigned" and window_start is not None:
            out[e["generation"]] = max(out.get(e["generation"], 0.0), e["t"] - window_start)
        last_kind = e["kind"]
    return out


def simulated_pauses(result: Any) -> list[tuple[float, float]]:
    """``(start s, length s)`` of every window with some partition not being consumed."""
    windows = []
    start: float | None = None
    for t, running, *_ in result.series:
        if running < PARTITIONS and start is None:
            start = t / 1000.0
        elif running == PARTITIONS and start is not None:
            windows.append((start, t / 1000.0 - start))
            start = None
    return windows


def simulated() -> Any:
    """The same timeline through the simulator (eager, consumer:range)."""
    ms = 1000
    return simulate(
        {
            "tasks": PARTITIONS,
            "assignor": "consumer:range",
            "protocols": ["eager"],
            "settings": {
                "session_timeout_ms": 10_000,
                "heartbeat_interval_ms": 3_000,
                "initial_rebalance_delay_ms": 0,
            },
            "events": [
                {"t": 0, "type": "start", "members": 3},
                {
                    "t": int(INTERVAL_S * ms),
                    "type": "rolling_bounce",
                    "down_ms": int(DOWN_S * ms),
                    "interval_ms": int(INTERVAL_S * ms),
                },
            ],
            "duration_ms": int((4 * INTERVAL_S + SETTLE_S) * ms),
        },
        "eager",
    )


def main() -> None:
    """Run both and print the comparison."""
    events = real_run()
    for e in sorted(events, key=lambda e: e["t"]):
        print(
            f"  {e['t']:7.2f} s {e['member']} {e['kind']:<8} generation {e['generation']} "
            f"({e['partitions']} partitions)"
        )
    real_generations = sorted({e["generation"] for e in events if e["kind"] == "assigned"})
    sim = simulated()
    print(
        f"real broker: generations {real_generations} "
        f"({len(real_generations)} rebalances with assignments)"
    )
    for gen, pause in sorted(pauses(events).items()):
        print(f"  generation {gen}: pause {pause:.2f} s")
    print(f"simulator:   {sim.rebalances} rebalances, final generation {sim.generation}")
    for begin, length in simulated_pauses(sim):
        print(f"  from {begin:.1f} s: partitions stopped for {length:.2f} s")


if __name__ == "__main__":
    main()
