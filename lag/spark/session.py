"""The Spark session of the lag jobs: embedded ``local[*]`` by default, any master through
spark-submit.

When the job runs under ``spark-submit`` (or inside a test that already started a session), the
active session is reused untouched; otherwise a local session is created with the UI and console
progress bars off, a shuffle width sized for one machine, the parallel garbage collector
(:data:`LOCAL_JVM_OPTIONS`), Python workers on this interpreter and log level WARN.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
#: JVM options of a new local session (driver and executors share its one JVM). The parallel
#: collector instead of G1: the job's heap is mostly large, long-lived blocks (the cached
#: per-snapshot table, Tungsten pages), for which G1's concurrent marking burnt about 11 % of
#: the job's CPU time at 30 M offset rows (docs/lag.md, "Where the time goes now").
LOCAL_JVM_OPTIONS = "-XX:+UseParallelGC"
#: Most bytes of input files (offset and end-offset rows) for which a new local session runs
#: the JIT's first tier only (:data:`SMALL_INPUT_JVM_OPTIONS`): about 1.5 M offset rows of
#: Parquet. Measured on the 1 M many-snapshot history (11.3 MB of files), cold runs of session,
#: first query, first Python worker and job: 33.0-38.6 CPU-s against 49.7-52.8 with both tiers
#: (docs/lag.md, *Twelfth pass*); larger inputs keep both tiers until measured.
SMALL_INPUT_BYTES = 16 * 1024 * 1024
#: JVM options added for small inputs: C1 only. The C2 compiler's work (about 20 CPU-s per run
#: at 30 M rows, docs/lag.md) does not pay for itself on a run this short.
SMALL_INPUT_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
#: log4j2 settings of local sessions: warnings only, without the start-up notices.
LOG_CONFIG = Path(__file__).parents[1] / "data" / "log4j2.properties"


def local_jvm_options(input_bytes: int | None = None) -> str:
    """JVM options of a new local session for ``input_bytes`` of input files.

    Parameters
    ----------
    input_bytes:
        Bytes of the job's input files (:func:`lag.spark.sizing.local_input_bytes`), None when
        unknown.

    Returns
    -------
    str
        :data:`LOCAL_JVM_OPTIONS`, plus :data:`SMALL_INPUT_JVM_OPTIONS` when ``input_bytes`` is
        known and at most :data:`SMALL_INPUT_BYTES`.
    """
    if input_bytes is not None and input_bytes <= SMALL_INPUT_BYTES:
        return f"{LOCAL_JVM_OPTIONS} {SMALL_INPUT_JVM_OPTIONS}"
    return LOCAL_JVM_OPTIONS


def get_spark(
    master: str | None = None,
    app_name: str = "streams-lag",
    driver_memory: str | None = None,
    input_bytes: int | None = None,
) -> SparkSession:
    """Return the active Spark session, or start one.

    Parameters
    ----------
    master:
        Spark master URL (``local[*]``, ``local[2]``, ``spark://host:7077``, ``yarn``). None
        uses the active session if there is one, else the master spark-submit was given, else
        ``local[*]``.
    app_name:
        Application name shown by the cluster manager.
    driver_memory:
        ``spark.driver.memory`` for a new local session (ignored when a JVM already runs).
    input_bytes:
        Bytes of the job's input files, None when unknown: a new local session for a small
        input runs the JIT's first tier only (:func:`local_jvm_options`).

    Returns
    -------
    pyspark.sql.SparkSession

    Raises
    ------
    RuntimeError
        When pyspark is not installed (``pip install 'streams-assign[lag]'``).
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise RuntimeError("pyspark is not installed: pip install 'streams-assign[lag]'") from exc

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = SparkSession.builder.appName(app_name)
    # Under spark-submit the JVM starts Python with a gateway port: its --master and --conf rule.
    if master is None and "PYSPARK_GATEWAY_PORT" in os.environ:
        return builder.getOrCreate()
    chosen = master or DEFAULT_MASTER
    builder = builder.master(chosen)
    if chosen.startswith("local"):
        builder = (
            builder.config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            # The default 200 shuffle partitions suit clusters; a few per core suit one machine.
            .config("spark.sql.shuffle.partitions", str(max(2, 2 * _local_cores(chosen))))
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
        )
        if driver_memory:
            builder = builder.config("spark.driver.memory", driver_memory)
        # Python workers (the merge as-of join's mapInArrow) run this interpreter, which has
        # pyarrow and numpy, rather than whatever ``python3`` is first on PATH (PySpark's
        # SparkContext reads only the environment variable).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        options = local_jvm_options(input_bytes)
        if LOG_CONFIG.exists():
            options = f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()} {options}"
        builder = builder.config("spark.driver.extraJavaOptions", options)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session


def _local_cores(master: str) -> int:
    inside = master[master.find("[") + 1 : master.find("]")] if "[" in master else "1"
    inside = inside.split(",")[0]
    if inside == "*":
        return os.cpu_count() or 1
    try:
        return max(1, int(inside))
    except ValueError:
        return os.cpu_count() or 1
