"""Eager vs incremental cooperative Connect rebalancing, measured on the shared sequences.

Prints two tables:

1. *Recorded*: the 40 shared sequences as Kafka decided them (14 eager, 26 incremental; our
   replay is identical to Kafka's, see tests/connect), scored round by round.
0. *Consumer groups*: the 80 shared consumer states, each under all four consumer assignors:
   partitions revoked, moved and kept in the rebalance.
2. *Same events*: every one of the 40 sequences' events (times, membership, configuration)
   replayed closed-loop under each assignor (workers apply their assignments; follow-up
   rebalances as Connect triggers them), so both protocols face identical changes.

Usage: ``python benchmarks/connect_eager_vs_cooperative.py [--rebalance-ms 1000] [FOLDER]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.paths import CORPORA  # noqa: E402
from streams_assign.connect import replay_connect  # noqa: E402
from streams_assign.connect.scores import SequenceScore, score_sequence  # noqa: E402
from streams_assign.connect.simulate import simulate_connect  # noqa: E402
from streams_assign.formats.connect_sequence import load_connect_sequence  # noqa: E402

DEFAULT_FOLDER = CORPORA / "kafka-connect"


def _row(label: str, scores: list[SequenceScore], seconds: float) -> list[str]:
    rounds = sum(len(s.rounds) for s in scores)
    balanced = [s.rounds_to_balance for s in scores if s.rounds_to_balance is not None]
    return [
        label,
        str(len(scores)),
        str(rounds),
        str(sum(s.revoked for s in scores)),
        str(sum(s.moved for s in scores)),
        f"{sum(s.stopped_ms - s.lost_ms for s in scores) / 1000:,.0f}",
        f"{sum(s.lost_ms for s in scores) / 1000:,.0f}",
        f"{statistics.mean(balanced):.2f}" if balanced else "-",
        str(max(balanced, default=0)),
        str(sum(s.rounds_to_balance is None for s in scores)),
        f"{seconds * 1000 / max(rounds, 1):.2f}",
    ]


def _table(title: str) -> Table:
    table = Table(title=title)
    for column in (
        "assignor",
        "seqs",
        "rounds",
        "revoked",
        "moved",
        "stopped item-s (live work)",
        "stopped item-s (lost work)",
        "rounds to balance (mean)",
        "max",
        "superseded unbalanced",
        "ms/round",
    ):
        table.add_column(column, justify="right" if column != "assignor" else "left")
    return table


def _consumer_table(console: Console, folder: Path) -> None:
    from streams_assign.consumer import assign_consumer_group
    from streams_assign.consumer.scores import score_consumer_assignment
    from streams_assign.formats.consumer_group import load_consumer_state

    states = [load_consumer_state(p) for p in sorted((folder / "input").glob("*.json"))]
    if not states:
        return
    table = Table(title=f"Consumer groups: the {len(states)} shared states under each assignor")
    for column in ("assignor", "revoked", "moved", "kept", "two-round rebalances", "ms/state"):
        table.add_column(column, justify="right" if column != "assignor" else "left")
    for name in ("range", "roundrobin", "sticky", "cooperative-sticky"):
        started = time.perf_counter()
        scores = [
            score_consumer_assignment(s, assign_consumer_group(s, name), name) for s in states
        ]
        elapsed = time.perf_counter() - started
        table.add_row(
            name,
            str(sum(s.revoked for s in scores)),
            str(sum(s.moved for s in scores)),
            str(sum(s.kept for s in scores)),
            str(sum(s.rounds == 2 for s in scores)),
            f"{elapsed * 1000 / len(states):.2f}",
        )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(DEFAULT_FOLDER))
    parser.add_argument("--rebalance-ms", type=int, default=1000)
    args = parser.parse_args()
    paths = sorted((Path(args.folder) / "input").glob("*.json"))
    if not paths:
        raise SystemExit(f"no sequences in {args.folder}/input")
    sequences = [load_connect_sequence(p) for p in paths]
    console = Console(width=200)
    _consumer_table(console, Path(args.folder).parent / "kafka-consumer")

    recorded = _table(f"Recorded: Kafka's decisions on the {len(sequences)} shared sequences")
    for name in ("eager", "incremental"):
        chosen = [s for s in sequences if s.assignor == name]
        started = time.perf_counter()
        scores = [score_sequence(s, replay_connect(s), args.rebalance_ms) for s in chosen]
        recorded.add_row(*_row(name, scores, time.perf_counter() - started))
    console.print(recorded)

    same = _table(
        f"Same events: all {len(sequences)} sequences closed-loop under each assignor "
        f"(rebalance {args.rebalance_ms} ms)"
    )
    variants = [
        ("eager", "eager", None),
        ("incremental (sequence's delay)", "incremental", None),
        ("incremental (delay 0)", "incremental", 0),
    ]
    for label, assignor, delay in variants:
        scores = []
        started = time.perf_counter()
        for sequence in sequences:
            if delay is not None:
                sequence = replace(sequence, scheduled_rebalance_max_delay_ms=delay)
            ran, results = simulate_connect(sequence, assignor, args.rebalance_ms)
            scores.append(score_sequence(ran, results, args.rebalance_ms))
        same.add_row(*_row(label, scores, time.perf_counter() - started))
    console.print(same)


if __name__ == "__main__":
    main()
