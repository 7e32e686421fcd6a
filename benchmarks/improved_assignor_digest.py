"""SHA-256 digests of the lag-aware sticky assignor's outputs: proof that a speed change is exact.

A change made only for speed must leave every assignment the same. This script runs the
assignor over a fixed corpus and prints one SHA-256 per part (and one over all), each over the
canonical JSON (``Assignment.to_json``, keys sorted) of every output in order:

1. ``shared``: the 280 shared states (kafka-diff 160 + kafka-ext 120), each replayed for up to
   :data:`REPLAY_ROUNDS` rounds (``rebalances`` of the replay simulator, changelog sizes filled
   in, 10,000 records/s per restoring copy), so fed-back states with warmups, pending moves
   and caught-up copies count too;
2. ``convergence``: Kafka's ``TaskAssignorConvergenceTest`` perturbations on seeds
   ``0 .. --seeds - 1``, every rebalance of every convergence;
3. ``scale``: the seeded scale states (``scale_scenario``: 4 threads, 2000 stateful + 1000
   stateless tasks, 1 standby) at 10 / 100 / 1000 clients, seeds 0-2, each with its second
   replay round, and 3000 clients seed 0 (first round).

Run it on two commits (for example one in a ``git worktree`` of ``main`` through
``PYTHONPATH``) and compare the lines::

    .venv/bin/python benchmarks/improved_assignor_digest.py [--seeds 200]

It prints the number of assignments per part with its digest; the same digests mean
bit-identical outputs on the whole corpus.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.cluster_states import scale_scenario  # noqa: E402
from devtools.generators.convergence_harness import run_randomized_scenario  # noqa: E402
from devtools.paths import CORPORA  # noqa: E402
from streams_assign.assignors.lag_aware_sticky import LagAwareStickyTaskAssignor  # noqa: E402
from streams_assign.formats.cluster_state import load_cluster_state, parse_cluster_state  # noqa: E402
from streams_assign.model import Assignment, ClusterState  # noqa: E402
from streams_assign.simulation.replay import rebalances, with_changelog_sizes  # noqa: E402

__all__ = ["REPLAY_ROUNDS", "Recorder", "main"]

#: Rounds of the replay per shared state (fewer when the assignor stops probing earlier).
REPLAY_ROUNDS = 4
NAME = LagAwareStickyTaskAssignor.name


class Recorder:
    """Wraps ``LagAwareStickyTaskAssignor.assign`` and hashes every output it returns.

    Attributes
    ----------
    digest:
        The running SHA-256 of the current part.
    count:
        Assignments hashed in the current part.
    """

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.count = 0
        self._original: Callable[[LagAwareStickyTaskAssignor, ClusterState], Assignment] = (
            LagAwareStickyTaskAssignor.assign
        )
        original = self._original
        recorder = self

        def recording(assignor: LagAwareStickyTaskAssignor, cluster: ClusterState) -> Assignment:
            result = original(assignor, cluster)
            text = json.dumps(result.to_json(), sort_keys=True, separators=(",", ":"))
            recorder.digest.update(text.encode())
            recorder.digest.update(b"\n")
            recorder.count += 1
            return result

        LagAwareStickyTaskAssignor.assign = recording  # type: ignore[method-assign]

    def part(self) -> tuple[int, str]:
        """The current part's count and hex digest; starts the next part."""
        done = (self.count, self.digest.hexdigest())
        self.digest, self.count = hashlib.sha256(), 0
        return done


def shared_states() -> None:
    """Replay every shared state for up to :data:`REPLAY_ROUNDS` rounds."""
    files = sorted((CORPORA / "kafka-diff" / "input").glob("*.json"))
    files += sorted((CORPORA / "kafka-ext" / "input").glob("*.json"))
    for path in files:
        state = with_changelog_sizes(load_cluster_state(path))
        restored = int(10_000 * state.configs.probing_rebalance_interval_ms / 1000)
        for _ in rebalances(state, restored, NAME, REPLAY_ROUNDS):
            pass


def convergence(seeds: int) -> None:
    """Kafka's convergence-test perturbations on seeds ``0 .. seeds - 1``."""
    for seed in range(seeds):
        run_randomized_scenario(seed, NAME)


def scale_states() -> None:
    """The scale states at 10 / 100 / 1000 clients (seeds 0-2, two rounds) and 3000 (seed 0)."""
    for clients, seeds, rounds in ((10, 3, 2), (100, 3, 2), (1000, 3, 2), (3000, 1, 1)):
        for seed in range(seeds):
            state = parse_cluster_state(scale_scenario(clients, seed=seed))
            for _ in rebalances(state, 100_000, NAME, rounds):
                pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="convergence seeds")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    recorder = Recorder()
    whole = hashlib.sha256()
    parts: list[tuple[str, Callable[[], None]]] = [
        ("shared", shared_states),
        ("convergence", lambda: convergence(args.seeds)),
        ("scale", scale_states),
    ]
    for name, run in parts:
        start = time.perf_counter()
        run()
        count, digest = recorder.part()
        whole.update(digest.encode())
        print(f"{name:12} {count:6} assignments  {digest}  ({time.perf_counter() - start:.1f} s)")
    print(f"{'all':12} {'':6}              {whole.hexdigest()}")


if __name__ == "__main__":
    main()
