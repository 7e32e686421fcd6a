"""Readers of the real tool outputs: Topology#describe(), kafka-consumer-groups.sh,
kafka-get-offsets.sh. The five sample files of tests/corpora/tool-samples are parsed unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from lag.sources.get_offsets import parse_get_offsets
from lag.sources.members import parse_members, parse_streams_client_id
from lag.sources.topology import parse_topology
from streams_assign.errors import LagInputError

P1 = "11111111-1111-4111-8111-111111111111"
P2 = "22222222-2222-4222-8222-222222222222"


# --- Topology#describe() -------------------------------------------------------------------


def test_wordcount_one_line_topology_has_two_subtopologies_and_the_counts_store(
    samples: Path,
) -> None:
    topology = parse_topology((samples / "topology-wordcount-tutorial.txt").read_text())

    assert sorted(topology.subtopologies) == [0, 1]
    sub0, sub1 = topology.subtopologies[0], topology.subtopologies[1]
    assert sub0.source_topics == ("streams-plaintext-input",)
    assert sub0.stores == () and not sub0.is_stateful
    assert sub0.sink_topics == ("counts-store-repartition",)
    assert sub1.source_topics == ("counts-store-repartition",)
    assert sub1.stores == ("counts-store",) and sub1.is_stateful


def test_wordcount_changelog_and_internal_source_topics_carry_the_application_id(
    samples: Path,
) -> None:
    topology = parse_topology((samples / "topology-wordcount-tutorial.txt").read_text())

    assert topology.changelog_topics("streams-wordcount") == {
        "streams-wordcount-counts-store-changelog": (1, "counts-store")
    }
    sources = topology.source_topics("streams-wordcount")
    assert sources["streams-plaintext-input"] == 0
    assert sources["streams-wordcount-counts-store-repartition"] == 1
    assert "streams-wordcount-streams-plaintext-input" not in sources


def test_naming_guide_multi_line_topology_is_one_stateless_subtopology(samples: Path) -> None:
    topology = parse_topology((samples / "topology-naming-guide.txt").read_text())

    assert list(topology.subtopologies) == [0]
    sub = topology.subtopologies[0]
    assert sub.source_topics == ("input",)
    assert sub.stores == ()
    assert sub.sink_topics == ("output",)
    assert topology.changelog_topics("app") == {}


def test_global_store_subtopologies_make_no_tasks() -> None:
    text = """Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [orders])
      --> KSTREAM-PROCESSOR-0000000001
    Processor: KSTREAM-PROCESSOR-0000000001 (stores: [orders-store])
      <-- KSTREAM-SOURCE-0000000000
  Sub-topology: 1 for global store (will not generate tasks)
    Source: KSTREAM-SOURCE-0000000002 (topics: [customers])
      --> KTABLE-SOURCE-0000000003
    Processor: KTABLE-SOURCE-0000000003 (stores: [customers-store])
      <-- KSTREAM-SOURCE-0000000002
"""
    topology = parse_topology(text)

    assert list(topology.subtopologies) == [0]
    assert topology.changelog_topics("app") == {"app-orders-store-changelog": (0, "orders-store")}


def test_multi_topic_source_and_pattern_source_are_told_apart() -> None:
    text = """Topologies:
   Sub-topology: 0
    Source: S1 (topics: [left, right])
      --> J
    Processor: J (stores: [a, b])
      <-- S1
   Sub-topology: 1
    Source: S2 (topics: events-.*)
      --> none
