"""``python -m streams_assign.schema``: regenerate the shipped JSON Schema (needs pydantic)."""

from __future__ import annotations

from pathlib import Path

from streams_assign.io import dumps_json, write_atomic
from streams_assign.schema import SCHEMA_FILE
from streams_assign.schema.model import cluster_state_schema

__all__: list[str] = []

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "data" / SCHEMA_FILE
    write_atomic(target, dumps_json(cluster_state_schema()))
    print(f"wrote {target}")
