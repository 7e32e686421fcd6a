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
#: log4j2 settings of local sessions: warnings only, without the start-up notices.
LOG_CONFIG = Path(__file__).parents[1] / "data" / "log4j2.properties"


def get_spark(
    master: str | None = None, app_name: str = "streams-lag", driver_memory: str | None = None
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
        options = LOCAL_JVM_OPTIONS
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
