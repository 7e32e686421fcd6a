"""The JSON Schema of the cluster-state format, shipped as
``streams_assign/data/cluster-state.schema.json`` (generated from
:mod:`streams_assign.schema.model` with pydantic; a test checks the shipped file is current).

Editors and CI can validate a state file against it before running anything; the project's own
validation (:func:`streams_assign.scenario.parse_cluster_state`) checks the cross-field rules
the schema cannot express.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["SCHEMA_FILE", "load_schema"]

#: The shipped schema's file name inside ``streams_assign/data``.
SCHEMA_FILE = "cluster-state.schema.json"


def load_schema() -> dict[str, Any]:
    """The shipped JSON Schema of the cluster-state document (no pydantic needed)."""
    text = resources.files("streams_assign").joinpath("data", SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
