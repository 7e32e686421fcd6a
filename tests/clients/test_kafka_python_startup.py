"""kafka-python start-up: members join only once the source topics are in their metadata.

kafka-python 3.0.x strands a member when a rebalance started by the leader's metadata snapshot
(``ConsumerCoordinator.need_rejoin``: the snapshot changed after the leader's assignment) is
still in flight while ``poll`` gives up waiting for it (``docs/clients.md``, "A member that
stopped following the group"). :func:`subscribe_with_metadata` removes that rebalance from the
start-up: the snapshot is complete before the first JoinGroup.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from streams_assign.clients.core import StreamsProcess
from streams_assign.clients.kafka_python_adapter import (
    KafkaPythonStreamsAssignor,
    subscribe_with_metadata,
)
from streams_assign.clients.topology import Topology
from streams_assign.errors import MissingSourceTopicError
from streams_assign.model import Subtopology

PARTITIONS = 12


class ScriptedConsumer:
    """The four ``KafkaConsumer`` calls the helper makes, answering from a script."""

    def __init__(self, answers: list[set[int] | Exception | None]) -> None:
        self.answers = answers
        self.subscribed: tuple[list[str], Any] | None = None
        self.fetches = 0
        self.calls: list[str] = []
        self.config = {"bootstrap_servers": "127.0.0.1:9"}

    def subscribe(self, topics: list[str], listener: Any = None) -> None:
        self.calls.append("subscribe")
        self.subscribed = (topics, listener)

    def topics(self) -> set[str]:
        self.calls.append("fetch")
        self.fetches += 1
        answer = self.answers[min(self.fetches, len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return set()

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        answer = self.answers[min(self.fetches, len(self.answers)) - 1]
        return None if isinstance(answer, Exception) else answer


def test_subscribe_with_metadata_subscribes_then_waits_for_partitions() -> None:
    consumer = ScriptedConsumer([None, set(), {0, 1, 2}])
    listener = object()
    counts = subscribe_with_metadata(consumer, ["orders", "orders"], listener=listener)
    assert counts == {"orders": 3}
    assert consumer.subscribed == (["orders"], listener)
    assert consumer.calls == ["subscribe", "fetch", "fetch", "fetch"]  # fetches after subscribing


def test_subscribe_with_metadata_retries_while_the_topic_is_unknown() -> None:
    from kafka.errors import UnknownTopicOrPartitionError

    consumer = ScriptedConsumer([UnknownTopicOrPartitionError("orders"), {0, 1}])
    assert subscribe_with_metadata(consumer, ["orders"]) == {"orders": 2}
    assert consumer.fetches == 2


def test_subscribe_with_metadata_raises_a_fatal_client_error() -> None:
    from kafka.errors import TopicAuthorizationFailedError

    consumer = ScriptedConsumer([TopicAuthorizationFailedError("orders")])
    with pytest.raises(TopicAuthorizationFailedError):
        subscribe_with_metadata(consumer, ["orders"])


def test_subscribe_with_metadata_names_a_missing_topic() -> None:
    consumer = ScriptedConsumer([None])
    with pytest.raises(MissingSourceTopicError, match=r"\['orders'\].*127\.0\.0\.1:9"):
        subscribe_with_metadata(consumer, ["orders"], timeout_s=0.3)
    assert consumer.subscribed == (["orders"], None)


@pytest.fixture
def input_topic(kafka_broker: Any) -> Iterator[str]:
    from kafka.admin import KafkaAdminClient, NewTopic

    topic = f"startup-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
        yield topic
        admin.delete_topics([topic])
    finally:
        admin.close()


def _streams_consumer(
    kafka_broker: Any, input_topic: str, **configs: Any
) -> tuple[Topology, KafkaPythonStreamsAssignor, Any]:
    """A kafka-python consumer of ``<topic>-app`` with our assignor for a one-subtopology
    topology over ``input_topic``; returns (topology, assignor, consumer)."""
    from kafka import KafkaConsumer

    topology = Topology((Subtopology(0, (input_topic,)),))
    assignor = KafkaPythonStreamsAssignor(StreamsProcess(topology))
    consumer = KafkaConsumer(
        bootstrap_servers=kafka_broker.bootstrap_servers,
        group_id=f"{input_topic}-app",
        enable_auto_commit=False,
        session_timeout_ms=10_000,
        heartbeat_interval_ms=1_000,
        partition_assignment_strategy=[assignor],
        **configs,
    )
    return topology, assignor, consumer


def test_leader_snapshot_is_complete_before_the_first_join(
    kafka_broker: Any, input_topic: str
) -> None:
    """The leader's first assignment covers every partition and leaves no rebalance pending."""
    topology, assignor, consumer = _streams_consumer(kafka_broker, input_topic)
    try:
        assert subscribe_with_metadata(consumer, topology.source_topics) == {
            input_topic: PARTITIONS
        }
        # What ConsumerCoordinator compares with the leader's assignment snapshot: complete
        # now, so no metadata-driven rebalance can follow the first assignment.
        assert consumer._coordinator._metadata_snapshot == {input_topic: set(range(PARTITIONS))}
        deadline = time.monotonic() + 120
        while not consumer.assignment():
            if time.monotonic() > deadline:
                pytest.fail(f"the consumer got no assignment from {input_topic}-app in 120 s")
            consumer.poll(timeout_ms=200)
        assert {tp.partition for tp in consumer.assignment()} == set(range(PARTITIONS))
        assert not consumer._coordinator.need_rejoin()
    finally:
        consumer.close()


