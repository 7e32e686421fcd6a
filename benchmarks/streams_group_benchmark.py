"""Timings: our ``streams_group_sticky`` twin against Kafka 4.4's ``StickyTaskAssignor``.

For 10 / 100 / 1000 members (processes of 4 stream threads; 2000 stateful + 1000 stateless
tasks, 1 standby, a steady previous assignment with half of the standbys caught up) it times, in
one run on one machine:

- Kafka: ``StickyTaskAssignor.assign`` in the harness JVM (warm: untimed runs first), the
  median of the timed runs, measured inside the JVM;
- ours in-process: ``assign_streams_group`` on the parsed state (median of the same number of
  runs), and parse + assign from the JSON text;
- ours through the CLI: ``streams-assign assign --json FILE`` as a fresh process, once;
- with ``--baseline REF``: the twin as it is at git revision ``REF`` (its module file loaded
  beside the current one), timed alternately with the current one on the same state;

checks that all outputs are identical at every size, and prints the table with the ratios.
CPU figures are the calling thread's CPU time on both sides (``time.thread_time`` here,
``ThreadMXBean.getCurrentThreadCpuTime`` in the JVM).

Usage: ``python benchmarks/streams_group_benchmark.py [--runs 7] [--sizes 10,100,1000]
[--baseline main]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # devtools is not installed: it is imported from the checkout

from devtools.generators.streams_groups import scale_streams_group  # noqa: E402
from devtools.kafka.streams_group_harness import streams_group_harness  # noqa: E402
from streams_assign.assignors.streams_group_sticky import assign_streams_group  # noqa: E402
from streams_assign.formats.streams_group import loads_streams_group, parse_streams_group  # noqa: E402

_MODULE = "streams_assign/assignors/streams_group_sticky.py"


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _baseline(ref: str, folder: Path) -> Callable[[Any], Any]:
    """``assign_streams_group`` of the twin at git revision ``ref`` (its module file only)."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{ref}:{_MODULE}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = folder / "baseline_streams_group_sticky.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("baseline_streams_group_sticky", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.assign_streams_group  # type: ignore[no-any-return]


def _time_ours(
    assign: Callable[[Any], Any], state: Any, runs: int, cpu: list[float], wall: list[float]
) -> Any:
    """Run ``assign(state)`` ``runs`` times, appending thread CPU and wall seconds."""
    result = None
    for _ in range(runs):
        cpu_start = time.thread_time()
        start = time.perf_counter()
        result = assign(state)
        wall.append(time.perf_counter() - start)
        cpu.append(time.thread_time() - cpu_start)
    return result


def _measure(
    kafka: Any, document: dict[str, Any], args: argparse.Namespace, baseline: Any
) -> dict[str, Any]:
    """One size: ``args.rounds`` rounds of (Kafka's timed runs, ours, the baseline's)."""
    text = json.dumps(document)
    state = parse_streams_group(document)
    m: dict[str, Any] = {k: [] for k in ("k_cpu", "k_wall", "o_cpu", "o_wall", "b_cpu", "b_wall")}
    m["parse"] = []
    same = True
    for _ in range(3):
        assign_streams_group(state)
        if baseline is not None:
            baseline(state)
    for round_no in range(args.rounds):
        answer = kafka.request(
            {
                "op": "time",
                "state": document,
                "runs": args.runs,
                "warmup": args.warmup if round_no == 0 else 3,
            }
        )
        m["k_wall"] += [n / 1e9 for n in answer["nanos"]]
        m["k_cpu"] += [n / 1e9 for n in answer["cpu_nanos"]]
        result = _time_ours(assign_streams_group, state, args.runs, m["o_cpu"], m["o_wall"])
        same &= result.to_json() == answer["result"]
        if baseline is not None:
            before = _time_ours(baseline, state, args.runs, m["b_cpu"], m["b_wall"])
            same &= before.to_json() == answer["result"]
        start = time.perf_counter()
        assign_streams_group(loads_streams_group(text))
        m["parse"].append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.json"
        path.write_text(text)
        start = time.perf_counter()
        cli = subprocess.run(
            [sys.executable, "-m", "streams_assign.cli", "assign", "--json", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        m["cli"] = time.perf_counter() - start
    if cli.returncode != 0 or json.loads(cli.stdout) != answer["result"]:
        same = False
    m["same"] = same
    return m


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per size and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per size (medians over all)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed JVM runs per size first")
    parser.add_argument("--sizes", default="10,100,1000", help="member counts")
    parser.add_argument("--threads", type=int, default=4, help="stream threads per process")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--baseline", help="also time the twin at this git revision (e.g. main)")
    args = parser.parse_args(argv)

    rows = []
    identical = True
    with tempfile.TemporaryDirectory() as folder, streams_group_harness(heap="-Xmx512m") as kafka:
        baseline = _baseline(args.baseline, Path(folder)) if args.baseline else None
        for members in (int(s) for s in args.sizes.split(",")):
            document = scale_streams_group(
                random.Random(args.seed + members),
                processes=max(1, members // args.threads),
                threads=args.threads,
            )
            m = _measure(kafka, document, args, baseline)
            identical &= m["same"]
            tasks = sum(t["partitions"] for t in document["topology"].values())
            processes = len({x["process_id"] for x in document["members"]})
            rows.append((members, processes, tasks, m))
    _print(rows, args)
    return 0 if identical else 1


def _print(rows: list[tuple[int, int, int, dict[str, Any]]], args: argparse.Namespace) -> None:
    med = _median_ms
    before = " | before CPU ms | before / Kafka" if args.baseline else ""
    print(
        "| members | processes | tasks | Kafka CPU ms | ours CPU ms | ratio | best-of ratio"
        f"{before} | Kafka wall ms | ours wall ms | parse + ours ms | CLI ms | identical |"
    )
    print("|---:" * (12 if args.baseline else 10) + "|---|")
    for members, processes, tasks, m in rows:
        k_cpu, o_cpu = med(m["k_cpu"]), med(m["o_cpu"])
        cells = [
            members,
            processes,
            tasks,
            f"{k_cpu:.2f}",
            f"{o_cpu:.2f}",
            f"{o_cpu / k_cpu:.2f}x",
            f"{min(m['o_cpu']) / min(m['k_cpu']):.2f}x",
        ]
        if args.baseline:
            b_cpu = med(m["b_cpu"])
            cells += [f"{b_cpu:.2f}", f"{b_cpu / k_cpu:.2f}x"]
        cells += [
            f"{med(m['k_wall']):.2f}",
            f"{med(m['o_wall']):.2f}",
            f"{med(m['parse']):.1f}",
            f"{m['cli'] * 1000:.0f}",
            "yes" if m["same"] else "NO",
        ]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    print(
        f"(medians of {args.rounds} rounds x {args.runs} runs, Kafka after {args.warmup} warm-up "
        "runs; CPU = the calling thread's CPU time on both sides; ratio = ours / Kafka; best-of "
        "= fastest run of ours / fastest of Kafka's"
        + (f"; before = the twin at {args.baseline}" if args.baseline else "")
        + ")"
    )


if __name__ == "__main__":
    sys.exit(main())
