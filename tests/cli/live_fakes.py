"""A live cluster faked at its two boundaries, for the live-mode tests that need no broker:
kafka-python's admin client (``ListGroups``, through ``lag.sources.live_cluster.open_admin``)
and the streams-group reader's JVM (the ``java`` run of ``DescribeStreamsGroup.java``, through
``subprocess.run``), which prints a real Kafka 4.4.0 description
(``tests/corpora/tool-samples/streams-group-4.4``). Everything between them runs for real."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from devtools.paths import CORPORA

SAMPLES = CORPORA / "tool-samples" / "streams-group-4.4"
ADMIN = SAMPLES / "admin-describe.json"
BOOTSTRAP = "broker.test:9092"
GROUP = "orders-sg"


class FakeCluster:
    """What the fake cluster answers, and what it was asked.

    Attributes
    ----------
    groups:
        ``ListGroups``' answer: group id -> group type.
    description:
        The dumper's JSON document for the group (the real sample by default).
    jars:
        A folder with a ``kafka-clients`` jar's name in it (the reader checks it is there).
    dumper_runs:
        The ``(bootstrap, group id)`` of every dumper run.
    """

    def __init__(self, tmp_path: Path) -> None:
        self.groups: dict[str, str] = {GROUP: "streams"}
        self.description: dict[str, Any] = json.loads(ADMIN.read_text())
        self.jars = tmp_path / "lib-44"
        self.jars.mkdir()
        (self.jars / "kafka-clients-4.4.0.jar").write_bytes(b"")
        self.dumper_runs: list[tuple[str, str]] = []

    def list_groups(self) -> list[dict[str, str]]:
        return [{"group_id": g, "group_type": t} for g, t in self.groups.items()]

    def close(self) -> None:
        pass

    def run(self, command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        assert command[0] == "java" and command[-4].endswith("DescribeStreamsGroup.java")
        # The dumper's JVM keeps its temp files in this process's temp folder (TMPDIR).
        assert f"-Djava.io.tmpdir={tempfile.gettempdir()}" in command
        bootstrap, group = command[-3], command[-2]
        self.dumper_runs.append((bootstrap, group))
        if group not in self.groups:
            doc: dict[str, Any] = {
                "error": {
                    "type": "GroupIdNotFoundException",
                    "message": f"Group {group} not found.",
                }
            }
        else:
            doc = self.description
        return subprocess.CompletedProcess(command, 0, json.dumps(doc) + "\n", "")


@pytest.fixture
def fake_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeCluster:
    """The fake cluster, with ``STREAMS_ASSIGN_KAFKA_HOME`` pointing at its jar folder."""
    import lag.sources.live_cluster as live_cluster
    import lag.sources.streams_group_describe as describe

    cluster = FakeCluster(tmp_path)
    monkeypatch.setattr(live_cluster, "open_admin", lambda *_a, **_k: cluster)
    monkeypatch.setattr(describe.subprocess, "run", cluster.run)
    monkeypatch.setenv("STREAMS_ASSIGN_KAFKA_HOME", str(tmp_path))
    return cluster


def live(*argv: str) -> list[str]:
    """``argv`` after ``--bootstrap-server BOOTSTRAP --application-id GROUP``."""
    return ["--bootstrap-server", BOOTSTRAP, "--application-id", GROUP, *argv]
