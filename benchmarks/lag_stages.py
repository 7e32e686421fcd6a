"""Spark's executor CPU per stage of a benchmark run, from Spark's status store
(``AppStatusStore``, kept with the UI off): :func:`stage_breakdown` sums the stages run since
:func:`stage_ids` per job description and kind of stage (:func:`stage_kind`)."""

from __future__ import annotations

from typing import Any


def stage_ids(spark: Any) -> set[int]:
    """Ids of the stages Spark's status store holds (``AppStatusStore``, kept with the UI off)."""
    return {row["stage"] for row in _stage_list(spark)}


def _stage_list(spark: Any) -> list[dict[str, Any]]:
    """Every stage of the status store: id, job description, name and task metrics."""
    jvm = spark.sparkContext._jvm
    empty = spark.sparkContext._gateway.new_array(jvm.double, 0)
    store = spark.sparkContext._jsc.sc().statusStore()
    stages = store.stageList(None, False, False, empty, jvm.java.util.ArrayList())
    rows = []
    iterator = stages.iterator()
    while iterator.hasNext():
        d = iterator.next()
        rows.append(
            {
                "stage": int(d.stageId()),
                "attempt": int(d.attemptId()),
                "job": str(d.description().get()) if d.description().isDefined() else "",
                "name": str(d.name()),
                "tasks": int(d.numTasks()),
                "cpu_s": int(d.executorCpuTime()) / 1e9,
                "run_s": int(d.executorRunTime()) / 1e3,
                "input_mb": int(d.inputBytes()) / 2**20,
                "shuffle_read_mb": int(d.shuffleReadBytes()) / 2**20,
                "shuffle_write_mb": int(d.shuffleWriteBytes()) / 2**20,
                "output_mb": int(d.outputBytes()) / 2**20,
                "spill_mb": int(d.diskBytesSpilled()) / 2**20,
            }
        )
    return rows


def stage_kind(row: dict[str, Any]) -> str:
    """What a stage did, from its metrics: ``scan -> shuffle``, ``shuffle -> write`` and so on."""
    source = "scan" if row["input_mb"] > 0 else "shuffle" if row["shuffle_read_mb"] > 0 else "cache"
    if row["output_mb"] > 0:
        sink = "write"
    elif row["shuffle_write_mb"] > 0:
        sink = "shuffle"
    else:
        sink = "driver"
    return f"{source} -> {sink}"


def stage_breakdown(spark: Any, before: set[int]) -> list[dict[str, Any]]:
    """Executor CPU and run seconds of the stages run since ``before`` (:func:`stage_ids`),
    summed per (job description, :func:`stage_kind`), in the order they first ran."""
    rows = sorted(
        (r for r in _stage_list(spark) if r["stage"] not in before), key=lambda r: r["stage"]
    )
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["job"], stage_kind(row))
        group = groups.setdefault(
            key,
            {
                "job": key[0],
                "kind": key[1],
                "stages": 0,
                "tasks": 0,
                "cpu_s": 0.0,
                "run_s": 0.0,
                "spill_mb": 0.0,
            },
        )
        group["stages"] += 1
        group["tasks"] += row["tasks"]
        for field in ("cpu_s", "run_s", "spill_mb"):
            group[field] += row[field]
    return [
        {k: round(v, 1) if isinstance(v, float) else v for k, v in g.items()}
        for g in groups.values()
    ]
