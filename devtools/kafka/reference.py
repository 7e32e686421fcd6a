"""Kafka Streams' own classic task assignors as a live reference beside ours.

:class:`KafkaReference` compiles the Java harness of ``kafka/reference/`` against Kafka's jars
(``.kafka/lib``, Kafka 4.2.x, see ``kafka/pom.xml``) and keeps one JVM running that answers one
cluster-state document per line with Kafka's decision, in our output format:

- ``high_availability``: ``HighAvailabilityTaskAssignor`` (with ``DefaultStandbyTaskAssignor``,
  or ``ClientTagAwareStandbyTaskAssignor`` when ``rack_aware_assignment_tags`` is set; rack-aware
  strategies ``none`` / ``min_traffic`` / ``balance_subtopology`` through Kafka's
  ``RackAwareTaskAssignor``);
- ``sticky``: ``LegacyStickyTaskAssignor``; ``fallback_prior``: ``FallbackPriorTaskAssignor``;
- for clients that list ``consumers``: Kafka's ``StreamsPartitionAssignor.assignTasksToThreads``
  (three calls per client) and, when consumers list ``owned_partitions``, the cooperative
  withholding of ``addClientAssignments``.

:func:`ours` runs the same assignor of this project in-process and :func:`differences` lists
where two outputs disagree. ``docs/kafka-reference.md`` describes how the harness reaches
Kafka's internal classes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from devtools.kafka.java import JavaBatch, JavaError, classpath, compile_java
from devtools.paths import BUILD, KAFKA_SOURCES
from streams_assign.errors import StreamsAssignError, TaskAssignmentError

__all__ = [
    "HARNESS_CLASS",
    "HARNESS_SOURCES",
    "REFERENCE_ASSIGNORS",
    "KafkaAssignorException",
    "KafkaReference",
    "differences",
    "ours",
]

#: The Java sources of the harness (in Kafka's packages, see the module docstring).
HARNESS_SOURCES = KAFKA_SOURCES / "reference"
#: Where the compiled classes go (ignored by git).
HARNESS_CLASSES = BUILD / "kafka-reference"
#: The harness's main class.
HARNESS_CLASS = "org.apache.kafka.streams.processor.internals.assignment.StreamsReferenceHarness"
#: Assignor names the harness answers for (as in ``streams_assign.assignors.ASSIGNORS``).
REFERENCE_ASSIGNORS = ("high_availability", "sticky", "fallback_prior")


class KafkaAssignorException(StreamsAssignError, RuntimeError):
    """Kafka's own assignor threw on this input (the harness reports the Java exception).

    Attributes
    ----------
    java_class:
        The Java exception's class name (``java.lang.IllegalStateException``, ...).
    """

    def __init__(self, java_class: str, message: str) -> None:
        self.java_class = java_class
        super().__init__(f"{java_class}: {message}")


class KafkaReference:
    """One warm JVM running Kafka's classic Streams assignors on cluster-state documents.

    Parameters
    ----------
    jvm_args:
        JVM options (heap capped at 512 MiB by default).
    kafka_jars:
        ``"lib"`` (Kafka 4.2.x, the pinned version) or ``"lib-next"`` (Kafka Streams and clients
        4.3.x put before ``lib`` on the class path; the harness is compiled against ``lib``).

    Raises
    ------
    KafkaJarsMissingError
        When ``.kafka/lib`` holds no jar (run ``make kafka``) or no JDK is found.
    JavaError
        When the harness does not compile or its JVM dies.

    Examples
    --------
    Starting a JVM is too slow for a doctest; the tests in ``tests/reference`` run this::

        with KafkaReference() as kafka:
            kafka.assign({"stateful_tasks": ["0_0"],
                          "clients": [{"id": "00000000-0000-0000-0000-000000000001",
                                       "capacity": 1}]})["clients"]
        # {'00000000-0000-0000-0000-000000000001': {'active': ['0_0'], 'standby': []}}
    """

    def __init__(
        self,
        jvm_args: Sequence[str] = ("-Xmx512m", "-XX:+UseSerialGC"),
        kafka_jars: str = "lib",
    ) -> None:
        classes = compile_java(HARNESS_SOURCES, HARNESS_CLASSES, classpath("lib"))
        kinds = ("lib-next", "lib") if kafka_jars == "lib-next" else ("lib",)
        self._batch = JavaBatch(HARNESS_CLASS, classpath(*kinds, extra=[classes]), jvm_args)

    def __enter__(self) -> KafkaReference:
        self._batch.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the JVM (idempotent)."""
        self._batch.close()

    def timed_assign(
        self, document: Mapping[str, Any], assignor: str = "high_availability", repeat: int = 1
    ) -> tuple[dict[str, Any], list[int]]:
        """Kafka's decision on ``document``, and the time of each of ``repeat`` runs.

        Every run builds fresh ``ClientState``s (untimed) and times only the task assignor's
        ``assign()`` call, in nanoseconds (``System.nanoTime``).

        Parameters
        ----------
        document:
            A cluster-state document (``docs/scenario-format.md`` plus the extensions of
            ``docs/formats.md``).
        assignor:
            One of :data:`REFERENCE_ASSIGNORS`; run as named (no fallback selection).
        repeat:
            Number of runs; the decision of the last is returned.

        Returns
        -------
        tuple
            Kafka's output document (``probing_rebalance_needed``, per client ``active`` and
            ``standby``, per consumer ``active``/``standby`` [/``revoking``], and
            ``next_rebalance_ms`` with owned partitions) and the ``repeat`` timings in ns.

        Raises
        ------
        KafkaAssignorException
            When Kafka's assignor throws on this input.
        JavaError
            When the harness cannot read the request or its JVM fails.
        """
        answer = self._batch.request(
            {"assignor": assignor, "state": dict(document), "repeat": repeat}
        )
        if "kafka_exception" in answer:
            raise KafkaAssignorException(answer["kafka_exception"], answer.get("message", ""))
        if "error" in answer:
            raise JavaError(f"reference harness: {answer['error']}")
        return answer["result"], list(answer["nanos"])

    def assign(
        self, document: Mapping[str, Any], assignor: str = "high_availability"
    ) -> dict[str, Any]:
        """Kafka's decision on ``document`` (see :meth:`timed_assign`)."""
        return self.timed_assign(document, assignor)[0]


