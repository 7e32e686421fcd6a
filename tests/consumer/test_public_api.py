"""The public surface of the consumer and Connect packages is pinned."""

from __future__ import annotations

import streams_assign.connect as connect
import streams_assign.consumer as consumer


def test_consumer_all_is_pinned() -> None:
    assert sorted(consumer.__all__) == [
        "ASSIGNOR_NAMES",
        "CONSUMER_ASSIGNORS",
        "ConsumerGroupState",
        "InvalidConsumerStateError",
        "MemberSubscription",
        "TopicPartition",
        "assign_consumer_group",
        "assignment_to_json",
        "load_consumer_state",
        "parse_consumer_state",
    ]
    assert all(hasattr(consumer, name) for name in consumer.__all__)


def test_connect_all_is_pinned() -> None:
    assert sorted(connect.__all__) == [
        "ConnectRound",
        "ConnectSequence",
        "ConnectorTaskId",
        "IncrementalCooperativeAssignor",
        "InvalidConnectSequenceError",
        "RoundResult",
        "WorkerAssignment",
        "WorkerMember",
        "eager_assign",
        "load_connect_sequence",
        "parse_connect_sequence",
        "replay_connect",
        "rounds_to_json",
    ]
    assert all(hasattr(connect, name) for name in connect.__all__)


def test_input_errors_are_value_errors_of_the_project() -> None:
    from streams_assign.errors import InvalidScenarioError

    assert issubclass(consumer.InvalidConsumerStateError, InvalidScenarioError)
    assert issubclass(connect.InvalidConnectSequenceError, ValueError)
