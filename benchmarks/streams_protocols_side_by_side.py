"""Classic (HighAvailabilityTaskAssignor, Kafka 4.2) beside streams groups (the broker's
StickyTaskAssignor, Kafka 4.4) on the same app and data: kill one of five instances, then add one.

Measured from the instances (``assignment.jsonl`` of each, ``devtools/kafka/streams_app.py``):
seconds from the action until every running instance is RUNNING with every task active exactly
once (3 s quiet), the active tasks that changed process, and the active tasks of the added
instance at that moment. Also counted: target computations (streams: the broker's DEBUG log)
or rebalances decided (classic: the leader's ``Decided on assignment`` lines). Prints one table
row per protocol and step; not a test (timings depend on the machine).

    python benchmarks/streams_protocols_side_by_side.py [--instances 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

from devtools.kafka.broker import running_broker
from devtools.kafka.streams_app import StreamsCluster
from devtools.kafka.streams_group_live import set_group_configs

CONFIGS_44 = {
    "group.streams.min.session.timeout.ms": 1000,
    "group.streams.session.timeout.ms": 6000,
    "group.streams.min.heartbeat.interval.ms": 500,
    "group.streams.heartbeat.interval.ms": 1000,
}


def _actives(cluster: StreamsCluster) -> dict[str, str]:
    return {t: pid for pid, a in cluster.assignments().items() for t in a.active}


def _step(cluster: StreamsCluster, action: object, counter: object) -> dict[str, object]:
    before = _actives(cluster)
    count0 = counter()  # type: ignore[operator]
    start = time.monotonic()
    added = action()  # type: ignore[operator]
    cluster.wait_stable(timeout=600, quiet_ms=3000)
    seconds = time.monotonic() - start - 3.0
    after = _actives(cluster)
    moved = sum(1 for t, p in after.items() if before.get(t) not in (None, p))
    new_actives = len(cluster.assignments()[added].active) if added else None
    return {
        "seconds": round(seconds, 1),
        "moved": moved,
        "new_instance_actives": new_actives,
        "decisions": counter() - count0,  # type: ignore[operator]
    }


def run(protocol: str, instances: int, threads: int, partitions: int) -> list[dict[str, object]]:
    version = "4.4" if protocol == "streams" else "4.2"
    configs = CONFIGS_44 if protocol == "streams" else {}
    levels = {"org.apache.kafka.coordinator.group": "DEBUG"} if protocol == "streams" else {}
    app = f"side-{protocol}"
    with running_broker(version=version, configs=configs, log_levels=levels) as broker:
        if protocol == "streams":
            set_group_configs(broker, app, {"streams.num.standby.replicas": 1})

            def counter() -> int:
                text = (broker.log_dir / "server.log").read_text(errors="replace")
                return text.count(f"[GroupId {app}] Computed a new target assignment")

        with StreamsCluster(
            broker,
            app,
            kafka_version=version,
            configs={"group.protocol": "streams"} if protocol == "streams" else {},
            partitions=partitions,
            standbys=1,
            session_timeout_ms=6000,
        ) as cluster:
            if protocol != "streams":

                def counter() -> int:
                    return sum(len(i.log_lines("Decided on assignment")) for i in cluster.instances)

            cluster.produce(20_000)
            for _ in range(instances):
                cluster.add_instance(threads=threads)
            cluster.wait_stable(timeout=600)
            rows = []
            victim = cluster.instances[0]
            rows.append({"step": "kill 1 of 5", **_step(cluster, lambda: victim.kill(), counter)})

            def add() -> str:
                return cluster.add_instance(threads=threads).process_id

            rows.append({"step": "add 1", **_step(cluster, add, counter)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--partitions", type=int, default=6)
    args = parser.parse_args()
    print(
        "| protocol | step | seconds to all RUNNING | actives moved | added instance's actives "
        "| computations / decisions |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for protocol in ("classic", "streams"):
        for row in run(protocol, args.instances, args.threads, args.partitions):
            print(
                f"| {protocol} | {row['step']} | {row['seconds']} | {row['moved']} | "
                f"{row['new_instance_actives'] if row['new_instance_actives'] is not None else '-'}"
                f" | {row['decisions']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
