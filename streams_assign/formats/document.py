"""Either input document, told apart by its fields: a cluster state or a streams-group state."""

from __future__ import annotations

import json
from pathlib import Path

from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.formats.streams_group import is_streams_group_document, loads_streams_group
from streams_assign.model import ClusterState
from streams_assign.streams_group import StreamsGroupState

__all__ = ["load_document"]


def load_document(path: str | Path) -> ClusterState | StreamsGroupState:
    """Read either input format, told apart by its fields.

    A document with ``members`` and ``topology`` is a streams-group state
    (:mod:`streams_assign.streams_group`); anything else is read as a classic cluster state.

    Raises
    ------
    InvalidScenarioError
        For invalid input (``InvalidStreamsGroupError`` for streams-group states).
    OSError
        When the file cannot be read.
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        document = None
    if is_streams_group_document(document):
        # Like load_cluster_state, the message starts at the JSON path; callers name the file.
        return loads_streams_group(text)
    return load_cluster_state(path)
