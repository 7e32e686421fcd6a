"""Time the timeline simulator on 1000 members x 10,000 tasks over a one-hour timeline.

The issue's target: under a minute. The timeline starts 1000 members, then scales out by 50,
crashes one member (restarted 30 s later), cuts one off the cluster for 60 s, adds 500 tasks
and scales in by 50; every member heartbeats every 3 s for the whole hour (about 1.2 million
heartbeats through the coordinator state machine). Prints the wall and CPU time (the machine
may be shared: CPU time is the figure that does not depend on other load) and what happened,
for each protocol.

Usage: ``python benchmarks/protocol_scale.py [--members 1000] [--tasks 10000]``
"""

from __future__ import annotations

import argparse
import time

from streams_assign.protocol.timeline import simulate

TARGET_S = 60.0


def timeline(members: int, tasks: int) -> dict:
    """The one-hour benchmark timeline."""
    minute = 60_000
    return {
        "tasks": tasks,
        "assignor": "balanced_sticky",
        "settings": {
            "state_records_per_task": 10_000,
            "restore_records_per_sec": 50_000,
            "changelog_growth_records_per_sec": 1,
            "task_close_ms": 5,
            "task_open_ms": 5,
        },
        "events": [
            {"t": 0, "type": "start", "members": members},
            {"t": 10 * minute, "type": "scale_out", "members": 50},
            {"t": 20 * minute, "type": "crash", "member": "m7", "restart_after_ms": 30_000},
            {"t": 30 * minute, "type": "network_pause", "member": "m11", "duration_ms": 60_000},
            {"t": 40 * minute, "type": "add_tasks", "tasks": 500},
            {"t": 50 * minute, "type": "scale_in", "members": 50},
        ],
        "duration_ms": 60 * minute,
    }


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=10_000)
    args = parser.parse_args()
    doc = timeline(args.members, args.tasks)
    print(
        f"{args.members} members x {args.tasks} tasks, one simulated hour "
        f"(target: under {TARGET_S:.0f} s per protocol)"
    )
    for protocol in ("eager", "cooperative"):
        start, cpu_start = time.perf_counter(), time.process_time()
        result = simulate(doc, protocol)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        running = sum(1 for s in result.final_status.values() if s == "running")
        print(
            f"{protocol:<12} {elapsed:6.1f} s wall {cpu:6.1f} s CPU  "
            f"rebalances {result.rebalances:>3}  "
            f"task-s unavailable {result.total_task_seconds_unavailable:>12,.0f}  "
            f"stop-the-world {result.stop_the_world_ms / 1000:7.1f} s  "
            f"running at end {running}/{len(result.final_status)}  "
            f"violations {len(result.violations)}  "
            f"{'OK' if elapsed < TARGET_S else 'OVER TARGET (wall)'}"
        )


if __name__ == "__main__":
    main()
