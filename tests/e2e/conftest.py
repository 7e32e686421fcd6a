"""Fixtures of the end-to-end checks: one Spark session for ``streams-lag compute``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def e2e_spark() -> Iterator[Any]:
    """The session's Spark (``local[2]``; the same JVM as the lag tests' when both run)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from lag.spark import get_spark

    session = get_spark("local[2]", app_name="streams-assign-e2e", driver_memory="512m")
    yield session
