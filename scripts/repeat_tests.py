"""Run the same tests many times in a row and print each test's pass count: the flake hunt.

A test that fails one run in ten is a bug with a cause. This script runs pytest ``--runs`` times
on the given paths (default: every test that starts a JVM, a broker, Spark or client processes),
one run after another, each with a JUnit XML report, and prints per test ``passed/runs``, the
runs it failed in, and the first line of each failure. It exits 1 when any test failed in any
run. Each run uses its own ``--basetemp`` under ``--work``, removed when the run passed.

Usage::

    .venv/bin/python scripts/repeat_tests.py --runs 20
    .venv/bin/python scripts/repeat_tests.py --runs 5 tests/clients/test_real_broker.py
    .venv/bin/python scripts/repeat_tests.py --from-reports /tmp/a /tmp/b   # runs done earlier
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The tests that start a JVM, a broker, Spark or client processes (issue #30's list).
HEAVY = (
    "tests/kafka",
    "tests/e2e",
    "tests/clients",
    "tests/reference",
    "tests/reference_groups",
    "tests/streams_group/test_differential.py",
    "tests/lag",
)


def outcomes(report: Path) -> dict[str, str | None]:
    """Test id -> None when it passed, else the first line of its failure or error."""
    found: dict[str, str | None] = {}
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if case.find("skipped") is not None:
            found[name] = "skipped"
        elif problem is not None:
            message = problem.get("message") or (problem.text or "")
            found[name] = message.strip().splitlines()[0][:160] if message.strip() else "failed"
        else:
            found[name] = None
    return found


def summary(runs_of: dict[str, list[str | None]]) -> int:
    """Print each test's ``passed/runs`` and its failures; return the failures counted."""
    flaky = 0
    for name in sorted(runs_of):
        results = runs_of[name]
        passed = sum(problem is None for problem in results)
        print(f"{passed}/{len(results)} {name}")
        for run, problem in enumerate(results, start=1):
            if problem is not None and problem != "skipped":
                flaky += 1
                print(f"    run {run}: {problem}")
    return flaky


def from_reports(folders: list[Path]) -> int:
    """Summarise the ``run*.xml`` reports already in ``folders`` (runs stopped or split)."""
    runs_of: dict[str, list[str | None]] = defaultdict(list)
    reports = sorted(r for folder in folders for r in folder.glob("run*.xml"))
    for report in reports:
        for name, problem in outcomes(report).items():
            runs_of[name].append(problem)
    flaky = summary(runs_of)
    print(f"{len(runs_of)} tests, {len(reports)} reports, {flaky} failures")
    return 1 if flaky else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=list(HEAVY))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--work", type=Path, default=Path("/tmp/streams-assign-repeat"))
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, one string")
    parser.add_argument(
        "--from-reports",
        type=Path,
        nargs="+",
        metavar="WORK",
        help="run nothing: summarise the run*.xml reports of earlier --work folders",
    )
    args = parser.parse_args(argv)
    if args.from_reports:
        return from_reports(args.from_reports)

    args.work.mkdir(parents=True, exist_ok=True)
    runs_of: dict[str, list[str | None]] = defaultdict(list)
    for run in range(1, args.runs + 1):
        report = args.work / f"run{run}.xml"
        basetemp = args.work / f"tmp{run}"
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                f"--junitxml={report}", f"--basetemp={basetemp}",
                *args.pytest_args.split(), *args.paths,
            ],
            cwd=REPO, capture_output=True, text=True, check=False,
        )  # fmt: skip
        (args.work / f"run{run}.log").write_text(done.stdout + done.stderr)
        if not report.is_file():
            print(f"run {run}: pytest exited {done.returncode} without a report", flush=True)
            return 1
        for name, problem in outcomes(report).items():
            runs_of[name].append(problem)
        if done.returncode == 0:
            shutil.rmtree(basetemp, ignore_errors=True)
        seconds = time.monotonic() - started
        print(f"run {run}: exit {done.returncode} in {seconds:.0f} s", flush=True)

    flaky = summary(runs_of)
    print(f"{len(runs_of)} tests, {args.runs} runs, {flaky} failures")
    return 1 if flaky else 0


if __name__ == "__main__":
    raise SystemExit(main())
