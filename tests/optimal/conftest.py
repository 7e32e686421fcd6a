"""Fixtures of the optimality tests: the hand-made data files beside this module."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.model import Assignment, ClusterState
from streams_assign.optimal import parse_assignment

DATA = Path(__file__).resolve().parent / "data"


class DataFiles:
    """Readers of ``tests/optimal/data/<name>.json``."""

    root = DATA

    def path(self, name: str) -> Path:
        """The file's path."""
        return DATA / f"{name}.json"

    def cluster(self, name: str) -> ClusterState:
        """A cluster state."""
        return load_cluster_state(self.path(name))

    def document(self, name: str) -> Any:
        """A parsed JSON document."""
        return json.loads(self.path(name).read_text(encoding="utf-8"))

    def assignment(self, cluster: ClusterState, name: str) -> Assignment:
        """An assignment file, read against ``cluster``."""
        return parse_assignment(cluster, self.document(name), source=f"{name}.json")


@pytest.fixture(scope="session")
def data() -> DataFiles:
    """The hand-made cluster states and assignments of ``tests/optimal/data``."""
    return DataFiles()
