"""Shared fixtures: where the shared Kafka scenarios live."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SCENARIOS = SHARED / "scenarios"


@pytest.fixture(scope="session")
def shared_scenarios() -> Path:
    """``../shared/scenarios`` beside the repository (a test that needs it fails when absent)."""
    if not SCENARIOS.is_dir():
        pytest.fail(f"{SCENARIOS} is missing: the shared scenarios must sit beside the repository")
    return SCENARIOS


#: Fixtures that start something heavy, and the marker their tests get (``make test-fast``
#: deselects ``spark``, ``kafka`` and ``slow``): a JVM-backed Spark session, a Kafka broker.
HEAVY_FIXTURES = {"spark": "spark", "kafka_broker": "kafka"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a heavy fixture, so no test forgets its tier marker."""
    for item in items:
        for fixture, marker in HEAVY_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)
