"""The chain of target computations a change causes in a streams group (KIP-1071), on the state
of a real Kafka 4.4.0 group (``tests/corpora/tool-samples/streams-group-4.4``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from lag.sources.streams_group_describe import parse_describe_json, streams_group_state
from streams_assign.assignors.streams_group_sticky import assign_streams_group
from streams_assign.cli import main
from streams_assign.formats.streams_group import dump_streams_group
from streams_assign.simulation.streams_group_chain import (
    ChainChange,
    id_dependence,
    predict_chain,
    split_expiries,
)
from streams_assign.streams_group import StreamsGroupState

ADMIN = CORPORA / "tool-samples" / "streams-group-4.4" / "admin-describe.json"


@pytest.fixture(scope="module")
def state() -> StreamsGroupState:
    return streams_group_state(parse_describe_json(ADMIN.read_text(), source=str(ADMIN)))


def _processes(state: StreamsGroupState) -> list[str]:
    return sorted({m.process_id for m in state.members})


def test_a_kill_is_one_computation_without_the_dead_process(state: StreamsGroupState) -> None:
    dead, alive = _processes(state)
    chain = predict_chain(state, ChainChange("kill", dead))
    assert len(chain.computations) == 1
    seen = chain.computations[0].state
    assert {m.process_id for m in seen.members} == {alive}
    assert chain.computations[0].target == assign_streams_group(seen)
    active = [t for a in chain.computations[0].target.members.values() for t in a.active.items()]
    assert sum(len(ps) for _, ps in active) == 18  # every task has a survivor


def test_a_join_of_two_threads_is_two_computations(state: StreamsGroupState) -> None:
    ids = ("AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB")
    chain = predict_chain(state, ChainChange("join", "p-new", threads=2, member_ids=ids))
    first, second = chain.computations
    assert [m.member_id for m in first.state.members if m.process_id == "p-new"] == [ids[0]]
    assert {m.member_id for m in second.state.members if m.process_id == "p-new"} == set(ids)
    # The first thread holds at the second computation only what nobody else held (released-only).
    held = {(s, p) for m in state.members for s, ps in m.active_tasks.items() for p in ps}
    newcomer = next(m for m in second.state.members if m.member_id == ids[0])
    assert not {(s, p) for s, ps in newcomer.active_tasks.items() for p in ps} & held
    full = predict_chain(
        state, ChainChange("join", "p-new", threads=2, member_ids=ids), reconciliation="full"
    )
    got = next(m for m in full.computations[1].state.members if m.member_id == ids[0])
    assert got.active_tasks == dict(first.target.members[ids[0]].active)


def test_id_dependence_reports_one_entry_per_computation(state: StreamsGroupState) -> None:
    dep = id_dependence(state, ChainChange("join", "p-new", threads=2), draws=8)
    assert len(dep) == 2 and all(set(d) == {"per_process", "per_thread"} for d in dep)
    kill = id_dependence(state, ChainChange("kill", _processes(state)[0], threads=0), draws=4)
    assert kill == [{"per_process": False, "per_thread": False}]


def test_split_expiries_list_each_first_set_of_a_killed_process(state: StreamsGroupState) -> None:
    # Both processes of the sample run two threads: each kill has two splits (either thread
    # fenced first), never the whole process, and each split is two computations whose last
    # one has no member of the killed process.
    for dead in _processes(state):
        threads = sorted(m.member_id for m in state.members if m.process_id == dead)
        change = ChainChange("kill", dead)
        whole = predict_chain(state, change).computations[-1].target.members
        splits = split_expiries(state, change)
        assert [s["first"] for s in splits] == [[t] for t in threads]
        for split in splits:
            chain = predict_chain(
                state, ChainChange("kill", dead, leaving_first=tuple(split["first"]))
            )
            assert split["computations"] == len(chain.computations) == 2
            last = chain.computations[-1]
            assert not {m.process_id for m in last.state.members} & {dead}
            owner = {
                (s, p): m
                for m, a in last.target.members.items()
                for s, ps in a.active.items()
                for p in ps
            }
            base = {(s, p): m for m, a in whole.items() for s, ps in a.active.items() for p in ps}
            assert split["actives_on_other_members"] == sum(owner[t] != base[t] for t in base)
            same_thread = {m: last.target.members[m] for m in whole} == dict(whole)
            assert split["final_equal_per_thread"] == same_thread
    # Nothing to split: a join, or a kill already split.
    assert split_expiries(state, ChainChange("join", "p-new", threads=2)) == []
    one = ChainChange("kill", dead, leaving_first=(threads[0],))
    assert split_expiries(state, one) == []


def test_bad_changes_are_refused(state: StreamsGroupState) -> None:
    with pytest.raises(ValueError, match="no member"):
        predict_chain(state, ChainChange("kill", "nobody"))
    with pytest.raises(ValueError, match="already has members"):
        predict_chain(state, ChainChange("join", _processes(state)[0]))


def test_cli_prints_the_chain_and_exits_2_on_an_unknown_process(
    tmp_path: Path, state: StreamsGroupState, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(dump_streams_group(state)))
    assert main(["streams-chain", str(path), "--join", "p-new", "--threads", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["computations"]) == 2 and len(doc["new_member_ids"]) == 2
    dead = _processes(state)[0]
    assert main(["streams-chain", str(path), "--kill", dead, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["computations"]) == 1 and len(doc["split_expiries"]) == 2
    assert main(["streams-chain", str(path), "--kill", dead]) == 0
    assert "fenced first: final target" in capsys.readouterr().out
    assert main(["streams-chain", str(path), "--kill", "nobody"]) == 2
    assert "no member" in capsys.readouterr().err
