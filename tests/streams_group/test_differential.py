"""Random differential: the twin against Kafka 4.4's ``StickyTaskAssignor`` on seeded states.

``STREAMS_ASSIGN_SEED`` replays a run (the seed is printed); ``STREAMS_ASSIGN_LONG=1`` checks
tens of thousands of states instead of a few hundred. The first disagreeing input is written to
``out/streams-group-diff/`` and named in the failure.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path

from devtools.generators.streams_groups import KINDS, random_streams_group
from devtools.kafka.java import JavaBatch
from streams_assign.assignors.streams_group_sticky import assign_streams_group
from streams_assign.errors import TaskAssignorException
from streams_assign.formats.streams_group import parse_streams_group

OUT = Path(__file__).resolve().parents[2] / "out" / "streams-group-diff"


def _twin(state: dict) -> dict:
    try:
        return assign_streams_group(parse_streams_group(state)).to_json()
    except TaskAssignorException as exc:
        return {"error": f"TaskAssignorException: {exc}"}


def test_twin_agrees_with_kafka_on_random_states(kafka_sticky: JavaBatch) -> None:
    seed = int(os.environ.get("STREAMS_ASSIGN_SEED") or random.SystemRandom().getrandbits(32))
    count = 20_000 if os.environ.get("STREAMS_ASSIGN_LONG") == "1" else 300
    print(f"streams-group differential: seed {seed}, {count} states")
    rng = random.Random(seed)
    kinds: Counter[str] = Counter()
    disagreements = []
    for i in range(count):
        state = random_streams_group(rng)
        kinds[state["meta"]["kind"]] += 1
        if _twin(state) != kafka_sticky.request(state):
            disagreements.append(i)
            if len(disagreements) == 1:
                OUT.mkdir(parents=True, exist_ok=True)
                path = OUT / f"seed{seed}-state{i}.json"
                path.write_text(json.dumps(state, indent=1))
                first = path
    print(f"kinds: {dict(sorted(kinds.items()))}")
    assert set(kinds) == set(KINDS) or count < 100
    assert not disagreements, (
        f"{len(disagreements)} of {count} states disagree (seed {seed}); first input: {first}"
    )


def test_group_without_members_throws_as_kafka_does(kafka_sticky: JavaBatch) -> None:
    state = {"topology": {"0": {"partitions": 1, "stateful": True}}, "members": []}
    java = kafka_sticky.request(state)
    assert "error" in java
    assert _twin(state) == java
