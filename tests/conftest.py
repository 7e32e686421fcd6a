"""Shared fixtures: where the shared Kafka scenarios live."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SCENARIOS = SHARED / "scenarios"


@pytest.fixture(scope="session")
def shared_scenarios() -> Path:
    """``../shared/scenarios`` beside the repository (skips when absent)."""
    if not SCENARIOS.is_dir():
        pytest.skip("../shared/scenarios is not present beside the repository")
    return SCENARIOS


@pytest.fixture(scope="session")
def kafka_broker(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """One real Kafka broker (KRaft, loopback) shared by every ``kafka`` test of the session.

    FAILS (never skips) with the reason when Kafka's jars or a JDK are missing (``make kafka``
    fetches them from Maven Central). Stopped at the end of the session; its logs are kept, and
    their folder printed, when a test failed.
    """
    from streams_assign.testing.java import KafkaJarsMissingError
    from streams_assign.testing.kafka import KafkaBroker

    broker = KafkaBroker()
    try:
        broker.start()
    except KafkaJarsMissingError as exc:
        pytest.fail(f"the kafka tests need Apache Kafka's jars: {exc}", pytrace=False)
    try:
        yield broker
    finally:
        kept = broker.stop(keep_logs=request.session.testsfailed > 0)
        if kept is not None:
            print(f"\nKafka broker logs kept in {kept / 'logs'}")
