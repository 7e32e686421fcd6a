"""The end-of-run check of ``tests/conftest.py``: a process a test leaves running fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import SESSION_MARK, leftover_processes

REPO = Path(__file__).resolve().parents[1]


def test_a_re_parented_process_of_the_session_is_found() -> None:
    # The shell exits at once: its sleep is re-parented, found by the inherited environment.
    shell = subprocess.run(
        ["sh", "-c", "sleep 120 >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(shell.stdout)
    try:
        assert pid in leftover_processes(os.environ[SESSION_MARK], os.getpid())
    finally:
        os.kill(pid, 9)
    deadline = time.monotonic() + 10
    while pid in leftover_processes(os.environ[SESSION_MARK], os.getpid()):
        assert time.monotonic() < deadline, "the killed sleep is still listed"
        time.sleep(0.1)


def test_a_run_that_leaves_a_process_fails_and_names_it(tmp_path: Path) -> None:
    (tmp_path / "test_leak.py").write_text(
        "import subprocess\n\ndef test_leaks():\n    subprocess.Popen(['sleep', '121'])\n"
    )
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
            "--rootdir", str(tmp_path), "-o", "addopts=", str(tmp_path / "test_leak.py"),
        ],
        cwd=REPO, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO), "STREAMS_ASSIGN_EXIT_GRACE_S": "1"},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "still running at the end" in done.stdout
    assert "sleep 121" in done.stdout
    # ... and the check killed it.
    assert (
        "sleep 121"
        not in subprocess.run(
            ["ps", "-eo", "args"], capture_output=True, text=True, check=True
        ).stdout
    )
