"""The long randomised variant on the streams protocol (``STREAMS_ASSIGN_LONG=1``).

Each run draws 2-6 instances, 1-3 stream threads each, 0-2 standbys and 1-3 threads for the
joining instance, and runs A (join), B (kill -9) and C (one bounce) on a fresh streams group of
the session's 4.4 broker; every target computation the broker logged must equal the twin's, the
chain's first computation of each scenario the broker's, and the last target what the threads
run. The figures (matched / total computations, each difference) are printed and written to
``out/e2e-streams-group-random.json``; ``docs/e2e.md`` keeps the measured ones.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

import pytest

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.streams_group_e2e import (
    check_phase,
    check_startup,
    run_streams_group_scenarios,
)
from devtools.paths import REPO

LONG = os.environ.get("STREAMS_ASSIGN_LONG") == "1"
RUNS = int(os.environ.get("STREAMS_ASSIGN_E2E_RUNS", "6"))

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def draw(rng: random.Random) -> dict[str, Any]:
    """One random fleet."""
    return {
        "instances": rng.randint(2, 6),
        "threads": rng.randint(1, 3),
        "standbys": rng.randint(0, 2),
        "joining_threads": rng.randint(1, 3),
    }


if LONG:  # the long tier only: every run is minutes of real cluster time

    def test_random_streams_groups_every_computation_predicted(
        kafka_broker_44: KafkaBroker,
    ) -> None:
        seed = int(os.environ.get("STREAMS_ASSIGN_SEED", "20261127"))
        rng = random.Random(seed)
        runs = []
        for number in range(RUNS):
            params = draw(rng)
            run = run_streams_group_scenarios(
                kafka_broker_44, f"e2e-sg-random-{seed}-{number}", partitions=6, **params
            )
            results = [check_startup(run)] + [check_phase(run, i) for i in range(len(run.phases))]
            runs.append({"params": params, "results": results})
            print(json.dumps(runs[-1]), flush=True)
        out = REPO / "out" / "e2e-streams-group-random.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps({"seed": seed, "runs": runs}, indent=1))
        total = sum(r["computations"] for run in runs for r in run["results"])
        equal = sum(r["replayed_equal"] for run in runs for r in run["results"])
        print(f"{equal} / {total} computations equal")
        assert [d for run in runs for r in run["results"] for d in r["differences"]] == []
