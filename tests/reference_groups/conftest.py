"""One warm JVM of Kafka's consumer and Connect assignors for the test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devtools.kafka.groups_reference import KafkaGroupsReference


@pytest.fixture(scope="session")
def kafka_groups() -> Iterator[KafkaGroupsReference]:
    """Kafka's consumer and Connect assignors in one JVM, stopped at the end of the session.

    Fails (never skips) when Kafka's jars or a JDK are missing: the error says to run
    ``make kafka``.
    """
    with KafkaGroupsReference() as kafka:
        yield kafka
