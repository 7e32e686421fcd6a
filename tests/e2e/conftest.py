"""Fixtures of the end-to-end checks: one Spark session for ``streams-lag compute``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def e2e_spark(spark: Any) -> Iterator[Any]:
    """The session's Spark: the one ``spark`` session of the test run (``tests/conftest.py``)."""
    yield spark
