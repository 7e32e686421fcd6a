"""The HTML report renders in a real headless browser (Debian's chromium): one screenshot."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main

SCALE_OUT = CORPORA / "kafka-diff" / "input" / "s0001-scale_out.json"


def _screenshot(page: Path, png: Path) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("chromium is not installed: run scripts/ensure-chromium.sh (make test does)")
    with tempfile.TemporaryDirectory(prefix="i12-chromium-") as profile:
        command = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--window-size=1280,1600",
            f"--screenshot={png}",
            page.as_uri(),
        ]
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            output, _ = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            pytest.fail("chromium did not finish the screenshot within 120 s")
        finally:
            if process.poll() is None:  # pragma: no cover - killed above
                os.killpg(process.pid, signal.SIGKILL)
        assert process.returncode == 0, output.decode(errors="replace")[-2000:]


@pytest.mark.slow
def test_plan_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    if not SCALE_OUT.exists():
        pytest.fail(f"shared scenario {SCALE_OUT} is missing")
    page = tmp_path / "report.html"
    assert main(["plan", str(SCALE_OUT), "--add", "2", "--report", str(page)]) == 0
    html = page.read_text()
    assert "data:image/png;base64," in html and 'src="http' not in html
    png = tmp_path / "shot.png"
    _screenshot(page, png)
    assert png.stat().st_size > 0
    from matplotlib import image

    pixels = image.imread(str(png))
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    # Not blank: the page's text, tables and embedded plot give many distinct colours.
    flat = pixels.reshape(-1, pixels.shape[-1])[:, :3]
    assert float(flat.std()) > 0.05
    assert len({tuple(p) for p in flat[:: max(1, len(flat) // 20000)]}) > 20
