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


def _without_unknown_tasks(document: dict) -> dict:
    """The document with every task and offset sum outside the topology removed."""
    counts = {s: t["partitions"] for s, t in document["topology"].items()}
    clean = dict(document, members=[])
    for member in document["members"]:
        kept = dict(member)
        for field in ("active_tasks", "standby_tasks"):
            kept[field] = {
                s: [p for p in ps if p < counts[s]]
                for s, ps in (member.get(field) or {}).items()
                if s in counts
            }
        kept["task_offsets"] = {
            s: {p: o for p, o in os.items() if int(p) < counts[s]}
            for s, os in (member.get("task_offsets") or {}).items()
            if s in counts
        }
        clean["members"].append(kept)
    return clean


@settings(max_examples=50, deadline=None)
@given(STATES, st.integers(min_value=0, max_value=2**32 - 1))
def test_tasks_outside_the_topology_are_ignored(document: dict, seed: int) -> None:
    # Members naming an unknown subtopology or a partition beyond its count (as after a
    # topology change) get the decision of the same group without those tasks.
    rng = random.Random(seed)
    extra = {"zz_gone": [0, 3]}
    for member in document["members"]:
        sub = rng.choice(sorted(document["topology"]))
        beyond = document["topology"][sub]["partitions"] + rng.randrange(3)
        field = rng.choice(("active_tasks", "standby_tasks", "task_offsets"))
        tasks = member[field] = member.get(field) or {}
        if field == "task_offsets":
            tasks.setdefault(sub, {})[str(beyond)] = rng.randrange(100)
            tasks.update({s: {str(p): 5 for p in ps} for s, ps in extra.items()})
        else:
            if beyond not in tasks.get(sub, []):
                tasks[sub] = [*tasks.get(sub, []), beyond]
            tasks.update(extra)
    assert _decide(document)[0] == _decide(_without_unknown_tasks(document))[0]
