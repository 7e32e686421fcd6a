"""Run an example app with fault hooks that a test arms by creating files (tests only).

Usage: ``python tests/clients/fault_app.py --fault-example counts_app.py <the app's options>``.
The hooks watch the parent folder of ``--state-dir`` (the cluster's root in
``tests/clients/conftest.py``); a test arms one by creating its file there, and the process that
fires it renames the file to ``<name>.<pid>`` (an atomic claim: it fires once, in one process)
with the time it fired:

``kill-leader``
    The group leader, once its assignor has computed an assignment (``decide`` returned) and
    before it answers SyncGroup, kills itself with SIGKILL.
``pause-leader``
    The group leader, once it has computed an assignment, waits before answering SyncGroup until
    ``release`` exists (at most 120 s): the test restarts the broker meanwhile.
``kill-member``
    Holds a process id; that process kills itself with SIGKILL as one of its members sends its
    next JoinGroup (the subscription user data is being made).

The hooks wrap the adapters' calls in this process only; the library is unchanged.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import time
from pathlib import Path
from typing import Any

from streams_assign.clients import aiokafka_adapter, core, kafka_python_adapter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def claim(folder: Path, name: str) -> bool:
    """Take the armed file ``name`` (rename it to ``name.<pid>``); whether this process won."""
    try:
        os.rename(folder / name, folder / f"{name}.{os.getpid()}")
    except FileNotFoundError:
        return False
    (folder / f"{name}.{os.getpid()}").write_text(repr(time.time()))
    return True


def install(folder: Path) -> None:
    original_decide = core.decide

    def decide(*args: Any, **kwargs: Any) -> Any:
        decision = original_decide(*args, **kwargs)
        if claim(folder, "kill-leader"):
            os.kill(os.getpid(), signal.SIGKILL)
        if claim(folder, "pause-leader"):
            deadline = time.monotonic() + 120
            while not (folder / "release").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        return decision

    aiokafka_adapter.decide = decide  # type: ignore[assignment]
    kafka_python_adapter.decide = decide  # type: ignore[assignment]

    original_user_data = core.MemberState.subscription_user_data

    def subscription_user_data(self: core.MemberState) -> bytes:
        armed = folder / "kill-member"
        try:
            victim = armed.read_text().strip()
        except FileNotFoundError:
            victim = ""
        if victim == self.process.process_id and claim(folder, "kill-member"):
            os.kill(os.getpid(), signal.SIGKILL)
        return original_user_data(self)

    core.MemberState.subscription_user_data = subscription_user_data  # type: ignore[method-assign]


def main() -> None:
    argv = sys.argv[1:]
    at = argv.index("--fault-example")
    example = EXAMPLES / argv[at + 1]
    del argv[at : at + 2]
    state_dir = Path(argv[argv.index("--state-dir") + 1])
    install(state_dir.resolve().parent)
    sys.argv = [str(example), *argv]
    sys.path.insert(0, str(EXAMPLES))  # counts_app_sync imports counts_app
    runpy.run_path(str(example), run_name="__main__")


if __name__ == "__main__":
    main()
