"""One warm JVM of Kafka's own assignors for the whole test session (``make kafka`` first)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devtools.kafka.reference import KafkaReference


@pytest.fixture(scope="session")
def kafka_reference() -> Iterator[KafkaReference]:
    """Kafka 4.2's classic Streams assignors in one JVM, stopped at the end of the session.

    Fails (never skips) when Kafka's jars or a JDK are missing: the error says to run
    ``make kafka``.
    """
    with KafkaReference(jvm_args=("-Xmx384m", "-XX:+UseSerialGC")) as kafka:
        yield kafka
