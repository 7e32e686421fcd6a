"""Parity with Apache Kafka's own outputs on the shared scenarios, in both modes.

Counts the files of ``tests/corpora/kafka-diff`` (HighAvailabilityTaskAssignor: actives,
standbys, probing flag) and ``kafka-ext`` (zones and threads: every field the expected file
gives, per client and per consumer) that match exactly, in the default mode and in the
Kafka-literal mode (``HighAvailabilityTaskAssignor(literal=True)``).

    .venv/bin/python benchmarks/parity_counts.py
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.paths import CORPORA  # noqa: E402
from streams_assign.assignors import assign  # noqa: E402
from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor  # noqa: E402
from streams_assign.assignors.threads import assign_tasks_to_consumers  # noqa: E402
from streams_assign.formats.cluster_state import load_cluster_state  # noqa: E402


def decide(path: Path, literal: bool) -> dict[str, Any]:
    cluster = load_cluster_state(path)
    if not literal:
        return assign(cluster).to_json()
    result = HighAvailabilityTaskAssignor(literal=True).assign(cluster)
    if any(client.consumers is not None for client in cluster.clients):
        result = assign_tasks_to_consumers(cluster, result)
    return result.to_json()


def matches(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    if expected.get("probing_rebalance_needed") != actual["probing_rebalance_needed"]:
        return False
    for client_id, client in expected["clients"].items():
        mine = actual["clients"].get(client_id)
        if mine is None:
            return False
        for role in ("active", "standby"):
            if role in client and client[role] != mine[role]:
                return False
        for member, roles in client.get("consumers", {}).items():
            theirs = mine.get("consumers", {}).get(member, {})
            if any(theirs.get(role) != tasks for role, tasks in roles.items()):
                return False
    return True


def main() -> int:
    logging.disable(logging.WARNING)
    if not CORPORA.is_dir():
        print(f"{CORPORA} is missing", file=sys.stderr)
        return 2
    for folder in ("kafka-diff", "kafka-ext"):
        inputs = sorted((CORPORA / folder / "input").glob("*.json"))
        for literal in (False, True):
            good = sum(
                matches(
                    json.loads((CORPORA / folder / "expected" / p.name).read_text()),
                    decide(p, literal),
                )
                for p in inputs
            )
            mode = "literal" if literal else "default"
            print(f"{folder:11} {mode:8} {good}/{len(inputs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
