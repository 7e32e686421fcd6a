"""A Spark standalone cluster on loopback, from the pyspark package's own jars and scripts.

A master and N workers (``org.apache.spark.deploy.master.Master`` and ``...worker.Worker``
through the package's ``bin/spark-class``), each a child process of this one, bound to
``127.0.0.1``, with their work and log folders in one temporary folder that is removed when the
cluster stops. For trying the job on a real cluster manager (``--master spark://...``) on one
machine, and for the tests; a user's own cluster is set up by its operators (see docs/lag.md).

Usage::

    python -m devtools.spark_cluster run -- streams-lag compute --master '{master}' ...
    python -m devtools.spark_cluster start            # prints the master URL, stops on Ctrl-C

Every process is stopped (SIGTERM, then SIGKILL after a grace period) when the ``with`` block
or the command ends, and only the processes this helper started.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from streams_assign.errors import LagInputError

#: Seconds to wait for the master to list every worker as alive.
START_TIMEOUT_S = 240.0
#: Seconds a process has to exit after SIGTERM before it is killed.
STOP_GRACE_S = 15.0


def spark_home() -> Path:
    """The pyspark package folder, which holds ``bin/spark-class`` and ``jars/``.

    Raises
    ------
    LagInputError
        When pyspark is not installed (``pip install 'streams-assign[lag]'``).
    """
    try:
        import pyspark
    except ImportError:
        raise LagInputError("pyspark is not installed: pip install 'streams-assign[lag]'") from None
    return Path(pyspark.__file__).parent


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class StandaloneCluster:
    """A master and ``workers`` workers on loopback; a context manager.

    Parameters
    ----------
    workers:
        Number of workers (each one executor slot per core).
    cores:
        Cores each worker offers.
    memory:
        Memory each worker offers to executors (``512m``); executors are sized by
        ``spark.executor.memory``, which must fit.
    daemon_memory:
        Heap of the master and worker JVMs themselves (``SPARK_DAEMON_MEMORY``).

    Attributes
    ----------
    master_url:
        ``spark://127.0.0.1:<port>``, once started.
    ui_port:
        The master's web UI port (its ``/json`` view lists the alive workers).

    Raises
    ------
    RuntimeError
        From :meth:`start`, when a process exits early or the workers do not register in
        :data:`START_TIMEOUT_S` seconds (everything started is stopped first).
    """

    def __init__(
        self, workers: int = 2, cores: int = 1, memory: str = "640m", daemon_memory: str = "256m"
    ) -> None:
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.daemon_memory = daemon_memory
        self.master_url = ""
        self.ui_port = 0
        self._processes: list[subprocess.Popen[bytes]] = []
        self._root: Path | None = None

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _env(self) -> dict[str, str]:
        assert self._root is not None
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_DAEMON_MEMORY=self.daemon_memory,
            SPARK_LOG_DIR=str(self._root / "logs"),
            SPARK_WORKER_DIR=str(self._root / "work"),
            SPARK_NO_DAEMONIZE="1",
            PYSPARK_PYTHON=sys.executable,
        )
        return env

    def _spawn(self, name: str, *args: str) -> None:
        assert self._root is not None
        log = (self._root / f"{name}.log").open("wb")
        command = [str(spark_home() / "bin" / "spark-class"), *args]
        process = subprocess.Popen(
            command, env=self._env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        self._processes.append(process)

    def start(self) -> str:
        """Start the master and the workers; wait until every worker is registered.

        Returns
        -------
        str
            The master URL.
        """
        self._root = Path(tempfile.mkdtemp(prefix="streams-lag-cluster-"))
        (self._root / "logs").mkdir()
        (self._root / "work").mkdir()
        port, self.ui_port = free_port(), free_port()
        self.master_url = f"spark://127.0.0.1:{port}"
        try:
            self._spawn(
                "master",
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(self.ui_port),
            )
            for index in range(self.workers):
                self._spawn(
                    f"worker-{index}",
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--webui-port",
                    str(free_port()),
                    "--work-dir",
                    str(self._root / "work"),
                    self.master_url,
                )
            self._wait_for_workers()
        except BaseException:
            self.stop()
            raise
        return self.master_url

    def alive_workers(self) -> int:
        """Workers the master lists as ALIVE (0 while it is not answering yet)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json", timeout=5) as r:
                state = json.load(r)
        except (OSError, ValueError):
            return 0
        return int(state.get("aliveworkers", 0))

    def _wait_for_workers(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for process in self._processes:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"a Spark standalone process exited with status {process.returncode} "
                        f"(logs in {self._root})\n{self._log_tails()}"
                    )
            if self.alive_workers() >= self.workers:
                return
            time.sleep(1.0)
        raise RuntimeError(
            f"{self.workers} worker(s) did not register with {self.master_url} within "
            f"{START_TIMEOUT_S:.0f} s\n{self._log_tails()}"
        )

    def _log_tails(self) -> str:
        if self._root is None:
            return ""
        tails = []
        for log in sorted(self._root.glob("*.log")):
            lines = log.read_text(errors="replace").splitlines()[-5:]
            tails.append(f"--- {log.name}\n" + "\n".join(lines))
        return "\n".join(tails)

    def stop(self) -> None:
        """Stop every process this cluster started (workers first) and remove its folder."""
        for process in reversed(self._processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self._processes):
            try:
                process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self._processes.clear()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m devtools.spark_cluster``: ``run -- COMMAND...`` or ``start``; the exit status.

    In ``run``, ``{master}`` in the command is replaced by the master URL, which is also in the
    environment as ``SPARK_MASTER_URL``; the cluster stops when the command ends.
    """
    parser = argparse.ArgumentParser(prog="python -m devtools.spark_cluster", description=__doc__)
    parser.add_argument("mode", choices=("run", "start"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--memory", default="640m", help="memory per worker for executors")
    given = list(sys.argv[1:] if argv is None else argv)
    split = given.index("--") if "--" in given else len(given)
    args = parser.parse_args(given[:split])
    command = given[split + 1 :]
    if args.mode == "run" and not command:
        parser.error("run needs a command after --")
    with StandaloneCluster(args.workers, args.cores, args.memory) as cluster:
        print(f"master {cluster.master_url}", file=sys.stderr, flush=True)
        if args.mode == "start":
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
        command = [part.replace("{master}", cluster.master_url) for part in command]
        env = dict(os.environ, SPARK_MASTER_URL=cluster.master_url)
        return subprocess.call(command, env=env)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
