"""Properties of Kafka's consumer assignors on random consumer-group documents (hypothesis)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams_assign.consumer import TopicPartition, assign_consumer_group
from streams_assign.formats.consumer_group import parse_consumer_state
from tests.tiers import examples

SETTINGS = settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def group_documents(
    draw: st.DrawFn, assignor: str, *, same_topics: bool = False, owned: bool = True
) -> dict[str, Any]:
    """A valid consumer-group document: topics, members (some static), maybe prior ownership
    (each partition owned by at most one subscriber, as after a completed rebalance)."""
    n_topics = draw(st.integers(1, 4))
    topics = {f"t{i}": draw(st.integers(0, 9)) for i in range(n_topics)}
    n_members = draw(st.integers(1, 7))
    names = sorted(topics)
    all_subscribe = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    members = []
    for m in range(n_members):
        subscribed = (
            all_subscribe
            if same_topics
            else draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        )
        static = draw(st.booleans())
        members.append(
            {
                "member_id": f"consumer-{draw(st.integers(0, 99))}-{m}",
                "group_instance_id": f"instance-{m}" if static else None,
                "topics": subscribed,
                "owned_partitions": [],
                "generation": None,
                "rack": None,
            }
        )
    if owned:
        generation = draw(st.integers(1, 5))
        for topic, count in topics.items():
            for p in range(count):
                holders = [m for m in members if topic in m["topics"]]
                choice = draw(st.integers(-1, len(holders) - 1))
                if choice >= 0:
                    holders[choice]["owned_partitions"].append([topic, p])
        for m in members:
            if m["owned_partitions"] or draw(st.booleans()):
                m["generation"] = generation
        for m in members:
            if m["generation"] is None:
                m["owned_partitions"] = []
    return {"assignor": assignor, "topics": topics, "members": members}


def _subscribed_partitions(doc: dict[str, Any]) -> set[TopicPartition]:
    topics = {t for m in doc["members"] for t in m["topics"]}
    return {TopicPartition(t, p) for t in topics for p in range(doc["topics"][t])}


def _check_each_partition_once_among_subscribers(doc: dict[str, Any]) -> None:
    assignment = assign_consumer_group(parse_consumer_state(doc))
    subscribers = {m["member_id"]: set(m["topics"]) for m in doc["members"]}
    assert set(assignment) == set(subscribers)
    counts = Counter(tp for parts in assignment.values() for tp in parts)
    assert set(counts) == _subscribed_partitions(doc)
    assert all(n == 1 for n in counts.values())
    for member, parts in assignment.items():
        assert all(tp.topic in subscribers[member] for tp in parts)


@SETTINGS
@given(group_documents("range", owned=False))
def test_range_assigns_each_partition_once_to_a_subscriber(doc: dict[str, Any]) -> None:
    _check_each_partition_once_among_subscribers(doc)


@SETTINGS
@given(group_documents("roundrobin", owned=False))
def test_roundrobin_assigns_each_partition_once_to_a_subscriber(doc: dict[str, Any]) -> None:
    _check_each_partition_once_among_subscribers(doc)


@SETTINGS
@given(group_documents("sticky"))
def test_sticky_assigns_each_partition_once_to_a_subscriber(doc: dict[str, Any]) -> None:
    _check_each_partition_once_among_subscribers(doc)


@SETTINGS
@given(group_documents("range", owned=False))
def test_range_balances_each_topic_within_one(doc: dict[str, Any]) -> None:
    assignment = assign_consumer_group(parse_consumer_state(doc))
    for topic in doc["topics"]:
        subscribers = [m["member_id"] for m in doc["members"] if topic in m["topics"]]
        per_member = [sum(tp.topic == topic for tp in assignment[s]) for s in subscribers]
        if per_member:
            assert max(per_member) - min(per_member) <= 1


@SETTINGS
@given(
    st.sampled_from(["roundrobin", "sticky"]).flatmap(
        lambda name: group_documents(name, same_topics=True)
    )
)
def test_equal_subscriptions_balance_within_one(doc: dict[str, Any]) -> None:
    assignment = assign_consumer_group(parse_consumer_state(doc))
    sizes = [len(parts) for parts in assignment.values()]
    assert max(sizes) - min(sizes) <= 1


@SETTINGS
@given(
    st.sampled_from(["sticky", "cooperative-sticky"]).flatmap(
        lambda name: group_documents(name, owned=False)
    ),
    st.integers(1, 50),
)
def test_sticky_keeps_every_partition_when_membership_is_unchanged(
    doc: dict[str, Any], generation: int
) -> None:
    first = assign_consumer_group(parse_consumer_state(doc))
    for member in doc["members"]:
        member["owned_partitions"] = [[tp.topic, tp.partition] for tp in first[member["member_id"]]]
        member["generation"] = generation
    second = assign_consumer_group(parse_consumer_state(doc))
    assert {m: sorted(p) for m, p in second.items()} == {m: sorted(p) for m, p in first.items()}


@SETTINGS
@given(group_documents("cooperative-sticky"), st.integers(0, 3))
def test_cooperative_never_hands_a_revoked_partition_to_a_new_owner_in_the_same_round(
    doc: dict[str, Any], joiners: int
) -> None:
    all_topics = sorted(doc["topics"])
    for j in range(joiners):
        doc["members"].append(
            {"member_id": f"joiner-{j}", "topics": all_topics, "owned_partitions": []}
        )
    assignment = assign_consumer_group(parse_consumer_state(doc))
    owner = {
        TopicPartition(t, p): m["member_id"]
        for m in doc["members"]
        for t, p in m["owned_partitions"]
    }
    counts = Counter(tp for parts in assignment.values() for tp in parts)
    assert all(n == 1 for n in counts.values())
    for member, parts in assignment.items():
        for tp in parts:
            assert owner.get(tp, member) == member, f"{tp} moves from {owner[tp]} to {member}"
    # What is withheld is exactly what an owner gives up this round.
    for tp in _subscribed_partitions(doc) - set(counts):
        assert tp in owner


@st.composite
def racked_range_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A range document whose members have racks and whose partitions have replica racks."""
    doc = draw(group_documents("range", owned=False))
    racks = ["rack-a", "rack-b", "rack-c"]
    for member in doc["members"]:
        member["rack"] = draw(st.sampled_from([None, *racks]))
    doc["partition_racks"] = {
        topic: [draw(st.lists(st.sampled_from(racks), max_size=2, unique=True)) for _ in range(n)]
        for topic, n in doc["topics"].items()
    }
    return doc


@SETTINGS
@given(racked_range_documents())
def test_rack_aware_range_assigns_each_partition_once_within_topic_quotas(
    doc: dict[str, Any],
) -> None:
    _check_each_partition_once_among_subscribers(doc)
    assignment = assign_consumer_group(parse_consumer_state(doc))
    for topic, count in doc["topics"].items():
        subscribers = [m["member_id"] for m in doc["members"] if topic in m["topics"]]
        per_member = [sum(tp.topic == topic for tp in assignment[s]) for s in subscribers]
        if per_member:
            assert max(per_member) <= -(-count // len(subscribers))
            assert max(per_member) - min(per_member) <= 1
