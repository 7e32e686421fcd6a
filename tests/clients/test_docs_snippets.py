"""Every ```python block of ``docs/clients.md`` runs against the real broker.

Each block runs as it is in a fresh interpreter (its own working directory), after the prelude
the page documents under "Running the snippets": ``bootstrap`` set to the test broker, the
topics created and a few records in ``orders`` and ``payments``. A block that raises, or whose
background task or thread dies with a traceback, fails its test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "clients.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
#: The topics the page's prelude names, 4 partitions each.
TOPICS = (
    "orders",
    "payments",
    "app-totals-changelog",
    "totals-changelog",
    "totals-sync-changelog",
)
PARTITIONS = 4


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a Markdown text, in order (other blocks are left out)."""
    return [match.group(1) for match in BLOCK.finditer(text)]


BLOCKS = python_blocks(PAGE.read_text(encoding="utf-8"))


def test_extractor_takes_python_blocks_only() -> None:
    text = "a\n```python\nx = 1\n```\n```text\nno\n```\n```python\ny = 2\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = 2\n"]


def test_the_page_has_its_snippets() -> None:
    assert len(BLOCKS) >= 5


@pytest.fixture(scope="module")
def prelude(kafka_broker: Any) -> str:
    """Create the page's topics, put records in the sources; the code set before each block."""
    from kafka.admin import KafkaAdminClient, NewTopic

    from kafka import KafkaProducer

    bootstrap = kafka_broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in TOPICS])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        for i in range(40):
            topic = ("orders", "payments")[i % 2]
            producer.send(topic, key=f"c{i % 8}".encode(), value=str(i).encode())
        producer.flush()
    finally:
        producer.close()
    return f"bootstrap = {bootstrap!r}\n"


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_snippet_runs(index: int, prelude: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", prelude + BLOCKS[index]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    output = (
        f"--- block {index}:\n{BLOCKS[index]}\n--- stdout:\n{result.stdout}\n"
        f"--- stderr:\n{result.stderr}"
    )
    assert result.returncode == 0, output
    assert "Traceback" not in result.stderr, output
    assert "never retrieved" not in result.stderr, output
