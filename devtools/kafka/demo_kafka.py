"""``make demo-kafka``: the real-cluster path, end to end, on this machine.

Starts a Kafka broker (KRaft, loopback) and the Streams application of
:mod:`devtools.kafka.streams_app`, collects the operator's sources (the group's own state,
``ListOffsets``, Kafka's ``JmxTool`` over each instance, the state directories), predicts the
next assignment with ``streams-lag snapshot`` + ``streams-assign assign``, triggers
the rebalance and prints the prediction beside what Kafka Streams assigned. Every JVM is
stopped and every temporary folder removed at the end; the operator's view, the cluster state
and the prediction stay in ``--out`` (``out/demo-kafka`` by default).

Usage::

    python -m devtools.kafka.demo_kafka [--scenario A|B|C ...] [--out DIR] [--next]

``--next`` runs the application on Kafka Streams 4.3 (``.kafka/lib-next``; the broker stays
4.2): its stores keep their offsets inside (KIP-1035) and ``streams-lag`` reads them there.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from devtools.kafka.broker import running_broker
from devtools.kafka.e2e import SCENARIOS, ScenarioResult, run_scenario

__all__ = ["main"]


def _print(result: ScenarioResult) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"scenario {result.scenario}: {SCENARIOS[result.scenario]}")
    for column in (
        "process",
        "predicted active",
        "leader's active",
        "predicted standby",
        "leader's standby",
    ):
        table.add_column(column)
    for pid in sorted(set(result.predicted) | set(result.real)):
        want = result.predicted.get(pid, ([], []))
        got = result.real.get(pid, ([], []))
        table.add_row(
            pid[:8], " ".join(want[0]), " ".join(got[0]), " ".join(want[1]), " ".join(got[1])
        )
    console.print(table)
    console.print(
        f"probing rebalance: predicted {result.predicted_probing}, real {result.real_probing}"
    )
    first = "equals" if result.settled == result.real else "differs from"
    last = "equals" if result.settled == result.last else "differs from"
    console.print(
        f"once stable, what the processes run {first} the leader's first decision and {last} "
        f"its last ({len(result.decisions)} decisions after the trigger)"
    )
    verdict = "[green]prediction == real[/]" if result.matched else "[red]differs[/]"
    console.print(f"{verdict} ({result.seconds:.0f} s); files in {result.folder}")
    for line in result.differences():
        console.print(f"  {line}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; returns 0 when every prediction matched, 1 otherwise."""
    parser = argparse.ArgumentParser(prog="demo-kafka", description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), action="append")
    parser.add_argument("--out", default="out/demo-kafka", help="folder for the views")
    parser.add_argument(
        "--next", action="store_true", help="run the application on Kafka Streams 4.3"
    )
    args = parser.parse_args(argv)
    matched = True
    cp = None
    if args.next:
        from devtools.kafka.streams_app import app_classpath_next

        cp = app_classpath_next()
    with running_broker() as broker:
        for scenario in args.scenario or ["A"]:
            result = run_scenario(broker, scenario, Path(args.out) / scenario, cp=cp)
            _print(result)
            matched &= result.matched
    return 0 if matched else 1


if __name__ == "__main__":
    sys.exit(main())