def ours(document: Mapping[str, Any], assignor: str = "high_availability") -> dict[str, Any]:
    """This project's decision on ``document`` with the named assignor (no fallback selection).

    As :func:`streams_assign.assignors.assign`, but the assignor runs as named, the way the harness
    runs Kafka's.

    Raises
    ------
    InvalidScenarioError
        For an invalid document.
    TaskAssignmentError
        Where Kafka's code throws too.
    """
    from streams_assign.assignors import get_assignor
    from streams_assign.formats.cluster_state import parse_cluster_state

    cluster = parse_cluster_state(json.loads(json.dumps(document)))
    result = get_assignor(assignor).assign(cluster)
    if any(client.consumers is not None for client in cluster.clients):
        from streams_assign.assignors.threads import assign_tasks_to_consumers

        result = assign_tasks_to_consumers(cluster, result)
    return result.to_json()


def differences(kafka: Mapping[str, Any], mine: Mapping[str, Any]) -> list[str]:
    """Where ``mine`` does not reproduce Kafka's output ``kafka``, one line each.

    Compared: ``probing_rebalance_needed``; the set of clients; per client ``active`` and
    ``standby`` (warmups are not told apart by Kafka); per consumer every role Kafka gives; and
    ``next_rebalance_ms`` when Kafka gives it. An empty list means identical decisions.
    """
    problems = []
    if kafka["probing_rebalance_needed"] != mine["probing_rebalance_needed"]:
        problems.append(
            f"probing_rebalance_needed: ours {mine['probing_rebalance_needed']}, "
            f"Kafka's {kafka['probing_rebalance_needed']}"
        )
    if set(kafka["clients"]) != set(mine["clients"]):
        problems.append(
            f"clients: ours {sorted(mine['clients'])}, Kafka's {sorted(kafka['clients'])}"
        )
        return problems
    for client_id, theirs in kafka["clients"].items():
        client = mine["clients"][client_id]
        for role in ("active", "standby"):
            if theirs[role] != client[role]:
                problems.append(f"{client_id}.{role}: ours {client[role]}, Kafka's {theirs[role]}")
        if "consumers" in theirs:
            consumers = client.get("consumers") or {}
            for member, roles in theirs["consumers"].items():
                for role, tasks in roles.items():
                    got = consumers.get(member, {}).get(role)
                    if got != tasks:
                        problems.append(f"{member}.{role}: ours {got}, Kafka's {tasks}")
    if "next_rebalance_ms" in kafka and kafka["next_rebalance_ms"] != mine.get("next_rebalance_ms"):
        problems.append(
            f"next_rebalance_ms: ours {mine.get('next_rebalance_ms')}, "
            f"Kafka's {kafka['next_rebalance_ms']}"
        )
    return problems


def compare_one(kafka: KafkaReference, document: Mapping[str, Any], assignor: str) -> list[str]:
    """Run both sides on ``document``; the disagreements (empty when identical).

    Both raising counts as agreement (Kafka's exception against our
    :class:`~streams_assign.errors.TaskAssignmentError`); one side raising is a disagreement.
    """
    try:
        theirs: dict[str, Any] | None = kafka.assign(document, assignor)
        their_error = None
    except KafkaAssignorException as exc:
        theirs, their_error = None, exc
    try:
        mine: dict[str, Any] | None = ours(document, assignor)
        my_error = None
    except TaskAssignmentError as exc:
        mine, my_error = None, exc
    if theirs is not None and mine is not None:
        return differences(theirs, mine)
    if theirs is None and mine is None:
        return []
    return [f"exceptions differ: ours {my_error!r}, Kafka's {their_error!r}"]
