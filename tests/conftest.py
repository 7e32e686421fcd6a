"""Shared fixtures: where the shared Kafka scenarios live."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SCENARIOS = SHARED / "scenarios"

# Hypothesis profiles of the test tiers (tests/tiers.py): "full" is hypothesis' defaults (make
# test, CI); "fast" draws fewer examples (make test-fast passes --hypothesis-profile=fast).
settings.register_profile("full", settings())
settings.register_profile("fast", max_examples=20)


@pytest.fixture(scope="session")
def shared_scenarios() -> Path:
    """``../shared/scenarios`` beside the repository (a test that needs it fails when absent)."""
    if not SCENARIOS.is_dir():
        pytest.fail(f"{SCENARIOS} is missing: the shared scenarios must sit beside the repository")
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


#: Fixtures that start something heavy, and the marker their tests get (``make test-fast``
#: deselects ``spark``, ``kafka`` and ``slow``): a JVM-backed Spark session, a Kafka broker, and
#: the JVMs that run Kafka's own assignors on Kafka's jars (``kafka_reference``: the classic
#: Streams assignors, ``kafka_groups``: consumer and Connect assignors, ``kafka_sticky``: the
#: KIP-1071 ``StickyTaskAssignor``). ``make test-fast`` needs neither a JDK nor ``.kafka``.
HEAVY_FIXTURES = {
    "spark": "spark",
    "kafka_broker": "kafka",
    "kafka_reference": "kafka",
    "kafka_groups": "kafka",
    "kafka_sticky": "kafka",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a heavy fixture, so no test forgets its tier marker."""
    for item in items:
        for fixture, marker in HEAVY_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)
