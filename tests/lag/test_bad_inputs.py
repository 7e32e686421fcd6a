"""Bad operator input that used to pass silently (or fail with Spark's error): each now stops
``streams-lag compute`` with exit status 2 and one line naming the file and the value, and
writes nothing.

- a topology text cut mid-line (a stateful sub-topology used to come out stateless);
- a duplicated ``Sub-topology: N`` block (used to replace the first silently);
- one process id in two state directories (their offsets used to be summed);
- an offsets Parquet file whose ``offset`` column is binary (used to exit 1 with a cast error).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lag.cli import main
from lag.sources.topology import parse_topology
from streams_assign.errors import LagInputError

from .conftest import APP, HAND_TOPOLOGY, P1, P2

#: The hand topology cut in the middle of the processor line that owns store s1.
CUT_NODE = HAND_TOPOLOGY[: HAND_TOPOLOGY.index("(stores: [s1])") + len("(stores: [s")]
#: Cut in the middle of an edge line: the predecessor's name is incomplete.
CUT_EDGE = HAND_TOPOLOGY[: HAND_TOPOLOGY.index("<-- KSTREAM-SOURCE-0000000002") + 15]


def compute(files: Any, output: Path, *local: str) -> list[str]:
    return [
        "compute",
        "--application-id",
        APP,
        "--topology",
        str(files.topology),
        "--members",
        str(files.members),
        "--end-offsets",
        str(files.end_offsets),
        "--output",
        str(output),
        "--quiet",
        *local,
    ]


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("streams-lag: error: "), err
    return err[0]


@pytest.fixture
def files(fleet_files: Any) -> Any:
    fleet_files.write_members([(P1, 1, "in(0, 1), other(0, 1), plain(0, 1)"), (P2, 1, "-")])
    fleet_files.write_end_offsets(
        ["app-s1-changelog:0:10", "app-s2-changelog:0:5", "app-s3-changelog:0:5"]
    )
    return fleet_files


def instance(root: Path, process_id: str) -> Path:
    app_dir = root / APP
    (app_dir / "0_0").mkdir(parents=True)
    (app_dir / "kafka-streams-process-metadata").write_text(json.dumps({"processId": process_id}))
    (app_dir / "0_0" / ".checkpoint").write_text("0\n1\napp-s1-changelog 0 7\n")
    return root


def test_topology_cut_mid_node_line_is_refused_naming_file_line_and_text(
    files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files.topology.write_text(CUT_NODE)
    output = tmp_path / "c.json"
    state = instance(tmp_path / "i1", P1)

    assert main(compute(files, output, "--state-dirs", str(state))) == 2
    line = error_line(capsys)
    number = CUT_NODE.count("\n") + 1
    assert f"{files.topology}:{number}: unreadable processor line" in line
    assert "KSTREAM-AGGREGATE-0000000001 (stores: [s" in line
    assert not output.exists()


def test_topology_cut_mid_edge_names_the_missing_node() -> None:
    with pytest.raises(LagInputError) as caught:
        parse_topology(CUT_EDGE, source="t.txt")
    message = str(caught.value)
    assert message.startswith(f"t.txt:{CUT_EDGE.count(chr(10)) + 1}: Sub-topology: 1 names node")
    assert "'KSTREAM-SOU'" in message


def test_whole_topologies_still_parse(samples: Path) -> None:
    assert parse_topology(HAND_TOPOLOGY).subtopologies[1].stores == ("s2", "s3")
    for name in ("topology-wordcount-tutorial.txt", "topology-naming-guide.txt"):
        assert parse_topology((samples / name).read_text()).subtopologies


def test_duplicate_subtopology_block_is_refused(
    files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    block = HAND_TOPOLOGY[HAND_TOPOLOGY.index("   Sub-topology: 1") :]
    files.topology.write_text(HAND_TOPOLOGY + block)
    output = tmp_path / "c.json"
    state = instance(tmp_path / "i1", P1)

    assert main(compute(files, output, "--state-dirs", str(state))) == 2
    line = error_line(capsys)
    first = HAND_TOPOLOGY[: HAND_TOPOLOGY.index("   Sub-topology: 1")].count("\n") + 1
    second = HAND_TOPOLOGY.count("\n") + 1
    assert f"{files.topology}:{second}: duplicate 'Sub-topology: 1' (first at line {first})" in (
        line
    )
    assert not output.exists()


def test_one_process_id_in_two_state_directories_is_refused(
    files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = instance(tmp_path / "i1", P1)
    copy = tmp_path / "i2"
    shutil.copytree(first, copy)
    output = tmp_path / "c.json"

    assert main(compute(files, output, "--state-dirs", str(first), str(copy))) == 2
    line = error_line(capsys)
    assert f"--state-dirs {copy}: process id {P1} is also the process id of {first / APP}" in line
    assert not output.exists()


@pytest.mark.spark
def test_offsets_parquet_with_a_binary_offset_column_is_refused(
    files: Any, tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "offsets.parquet"
    table = pa.table(
        {
            "process_id": [P1],
            "topic": ["app-s1-changelog"],
            "partition": pa.array([0], pa.int32()),
            "offset": pa.array([b"\x00\x07"], pa.binary()),
        }
    )
    pq.write_table(table, bad)
    output = tmp_path / "c.json"

    assert main(compute(files, output, "--offsets", str(bad))) == 2
    line = error_line(capsys)
    assert f"--offsets {bad}: column 'offset' has type binary" in line
    assert not output.exists()
