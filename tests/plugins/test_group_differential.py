"""The broker plug-in's decision (Java) equals the Python streams-group form of lag_aware_sticky.

Random streams-group states (:func:`devtools.kafka.plugin_harness.draw_group`) from a seed
(printed; ``STREAMS_ASSIGN_SEED`` replays it); ``benchmarks/plugin_differential.py --groups``
is the long run.
"""

from __future__ import annotations

import os
import random

from devtools.kafka.plugin_harness import (
    PluginHarness,
    draw_group,
    group_disagreements,
    python_group_decision,
)

GROUPS = 200


def test_broker_form_decides_as_python_on_random_streams_groups(
    kafka_plugin: PluginHarness,
) -> None:
    seed = int(os.environ.get("STREAMS_ASSIGN_SEED") or random.SystemRandom().getrandbits(32))
    print(f"plug-in streams-group differential: seed {seed}")
    rng = random.Random(seed)
    failed = []
    for i in range(GROUPS):
        document = draw_group(rng)
        problems = group_disagreements(
            python_group_decision(document), kafka_plugin.request({"group": document})
        )
        if problems:
            failed.append((i, problems[:3]))
    assert not failed, f"seed {seed}: {len(failed)} of {GROUPS} disagree, first: {failed[0]}"
