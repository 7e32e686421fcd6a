"""The library's log records reach the handlers a program configures, and stderr only then.

Each case runs in a fresh interpreter: whether logging prints depends on the process's root
logger, which pytest itself configures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: One client, two stateful tasks, one standby replica wanted: nowhere to put the standbys.
NO_ROOM_FOR_STANDBYS = {
    "configs": {
        "acceptable_recovery_lag": 100,
        "max_warmup_replicas": 2,
        "num_standby_replicas": 1,
        "probing_rebalance_interval_ms": 60000,
    },
    "stateful_tasks": ["0_0", "0_1"],
    "stateless_tasks": [],
    "clients": [
        {
            "id": "00000000-0000-0000-0000-000000000001",
            "capacity": 1,
            "prev_active": ["0_0", "0_1"],
            "prev_standby": [],
            "task_lags": {"0_0": 0, "0_1": 0},
        }
    ],
}
WARNING = "Unable to assign 1 of 1 standby tasks for task [0_0]: not enough clients"
ASSIGN = f"import streams_assign\nstreams_assign.assign({NO_ROOM_FOR_STANDBYS!r})\n"


def python(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_a_program_without_logging_configured_sees_no_warning() -> None:
    assert python("-c", ASSIGN).stderr == ""


def test_the_warning_is_raised_and_reaches_stderr_without_the_null_handler() -> None:
    """The case above is not silent by accident: the warning is logged, and logging's
    last-resort handler would print it but for the package's ``NullHandler``."""
    remove = (
        "import logging, streams_assign\nlogging.getLogger('streams_assign').handlers.clear()\n"
    )
    assert WARNING in python("-c", remove + ASSIGN).stderr


def test_a_program_that_configures_logging_gets_the_warning() -> None:
    configure = "import logging\nlogging.basicConfig()\n"
    assert WARNING in python("-c", configure + ASSIGN).stderr


def test_the_cli_prints_the_warning_with_verbose_only(tmp_path: Path) -> None:
    scenario = tmp_path / "cluster.json"
    scenario.write_text(json.dumps(NO_ROOM_FOR_STANDBYS))
    cli = ("-m", "streams_assign.cli")
    assert WARNING in python(*cli, "--verbose", "assign", str(scenario)).stderr
    assert python(*cli, "assign", str(scenario)).stderr == ""


def test_lag_records_reach_no_stderr_by_default() -> None:
    emit = "import logging, lag\nlogging.getLogger('lag.job').warning('lost')\n"
    assert python("-c", emit).stderr == ""
    bare = "import logging\nlogging.getLogger('lag.job').warning('lost')\n"
    assert "lost" in python("-c", bare).stderr
