"""The Java core of the plug-in decides exactly as the Python ``lag_aware_sticky``.

On the 280 shared states (kafka-diff 160 + kafka-ext 120) and on random states drawn from a
seed (printed; ``STREAMS_ASSIGN_SEED`` replays it), each also fed back once with the decision
as the previous assignment. ``benchmarks/plugin_differential.py`` is the long run.
"""

from __future__ import annotations

import os
import random

from devtools.kafka.plugin_harness import (
    PluginHarness,
    disagreements,
    draw_state,
    fed_back,
    python_decision,
)
from devtools.paths import CORPORA
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state

RANDOM_STATES = 100


def test_java_core_decides_as_python_on_the_shared_states(kafka_plugin: PluginHarness) -> None:
    files = sorted((CORPORA / "kafka-diff" / "input").glob("*.json")) + sorted(
        (CORPORA / "kafka-ext" / "input").glob("*.json")
    )
    assert len(files) == 280
    failed = {f.name: d for f in files if (d := kafka_plugin.compare(load_cluster_state(f)))}
    assert not failed, f"{len(failed)} of 280 disagree, first: {next(iter(failed.items()))}"


def test_java_core_decides_as_python_on_random_states(kafka_plugin: PluginHarness) -> None:
    seed = int(os.environ.get("STREAMS_ASSIGN_SEED") or random.SystemRandom().getrandbits(32))
    print(f"plug-in core differential: seed {seed}")
    rng = random.Random(seed)
    failed = []
    for i in range(RANDOM_STATES):
        document = draw_state(rng)
        for round_ in range(2):
            cluster = parse_cluster_state(document)
            java = kafka_plugin.decide(cluster)
            problems = disagreements(python_decision(cluster), java)
            if problems:
                failed.append((i, round_, problems[:3]))
                break
            document = fed_back(document, java, rng)
    assert not failed, f"seed {seed}: {len(failed)} disagree, first: {failed[0]}"
