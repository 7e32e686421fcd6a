"""The kafka-python adapter retries a group coordinator lookup that failed on a retriable error.

kafka-python 3.0.12 lets the ``KafkaConnectionError`` of a failed metadata refresh escape
``ensure_coordinator_ready_async`` (and so ``KafkaConsumer.poll``) while the broker restarts;
``tests/clients/test_faults.py`` shows it on a real broker. Here, on a stand-in coordinator.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.errors import GroupAuthorizationFailedError, KafkaConnectionError

from streams_assign.clients.kafka_python_adapter import _retry_coordinator_lookups


class Coordinator:
    """The parts of kafka-python's coordinator the wrapper touches; the lookup raises."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.calls = 0
        self.slept: list[float] = []
        self.config = {"retry_backoff_ms": 100}

        async def sleep(seconds: float) -> None:
            self.slept.append(seconds)

        self._manager = SimpleNamespace(_net=SimpleNamespace(sleep=sleep))

    async def ensure_coordinator_ready_async(self, timeout_ms: Any = None) -> bool:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return True


def test_a_connection_error_backs_off_and_reports_not_ready() -> None:
    coordinator = Coordinator(KafkaConnectionError("111 ECONNREFUSED"))
    _retry_coordinator_lookups(coordinator)
    assert asyncio.run(coordinator.ensure_coordinator_ready_async(timeout_ms=200)) is False
    assert coordinator.slept == [0.1]


def test_a_found_coordinator_is_reported_ready() -> None:
    coordinator = Coordinator(None)
    _retry_coordinator_lookups(coordinator)
    assert asyncio.run(coordinator.ensure_coordinator_ready_async(timeout_ms=200)) is True


def test_a_non_retriable_error_still_raises() -> None:
    coordinator = Coordinator(GroupAuthorizationFailedError())
    _retry_coordinator_lookups(coordinator)
    with pytest.raises(GroupAuthorizationFailedError):
        asyncio.run(coordinator.ensure_coordinator_ready_async())


def test_wrapping_twice_wraps_once() -> None:
    coordinator = Coordinator(KafkaConnectionError("down"))
    _retry_coordinator_lookups(coordinator)
    wrapped = coordinator.ensure_coordinator_ready_async
    _retry_coordinator_lookups(coordinator)
    assert coordinator.ensure_coordinator_ready_async is wrapped
