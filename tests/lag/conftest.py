"""Fixtures of the lag tests: the real samples and small fleets (the one shared Spark session,
``spark``, is in ``tests/conftest.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devtools.paths import CORPORA

SAMPLES = CORPORA / "tool-samples"
APP = "app"
#: Process ids of the hand-made fleets (P4 is never a group member).
P1 = "11111111-1111-4111-8111-111111111111"
P2 = "22222222-2222-4222-8222-222222222222"
P3 = "33333333-3333-4333-8333-333333333333"
P4 = "44444444-4444-4444-8444-444444444444"
LONG_MAX = 9_223_372_036_854_775_807

#: Sub-topology 0 (source ``in``, store s1), 1 (source ``other``, stores s2 and s3), 2 stateless.
HAND_TOPOLOGY = """\
Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [in])
      --> KSTREAM-AGGREGATE-0000000001
    Processor: KSTREAM-AGGREGATE-0000000001 (stores: [s1])
      --> none
      <-- KSTREAM-SOURCE-0000000000
   Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000002 (topics: [other])
      --> KSTREAM-JOIN-0000000003
    Processor: KSTREAM-JOIN-0000000003 (stores: [s2, s3])
      --> none
      <-- KSTREAM-SOURCE-0000000002
   Sub-topology: 2
    Source: KSTREAM-SOURCE-0000000004 (topics: [plain])
      --> KSTREAM-SINK-0000000005
    Sink: KSTREAM-SINK-0000000005 (topic: out)
      <-- KSTREAM-SOURCE-0000000004
"""


def client_id(process_id: str, thread: int, app: str = APP) -> str:
    """The consumer client id a Kafka Streams thread uses."""
    return f"{app}-{process_id}-StreamThread-{thread}-consumer"


def members_verbose(threads: list[tuple[str, int, str]], app: str = APP) -> str:
    """``--members --verbose`` text for (process id, thread, ASSIGNMENT) triples."""
    lines = [
        "CONSUMER-ID                          HOST            CLIENT-ID       "
        "#PARTITIONS     ASSIGNMENT"
    ]
    for process_id, thread, assignment in threads:
        count = (
            0
            if assignment == "-"
            else sum(
                len(group.split("(")[1].rstrip(")").split(",")) for group in assignment.split("), ")
            )
        )
        cid = client_id(process_id, thread, app)
        lines.append(
            f"{cid}-{thread:04d}-member /10.0.0.1       {cid} {count}               {assignment}"
        )
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def samples() -> Path:
    """``tests/corpora/tool-samples``: outputs of Kafka's tools (a test that needs it fails when
    absent)."""
    if not SAMPLES.is_dir():
        pytest.fail(f"{SAMPLES} is missing: the tool samples are part of the repository")
    return SAMPLES


class FleetFiles:
    """Writes a small hand-made fleet's inputs into a folder, in the real formats."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.topology = root / "topology.txt"
        self.members = root / "members.txt"
        self.end_offsets = root / "end-offsets.txt"
        self.offsets = root / "offsets.jsonl"
        self.end_rows = root / "end-offsets.jsonl"
        self.topology.write_text(HAND_TOPOLOGY)

    def write_members(self, threads: list[tuple[str, int, str]]) -> Path:
        self.members.write_text(members_verbose(threads))
        return self.members

    def write_end_offsets(self, lines: list[str]) -> Path:
        self.end_offsets.write_text("\n".join(lines) + "\n")
        return self.end_offsets

    def write_offsets(self, rows: list[dict[str, Any]]) -> Path:
        self.offsets.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return self.offsets

    def write_end_rows(self, rows: list[dict[str, Any]]) -> Path:
        self.end_rows.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return self.end_rows


@pytest.fixture
def fleet_files(tmp_path: Path) -> FleetFiles:
    """A folder with the hand-made topology; tests add members, offsets and end offsets."""
    return FleetFiles(tmp_path)


@pytest.fixture(scope="session")
def fleet_factory() -> type[FleetFiles]:
    """The :class:`FleetFiles` class, for fixtures wider than one test."""
    return FleetFiles


@pytest.fixture(scope="session")
def offset_row() -> Callable[..., dict[str, Any]]:
    """Build one offset row: ``offset_row(P1, "s1", 0, 900, t=None, task=None)``."""

    def build(
        process_id: str, store: str | None, partition: int | None, offset: int | None, **extra: Any
    ) -> dict[str, Any]:
        row: dict[str, Any] = {
            "process_id": process_id,
            "topic": None if store is None else f"{APP}-{store}-changelog",
            "partition": partition,
            "offset": offset,
        }
        if "t" in extra:
            row["snapshot_time"] = extra.pop("t")
        if "task" in extra:
            row["task_id"] = extra.pop("task")
        row.update(extra)
        return row

    return build
