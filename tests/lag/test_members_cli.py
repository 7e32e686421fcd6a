"""``streams-lag members``: a group's decoded members, from real Kafka Streams 4.2.1 bytes.

``DescribeGroups`` is replaced by a recorded answer (``tests/corpora/streams-user-data``); the
live command runs in ``tests/kafka/test_streams_group_state.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import lag.sources.streams_group_state as group_state
from lag.cli import main
from lag.sources.streams_group_state import GroupDescription, RawMember

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "streams-user-data"


def recorded(label_index: int = 1) -> tuple[dict[str, Any], GroupDescription]:
    doc = json.loads((CORPUS / "kafka-4.2.1.json").read_text())
    snapshot = doc["snapshots"][label_index]
    members = tuple(
        RawMember(
            m["member_id"],
            m["client_id"],
            m["client_host"],
            None,
            bytes.fromhex(m["metadata_hex"]),
            bytes.fromhex(m["assignment_hex"]),
        )
        for m in snapshot["members"]
    )
    group = GroupDescription("userdata-app", 0, "Stable", "consumer", "stream", members)
    return doc, group


def answer(monkeypatch: pytest.MonkeyPatch, group: GroupDescription) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []

    def fake(admin: Any, group_id: str, timeout_ms: int) -> GroupDescription:
        calls.append((admin, group_id, timeout_ms))
        return group

    monkeypatch.setattr(group_state, "describe_group", fake)
    return calls


ARGS = ["members", "--bootstrap-server", "h:9092", "--application-id", "userdata-app"]


def test_json_lists_every_member_with_its_instance_facts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc, group = recorded()
    calls = answer(monkeypatch, group)
    assert main([*ARGS, "--json", "--timeout-ms", "5000"]) == 0
    assert calls == [("h:9092", "userdata-app", 5000)]
    out = json.loads(capsys.readouterr().out)
    assert out["application_id"] == "userdata-app"
    assert len(out["members"]) == len(group.members)
    process_ids = {i["process_metadata_file"]["processId"] for i in doc["instances"]}
    reported = doc["snapshots"][1]["app_reports"]
    for member in out["members"]:
        sub = member["subscription"]
        assert sub["process_id"] in process_ids
        assert sub["version"] == 11
        thread = member["client_id"].removesuffix("-consumer")
        tasks = next(r["threads"][thread] for r in reported.values() if thread in r["threads"])
        assert set(member["assignment"]["active_tasks"]) == set(tasks["active"])
        assert set(member["assignment"]["standby_tasks"]) == set(tasks["standby"])


def test_text_output_one_block_per_member(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, group = recorded()
    answer(monkeypatch, group)
    assert main(ARGS) == 0
    captured = capsys.readouterr()
    assert captured.out.count("  process_id: ") == len(group.members)
    assert "client_tags: {'zone': " in captured.out
    assert captured.err.strip() == f"{len(group.members)} member(s) in group userdata-app"


def test_non_streams_group_exits_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, group = recorded()
    range_group = GroupDescription("userdata-app", 0, "Stable", "consumer", "range", group.members)
    answer(monkeypatch, range_group)
    assert main(ARGS) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("streams-lag: error: group 'userdata-app' is not a classic Kafka")


def test_group_without_members_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(monkeypatch, GroupDescription("userdata-app", 0, "Empty", "consumer", "", ()))
    assert main(ARGS) == 2
    err = capsys.readouterr().err
    assert err == "streams-lag: error: group 'userdata-app' has no members (state Empty)\n"


def test_undecodable_user_data_exits_2_naming_member_and_field(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, group = recorded()
    first = group.members[0]
    broken = RawMember(first.member_id, "c", "h", None, first.metadata[:-9], first.assignment)
    answer(
        monkeypatch, GroupDescription("userdata-app", 0, "Stable", "consumer", "stream", (broken,))
    )
    assert main(ARGS) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"member '{first.member_id}': ConsumerProtocolSubscription v3: " in err
    assert " at byte " in err
