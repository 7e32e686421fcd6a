"""Random differential: our assignors against Kafka's own, on states drawn afresh every run.

Each run draws a new seed (printed; set ``STREAMS_ASSIGN_SEED`` to replay one) and checks
``STATES`` states per variant (``RACK_STATES`` for the rack-aware ones, whose placements are
compared exactly like the others'); ``STREAMS_ASSIGN_LONG=1`` checks ``LONG_STATES``
(``RACK_LONG_STATES``) per variant.
The first disagreeing input is written to ``build/differential-failures/`` with both answers,
and the assertion message names the file. Any disagreement is a bug on our side until proven
otherwise.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from devtools.generators.cluster_states import random_cluster_state
from devtools.kafka.reference import KafkaReference, compare_one, ours

STATES = 300
LONG_STATES = 10_000
#: Rack-aware variants (KIP-925) run Kafka's cycle cancelling on both sides: fewer states.
RACK_STATES = 40
RACK_LONG_STATES = 2000
FAILURES = Path(__file__).resolve().parents[2] / "build" / "differential-failures"

#: variant name -> (assignor, generator options)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "ha-default": ("high_availability", {}),
    "ha-tags": ("high_availability", {"tags": True}),
    "ha-threads": ("high_availability", {"threads": True}),
    "ha-tags-threads-revocation": (
        "high_availability",
        {"tags": True, "threads": True, "revocation": True},
    ),
    "sticky": ("sticky", {}),
    "sticky-threads": ("sticky", {"threads": True}),
    "fallback-prior": ("fallback_prior", {}),
    # Rack-aware (KIP-925): exact placements, also among equally cheap ones (Kafka's solver).
    "ha-min-traffic": ("high_availability", {"racks": "min_traffic"}),
    "ha-balance-subtopology": ("high_availability", {"racks": "balance_subtopology"}),
    "ha-balance-subtopology-threads": (
        "high_availability",
        {"racks": "balance_subtopology", "threads": True},
    ),
    "sticky-min-traffic": ("sticky", {"racks": "min_traffic"}),
    "sticky-balance-subtopology": ("sticky", {"racks": "balance_subtopology"}),
}


def _seed() -> int:
    given = os.environ.get("STREAMS_ASSIGN_SEED")
    return int(given) if given else random.SystemRandom().getrandbits(48)


def _count(variant: str) -> int:
    long_run = os.environ.get("STREAMS_ASSIGN_LONG") == "1"
    if "racks" in VARIANTS[variant][1]:
        return RACK_LONG_STATES if long_run else RACK_STATES
    return LONG_STATES if long_run else STATES


def _write_failure(
    variant: str, seed: int, index: int, document: dict, problems: list[str]
) -> Path:
    FAILURES.mkdir(parents=True, exist_ok=True)
    path = FAILURES / f"{variant}-seed{seed}-{index}.json"
    assignor = VARIANTS[variant][0]
    try:
        our_answer: Any = ours(document, assignor)
    except Exception as exc:  # noqa: BLE001 - recorded for the reader, not handled
        our_answer = repr(exc)
    path.write_text(
        json.dumps(
            {
                "variant": variant,
                "assignor": assignor,
                "seed": seed,
                "index": index,
                "differences": problems,
                "state": document,
                "ours": our_answer,
            },
            indent=1,
        )
    )
    return path


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_random_states_agree_with_kafka(variant: str, kafka_reference: KafkaReference) -> None:
    assignor, options = VARIANTS[variant]
    seed = _seed()
    count = _count(variant)
    print(
        f"differential {variant}: seed {seed} (STREAMS_ASSIGN_SEED={seed} replays), {count} states"
    )
    rng = random.Random(f"{variant}:{seed}")
    disagreements = 0
    first: Path | None = None
    for index in range(count):
        document = random_cluster_state(rng, **options)
        problems = compare_one(kafka_reference, document, assignor)
        if problems:
            disagreements += 1
            if first is None:
                first = _write_failure(variant, seed, index, document, problems)
    assert disagreements == 0, (
        f"{disagreements} of {count} states disagree with Kafka ({variant}, seed {seed}); "
        f"first input and both answers: {first}"
    )
