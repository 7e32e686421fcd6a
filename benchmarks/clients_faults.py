"""Recovery times of the Python client adapters under faults on a real broker.

Runs ``tests/clients/test_faults.py`` (the broker restarted during a rebalance, a member killed
during a probing rebalance, the group leader killed right after it computed an assignment, a
process restarted without its process id file; aiokafka and kafka-python) ``--runs`` times,
collects each test's ``[faults]`` line (the time from the fault until every task was active
exactly once and resumed), and prints per adapter and fault the minimum, median and maximum.
With ``--doc`` it writes the table between the ``faults`` markers of ``docs/reliability.md``.
Needs Kafka's jars (``make kafka``) and the ``clients`` extra.

    .venv/bin/python benchmarks/clients_faults.py [--runs 3] [--doc]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from streams_assign.formats.atomic import write_atomic  # noqa: E402

DOC = REPO / "docs" / "reliability.md"
BEGIN, END = "<!-- faults:begin -->", "<!-- faults:end -->"
LINE = re.compile(r"^\[faults\] (\S+) (.+): recovered in ([0-9.]+) s \((.*)\)$")


def run_once(k: str | None) -> tuple[int, list[tuple[str, str, float, str]], str]:
    """One pytest run of the fault tests: exit code, (adapter, fault, seconds, detail), output."""
    command = [
        sys.executable, "-m", "pytest", "tests/clients/test_faults.py", "-q", "-s",
        "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning",
    ]  # fmt: skip
    if k:
        command += ["-k", k]
    done = subprocess.run(
        command,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    found = []
    for line in done.stdout.splitlines():
        match = LINE.match(line.strip())
        if match:
            adapter, fault, seconds, detail = match.groups()
            found.append((adapter, fault, float(seconds), detail))
    return done.returncode, found, done.stdout + done.stderr


def markdown(times: dict[tuple[str, str], list[float]], runs: int, failed: int) -> str:
    when = datetime.now(UTC).strftime("%d %b %Y %H:%M UTC")
    lines = [
        BEGIN,
        f"Measured {when} by `benchmarks/clients_faults.py --runs {runs}` on the shared 2-core "
        f"machine ({failed} of {runs} runs had a failing test).",
        "",
        "| adapter | fault | runs | min s | median s | max s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for (adapter, fault), values in sorted(times.items()):
        lines.append(
            f"| {adapter} | {fault} | {len(values)} | {min(values):.1f} | "
            f"{statistics.median(values):.1f} | {max(values):.1f} |"
        )
    lines.append(END)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("-k", help="pytest -k expression choosing the tests")
    parser.add_argument("--doc", action="store_true", help="write docs/reliability.md")
    args = parser.parse_args(argv)
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    failed = 0
    for run in range(1, args.runs + 1):
        started = time.monotonic()
        code, found, output = run_once(args.k)
        failed += code != 0
        print(f"run {run}: exit {code}, {len(found)} faults, {time.monotonic() - started:.0f} s")
        for adapter, fault, seconds, detail in found:
            times[(adapter, fault)].append(seconds)
            print(f"  {adapter} {fault}: {seconds:.2f} s ({detail})")
        if code != 0:
            print(output[-4000:], file=sys.stderr)
    for (adapter, fault), values in sorted(times.items()):
        print(
            f"{adapter:13} {fault:42} min {min(values):6.2f} median "
            f"{statistics.median(values):6.2f} max {max(values):6.2f} s ({len(values)} runs)"
        )
    if args.doc:
        text = DOC.read_text(encoding="utf-8")
        start, stop = text.index(BEGIN), text.index(END) + len(END)
        write_atomic(DOC, text[:start] + markdown(times, args.runs, failed) + text[stop:])
        print(f"written to {DOC}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
