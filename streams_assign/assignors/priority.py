"""Kafka's priority queues (``ConstrainedPrioritySet``, Java ``PriorityQueue``): former path.

The implementation lives in :mod:`streams_assign._java.priority`.
"""

from __future__ import annotations

from streams_assign._java.priority import (
    ConstrainedPrioritySet,
    JavaPriorityQueue,
    KafkaLiteralPrioritySet,
    PrioritySet,
    java_hash_set_order,
)

__all__ = [
    "ConstrainedPrioritySet",
    "JavaPriorityQueue",
    "KafkaLiteralPrioritySet",
    "PrioritySet",
    "java_hash_set_order",
]
