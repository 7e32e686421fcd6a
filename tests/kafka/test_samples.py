"""The real tool samples of Kafka 4.2 (``tests/data/tool_samples/kafka-4.2``) read by ``lag``.

The samples were written by Kafka's own tools and Kafka Streams 4.2.1 against the application
of ``kafka/streams-app`` (``python -m devtools.kafka.samples``): three processes with
two stream threads each, twelve tasks (sub-topologies 0, 1, 2 with four partitions each).
The older hand-made style is in ``tests/corpora/tool-samples``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lag.sources.checkpoints import collect_state_dirs
from lag.sources.members import parse_members
from lag.sources.topology import parse_topology

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "tool_samples" / "kafka-4.2"
APP = "orders-app"
PROCESSES = {f"1c0ffee0-0000-4000-8000-00000000000{n}" for n in (1, 2, 3)}
SOURCE_PARTITIONS = {
    (topic, p)
    for topic in ("orders", "payments", "orders-app-orders-by-customer-repartition")
    for p in range(4)
}


@pytest.fixture(scope="module")
def samples() -> Path:
    if not (SAMPLES / "VERSION").is_file():
        pytest.fail(f"{SAMPLES} is missing: python -m devtools.kafka.samples {SAMPLES}")
    return SAMPLES


def test_samples_name_their_kafka_version(samples: Path) -> None:
    assert (samples / "VERSION").read_text().startswith("Apache Kafka 4.2.")


def test_members_verbose_gives_capacity_and_every_owned_partition(samples: Path) -> None:
    membership = parse_members((samples / "consumer-groups-members-verbose.txt").read_text(), APP)
    assert membership.errors == []
    assert membership.shows_ownership
    assert membership.capacity() == dict.fromkeys(PROCESSES, 2)
    owned = membership.owned_partitions()
    assert set().union(*owned.values()) == SOURCE_PARTITIONS
    assert sum(len(parts) for parts in owned.values()) == len(SOURCE_PARTITIONS)


def test_members_view_without_verbose_shows_no_ownership(samples: Path) -> None:
    membership = parse_members((samples / "consumer-groups-members.txt").read_text(), APP)
    assert membership.errors == []
    assert not membership.shows_ownership
    assert membership.capacity() == dict.fromkeys(PROCESSES, 2)


def test_offsets_view_owners_match_the_verbose_view(samples: Path) -> None:
    offsets_view = parse_members((samples / "consumer-groups-describe.txt").read_text(), APP)
    verbose = parse_members((samples / "consumer-groups-members-verbose.txt").read_text(), APP)
    assert offsets_view.errors == []
    assert offsets_view.owned_partitions() == verbose.owned_partitions()


def test_topology_has_two_stateful_subtopologies(samples: Path) -> None:
    topology = parse_topology((samples / "topology.txt").read_text())
    assert topology.changelog_topics(APP) == {
        "orders-app-order-totals-changelog": (1, "order-totals"),
        "orders-app-payment-counts-changelog": (2, "payment-counts"),
    }


def test_checkpoints_of_the_stopped_instance_are_within_the_end_offsets(samples: Path) -> None:
    ends = {}
    for line in (samples / "get-offsets-changelogs.txt").read_text().split():
        topic, part, offset = line.rsplit(":", 2)
        ends[(topic, int(part))] = int(offset)
    assert len(ends) == 8
    collected = collect_state_dirs([samples / "state"], APP)
    assert collected.errors == []
    assert set(collected.processes.values()) == {"1c0ffee0-0000-4000-8000-000000000001"}
    assert collected.rows, "the stopped instance wrote no checkpoint"
    for row in collected.rows:
        assert 0 <= row["offset"] <= ends[(row["topic"], row["partition"])]


def test_leader_decision_line_gives_every_task_once(samples: Path) -> None:
    from devtools.kafka.e2e import parse_decision

    line = (samples / "leader-decision.log").read_text()
    decision = parse_decision(line)
    assert decision is not None
    actives = [t for active, _ in decision.clients.values() for t in active]
    assert sorted(actives) == sorted(f"{s}_{p}" for s in range(3) for p in range(4))
    for active, standby in decision.clients.values():
        assert not set(active) & set(standby)
    assert decision.probing == ("with no followup" not in line)
