"""Start-up and parsing speed of ``streams-assign`` (issue #10, point 2).

Prints two tables:

1. whole-process times (a fresh ``python -m streams_assign.cli`` per run, as a user sees it):
   ``--help`` and ``assign --json`` on the scale scenario at 10 / 100 / 1000 clients, beside the
   in-process time of the same work (``load_cluster_state`` + ``assign``) and the import time of
   the command;
2. the parse time (``loads_cluster_state``) of 1000 clients x 3000 stateful tasks with lags on
   every client, and of 10 clients reporting a lag for each of 2000 stateful tasks (20,000
   entries) beside 1000 stateless tasks (the state the issue measured at about 2 s);
figures are medians of ``--repeat`` runs, in seconds, as wall time and CPU time (user + system):
on a shared machine the CPU time is the figure that does not depend on the other jobs.

    .venv/bin/python benchmarks/startup_benchmark.py [--repeat 5] [--sizes 10,100,1000]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.cluster_states import scale_scenario  # noqa: E402
from streams_assign.assignors import assign  # noqa: E402
from streams_assign.formats.cluster_state import load_cluster_state, loads_cluster_state  # noqa: E402

#: Measured before issue #10 on this machine class (from the issue text), seconds.
BEFORE = {"help": "1.0-1.6", 10: "1.7-2.2"}


def median_seconds(run: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median wall and median CPU seconds (user + system, this process) of ``run``."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def whole_process(argv: list[str], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of a fresh ``python -m streams_assign.cli`` process."""
    command = [sys.executable, "-m", "streams_assign.cli", *argv]
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _children_cpu()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def lagged_document(
    clients: int, tasks: int, lags_per_client: int, seed: int, stateless: int = 0
) -> dict[str, Any]:
    """The scale scenario with ``lags_per_client`` more lag entries on every client."""
    document = scale_scenario(clients, stateful_tasks=tasks, stateless_tasks=stateless, seed=seed)
    rng = random.Random(seed)
    stateful = document["stateful_tasks"]
    for client in document["clients"]:
        lags = client.setdefault("task_lags", {})
        for task in rng.sample(stateful, min(lags_per_client, len(stateful))):
            lags.setdefault(task, rng.randrange(0, 200_000))
    return document


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000", help="client counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    console = Console(width=100)

    processes = Table(title="streams-assign, whole process vs in process (median s, wall / CPU)")
    for column in ("command", "whole process", "in process", "before #10 (wall)"):
        processes.add_column(column, justify="right" if column != "command" else "left")
    wall, cpu = whole_process(["--help"], args.repeat)
    processes.add_row("--help", f"{wall:.3f} / {cpu:.3f}", "-", BEFORE["help"])
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            path = Path(folder) / f"scale-{size}.json"
            path.write_text(json.dumps(scale_scenario(size, seed=args.seed)), encoding="utf-8")
            outer = whole_process(["assign", "--json", str(path)], args.repeat)
            inner = median_seconds(lambda p=path: assign(load_cluster_state(p)), args.repeat)
            processes.add_row(
                f"assign --json, {size} clients x 4 threads, 3000 tasks",
                f"{outer[0]:.3f} / {outer[1]:.3f}",
                f"{inner[0]:.3f} / {inner[1]:.3f}",
                BEFORE.get(size, "-"),
            )
    console.print(processes)

    parsing = Table(title="loads_cluster_state (median s)")
    for column in ("state", "lag entries", "JSON (MB)", "parse (wall / CPU)"):
        parsing.add_column(column, justify="right" if column != "state" else "left")
    cases = [
        ("1000 clients x 3000 tasks, 60 more lags per client", lagged_document(1000, 3000, 60, 0)),
        (
            "10 clients x 2000 stateful + 1000 stateless tasks, a lag for every stateful task",
            lagged_document(10, 2000, 2000, 0, stateless=1000),
        ),
    ]
    for label, document in cases:
        text = json.dumps(document)
        entries = sum(len(c.get("task_lags", {})) for c in document["clients"])
        wall, cpu = median_seconds(lambda t=text: loads_cluster_state(t), args.repeat)
        parsing.add_row(label, f"{entries:,}", f"{len(text) / 1e6:.1f}", f"{wall:.3f} / {cpu:.3f}")
    console.print(parsing)


if __name__ == "__main__":
    main()
