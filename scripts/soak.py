"""The soak run (``make soak``): hard rules over many random states, long differentials, e2e.

Three stages, each selectable with ``--stages``:

``convergence``
    Kafka's ``TaskAssignorConvergenceTest`` perturbations
    (:func:`devtools.generators.convergence_harness.run_randomized_scenario`) for
    ``high_availability`` and ``lag_aware_sticky``, ``--scenarios`` seeds each, on at most two
    worker processes. Every rebalance is checked against the hard rules (each task active on
    exactly one client, no client with the active and a standby of one task, each task on
    ``min(clients, 1 + num.standby.replicas)`` clients plus at most ``max.warmup.replicas``
    warmups in all, Kafka's ``assertValidAssignment``); the harness itself checks, at each
    convergence, the balance bound (load spread and subtopology skew <= 1) and Kafka's limit of
    ``2 * (stateful + stateful * standbys)`` rebalances. A *state* is one random cluster the
    assignor converges on: the fresh cluster of a seed and the cluster after each of its random
    drop / add / resurrect events.
``differential``
    The random differentials against Kafka's jars at their long sizes: the tests themselves,
    run by pytest with ``STREAMS_ASSIGN_LONG=1`` (``tests/reference/test_differential.py``,
    ``tests/streams_group/test_differential.py``); the states each compared are read from the
    lines the tests print.
``e2e``
    The randomised end-to-end run (``tests/e2e/test_random.py`` with ``STREAMS_ASSIGN_LONG=1``),
    its figures read from ``out/e2e-random.json``.

It prints the counts and writes each stage's between its markers in ``docs/reliability.md``
(the stages not run keep their last figures); it exits 1 when any rule was broken or any test
failed.

Usage::

    .venv/bin/python scripts/soak.py                       # everything, 100 000 seeds each
    .venv/bin/python scripts/soak.py --stages convergence --scenarios 20000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from devtools.generators.convergence_harness import (  # noqa: E402
    ConvergenceHarness,
    run_randomized_scenario,
)
from streams_assign import Assignment, TaskId  # noqa: E402
from streams_assign.errors import NotConvergedError  # noqa: E402
from streams_assign.formats.atomic import write_atomic  # noqa: E402

sys.path.insert(0, str(REPO / "scripts"))
from repeat_tests import outcomes  # noqa: E402

ASSIGNORS = ("high_availability", "lag_aware_sticky")
DIFFERENTIALS = ("tests/reference/test_differential.py", "tests/streams_group/test_differential.py")
E2E = "tests/e2e/test_random.py"
DOC = REPO / "docs" / "reliability.md"
#: Seeds one worker task runs: large enough to keep the pool's overhead small.
CHUNK = 500
#: Problems kept per chunk for the report (the count is always complete).
KEEP = 3


@dataclass
class Tally:
    """What one slice of seeds did: clusters converged on, rebalances run, rules broken."""

    scenarios: int = 0
    states: int = 0
    rebalances: int = 0
    violations: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.scenarios += other.scenarios
        self.states += other.states
        self.rebalances += other.rebalances
        self.violations += other.violations
        self.examples.extend(other.examples[: max(0, KEEP - len(self.examples))])


def rebalance_problems(harness: ConvergenceHarness, result: Assignment) -> list[str]:
    """The hard rules every rebalance keeps, probing ones included.

    Each task is active on exactly one client; no client holds the active and a standby of one
    task; leaving the warmups aside, each task is on ``min(clients, 1 + standbys)`` clients (a
    stateless task on one); the warmups number at most ``max.warmup.replicas`` (Kafka's
    ``assertValidAssignment`` and ``TaskMovement``'s budget).
    """
    problems = []
    configs = harness.configs
    stateful = set(harness.stateful_tasks)
    actives: Counter[TaskId] = Counter()
    copies: Counter[TaskId] = Counter()
    warmups = 0
    for client_id, client in result.clients.items():
        both = set(client.active) & set(client.standby)
        if both:
            problems.append(f"{client_id} holds {sorted(both)} as active and standby")
        actives.update(client.active)
        copies.update(client.active)
        copies.update(set(client.standby) - set(client.warmup))
        warmups += len(client.warmup)
    if warmups > configs.max_warmup_replicas:
        problems.append(f"{warmups} warmups > max.warmup.replicas {configs.max_warmup_replicas}")
    n = len(result.clients)
    for task in harness.stateless_tasks + harness.stateful_tasks:
        if actives[task] != 1:
            problems.append(f"task {task} is active on {actives[task]} clients")
        standbys = configs.num_standby_replicas if task in stateful else 0
        if copies[task] != min(n, 1 + standbys):
            problems.append(f"task {task} on {copies[task]} clients besides warmups")
    return problems


class Checker:
    """The ``on_rebalance`` hook of one seed: counts states and rebalances, checks each one."""

    def __init__(self, assignor: str, seed: int, tally: Tally) -> None:
        self.label = f"{assignor} seed {seed}"
        self.tally = tally
        self.probing_before = False

    def __call__(self, harness: ConvergenceHarness, result: Assignment) -> None:
        # A rebalance after a non-probing one starts a new state (a fresh or perturbed cluster).
        if not self.probing_before:
            self.tally.states += 1
        self.probing_before = result.probing_rebalance_needed
        problems = rebalance_problems(harness, result)
        if problems:
            self.tally.violations += 1
            if len(self.tally.examples) < KEEP:
                self.tally.examples.append(f"{self.label}: {'; '.join(problems)}")


def run_chunk(job: tuple[str, int, int]) -> Tally:
    """Run seeds ``first .. first + count - 1`` of one assignor, checking every rebalance."""
    assignor, first, count = job
    tally = Tally()
    for seed in range(first, first + count):
        checker = Checker(assignor, seed, tally)
        try:
            tally.rebalances += run_randomized_scenario(seed, assignor, on_rebalance=checker)
        except NotConvergedError as exc:
            tally.violations += 1
            if len(tally.examples) < KEEP:
                tally.examples.append(f"{checker.label}: {exc}")
        tally.scenarios += 1
    return tally


def convergence(
    scenarios: int, workers: int, assignors: list[str], deadline: float | None = None
) -> list[dict[str, object]]:
    """The convergence stage: one row per assignor.

    Prints the running totals after every chunk of :data:`CHUNK` seeds. When ``deadline`` (a
    :func:`time.monotonic` value) passes, the seeds not yet finished are dropped and the row
    counts the chunks that finished (``stopped`` in the row says so).
    """
    rows = []
    for assignor in assignors:
        started = time.monotonic()
        jobs = [
            (assignor, first, min(CHUNK, scenarios - first)) for first in range(0, scenarios, CHUNK)
        ]
        total = Tally()
        stopped = False
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            results = pool.imap_unordered(run_chunk, jobs)
            for _ in jobs:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    total.add(results.next(timeout=wait))
                except multiprocessing.TimeoutError:
                    stopped = True
                    break
                print(
                    f"  {assignor}: {total.scenarios}/{scenarios} seeds, {total.states} states, "
                    f"{total.rebalances} rebalances, {total.violations} violations "
                    f"({time.monotonic() - started:.0f} s)",
                    flush=True,
                )
        row = {
            "stage": "convergence",
            "what": assignor + (f" (stopped at the deadline, of {scenarios})" if stopped else ""),
            "scenarios": total.scenarios,
            "states": total.states,
            "rebalances": total.rebalances,
            "violations": total.violations,
            "examples": total.examples,
            "seconds": round(time.monotonic() - started),
        }
        print(
            f"convergence {assignor}: {total.scenarios} seeds, {total.states} states, "
            f"{total.rebalances} rebalances, {total.violations} violations "
            f"({row['seconds']} s)",
            flush=True,
        )
        for example in total.examples:
            print(f"    {example}", flush=True)
        rows.append(row)
    return rows


def run_pytest(
    paths: list[str], work: Path, env: dict[str, str]
) -> tuple[int, str, dict[str, str | None]]:
    """Run pytest on ``paths`` with ``env`` added; exit code, output, outcome per test."""
    report = work / "report.xml"
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-s",
            f"--junitxml={report}", f"--basetemp={work / 'tmp'}", *paths,
        ],
        cwd=REPO, capture_output=True, text=True, check=False,
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    found = outcomes(report) if report.is_file() else {}
    return done.returncode, done.stdout + done.stderr, found


def differential(long: bool) -> list[dict[str, object]]:
    """The random differentials (long sizes unless ``long`` is false): states compared, failures."""
    rows = []
    env = {"STREAMS_ASSIGN_LONG": "1"} if long else {}
    for path in DIFFERENTIALS:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="soak-") as work:
            code, output, found = run_pytest([path], Path(work), env)
        states = sum(int(n) for n in re.findall(r"differential.*?(\d+) states", output))
        failed = [name for name, problem in found.items() if problem is not None]
        row = {
            "stage": "differential",
            "what": path + ("" if long else " (short sizes)"),
            "tests": len(found),
            "states": states,
            "violations": len(failed) + (0 if found or code == 0 else 1),
            "examples": [f"{name}: {found[name]}" for name in failed][:KEEP],
            "seconds": round(time.monotonic() - started),
        }
        print(
            f"differential {path}: {len(found)} tests, {states} states compared, "
            f"{row['violations']} failed (exit {code}, {row['seconds']} s)",
            flush=True,
        )
        rows.append(row)
    return rows


def e2e(runs: int | None) -> list[dict[str, object]]:
    """The long randomised end-to-end run (``runs`` random fleets, the test's default if None)."""
    started = time.monotonic()
    report = REPO / "out" / "e2e-random.json"
    report.unlink(missing_ok=True)
    env = {"STREAMS_ASSIGN_LONG": "1"}
    if runs is not None:
        env["STREAMS_ASSIGN_E2E_RUNS"] = str(runs)
    with tempfile.TemporaryDirectory(prefix="soak-") as work:
        code, _, found = run_pytest([E2E], Path(work), env)
    figures = json.loads(report.read_text()) if report.is_file() else {}
    failed = [name for name, problem in found.items() if problem is not None]
    row = {
        "stage": "e2e",
        "what": E2E,
        "tests": len(found),
        "states": figures.get("total", 0),
        "matched": figures.get("matched", 0),
        "settled_matched": figures.get("settled_matched", 0),
        "violations": len(failed) + (0 if found or code == 0 else 1),
        "examples": [f"{name}: {found[name]}" for name in failed][:KEEP],
        "seconds": round(time.monotonic() - started),
    }
    print(
        f"e2e: {row['states']} runs, {row['matched']} first decisions matched, "
        f"{row['violations']} failed (exit {code}, {row['seconds']} s)",
        flush=True,
    )
    return [row]


def markers(stage: str) -> tuple[str, str]:
    """The comments around ``stage``'s block in docs/reliability.md."""
    return f"<!-- soak:{stage}:begin -->", f"<!-- soak:{stage}:end -->"


def markdown(stage: str, rows: list[dict[str, object]], args: argparse.Namespace) -> str:
    """The block of one stage in docs/reliability.md: when, how, the table, any violation."""
    begin, end = markers(stage)
    when = datetime.now(UTC).strftime("%d %b %Y %H:%M UTC")
    lines = [
        begin,
        f"Last run: {when}, `scripts/soak.py {' '.join(args.argv) or '(defaults)'}` on the "
        f"shared 2-core machine, load average {os.getloadavg()[1]:.0f} at the end (5 min).",
        "",
        "| what | seeds / tests | states | rebalances | violations | wall time |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        count = row.get("scenarios", row.get("tests", ""))
        lines.append(
            f"| `{row['what']}` | {count} | {row['states']} | {row.get('rebalances', '')} | "
            f"{row['violations']} | {row['seconds']} s |"
        )
        if stage == "e2e":
            lines.append(
                f"\n{row['matched']}/{row['states']} first decisions matched, "
                f"{row['settled_matched']}/{row['states']} settled assignments matched (the "
                "states column counts random fleets; a settled assignment may differ after\n"
                "further cooperative rebalances, `docs/e2e.md`)."
            )
    for row in rows:
        for example in row["examples"]:  # type: ignore[attr-defined]
            lines.append(f"\n- {example}")
    lines.append(end)
    return "\n".join(lines)


def write_doc(stage: str, section: str, doc: Path) -> None:
    """Replace ``stage``'s block of ``doc`` with ``section`` (the other stages' stay)."""
    begin, end = markers(stage)
    text = doc.read_text(encoding="utf-8")
    start, stop = text.index(begin), text.index(end) + len(end)
    write_atomic(doc, text[:start] + section + text[stop:])


STAGES = ("convergence", "differential", "e2e")


def shown_arguments(argv: list[str]) -> list[str]:
    """The arguments the doc shows: those that change what was run (not ``--doc``'s path)."""
    shown: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--doc":
            skip = True
        elif not arg.startswith("--doc=") and arg != "--no-doc":
            shown.append(arg)
    return shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=lambda s: s.split(","), default=list(STAGES))
    parser.add_argument("--scenarios", type=int, default=100_000, help="seeds per assignor")
    parser.add_argument("--workers", type=int, choices=(1, 2), default=2)
    parser.add_argument(
        "--assignors", type=lambda s: s.split(","), default=list(ASSIGNORS), help="convergence"
    )
    parser.add_argument(
        "--short-differentials",
        action="store_true",
        help="the differentials at their make-test sizes (a check of the stage, marked so)",
    )
    parser.add_argument("--e2e-runs", type=int, help="random fleets (the test's default: 8)")
    parser.add_argument(
        "--max-minutes",
        type=float,
        help="stop the convergence stage after this many minutes, counting the chunks done",
    )
    parser.add_argument("--doc", type=Path, default=DOC)
    parser.add_argument("--no-doc", action="store_true", help="print only")
    args = parser.parse_args(argv)
    args.argv = shown_arguments(sys.argv[1:] if argv is None else argv)
    unknown = [s for s in args.stages if s not in STAGES]
    if unknown:
        parser.error(f"--stages: unknown {unknown}; choose from {sorted(STAGES)}")

    deadline = None if args.max_minutes is None else time.monotonic() + 60 * args.max_minutes
    runners = {
        "convergence": lambda: convergence(args.scenarios, args.workers, args.assignors, deadline),
        "differential": lambda: differential(long=not args.short_differentials),
        "e2e": lambda: e2e(args.e2e_runs),
    }
    violations = 0
    for stage in STAGES:
        if stage not in args.stages:
            continue
        rows = runners[stage]()
        violations += sum(int(row["violations"]) for row in rows)  # type: ignore[call-overload]
        if not args.no_doc:
            write_doc(stage, markdown(stage, rows, args), args.doc)
    print(f"soak: {violations} violations" + ("" if args.no_doc else f"; see {args.doc}"))
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
