"""Properties of the twin's decisions on random streams-group states (no JVM needed)."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from devtools.generators.streams_groups import KINDS, random_streams_group
from streams_assign.assignors.streams_group_sticky import assign_streams_group
from streams_assign.formats.streams_group import parse_streams_group

STATES = st.builds(
    lambda seed, kind: random_streams_group(random.Random(seed), kind),
    st.integers(min_value=0, max_value=2**32 - 1),
    st.sampled_from(KINDS),
)


def _decide(document: dict) -> tuple[dict, dict]:
    state = parse_streams_group(document)
    process = {m.member_id: m.process_id for m in state.members}
    return assign_streams_group(state).to_json()["members"], process


@settings(max_examples=100, deadline=None)
@given(STATES)
def test_every_task_is_active_exactly_once(document: dict) -> None:
    members, _ = _decide(document)
    actives = Counter(
        (s, p) for m in members.values() for s, parts in m["active"].items() for p in parts
    )
    expected = {(s, p) for s, t in document["topology"].items() for p in range(t["partitions"])}
    assert set(actives) == expected and set(actives.values()) <= {1}


@settings(max_examples=100, deadline=None)
@given(STATES)
def test_stateful_tasks_get_min_of_standbys_and_other_processes(document: dict) -> None:
    members, process = _decide(document)
    processes = len(set(process.values()))
    wanted = min(document["configs"]["num.standby.replicas"], processes - 1)
    copies: dict[tuple[str, int], list[str]] = {}
    for member_id, m in members.items():
        for role in ("active", "standby"):
            for s, parts in m[role].items():
                for p in parts:
                    copies.setdefault((s, p), []).append(process[member_id])
    for (s, p), holders in copies.items():
        stateful = document["topology"][s]["stateful"]
        assert len(holders) == (1 + wanted if stateful else 1), (s, p)
        assert len(set(holders)) == len(holders), f"two copies of {s}_{p} on one process"


@settings(max_examples=50, deadline=None)
@given(STATES)
def test_every_member_has_an_entry_and_no_warmups(document: dict) -> None:
    members, _ = _decide(document)
    assert list(members) == [m["member_id"] for m in document["members"]]
    assert all(m["warmup"] == {} for m in members.values())
