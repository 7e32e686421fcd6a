"""Java's ``HashMap`` / ``HashSet`` iteration order and hash codes: the public name.

The implementation lives in the private package :mod:`streams_assign._java` with the rest of the
Java-collection emulation; this module keeps the import path other code (Kafka's consumer and
Connect assignors) relies on.
"""

from __future__ import annotations

from streams_assign._java.hash_order import (
    JavaHashMap,
    JavaHashSet,
    int32,
    java_objects_hash,
    java_string_hash_code,
    spread,
    table_size_for,
    task_hash_map,
    task_hash_set,
    task_id_hash_code,
)

__all__ = [
    "JavaHashMap",
    "JavaHashSet",
    "int32",
    "java_objects_hash",
    "java_string_hash_code",
    "spread",
    "table_size_for",
    "task_hash_map",
    "task_hash_set",
    "task_id_hash_code",
]
