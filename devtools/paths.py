"""Where the repository's files are: every devtools module finds the checkout through :data:`REPO`.

The tooling runs from a checkout only (it is not installed), so the repository root is the
folder above this package.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["BUILD", "CORPORA", "KAFKA_SOURCES", "REPO"]

#: The repository root (the folder holding ``pyproject.toml``).
REPO = Path(__file__).resolve().parents[1]
#: The Java sources of the harnesses and of the Streams app (``kafka/``).
KAFKA_SOURCES = REPO / "kafka"
#: Compiled classes of the harnesses and the Streams app (ignored by git).
BUILD = REPO / "build"
#: Kafka's recorded decisions the tests and benchmarks compare with, one folder per corpus
#: (``kafka-diff``, ``kafka-ext``, ``kafka-consumer``, ``kafka-connect``, ``kafka-group``,
#: ``kafka-streams-group``); ``tests/corpora/PROVENANCE.md`` says how each was made.
CORPORA = REPO / "tests" / "corpora"
