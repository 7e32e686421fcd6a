"""The seed sweep of issue #14: what a rolling bounce and one crash cost, eager vs cooperative.

Two groups: Connect-style (stateless tasks that take time to stop and start, 10 s sessions,
the balanced sticky assignor) and Streams-style (stateful tasks restored from their
changelogs, 45 s sessions, Kafka Streams' high-availability assignor with warmups and probing
rebalances). Over 10 -> 1000 tasks and 3, 10, 30 members, every member is bounced once (10 s
down, one after the other), then one member crashes and comes back 30 s later. Prints a
Markdown table of the stop-the-world time (no task running), the task-seconds unavailable and
the rebalances after start-up, and writes a plot.

Usage: ``python benchmarks/protocol_sweep.py [--plot docs/protocol-sweep.png] [--quick]``
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from streams_assign.protocol.timeline import simulate

STYLES: dict[str, dict[str, Any]] = {
    "connect": {
        "assignor": "balanced_sticky",
        "settings": {
            "session_timeout_ms": 10_000,
            "rebalance_timeout_ms": 60_000,
            "heartbeat_interval_ms": 3_000,
            "task_close_ms": 50,
            "task_open_ms": 50,
        },
    },
    "streams": {
        "assignor": "high_availability",
        "settings": {
            "session_timeout_ms": 45_000,
            "heartbeat_interval_ms": 3_000,
            "state_records_per_task": 50_000,
            "restore_records_per_sec": 100_000,
            "changelog_growth_records_per_sec": 10,
            "task_close_ms": 10,
            "task_open_ms": 10,
            "acceptable_recovery_lag": 10_000,
        },
    },
}


def sweep_timeline(style: str, tasks: int, members: int) -> dict[str, Any]:
    """Start, bounce every member once, crash one member; times in milliseconds."""
    interval = 30_000
    bounce_at = 120_000
    crash_at = bounce_at + members * interval + 60_000
    return {
        "tasks": tasks,
        "assignor": STYLES[style]["assignor"],
        "settings": dict(STYLES[style]["settings"]),
        "events": [
            {"t": 0, "type": "start", "members": members},
            {"t": bounce_at, "type": "rolling_bounce", "down_ms": 10_000, "interval_ms": interval},
            {"t": crash_at, "type": "crash", "member": "m1", "restart_after_ms": 30_000},
        ],
        "duration_ms": crash_at + 240_000,
    }


def run_point(style: str, tasks: int, members: int, protocol: str) -> dict[str, Any]:
    """One simulation: the figures after start-up."""
    result = simulate(sweep_timeline(style, tasks, members), protocol)
    after_start = result.events[1:]
    unavailable = sum(sum(e.task_seconds_unavailable.values()) for e in after_start)
    return {
        "style": style,
        "tasks": tasks,
        "members": members,
        "protocol": protocol,
        "stop_the_world_s": result.stop_the_world_ms / 1000.0,
        "unavailable_task_s": unavailable,
        "rebalances": sum(e.rebalances for e in after_start),
        "violations": len(result.violations),
        "running_at_end": sum(1 for s in result.final_status.values() if s == "running"),
    }


def main() -> None:
    """Run the sweep, print the table, write the plot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", default="docs/protocol-sweep.png")
    parser.add_argument("--quick", action="store_true", help="10 and 100 tasks, 3 and 10 members")
    args = parser.parse_args()
    task_counts = [10, 100] if args.quick else [10, 30, 100, 300, 1000]
    member_counts = [3, 10] if args.quick else [3, 10, 30]
    rows = []
    start = time.perf_counter()
    for style in STYLES:
        for members in member_counts:
            for tasks in task_counts:
                for protocol in ("eager", "cooperative"):
                    rows.append(run_point(style, tasks, members, protocol))
    elapsed = time.perf_counter() - start
    print(
        "| style | members | tasks | protocol | stop-the-world (s) | task-s unavailable "
        "| rebalances |"
    )
    print("|---|---:|---:|---|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['style']} | {r['members']} | {r['tasks']} | {r['protocol']} | "
            f"{r['stop_the_world_s']:.1f} | {r['unavailable_task_s']:,.0f} | "
            f"{r['rebalances']} |"
        )
    bad = [r for r in rows if r["violations"] or r["running_at_end"] != r["tasks"]]
    print(
        f"\n{len(rows)} simulations in {elapsed:.0f} s; "
        f"{len(bad)} with a violation or a task not running at the end"
    )
    for r in bad:
        print(f"  {r}")
    _plot(rows, args.plot, task_counts, member_counts)
    print(f"plot: {args.plot}")


def _plot(
    rows: list[dict[str, Any]], path: str, task_counts: list[int], member_counts: list[int]
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for col, style in enumerate(STYLES):
        for row, (metric, label) in enumerate(
            (
                ("unavailable_task_s", "task-seconds unavailable"),
                ("stop_the_world_s", "stop-the-world (s)"),
            )
        ):
            ax = axes[row][col]
            for members in member_counts:
                for protocol, dash in (("eager", "-"), ("cooperative", "--")):
                    ys = [
                        next(
                            r[metric]
                            for r in rows
                            if r["style"] == style
                            and r["members"] == members
                            and r["tasks"] == t
                            and r["protocol"] == protocol
                        )
                        for t in task_counts
                    ]
                    ax.plot(
                        task_counts, ys, dash, marker="o", label=f"{protocol}, {members} members"
                    )
            ax.set_xscale("log")
            if metric == "unavailable_task_s":
                ax.set_yscale("log")
            ax.set_xlabel("tasks")
            ax.set_ylabel(label)
            ax.set_title(f"{style}-style: rolling bounce + one crash")
            if row == 0 and col == 0:
                ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    main()
