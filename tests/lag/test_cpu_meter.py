"""The lag benchmarks' CPU meter keeps the CPU of processes that exit while it runs.

PySpark's daemon ignores ``SIGCHLD``, so its Python workers are reaped by the kernel and their CPU
reaches no parent's ``cutime``; reading the live tree at both ends loses it. Here a child does the
same (ignores ``SIGCHLD``, forks a grandchild that burns CPU and exits) and the meter must count
the grandchild's CPU while the two-reading sum does not.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import lag_benchmark  # noqa: E402

CHILD = textwrap.dedent(
    """
    import os, signal, time
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    pid = os.fork()
    if pid == 0:
        start = time.process_time()
        while time.process_time() - start < 1.0:
            pass
        os._exit(0)
    while True:  # no wait(): the kernel reaps it; poll until it is gone
        time.sleep(0.05)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
    """
)


def test_meter_keeps_cpu_of_auto_reaped_grandchildren() -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD])
    before = lag_benchmark.tree_cpu_seconds(child.pid)
    with lag_benchmark.TreeCpuMeter(child.pid, interval=0.05) as meter:
        child.wait(timeout=30)
    # The child exited too: read what the two-reading sum would have seen from the live tree.
    assert lag_benchmark.tree_cpu_seconds(child.pid) == 0.0
    assert before < 0.3
    assert meter.seconds >= 0.8
