"""The long randomised variant (``STREAMS_ASSIGN_LONG=1``): random fleets, a random kill or add.

Each run draws 2-6 instances, 1-3 stream threads each, 0-2 standbys and either scenario A (an
instance joins) or B (one is killed); the prediction must equal the group leader's decision in
the rebalance it predicts, every time. How often the settled assignment equals it too is
counted and reported (further cooperative rebalances may follow, see docs/e2e.md).
The figures (matched / total, per-run differences) are printed and written to
``out/e2e-random.json``; docs/e2e.md keeps the measured ones.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from devtools.kafka.broker import KafkaBroker
from devtools.kafka.e2e import run_scenario

LONG = os.environ.get("STREAMS_ASSIGN_LONG") == "1"
RUNS = int(os.environ.get("STREAMS_ASSIGN_E2E_RUNS", "8"))

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def draw(rng: random.Random) -> dict[str, Any]:
    instances = rng.randint(2, 6)
    return {
        "scenario": rng.choice("AB"),
        "instances": instances,
        "threads": rng.randint(1, 3),
        "standbys": rng.randint(0, 2),
        "victim": rng.randrange(instances),
        "joining_threads": rng.randint(1, 3),
    }


if LONG:  # the long tier only: every run is a few minutes of real cluster time

    def test_random_fleets_prediction_equals_real(
        kafka_broker: KafkaBroker, tmp_path: Path
    ) -> None:
        rng = random.Random(20261123)
        runs = []
        for number in range(RUNS):
            params = draw(rng)
            result = run_scenario(
                kafka_broker,
                params["scenario"],
                tmp_path / f"run-{number}",
                instances=params["instances"],
                threads=params["threads"],
                standbys=params["standbys"],
                victim=params["victim"],
                joining_threads=params["joining_threads"],
            )
            settled = result.settled == result.predicted
            entry = {
                **params,
                "matched": result.matched,
                "settled_matched": settled,
                "settled_is_last_decision": result.settled == result.last,
                "decisions": len(result.decisions),
                "seconds": round(result.seconds),
                "differences": result.differences(),
            }
            # Keep the evidence: the views go with tmp_path.
            if not (settled and result.matched and entry["settled_is_last_decision"]):
                entry["detail"] = json.loads((result.folder / "result.json").read_text())
            runs.append(entry)
            print(
                f"run {number}: {params} matched={result.matched} settled={settled} "
                f"({result.seconds:.0f} s)"
            )
        matched = sum(r["matched"] for r in runs)
        settled_matched = sum(r["settled_matched"] for r in runs)
        report = {
            "matched": matched,
            "settled_matched": settled_matched,
            "total": len(runs),
            "runs": runs,
        }
        out = Path("out")
        out.mkdir(exist_ok=True)
        (out / "e2e-random.json").write_text(json.dumps(report, indent=1))
        print(
            f"randomised end-to-end: {matched}/{len(runs)} first decisions matched, "
            f"{settled_matched}/{len(runs)} settled assignments matched"
        )
        assert matched == len(runs), json.dumps([r for r in runs if not r["matched"]], indent=1)
        # What runs once stable is what the leader decided last, in every run.
        assert all(r["settled_is_last_decision"] for r in runs), json.dumps(
            [r for r in runs if not r["settled_is_last_decision"]], indent=1
        )