def test_member_finishes_a_metadata_rebalance_that_completed_between_polls(
    kafka_broker: Any, input_topic: str
) -> None:
    """The leader's own metadata starts a rebalance whose round completes while the app is not
    polling: kafka-python 3.0.12 alone would then consider the rejoin done and leave the round
    unfinished (no new assignment, no heartbeats); the attached assignor keeps it pending, so
    the next poll completes the round and the member gets the new partitions."""
    from kafka.admin import KafkaAdminClient, NewPartitions

    # metadata_max_age_ms: the leader sees the new partitions quickly.
    topology, assignor, consumer = _streams_consumer(
        kafka_broker, input_topic, metadata_max_age_ms=500
    )
    admin = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap_servers)

    def poll_until(what: str, condition: Any) -> None:
        deadline = time.monotonic() + 120
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not happen in 120 s (generation {assignor.generation})")
            consumer.poll(timeout_ms=200)

    try:
        subscribe_with_metadata(consumer, topology.source_topics)
        poll_until("the first assignment", lambda: len(consumer.assignment()) == PARTITIONS)
        admin.create_partitions({input_topic: NewPartitions(2 * PARTITIONS)})
        deadline = time.monotonic() + 120
        while not consumer._coordinator.need_rejoin():  # the snapshot saw the new partitions
            if time.monotonic() > deadline:
                pytest.fail("the leader's metadata never showed the added partitions")
            time.sleep(0.1)
        generation = assignor.generation
        coordinator = consumer._coordinator
        while coordinator._join_task is None:  # the JoinGroup went out; poll stopped waiting
            if time.monotonic() > deadline:
                pytest.fail("the consumer never sent the JoinGroup of the new rebalance")
            consumer.poll(timeout_ms=0)
        # Not polling while the single-member round (JoinGroup, the leader's assignment, which
        # refreshes its snapshot, SyncGroup) completes in the client's IO thread.
        while not coordinator._join_task.is_done:
            if time.monotonic() > deadline:
                pytest.fail("the JoinGroup/SyncGroup round did not complete")
            time.sleep(0.05)
        poll_until(
            "the rejoin with the added partitions",
            lambda: len(consumer.assignment()) == 2 * PARTITIONS,
        )
        assert assignor.generation > generation
        assert not consumer._coordinator.need_rejoin()
    finally:
        admin.close()
        consumer.close()


def test_member_applies_a_round_that_completed_between_polls(
    kafka_broker: Any, input_topic: str
) -> None:
    """A JoinGroup/SyncGroup round that completed in the client's IO thread while no ``poll``
    waited for it is applied by the next ``poll``, not replaced by a new JoinGroup.

    This is how a new group leader after a failover lost its assignment: ``poll(timeout_ms=200)``
    stopped waiting while the broker held its JoinGroup, the round (its own assignment, then
    SyncGroup) completed before the app polled again, and kafka-python 3.0.12 then sent a new
    JoinGroup and never applied the assignment it had computed. Here ``poll(timeout_ms=0)``
    never waits, so every round completes between polls.
    """
    topology, assignor, consumer = _streams_consumer(kafka_broker, input_topic)
    coordinator = consumer._coordinator
    try:
        subscribe_with_metadata(consumer, topology.source_topics)
        deadline = time.monotonic() + 120
        while True:
            if time.monotonic() > deadline:
                pytest.fail(f"no JoinGroup/SyncGroup round of {input_topic}-app succeeded in 120 s")
            round_ = coordinator._join_task
            if round_ is not None and round_.is_done and round_.succeeded():
                break
            if round_ is None or round_.is_done:  # none sent yet, or one that failed
                consumer.poll(timeout_ms=0)  # sends a JoinGroup; does not wait for it
            time.sleep(0.05)
        generation = coordinator._generation.generation_id
        assert assignor.generation == -1  # the round's assignment is not applied yet
        consumer.poll(timeout_ms=0)
        assert assignor.generation == generation
        assert {tp.partition for tp in consumer.assignment()} == set(range(PARTITIONS))
        assert coordinator._join_task is None  # no new JoinGroup was sent
        assert not coordinator.need_rejoin()
    finally:
        consumer.close()