"""
    topology = parse_topology(text)

    assert topology.subtopologies[0].source_topics == ("left", "right")
    assert topology.subtopologies[0].stores == ("a", "b")
    assert topology.subtopologies[1].source_patterns == ("events-.*",)
    assert topology.subtopology_of_source("events-eu", "app") == 1
    assert topology.subtopology_of_source("right", "app") == 0
    assert topology.subtopology_of_source("unknown", "app") is None


def test_text_without_subtopology_is_an_input_error() -> None:
    with pytest.raises(LagInputError, match="no sub-topology"):
        parse_topology("CONSUMER-ID HOST CLIENT-ID\n", source="t.txt")


# --- kafka-consumer-groups.sh ----------------------------------------------------------------


def test_members_verbose_sample_puts_every_plain_client_id_in_the_errors_table(
    samples: Path,
) -> None:
    membership = parse_members(
        (samples / "consumer-groups-members-verbose.txt").read_text(), "app", "verbose.txt"
    )

    assert membership.members == {}
    assert membership.shows_ownership
    assert [e.line for e in membership.errors] == [2, 3, 4, 5]
    assert all(e.reason.startswith("not a Streams consumer id") for e in membership.errors)
    assert all(e.source == "verbose.txt" for e in membership.errors)
    assert membership.errors[0].raw.startswith("consumer1-3fc8d6f1")


def test_members_verbose_sample_assignments_parse_once_client_ids_are_streams_ids(
    samples: Path,
) -> None:
    text = (samples / "consumer-groups-members-verbose.txt").read_text()
    for n, pid in ((1, P1), (2, P1), (3, P2), (4, P2)):
        text = text.replace(f"consumer{n}       ", f"app-{pid}-StreamThread-{n}-consumer ")
    membership = parse_members(text, "app")

    assert membership.errors == []
    owned = {m.member_id.split("-")[0]: m.owned for m in membership.members.values()}
    assert owned == {
        "consumer1": (("topic1", 0), ("topic2", 0)),
        "consumer2": (("topic2", 1), ("topic3", 0), ("topic3", 1)),
        "consumer3": (),
        "consumer4": (("topic3", 2),),
    }
    assert membership.capacity() == {P1: 2, P2: 2}


def test_members_sample_without_verbose_reads_the_html_tail_as_a_bad_count(samples: Path) -> None:
    membership = parse_members((samples / "consumer-groups-members.txt").read_text(), "app")

    assert not membership.shows_ownership
    reasons = {e.line: e.reason.split(":")[0] for e in membership.errors}
    assert reasons == {
        2: "not a Streams consumer id",
        3: "not a Streams consumer id",
        4: "not a Streams consumer id",
        5: "non-numeric #PARTITIONS",
    }


def test_offsets_view_sample_has_one_error_per_partition_line(samples: Path) -> None:
    membership = parse_members((samples / "consumer-groups-describe.txt").read_text(), "app")

    assert membership.shows_ownership
    assert [e.line for e in membership.errors] == [2, 3, 4, 5, 6, 7]
    assert {e.reason.split(":")[0] for e in membership.errors} == {"not a Streams consumer id"}


def test_offsets_view_with_group_column_collects_partitions_per_member() -> None:
    cid = f"app-{P1}-StreamThread-1-consumer"
    text = (
        "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n"
        f"app   in    0         10             12             2   {cid}-m1    /h   {cid}\n"
        f"app   in    3         -              12             -   {cid}-m1    /h   {cid}\n"
        "app   in    1         5              12             7   -           -    -\n"
    )
    membership = parse_members(text, "app")

    assert membership.errors == []
    assert membership.members[f"{cid}-m1"].owned == (("in", 0), ("in", 3))
    assert membership.capacity() == {P1: 1}


def test_malformed_member_lines_are_errors_with_line_numbers() -> None:
    cid = f"app-{P1}-StreamThread-1-consumer"
    other_app = f"billing-{P1}-StreamThread-2-consumer"
    text = (
        "some preamble line\n"
        "CONSUMER-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT\n"
        f"{cid}-a /h {cid}\n"
        f"{cid}-b /h {cid} 2 in(0\n"
        f"{cid}-c /h {cid} 3 in(0,1)\n"
        f"{other_app}-d /h {other_app} 0 -\n"
        f"{cid}-e /h {cid} 1 in(4)\n"
    )
    membership = parse_members(text, "app", "m.txt")

    reasons = {e.line: e.reason.split(":")[0] for e in membership.errors}
    assert reasons == {
        1: "not a consumer-groups line",
        3: "wrong field count",
        4: "malformed ASSIGNMENT",
        5: "count mismatch",
        6: "not a Streams consumer id",
    }
    assert list(membership.members) == [f"{cid}-e"]


def test_streams_client_id_gives_process_and_thread() -> None:
    assert parse_streams_client_id(f"my-app-{P2.upper()}-StreamThread-12-consumer", "my-app") == (
        P2,
        12,
    )
    assert parse_streams_client_id(f"my-app-{P2}-StreamThread-1-consumer", "other") is None
    assert parse_streams_client_id(f"my-app-{P2}-StreamThread-1-restore-consumer", None) is None
    assert parse_streams_client_id("consumer1", None) is None


# --- kafka-get-offsets.sh --------------------------------------------------------------------


def test_get_offsets_lines_and_their_errors() -> None:
    text = (
        "a-changelog:0:100\n\na-changelog:1:0\nbroken line\nb:x:5\nb:1:-3\n"
        "a-changelog:0:7\nc:0:1:2\n"
    )
    offsets, errors = parse_get_offsets(text, "e.txt")

    assert [(o.topic, o.partition, o.offset, o.line) for o in offsets] == [
        ("a-changelog", 0, 100, 1),
        ("a-changelog", 1, 0, 3),
    ]
    assert {e.line: e.reason.split(":")[0] for e in errors} == {
        4: "wrong field count",
        5: "non-numeric partition or offset",
        6: "non-numeric partition or offset",
        7: "duplicate partition",
        8: "wrong field count",
    }
    assert all(e.source == "e.txt" for e in errors)
