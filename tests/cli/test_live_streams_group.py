"""``streams-assign assign|plan|compare --bootstrap-server`` on a streams group (KIP-1071), the
cluster faked at its boundaries (``live_fakes.py``: ``ListGroups`` and the reader's JVM printing
Kafka 4.4.0's real description): ``assign`` predicts with the twin of the group's assignor,
``plan`` runs ``streams-chain``'s prediction, ``compare`` refuses; every refusal is one line,
exit 2. The live run is in ``tests/lag/test_snapshot_live_streams_group.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lag.sources.streams_group_describe import parse_describe_json, streams_group_state
from streams_assign.assignors import assign_group
from streams_assign.cli import main
from streams_assign.formats.streams_group import dump_streams_group
from tests.cli.live_fakes import ADMIN, FakeCluster, live
from tests.cli.live_fakes import fake_cluster as fake_cluster  # the fixture

pytestmark = pytest.mark.usefixtures("fake_cluster")

KILLED = "b9dffda9-298e-4715-a85c-3d570f5c1514"


def _sample_state(**description: object) -> object:
    doc = json.loads(ADMIN.read_text())
    doc.update(description)
    return streams_group_state(parse_describe_json(doc, source="sample"))


def _stdout_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def _one_error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("streams-assign: error: "), lines
    assert captured.out == ""
    return lines[0]


def test_assign_predicts_the_next_target_with_the_groups_sticky_twin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = _stdout_json(capsys, "assign", "--json", *live())
    assert got == assign_group(_sample_state(), "streams_group_sticky").to_json()


def test_assign_follows_a_group_configured_with_lag_aware_sticky(
    fake_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_cluster.description["assignor"] = "lag_aware_sticky"
    got = _stdout_json(capsys, "assign", "--json", *live())
    state = _sample_state(assignor="lag_aware_sticky")
    assert got == assign_group(state, "lag_aware_sticky").to_json()
    assert main(["assign", *live()]) == 0  # the table names the assignor that decided
    assert "lag_aware_sticky assignment" in capsys.readouterr().out


def test_assign_refuses_a_group_assignor_it_has_no_twin_of(
    fake_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_cluster.description["assignor"] = "range-ish"
    line = _one_error_line(capsys, "assign", *live())
    assert "the group's assignor is 'range-ish'" in line and "--assignor" in line


def test_assign_refuses_the_classic_sources_on_a_streams_group(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _one_error_line(capsys, "assign", *live("--metrics", "scrape.txt"))
    assert "--metrics: group 'orders-sg' is a streams group" in line


@pytest.mark.parametrize(
    ("plan", "chain"),
    [
        (["--kill", KILLED[:8]], ["--kill", KILLED]),
        (["--remove", KILLED], ["--leave", KILLED]),
        (["--bounce", KILLED[:4]], ["--bounce", KILLED, "--threads", "2", "--draws", "5"]),
        (
            ["--add", "1", "--add-id", "0b3c8a4e-1111-4222-8333-444455556666", "--capacity", "3"],
            ["--join", "0b3c8a4e-1111-4222-8333-444455556666", "--threads", "3", "--draws", "5"],
        ),
    ],
)
def test_plan_on_a_streams_group_is_the_streams_chain_of_its_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], plan: list[str], chain: list[str]
) -> None:
    got = _stdout_json(capsys, "plan", "--json", *live(*plan))
    state = tmp_path / "state.json"
    state.write_text(json.dumps(dump_streams_group(_sample_state())))  # type: ignore[arg-type]
    assert got == _stdout_json(capsys, "streams-chain", str(state), "--json", *chain)


def test_plan_adding_a_fresh_instance_says_what_depends_on_its_ids(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = _stdout_json(capsys, "plan", "--json", *live("--add", "1"))
    assert [sorted(c["depends_on_new_ids"]) for c in got["computations"]] == [  # type: ignore[index]
        ["per_process", "per_thread"]
    ] * 2


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--kill", KILLED, "--add", "1"], "plan predicts the chain of one change"),
        (["--add", "2"], "plan predicts the chain of one change"),
        (["--kill", "ffff"], "--kill ffff: no process of the group has that id"),
        (["--kill", KILLED, "--optimal"], "--optimal is an option of a classic group's"),
        (["--kill", KILLED, "--standbys", "2"], "--standbys is an option of a classic group's"),
        (["--kill", KILLED, "--assignor", "high_availability"], "streams_group_sticky only"),
    ],
)
def test_plan_on_a_streams_group_refuses_in_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    assert says in _one_error_line(capsys, "plan", *live(*argv))


def test_compare_has_no_streams_form_and_says_what_to_run(
    fake_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _one_error_line(capsys, "compare", *live())
    assert "a streams group (KIP-1071): compare ranks the classic assignors" in line
    assert "streams-assign assign --bootstrap-server" in line
    assert fake_cluster.dumper_runs == []
