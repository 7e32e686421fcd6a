"""The end-of-run temp check of ``tests/conftest.py``: a temp folder a test leaves fails the run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import SESSION_TMP

REPO = Path(__file__).resolve().parents[1]


def run_sub_session(tmp_path: Path, test_source: str) -> subprocess.CompletedProcess[str]:
    """Run ``test_source`` as a test file in its own pytest session with this suite's checks."""
    (tmp_path / "test_sub.py").write_text(test_source)
    return subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
            "--rootdir", str(tmp_path), "-o", "addopts=", str(tmp_path / "test_sub.py"),
        ],
        cwd=REPO, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO), "STREAMS_ASSIGN_EXIT_GRACE_S": "1"},
    )  # fmt: skip


def session_folder(output: str) -> Path:
    """The sub-session's temp folder, as the check names it."""
    found = re.search(r"left by the tests in (\S+) \(now removed\)", output)
    assert found is not None, output
    return Path(found.group(1))


def test_this_session_has_its_own_temp_folder() -> None:
    folder = os.environ[SESSION_TMP]
    assert Path(folder).name.startswith("streams-assign-tests-")
    assert tempfile.gettempdir() == folder
    assert os.environ["TMPDIR"] == folder
    # Programs the tests start inherit it.
    made = subprocess.run(["mktemp", "-d"], capture_output=True, text=True, check=True)
    try:
        assert Path(made.stdout.strip()).parent == Path(folder)
    finally:
        Path(made.stdout.strip()).rmdir()


def test_a_run_that_leaves_a_temp_folder_fails_and_names_it(tmp_path: Path) -> None:
    done = run_sub_session(
        tmp_path,
        "import subprocess, tempfile\n\n"
        "def test_leaks_a_folder():\n"
        "    tempfile.mkdtemp(prefix='kafka-broker-leak-')\n\n"
        "def test_a_program_leaks_a_file():\n"
        "    subprocess.run(['mktemp', '--suffix=.leaked'], check=True)\n",
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "2 passed" in done.stdout
    assert "2 temp file(s)/folder(s) left by the tests" in done.stdout
    assert re.search(r"  kafka-broker-leak-\w+/ \(0 files\)", done.stdout), done.stdout
    assert re.search(r"  tmp\.\w+\.leaked", done.stdout), done.stdout
    # ... and the check removed the session's folder, leftovers included.
    assert not session_folder(done.stdout).exists()


def test_a_run_that_cleans_up_passes_and_leaves_no_folder(tmp_path: Path) -> None:
    record = tmp_path / "session-folder.txt"
    done = run_sub_session(
        tmp_path,
        "import os, shutil, tempfile\nfrom pathlib import Path\n\n"
        "def test_cleans_up(tmp_path):\n"
        f"    Path({str(record)!r}).write_text(tempfile.gettempdir())\n"
        "    shutil.rmtree(tempfile.mkdtemp(prefix='kafka-broker-'))\n"
        "    (tmp_path / 'kept-by-pytest').write_text('pytest manages its own base')\n",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "left by the tests" not in done.stdout
    folder = Path(record.read_text())
    assert folder.name.startswith("streams-assign-tests-")
    assert not folder.exists()
