"""Java's stale ``PriorityQueue`` heap, reproduced exactly: former path.

The implementation lives in :mod:`streams_assign._java.heap`.
"""

from __future__ import annotations

from streams_assign._java.heap import (
    ExactCaughtUpClients,
    JavaClientHeap,
)

__all__ = [
    "ExactCaughtUpClients",
    "JavaClientHeap",
]
