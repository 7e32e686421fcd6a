"""The merge's Python workers: cheap per-task import-cache invalidation on Python 3.10-3.11.

PySpark's worker calls ``importlib.invalidate_caches()`` before every task; on Python 3.11 every
``zipimporter`` re-reads its archive's directory then (CPython gh-103200).
``lag.spark.worker_imports.lazy_zip_invalidation`` makes a worker re-read an archive only when it
changed. Each case runs in a fresh interpreter, since the patch is process-wide: the interpreter
counts the directory reads of ``zipimport._read_directory``, pretends to be a PySpark worker (a
``pyspark.worker`` entry in ``sys.modules``) and checks that an unchanged archive is not re-read,
that a rewritten one is, and that its new module imports.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import importlib, json, sys, types, zipfile, zipimport
    archive, patch, worker = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
    sys.path.insert(0, {repo!r})
    from lag.spark.worker_imports import lazy_zip_invalidation

    def write(names):
        with zipfile.ZipFile(archive, "w") as z:
            for name in names:
                z.writestr(name + ".py", "VALUE = " + repr(name) + "\\n")

    write(["first"] + ["filler%d" % i for i in range(200)])
    sys.path.insert(0, archive)
    import first
    reads = []
    original = zipimport._read_directory
    def counting(path):
        reads.append(path)
        return original(path)
    zipimport._read_directory = counting
    if worker:
        sys.modules["pyspark.worker"] = types.ModuleType("pyspark.worker")
    patched = lazy_zip_invalidation()() if patch else False
    for _ in range(5):
        importlib.invalidate_caches()
    unchanged = len(reads)
    write(["first", "second"] + ["filler%d" % i for i in range(200)])
    importlib.invalidate_caches()
    import second
    print(json.dumps({{"patched": patched, "unchanged": unchanged,
                      "after_change": len(reads) - unchanged, "second": second.VALUE}}))
    """
).format(repo=str(REPO))


def run(tmp_path: Path, patch: bool, worker: bool = True) -> dict[str, Any]:
    archive = tmp_path / "modules.zip"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(archive), "1" if patch else "0", "1" if worker else "0"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="CPython 3.12 made it lazy itself")
def test_stock_invalidation_rereads_every_time(tmp_path: Path) -> None:
    """Without the patch, each invalidation re-reads the archive (what the patch avoids)."""
    result = run(tmp_path, patch=False)
    assert result["unchanged"] == 5
    assert result["second"] == "second"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="CPython 3.12 made it lazy itself")
def test_patched_worker_rereads_only_a_changed_archive(tmp_path: Path) -> None:
    result = run(tmp_path, patch=True)
    assert result["patched"] is True
    assert result["unchanged"] == 0
    assert result["after_change"] >= 1
    assert result["second"] == "second"


def test_not_a_worker_is_left_alone(tmp_path: Path) -> None:
    """Outside a PySpark worker (the driver, a test) nothing is patched."""
    result = run(tmp_path, patch=True, worker=False)
    assert result["patched"] is False
    assert result["second"] == "second"
