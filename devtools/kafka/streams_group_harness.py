"""Kafka's streams-group ``StickyTaskAssignor`` (KIP-1071) in a JVM, for parity tests and timings.

The harness ``kafka/streams-group/src/.../StreamsGroupHarness.java`` reads streams-group states
(``kafka-streams-group/FORMAT.md``) one JSON document per line and answers Kafka's decision in
the same output format. It runs against ``.kafka/lib-gc`` (Kafka 4.4's group coordinator) plus
the logging and JSON jars it needs, never against the 4.2 coordinator of ``.kafka/lib``.
"""

from __future__ import annotations

from pathlib import Path

from devtools.kafka.java import (
    JavaBatch,
    KafkaJarsMissingError,
    classpath,
    compile_java,
    kafka_home,
    kafka_lib,
)
from devtools.paths import KAFKA_SOURCES

__all__ = ["HARNESS_MAIN", "harness_classpath", "streams_group_harness"]

#: The harness's main class.
HARNESS_MAIN = "io.streamsassign.harness.StreamsGroupHarness"

_SOURCES = KAFKA_SOURCES / "streams-group" / "src"
_CLASSES = KAFKA_SOURCES / "streams-group" / "build" / "classes"
#: Jars the harness needs besides the group coordinator: slf4j (Kafka's logging API) and
#: Jackson (the harness's JSON). Taken from ``lib-gc`` when ``make kafka`` put them there,
#: else from ``lib`` one by one (never the whole folder, which holds Kafka 4.2's coordinator).
_EXTRA_JARS = ("slf4j-api-", "jackson-core-", "jackson-databind-", "jackson-annotations-")


def _extra_jars() -> list[Path]:
    jars = []
    for prefix in _EXTRA_JARS:
        found = sorted(kafka_lib("lib-gc").glob(f"{prefix}*.jar"))
        if not found:
            found = sorted((kafka_home() / "lib").glob(f"{prefix}*.jar"))
        if not found:
            raise KafkaJarsMissingError(
                f"no {prefix}*.jar in {kafka_home()}/lib-gc or lib: run `make kafka`"
            )
        jars.append(found[-1])
    return jars


def harness_classpath() -> str:
    """Compile the harness if needed and return its class path (classes, lib-gc, extra jars).

    Raises
    ------
    KafkaJarsMissingError
        When the jars or a JDK are missing.
    JavaError
        When ``javac`` fails.
    """
    cp = classpath("lib-gc", extra=_extra_jars())
    compile_java(_SOURCES, _CLASSES, cp)
    return classpath("lib-gc", extra=[_CLASSES, *_extra_jars()])


def streams_group_harness(heap: str = "-Xmx512m") -> JavaBatch:
    """A :class:`JavaBatch` running Kafka 4.4's ``StickyTaskAssignor`` (use it in ``with``).

    Each request is a streams-group state document; the answer is ``{"members": ...}`` (or
    ``{"error": "TaskAssignorException: ..."}``). A request ``{"op": "time", "state": doc,
    "runs": n, "warmup": w}`` answers ``{"result": ..., "nanos": [n timings]}``.
    """
    return JavaBatch(HARNESS_MAIN, harness_classpath(), jvm_args=(heap, "-XX:+UseSerialGC"))
