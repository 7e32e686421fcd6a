"""``streams-lag compute --master spark://...`` on a real Spark standalone cluster (a master and
two workers on loopback, :class:`devtools.spark_cluster.StandaloneCluster`) gives the same
cluster state, lag table and restore table as ``local[2]`` on the same small history.

The cluster run is a separate process (this test process already holds the shared ``local[2]``
context); every master, worker and executor process is stopped in the fixture's teardown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from devtools.spark_cluster import StandaloneCluster
from lag.fleet.generate import generate
from lag.fleet.spec import FleetSpec
from lag.pipeline import ComputeRequest, run_compute

#: Five JVMs (master, two workers, their executors) beside a driver process: the long tier.
pytestmark = [pytest.mark.spark, pytest.mark.slow]
#: The test JVMs' options (C1 JIT only, one GC thread): the results do not depend on them.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

SPEC = FleetSpec(instances=3, tasks=12, stores=2, standbys=1, seed=5, new_instances=1)


def request_args(fleet: Path, out: Path) -> dict[str, Any]:
    return {
        "application_id": "orders-app",
        "topology": str(fleet / "topology.txt"),
        "members": [str(fleet / "members.txt")],
        "end_offsets": [str(fleet / "end-offsets.parquet")],
        "offsets": [str(fleet / "offsets.parquet")],
        "output": str(out / "cluster.json"),
        "lags_table": str(out / "lags.parquet"),
        "restore_table": str(out / "restore.parquet"),
    }


def read_outputs(out: Path) -> dict[str, Any]:
    def rows(name: str) -> list[str]:
        return sorted(json.dumps(r, sort_keys=True) for r in pq.read_table(out / name).to_pylist())

    return {
        "state": json.loads((out / "cluster.json").read_text()),
        "lags": rows("lags.parquet"),
        "restore": rows("restore.parquet"),
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> dict[str, Any]:
    fleet = tmp_path_factory.mktemp("fleet")
    generate(SPEC, fleet, snapshots=4, layout="parquet")
    local_out = tmp_path_factory.mktemp("local")
    run_compute(ComputeRequest(**request_args(fleet, local_out)), spark=spark)

    cluster_out = tmp_path_factory.mktemp("cluster")
    args = request_args(fleet, cluster_out)
    command = [
        sys.executable,
        "-m",
        "lag",
        "compute",
        "--application-id",
        args["application_id"],
        "--topology",
        args["topology"],
        "--members",
        *args["members"],
        "--end-offsets",
        *args["end_offsets"],
        "--offsets",
        *args["offsets"],
        "--output",
        args["output"],
        "--lags-table",
        args["lags_table"],
        "--restore-table",
        args["restore_table"],
        "--quiet",
    ]
    env = dict(
        os.environ,
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_SUBMIT_ARGS="--driver-memory 512m --conf spark.executor.memory=512m "
        "--conf spark.sql.shuffle.partitions=4 "
        "--conf spark.ui.enabled=false --conf spark.driver.host=127.0.0.1 "
        f"--driver-java-options '{JVM_OPTIONS}' "
        f"--conf 'spark.executor.extraJavaOptions={JVM_OPTIONS}' pyspark-shell",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARK_DAEMON_JAVA_OPTS", JVM_OPTIONS)  # the master's and workers' JVMs
        with StandaloneCluster(workers=2, cores=1, memory="640m") as cluster:
            assert cluster.alive_workers() == 2
            processes = list(cluster._processes)
            done = subprocess.run(
                [*command, "--master", cluster.master_url],
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
    assert done.returncode == 0, done.stderr[-3000:]
    return {
        "local": read_outputs(local_out),
        "cluster": read_outputs(cluster_out),
        "stopped": [p.poll() is not None for p in processes],
    }


def test_standalone_cluster_gives_the_same_tables_as_local(runs: dict[str, Any]) -> None:
    local, cluster = runs["local"], runs["cluster"]
    assert local["lags"] and local["restore"] and local["state"]["clients"]
    # The command line (the cluster run) records where each config came from in the
    # description; the API call (the local run) is given its configs and records none.
    cluster_state = dict(cluster["state"])
    assert "description" not in local["state"]
    assert cluster_state.pop("description").startswith(
        "configs: acceptable.recovery.lag=10000 (Kafka's default);"
    )
    assert cluster_state == local["state"]
    assert cluster["lags"] == local["lags"]
    assert cluster["restore"] == local["restore"]


def test_every_cluster_process_is_stopped_at_the_end(runs: dict[str, Any]) -> None:
    assert runs["stopped"] == [True, True, True]
