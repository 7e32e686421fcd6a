"""One cold run of the lag job, as ``streams-lag compute`` runs it: a fresh JVM, Spark's fixed
costs (session start, first query, first Python worker), then the job on one generated history
(lag table and restore table), every figure in CPU seconds of every process (the JVM, PySpark's
daemon and workers, this process) and wall seconds, one JSON line on stdout.

``--jvm-options both-tiers`` forces the JIT's two tiers, ``first-tier`` its first tier only;
the default, ``job``, uses what the job picks for the history's input size
(:func:`lag.spark.session.local_jvm_options`). Run it once per setting, each in its own process.

Usage::

    python benchmarks/lag_cold_run.py --shape many-snapshots --rows 1e6 --work /tmp/lag-cold
    python benchmarks/lag_cold_run.py --rows 1e6 --jvm-options both-tiers
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import lag_benchmark  # noqa: E402
import lag_scale_benchmark  # noqa: E402

from lag.spark import session  # noqa: E402
from lag.spark.sizing import local_input_bytes  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="many-snapshots", choices=lag_scale_benchmark.SHAPES)
    parser.add_argument("--rows", default="1e6")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out")
    parser.add_argument("--jvm-options", choices=("job", "both-tiers", "first-tier"), default="job")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    inputs = lag_scale_benchmark.prepare(args.shape, int(float(args.rows)), args.work)
    folder = inputs["folder"]
    size = local_input_bytes([str(folder / "offsets.parquet"), str(folder / "end-offsets.parquet")])
    options = {
        "job": session.local_jvm_options(size),
        "both-tiers": session.LOCAL_JVM_OPTIONS,
        "first-tier": f"{session.LOCAL_JVM_OPTIONS} {session.SMALL_INPUT_JVM_OPTIONS}",
    }[args.jvm_options]
    session.LOCAL_JVM_OPTIONS = options  # the session started next takes these
    spark, costs = lag_benchmark.spark_fixed_costs("local[2]")
    out = args.work / f"cold-run-{os.getpid()}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    try:
        run = lag_benchmark.run_spark(inputs, spark, out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
        spark.stop()
    run.pop("stages")
    fixed = sum(costs[f"{name}_cpu"] for name in ("session", "first_query", "python_worker"))
    result = {
        "shape": args.shape,
        "rows": inputs["offset_rows"],
        "input_bytes": size,
        "jvm_options": options,
        **costs,
        **{f"job_{k}": round(v, 2) for k, v in run.items()},
        "fixed_cpu": round(fixed, 2),
        "total_cpu": round(fixed + run["cpu"], 2),
        "load_avg": round(os.getloadavg()[0], 1),
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
