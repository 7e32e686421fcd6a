"""Fixtures of the streams-group tests: the shared states and one JVM running Kafka's assignor."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devtools.kafka.java import JavaBatch


@pytest.fixture(scope="session")
def kafka_sticky() -> Iterator[JavaBatch]:
    """One JVM answering Kafka 4.4's ``StickyTaskAssignor`` decisions (stopped at teardown).

    A missing JDK or missing jars make the tests that use it fail with the reason.
    """
    from devtools.kafka.streams_group_harness import streams_group_harness

    with streams_group_harness(heap="-Xmx384m") as harness:
        yield harness
