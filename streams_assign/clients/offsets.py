"""Changelog end offsets for the leader, fetched as Kafka's leader does with ``listOffsets``.

The leader's ``assign`` runs synchronously inside the client's rebalance (for aiokafka inside
its event loop, where nothing can be awaited), so :class:`KafkaEndOffsets` asks a kafka-python
consumer without a group on a thread of its own and waits for the answer with a time limit.
A failure or time-out gives ``None``: the leader then treats every lag as unknown and runs
Kafka's ``FallbackPriorTaskAssignor``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from streams_assign.model import TopicPartition

__all__ = [
    "KafkaEndOffsets",
]


log = logging.getLogger(__name__)


class KafkaEndOffsets:
    """Callable fetching the latest offsets (records) of changelog partitions.

    Parameters
    ----------
    bootstrap_servers:
        The cluster's bootstrap servers.
    timeout_s:
        Longest wait for one fetch, in seconds.
    **config:
        More kafka-python ``KafkaConsumer`` settings (security and so on).

    Notes
    -----
    Kafka's ``StreamsPartitionAssignor.computeEndOffsetSumsByTask`` uses the admin client's
    ``listOffsets(OffsetSpec.latest())``; ``KafkaConsumer.end_offsets`` sends the same
    ``ListOffsets`` request.
    """

    def __init__(self, bootstrap_servers: str, timeout_s: float = 10.0, **config: Any) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.timeout_s = timeout_s
        self.config = config
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="end-offsets")
        self._consumer: Any = None

    def _fetch(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        from kafka.consumer.group import KafkaConsumer
        from kafka.structs import TopicPartition as KafkaPartition

        if self._consumer is None:
            self._consumer = KafkaConsumer(
                bootstrap_servers=self.bootstrap_servers,
                enable_auto_commit=False,
                request_timeout_ms=int(self.timeout_s * 1000),
                **self.config,
            )
        answer = self._consumer.end_offsets(
            [KafkaPartition(t, p) for t, p in partitions], timeout_ms=int(self.timeout_s * 1000)
        )
        return {(tp.topic, tp.partition): int(offset) for tp, offset in answer.items()}

    def __call__(self, partitions: list[TopicPartition]) -> Mapping[TopicPartition, int] | None:
        """End offsets of ``partitions``, or ``None`` when the fetch fails or times out."""
        try:
            return self._pool.submit(self._fetch, partitions).result(self.timeout_s + 5)
        except Exception as exc:  # noqa: BLE001 - unknown lags are the documented fallback
            log.warning("changelog end offsets could not be fetched: %r", exc)
            return None

    def close(self) -> None:
        """Close the consumer and its thread."""

        def close_consumer() -> None:
            if self._consumer is not None:
                self._consumer.close()
                self._consumer = None

        try:
            self._pool.submit(close_consumer).result(self.timeout_s)
        finally:
            self._pool.shutdown(wait=False)
