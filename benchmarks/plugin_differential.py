"""The long differential: the plug-in jar's Java core against the Python ``lag_aware_sticky``.

Runs the 280 shared states (kafka-diff 160 + kafka-ext 120), then random states
(:func:`devtools.kafka.plugin_harness.draw_state`), each fed back once with the decision as the
previous assignment (:func:`~devtools.kafka.plugin_harness.fed_back`), then ``--groups``
random streams-group states (:func:`~devtools.kafka.plugin_harness.draw_group`) for the broker
form, and prints the counts: states, decisions compared, disagreements, Java exceptions.
``--states`` random states (2,000 by default; 100,000 under ``STREAMS_ASSIGN_LONG=1``),
``--groups`` (500; 20,000 long), ``--seed`` to replay. The first disagreeing inputs are written
to ``out/plugin-diff/``::

    STREAMS_ASSIGN_LONG=1 .venv/bin/python benchmarks/plugin_differential.py --seed 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.kafka.plugin_harness import (  # noqa: E402
    PluginHarness,
    cluster_request,
    disagreements,
    draw_group,
    draw_state,
    fed_back,
    group_disagreements,
    python_decision,
    python_group_decision,
)
from devtools.paths import CORPORA  # noqa: E402
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state  # noqa: E402

OUT = REPO / "out" / "plugin-diff"
KEEP = 20


def _record(name: str, request: dict, problems: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps({"request": request, "problems": problems}))


def main(argv: list[str] | None = None) -> int:
    """Run the differential and print its counts; exit 1 on any disagreement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    long_run = os.environ.get("STREAMS_ASSIGN_LONG") == "1"
    parser.add_argument("--states", type=int, default=100_000 if long_run else 2_000)
    parser.add_argument("--groups", type=int, default=20_000 if long_run else 500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jar", type=Path, default=None, help="run this copy of the jar")
    args = parser.parse_args(argv)
    started = time.monotonic()
    counts = {"shared": 0, "random": 0, "fed_back": 0, "disagree": 0, "java_errors": 0}
    groups = {"states": 0, "disagree": 0}
    with PluginHarness(jvm_args=("-Xmx512m", "-XX:+UseSerialGC"), jar=args.jar) as harness:
        for corpus in ("kafka-diff", "kafka-ext"):
            for path in sorted((CORPORA / corpus / "input").glob("*.json")):
                cluster = load_cluster_state(path)
                java = harness.decide(cluster)
                problems = disagreements(python_decision(cluster), java)
                counts["shared"] += 1
                if problems:
                    counts["disagree"] += 1
                    counts["java_errors"] += "error" in java
                    _record(f"{corpus}-{path.stem}", cluster_request(cluster), problems)
        rng = random.Random(args.seed)
        for i in range(args.states):
            document = draw_state(rng)
            for round_ in ("random", "fed_back"):
                cluster = parse_cluster_state(document)
                java = harness.decide(cluster)
                problems = disagreements(python_decision(cluster), java)
                counts[round_] += 1
                if problems:
                    counts["disagree"] += 1
                    counts["java_errors"] += "error" in java
                    if counts["disagree"] <= KEEP:
                        _record(f"seed{args.seed}-{i}-{round_}", cluster_request(cluster), problems)
                    break
                document = fed_back(document, java, rng)
            if (i + 1) % 10_000 == 0:
                print(f"  {i + 1} random states, {counts['disagree']} disagreements", flush=True)
        group_rng = random.Random(args.seed)
        for i in range(args.groups):
            document = draw_group(group_rng)
            problems = group_disagreements(
                python_group_decision(document), harness.request({"group": document})
            )
            groups["states"] += 1
            if problems:
                groups["disagree"] += 1
                if groups["disagree"] <= KEEP:
                    _record(f"group-seed{args.seed}-{i}", {"group": document}, problems)
    decisions = counts["shared"] + counts["random"] + counts["fed_back"]
    print(
        f"seed {args.seed}: {counts['shared']} shared states, {counts['random']} random states, "
        f"{counts['fed_back']} fed back; {decisions} decisions compared, "
        f"{counts['disagree']} disagreements ({counts['java_errors']} Java exceptions); "
        f"{groups['states']} streams groups, {groups['disagree']} disagreements; "
        f"{time.monotonic() - started:.0f} s"
    )
    return 1 if counts["disagree"] or groups["disagree"] else 0


if __name__ == "__main__":
    sys.exit(main())
