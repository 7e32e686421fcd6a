"""``streams-lag snapshot`` on a streams group (KIP-1071), the cluster faked at its boundaries
(``tests/cli/live_fakes.py``: ``ListGroups`` and the reader's JVM printing Kafka 4.4.0's real
description): the group is recognised, read through ``streams-lag streams-group``'s reader and
written in its form; options a streams group has no use for, an empty group and an unknown
group exit 2 with one line and write nothing. The live run is in
``test_snapshot_live_streams_group.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lag.cli import main
from lag.sources.streams_group_describe import (
    parse_describe_json,
    read_live_streams_group,
    streams_group_state,
)
from streams_assign.errors import LagInputError
from streams_assign.formats.streams_group import dump_streams_group, load_streams_group
from tests.cli.live_fakes import ADMIN, BOOTSTRAP, GROUP, FakeCluster, live
from tests.cli.live_fakes import fake_cluster as fake_cluster  # the fixture

pytestmark = pytest.mark.usefixtures("fake_cluster")


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("streams-lag: error: ")
    return err[0]


def test_the_reader_gives_the_state_of_the_real_description() -> None:
    group, state = read_live_streams_group(BOOTSTRAP, GROUP)
    sample = parse_describe_json(ADMIN.read_text(), source=str(ADMIN))
    assert group == sample
    assert dump_streams_group(state) == dump_streams_group(streams_group_state(sample))


def test_snapshot_of_a_streams_group_writes_what_streams_group_writes(
    tmp_path: Path, fake_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    by_snapshot, by_reader = tmp_path / "snapshot.json", tmp_path / "streams-group.json"
    assert main(["snapshot", *live("--out", str(by_snapshot))]) == 0
    err = capsys.readouterr().err
    assert main(["streams-group", *live("--out", str(by_reader))]) == 0
    assert json.loads(by_snapshot.read_text()) == json.loads(by_reader.read_text())
    assert fake_cluster.dumper_runs == [(BOOTSTRAP, GROUP)] * 2
    state = load_streams_group(by_snapshot)
    assert len(state.members) == 4
    assert "a streams-group state (KIP-1071: the input of the broker's task assignor" in err
    assert "each member's offsets report is at most 60 s old" in err
    for member in state.members:  # the per-member table names every member and its report
        assert member.member_id in err


def test_a_standby_count_given_overrides_the_groups_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "state.json"
    assert (
        main(["snapshot", *live("--num-standby-replicas", "0", "--quiet", "--out", str(out))]) == 0
    )
    assert load_streams_group(out).configs.num_standby_replicas == 0
    assert "num.standby.replicas 0 (given; the group's is 1)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value", "why"),
    [
        ("--metrics", "scrape.txt", "reads only the task offsets the members reported"),
        ("--state-dirs", "state", "reads only the task offsets the members reported"),
        ("--streams-config", "app.properties", "not the application's properties"),
        ("--acceptable-recovery-lag", "10", "a classic assignor's config"),
        ("--probing-rebalance-interval-ms", "60000", "no probing rebalances"),
        ("--topology", "topology.txt", "describes the group's topology itself"),
    ],
)
def test_an_option_a_streams_group_has_no_use_for_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, why: str
) -> None:
    out = tmp_path / "state.json"
    assert main(["snapshot", *live(option, value, "--out", str(out))]) == 2
    line = _one_error_line(capsys)
    assert f"{option}: group {GROUP!r} is a streams group" in line and why in line
    assert not out.exists()


def test_a_streams_group_without_members_is_refused(
    tmp_path: Path, fake_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_cluster.description.update(members=[], state="Empty")
    out = tmp_path / "state.json"
    assert main(["snapshot", *live("--out", str(out))]) == 2
    assert f"streams group {GROUP!r} at {BOOTSTRAP} has no members (state Empty)" in (
        _one_error_line(capsys)
    )
    assert not out.exists()


def test_an_unknown_application_id_is_refused_before_the_reader_runs(
    tmp_path: Path, fake_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_cluster.groups = {"other-app": "classic"}
    out = tmp_path / "state.json"
    assert main(["snapshot", *live("--out", str(out))]) == 2
    assert f"no group {GROUP!r} on the cluster at {BOOTSTRAP} (ListGroups)" in (
        _one_error_line(capsys)
    )
    assert not out.exists() and fake_cluster.dumper_runs == []


def test_a_group_gone_between_listing_and_describing_is_one_line() -> None:
    with pytest.raises(LagInputError, match="GroupIdNotFoundException: Group gone not found"):
        read_live_streams_group(BOOTSTRAP, "gone")


def test_the_table_gives_each_members_lag_from_its_own_report(
    tmp_path: Path, fake_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    member = fake_cluster.description["members"][0]
    member["task_offsets"] = [["1", 0, 50], ["2", 2, 7]]
    member["task_end_offsets"] = [["1", 0, 80], ["2", 2, 1007], ["1", 4, 9]]
    assert main(["snapshot", *live("--out", str(tmp_path / "state.json"))]) == 0
    rows = [line for line in capsys.readouterr().err.splitlines() if member["member_id"] in line]
    assert len(rows) == 1
    assert "2 task(s)" in rows[0] and "1,030" in rows[0]
