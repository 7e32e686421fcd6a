"""The streams-group state format: validation errors name the file, JSON path and value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.errors import InvalidStreamsGroupError
from streams_assign.formats.streams_group import (
    dump_streams_group,
    is_streams_group_document,
    load_streams_group,
    parse_streams_group,
)

STATES = CORPORA / "kafka-streams-group"


def _valid() -> dict:
    return {
        "configs": {"num.standby.replicas": 1},
        "topology": {"0": {"partitions": 2, "stateful": True}},
        "members": [
            {"member_id": "m1", "process_id": "p1", "task_offsets": {"0": {"1": 5}}},
            {"member_id": "m2", "process_id": "p2", "active_tasks": {"0": [0]}},
        ],
    }


@pytest.mark.parametrize(
    ("edit", "path", "value"),
    [
        (
            lambda d: d["configs"].update({"num.standby.replicas": -1}),
            "configs.num.standby.replicas",
            "-1",
        ),
        (lambda d: d["topology"]["0"].update({"partitions": 0}), "topology.0.partitions", "0"),
        (lambda d: d["topology"]["0"].update({"stateful": "yes"}), "topology.0.stateful", "'yes'"),
        (lambda d: d["members"][1].update({"member_id": "m1"}), "members[1].member_id", "'m1'"),
        (lambda d: d["members"][0].update({"process_id": ""}), "members[0].process_id", "''"),
        (
            lambda d: d["members"][1].update({"active_tasks": {"0": [0, 0]}}),
            "members[1].active_tasks.0[1]",
            "0",
        ),
        (
            lambda d: d["members"][1].update({"standby_tasks": {"0": [-2]}}),
            "members[1].standby_tasks.0[0]",
            "-2",
        ),
        (
            lambda d: d["members"][0].update({"task_offsets": {"0": {"1": -1}}}),
            "members[0].task_offsets.0.1",
            "-1",
        ),
        (
            lambda d: d["members"][0].update({"task_offsets": {"0": {"x": 1}}}),
            "members[0].task_offsets.0.x",
            "'x'",
        ),
        (lambda d: d["members"][0].update({"threads": 2}), "members[0].threads", "unknown field"),
        (lambda d: d.update({"clients": []}), "clients", "unknown field"),
        (lambda d: d.pop("topology"), "topology", "missing"),
    ],
)
def test_invalid_state_names_path_and_value(edit, path: str, value: str, tmp_path: Path) -> None:
    document = _valid()
    edit(document)
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(document))
    with pytest.raises(InvalidStreamsGroupError) as info:
        load_streams_group(file)
    message = str(info.value)
    assert message.startswith(f"{file}: {path}: "), message
    assert value in message
    assert isinstance(info.value, ValueError)


def test_not_json_names_the_file(tmp_path: Path) -> None:
    file = tmp_path / "broken.json"
    file.write_text("{")
    with pytest.raises(InvalidStreamsGroupError, match="broken.json: not valid JSON"):
        load_streams_group(file)


def test_defaults_for_omitted_fields() -> None:
    state = parse_streams_group(
        {"topology": {}, "members": [{"member_id": "a", "process_id": "p"}]}
    )
    assert state.configs.num_standby_replicas == 0
    member = state.members[0]
    assert member.instance_id is None and member.task_offsets == {} and member.active_tasks == {}


def test_formats_are_told_apart_by_their_fields() -> None:
    assert is_streams_group_document(_valid())
    assert not is_streams_group_document({"clients": [], "stateful_tasks": []})


def test_dump_then_parse_gives_the_same_state_for_every_shared_state() -> None:
    files = sorted((STATES / "input").glob("*.json"))
    assert len(files) == 40, f"expected 40 states in {STATES / 'input'}"
    for file in files:
        state = load_streams_group(file)
        assert parse_streams_group(dump_streams_group(state)) == state, file.name
