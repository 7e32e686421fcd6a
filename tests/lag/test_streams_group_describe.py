"""The operator's view of a streams group: Kafka 4.4.0's real describe outputs
(``tests/corpora/tool-samples/streams-group-4.4``) into the state ``streams_group_sticky`` reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from lag.cli import main
from lag.sources.streams_group_describe import parse_describe_json, streams_group_state
from lag.sources.streams_group_text import parse_describe_text
from streams_assign.errors import LagInputError
from streams_assign.formats.streams_group import load_streams_group

SAMPLES = CORPORA / "tool-samples" / "streams-group-4.4"
ADMIN = SAMPLES / "admin-describe.json"
TEXT = SAMPLES / "describe-members-verbose.txt"


def _java_hash(text: str) -> int:
    """``String.hashCode`` as an unsigned 32-bit value (written here, not imported)."""
    units = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h


def _bucket(member_id: str, table: int = 16) -> int:
    h = _java_hash(member_id)
    return (h ^ (h >> 16)) & (table - 1)


def test_the_admin_describe_of_kafka_440_is_read_whole() -> None:
    group = parse_describe_json(ADMIN.read_text(), source=str(ADMIN))
    assert (group.kafka_version, group.state, group.assignor) == ("4.4.0", "Stable", "sticky")
    assert group.target_assignment_epoch == group.group_epoch == 6
    assert group.topology == {"0": (6, False), "1": (6, True), "2": (6, True)}
    assert len(group.members) == 4
    assert {m.process_id for m in group.members} == {
        "b9dffda9-298e-4715-a85c-3d570f5c1514",
        "051702cf-69f5-442b-9061-c70c4b926c67",
    }
    for m in group.members:
        assert m.client_tags == {"zone": "z1"}
        assert m.client_id.startswith(f"orders-sg-{m.process_id}-StreamThread-")
        assert m.assignment == m.target_assignment  # a stable group
    tasks = sorted(
        f"{s}_{p}" for m in group.members for s, ps in m.assignment.active.items() for p in ps
    )
    assert tasks == sorted(f"{s}_{p}" for s in "012" for p in range(6))


def test_the_describe_tools_text_agrees_with_the_admin_api_member_by_member() -> None:
    admin = parse_describe_json(ADMIN.read_text(), source=str(ADMIN))
    text = parse_describe_text(TEXT.read_text(), source=str(TEXT))
    assert text.group_id == "orders-sg" and text.target_assignment_epoch == 6
    by_id = {m.member_id: m for m in admin.members}
    assert {m.member_id for m in text.members} == set(by_id)
    for m in text.members:
        real = by_id[m.member_id]
        assert (m.process_id, m.client_id, m.member_epoch) == (
            real.process_id,
            real.client_id,
            real.member_epoch,
        )
        assert m.assignment == real.assignment
        assert m.target_assignment == real.target_assignment
        assert m.task_offsets is None and m.client_tags is None  # the text has neither


def test_the_state_lists_members_in_java_hashmap_order() -> None:
    group = parse_describe_json(ADMIN.read_text(), source=str(ADMIN))
    state = streams_group_state(group)
    broker_order = [m.member_id for m in group.members]
    expected = sorted(broker_order, key=lambda m: (_bucket(m), broker_order.index(m)))
    assert [m.member_id for m in state.members] == expected
    assert state.configs.num_standby_replicas == 1
    report = state.meta["offsets_report"]  # type: ignore[index]
    assert set(report) == set(broker_order)
    assert all(r["interval_ms"] == 60_000 for r in report.values())


def test_cli_writes_the_state_the_twin_reads(tmp_path: Path) -> None:
    out = tmp_path / "state.json"
    assert main(["streams-group", "--describe", str(ADMIN), "--out", str(out)]) == 0
    state = load_streams_group(out)
    assert len(state.members) == 4 and set(state.topology) == {"0", "1", "2"}
    # An unchanged report keeps the time it was first seen.
    again = tmp_path / "again.json"
    doc = json.loads(out.read_text())
    doc["meta"]["offsets_report"][state.members[0].member_id]["unchanged_since_ms"] = 5
    (tmp_path / "prev.json").write_text(json.dumps(doc))
    args = ["--previous", str(tmp_path / "prev.json"), "--out", str(again)]
    assert main(["streams-group", "--describe", str(ADMIN), *args]) == 0
    report = json.loads(again.read_text())["meta"]["offsets_report"]
    assert report[state.members[0].member_id]["unchanged_since_ms"] == 5


def _truncated_json(tmp: Path) -> Path:
    path = tmp / "cut.json"
    path.write_text(ADMIN.read_text()[:1500])
    return path


def _truncated_text(tmp: Path) -> Path:
    path = tmp / "cut.txt"
    lines = TEXT.read_text().splitlines()
    path.write_text("\n".join(lines[:-1] + [lines[-1][: lines[-1].index("TARGET-ACTIVE")]]))
    return path


def _classic_text(tmp: Path) -> Path:
    path = tmp / "classic.txt"
    lines = TEXT.read_text().splitlines()
    lines[2] = lines[2].replace(" streams ", " classic ", 1)
    path.write_text("\n".join(lines) + "\n")
    return path


def _missing_field(tmp: Path) -> Path:
    doc = json.loads(ADMIN.read_text())
    del doc["members"][1]["process_id"]
    path = tmp / "nofield.json"
    path.write_text(json.dumps(doc))
    return path


def _consumer_groups_text(tmp: Path) -> Path:
    return CORPORA / "tool-samples" / "consumer-groups-members-verbose.txt"


@pytest.mark.parametrize(
    ("make", "extra", "message"),
    [
        (lambda tmp: SAMPLES / "admin-describe-unknown-group.json", [], "GroupIdNotFound"),
        (_truncated_json, [], "invalid JSON at line"),
        (_missing_field, [], "members[1].process_id: missing"),
        (_truncated_text, ["--topology", "0=6"], "line 5: no TARGET-ACTIVE: section"),
        (_classic_text, ["--topology", "0=6"], "line 3: member"),
        (_consumer_groups_text, [], "not the output of kafka-streams-groups"),
        (lambda tmp: TEXT, [], "has no topology"),
        (lambda tmp: TEXT, ["--topology", "0=x"], "--topology: '0=x'"),
    ],
)
def test_bad_input_exits_2_naming_what_and_where_and_writes_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: object,
    extra: list[str],
    message: str,
) -> None:
    source = make(tmp_path)  # type: ignore[operator]
    out = tmp_path / "state.json"
    status = main(["streams-group", "--describe", str(source), *extra, "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2
    assert message in err and err.startswith("streams-lag: error: ")
    assert not out.exists()


def test_a_classic_member_in_the_admin_describe_is_refused() -> None:
    doc = json.loads(ADMIN.read_text())
    doc["members"][2]["is_classic"] = True
    with pytest.raises(LagInputError, match=r"members\[2\] .*classic-protocol member"):
        parse_describe_json(doc, source="x.json")


LOG = SAMPLES / "broker-coordinator-debug.log"


def test_the_brokers_logged_computations_are_replayed_by_the_twin() -> None:
    from lag.sources.streams_group_log import computation_state, read_target_computations
    from streams_assign.assignors.streams_group_sticky import assign_streams_group

    comps = read_target_computations(LOG.read_text(), "sg-try", str(LOG))
    assert [(c.epoch, len(c.members), c.topology_ready) for c in comps] == [
        (2, 1, False),
        (5, 4, True),
        (7, 6, True),
    ]
    # Fresh state directories: no member had an offset to report at these computations.
    topology = {"0": (6, False), "1": (6, True), "2": (6, True)}
    for c in comps:
        decided = assign_streams_group(computation_state(c, topology, 1, {})).members
        for member, real in c.target.items():
            assert dict(decided[member].active) == dict(real.active), (c.epoch, member)
            assert dict(decided[member].standby) == dict(real.standby), (c.epoch, member)
    # The second computation saw the first thread of each of two processes holding its tasks.
    held = comps[2].held
    assert sum(bool(t.active) for t in held.values()) == 4


def test_a_log_without_computations_is_refused() -> None:
    from lag.sources.streams_group_log import read_target_computations

    with pytest.raises(LagInputError, match="no target computation of group 'other'"):
        read_target_computations(LOG.read_text(), "other", "server.log")
