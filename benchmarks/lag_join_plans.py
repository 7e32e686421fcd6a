"""The lag job's two as-of join plans timed side by side: where the broadcast plan earns its keep.

``lag.job.asof_join.join_end_offsets`` chooses the plan by the estimated size of the end-offset
intervals: at or under ``spark.sql.autoBroadcastJoinThreshold`` they are broadcast
(``broadcast_as_of_join``); above it the rows are merged per task (``merge_as_of_join``). This
script runs the whole job (lag table, then restore table: ``lag_benchmark.run_spark``) on each
generated history twice in one Spark session, once as the job chooses and once with broadcasts
switched off (so the merge runs), alternating the order between repeats, and prints the plan
taken, wall seconds and CPU seconds (the driver JVM and every Python worker) of each.

Usage::

    python benchmarks/lag_join_plans.py --sizes 1e5,1e6 --shapes few-snapshots,many-snapshots
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import lag_benchmark  # noqa: E402
import lag_scale_benchmark  # noqa: E402

#: Spark's default broadcast threshold, restored between runs.
DEFAULT_THRESHOLD = "10485760"


def run_plan(inputs: dict[str, Any], spark: Any, out: Path, merge: bool) -> dict[str, Any]:
    """One run of the job with the job's own choice, or with broadcasts off (``merge``)."""
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1" if merge else DEFAULT_THRESHOLD)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    figures = lag_benchmark.run_spark(inputs, spark, out)
    return {"wall": figures["lag"] + figures["restore"], "cpu": figures["cpu"]}


def chosen_plan(inputs: dict[str, Any], spark: Any, out: Path) -> str:
    """The plan the job takes on ``inputs`` at Spark's default threshold."""
    from lag.pipeline import ComputeRequest, build_job, prepare

    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", DEFAULT_THRESHOLD)
    folder = inputs["folder"]
    request = ComputeRequest(
        application_id=lag_benchmark.SPEC.application_id,
        topology=str(folder / "topology.txt"),
        members=[str(folder / "members.txt")],
        end_offsets=[str(folder / "end-offsets.parquet")],
        offsets=[str(folder / "offsets.parquet")],
        output=str(out / "cluster.json"),
        configs={"acceptable_recovery_lag": lag_benchmark.ACCEPTABLE},
    )
    topology, membership = prepare(request)
    job = build_job(request, spark, topology, membership)
    plan = "broadcast" if job.broadcast_join else "merge"
    job.unpersist()
    return plan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6", help="offset rows, comma separated")
    parser.add_argument("--shapes", default="few-snapshots,many-snapshots,many-processes")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out")
    args = parser.parse_args(argv)

    from lag.spark.session import get_spark

    spark = get_spark("local[2]", app_name="lag-join-plans")
    rows = []
    try:
        for shape in args.shapes.split(","):
            for size in (int(float(s)) for s in args.sizes.split(",")):
                inputs = lag_scale_benchmark.prepare(shape, size, args.work)
                plan = chosen_plan(inputs, spark, args.work)
                runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
                for repeat in range(args.repeats):
                    order = (False, True) if repeat % 2 == 0 else (True, False)
                    for merge in order:
                        out = args.work / "join-plans"
                        runs[merge].append(run_plan(inputs, spark, out, merge))
                rows.append((shape, size, plan, runs))
    finally:
        spark.stop()
        shutil.rmtree(args.work / "join-plans", ignore_errors=True)

    print("| shape | offset rows | job's plan | wall s (job's / merge) | CPU s (job's / merge) |")
    print("|---|---:|---|---:|---:|")
    for shape, size, plan, runs in rows:
        wall = [statistics.median(r["wall"] for r in runs[m]) for m in (False, True)]
        cpu = [statistics.median(r["cpu"] for r in runs[m]) for m in (False, True)]
        print(
            f"| {shape} | {size:,} | {plan} | {wall[0]:.1f} / {wall[1]:.1f} "
            f"| {cpu[0]:.1f} / {cpu[1]:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
