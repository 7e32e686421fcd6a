"""Kafka's consumer and Connect assignors as a live reference beside ours.

:class:`KafkaGroupsReference` compiles the Java harness of ``kafka/reference-groups/`` against
Kafka's jars (``.kafka/lib``: ``kafka-clients`` and ``connect-runtime`` of the pinned version,
see ``kafka/pom.xml``) and keeps one JVM running that answers one document per line:

- :meth:`KafkaGroupsReference.consumer`: a consumer-group state (``kafka-consumer`` format) ->
  Kafka's ``RangeAssignor`` / ``RoundRobinAssignor`` / ``StickyAssignor`` /
  ``CooperativeStickyAssignor`` decision, as the expected-file document;
- :meth:`KafkaGroupsReference.connect`: a Connect sequence -> Connect's ``EagerAssignor`` or one
  leader's ``IncrementalCooperativeAssignor`` round by round, as the expected-file document
  without the ``debug`` diagnostics.

:func:`explicit_sequence` writes every per-round default of a sequence out (so the Java side
needs no defaults of its own); :func:`random_consumer_state` and :func:`random_connect_sequence`
draw seeded random inputs for the differential tests.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from devtools.kafka.java import JavaBatch, JavaError, classpath, compile_java
from devtools.paths import BUILD, KAFKA_SOURCES
from streams_assign.connect.model import ConnectSequence
from streams_assign.errors import StreamsAssignError

__all__ = [
    "GROUPS_HARNESS_CLASS",
    "KafkaGroupsReference",
    "KafkaGroupsException",
    "explicit_sequence",
    "random_connect_sequence",
    "random_consumer_state",
]

#: Java sources of the harness (in Connect's package, to build the leader's coordinator).
GROUPS_HARNESS_SOURCES = KAFKA_SOURCES / "reference-groups"
#: Where the compiled classes go (ignored by git).
GROUPS_HARNESS_CLASSES = BUILD / "kafka-reference-groups"
#: The harness's main class.
GROUPS_HARNESS_CLASS = "org.apache.kafka.connect.runtime.distributed.GroupAssignorsHarness"


class KafkaGroupsException(StreamsAssignError, RuntimeError):
    """Kafka's own assignor threw on this input (the Java exception's class and message)."""

    def __init__(self, java_class: str, message: str) -> None:
        self.java_class = java_class
        super().__init__(f"{java_class}: {message}")


class KafkaGroupsReference:
    """One warm JVM running Kafka's consumer and Connect assignors.

    Parameters
    ----------
    jvm_args:
        JVM options (heap capped at 384 MiB by default).

    Raises
    ------
    KafkaJarsMissingError
        When ``.kafka/lib`` holds no jar (run ``make kafka``) or no JDK is found.
    JavaError
        When the harness does not compile, its JVM dies, or it rejects a request.
    """

    def __init__(self, jvm_args: Sequence[str] = ("-Xmx384m", "-XX:+UseSerialGC")) -> None:
        cp = classpath("lib")
        classes = compile_java(GROUPS_HARNESS_SOURCES, GROUPS_HARNESS_CLASSES, cp)
        self._batch = JavaBatch(GROUPS_HARNESS_CLASS, classpath("lib", extra=[classes]), jvm_args)

    def __enter__(self) -> KafkaGroupsReference:
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

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = self._batch.request(request)
        if "kafka_exception" in answer:
            raise KafkaGroupsException(answer["kafka_exception"], answer.get("message", ""))
        if "error" in answer or "result" not in answer:
            raise JavaError(f"the harness rejected the request: {answer}")
        result: dict[str, Any] = answer["result"]
        return result

    def consumer(self, state: dict[str, Any]) -> dict[str, Any]:
        """Kafka's decision on a consumer-group state document: ``{"assignment": {...}}``.

        Raises
        ------
        KafkaGroupsException
            Kafka's assignor threw (for example ``IllegalStateException``).
        """
        return self._ask({"kind": "consumer", "state": state})

    def connect(self, sequence: ConnectSequence) -> dict[str, Any]:
        """Kafka's decisions on every round of a Connect sequence: ``{"rounds": [...]}``
        (the expected-file document without ``debug``)."""
        return self._ask({"kind": "connect", "sequence": explicit_sequence(sequence)})


def explicit_sequence(sequence: ConnectSequence) -> dict[str, Any]:
    """The sequence as a document with every per-round field written out (no defaults)."""
    return {
        "assignor": sequence.assignor,
        "protocol": sequence.protocol,
        "scheduled_rebalance_max_delay_ms": sequence.scheduled_rebalance_max_delay_ms,
        "rounds": [
            {
                "time_ms": r.time_ms,
                "leader": r.leader,
                "connectors": r.connectors,
                "config_offset": r.config_offset,
                "generation": r.generation,
                "last_completed_generation": r.last_completed_generation,
                "members": [
                    {
                        "worker_id": m.worker_id,
                        "url": m.url,
                        "owned_connectors": list(m.owned_connectors),
                        "owned_tasks": [[t.connector, t.task] for t in m.owned_tasks],
                    }
                    for m in r.members
                ],
            }
            for r in sequence.rounds
        ],
    }


def _member_id(rng: random.Random, index: int) -> str:
    return f"consumer-{rng.randrange(100)}-{rng.getrandbits(32):08x}-{index}"


def random_consumer_state(rng: random.Random, assignor: str) -> dict[str, Any]:
    """A random consumer-group state: 1-5 topics of 0-12 partitions, 1-9 members (some static,
    some with racks), subscriptions equal or not, prior ownership with generations, claims in
    conflict, stale topics and partitions now and then; for ``range``, replica racks per
    partition half of the time (rack-aware range).

    Parameters
    ----------
    rng:
        The seeded source of randomness.
    assignor:
        ``range``, ``roundrobin``, ``sticky`` or ``cooperative-sticky``.
    """
    topics = {f"t{i}": rng.randrange(13) for i in range(rng.randint(1, 5))}
    names = sorted(topics)
    same = rng.random() < 0.5
    common = rng.sample(names, rng.randint(1, len(names)))
    members: list[dict[str, Any]] = []
    for index in range(rng.randint(1, 9)):
        subscribed = common if same else rng.sample(names, rng.randint(1, len(names)))
        if rng.random() < 0.1:
            subscribed = [*subscribed, "gone"]  # a topic without metadata
        members.append(
            {
                "member_id": _member_id(rng, index),
                "group_instance_id": f"instance-{rng.randrange(50)}-{index}"
                if rng.random() < 0.3
                else None,
                "topics": list(subscribed),
                "owned_partitions": [],
                "generation": None,
                "rack": rng.choice([None, "rack-a", "rack-b"]),
            }
        )
    generations = [rng.randint(1, 6) for _ in members]
    for topic, count in topics.items():
        for p in range(count):
            holders = [i for i, m in enumerate(members) if topic in m["topics"]]
            if holders and rng.random() < 0.7:
                owner = rng.choice(holders)
                members[owner]["owned_partitions"].append([topic, p])
                if rng.random() < 0.08:  # a stale double claim
                    members[rng.choice(holders)]["owned_partitions"].append([topic, p])
    for i, member in enumerate(members):
        if member["owned_partitions"] or rng.random() < 0.5:
            member["generation"] = generations[i]
        else:
            member["owned_partitions"] = []
        if member["generation"] is not None and rng.random() < 0.05:
            member["owned_partitions"].append(["gone", 0])
        if (
            member["generation"] is not None
            and member["topics"][0] in topics
            and rng.random() < 0.05
        ):
            # a partition of a topic that since shrank (Kafka keeps such owned partitions)
            member["owned_partitions"].append(
                [member["topics"][0], topics[member["topics"][0]] + 1]
            )
        member["owned_partitions"] = sorted({(t, p) for t, p in member["owned_partitions"]})
        member["owned_partitions"] = [list(tp) for tp in member["owned_partitions"]]
    doc: dict[str, Any] = {"assignor": assignor, "topics": topics, "members": members}
    if assignor == "range" and rng.random() < 0.5:
        # replica racks per partition: KIP-881 rack-aware range when members have racks too
        racks = ["rack-a", "rack-b", "rack-c"]
        doc["partition_racks"] = {
            t: [sorted(rng.sample(racks, rng.randint(0, 2))) for _ in range(n)]
            for t, n in topics.items()
        }
    return doc


def random_connect_sequence(rng: random.Random, assignor: str) -> dict[str, Any]:
    """A random Connect sequence of 2-6 rounds: workers join and leave, connectors are added
    and deleted, reported ownership follows the previous round's decision (as workers apply
    it) with departures, restarts and stale or duplicated claims mixed in.

    The decisions fed back are those of this project's assignor; the document is fixed before
    either side runs it, so a differential on it compares like with like.
    """
    from streams_assign.connect import replay_connect
    from streams_assign.formats.connect_sequence import parse_connect_sequence

    def config() -> dict[str, int]:
        return {f"ct{rng.randrange(30)}": rng.randrange(9) for _ in range(rng.randint(0, 8))}

    connectors = config()
    pool = [f"w{rng.randrange(1000)}" for _ in range(rng.randint(2, 7))]
    pool = sorted(set(pool), key=pool.index)
    members = pool[: rng.randint(1, len(pool))]
    owned: dict[str, tuple[set[str], set[tuple[str, int]]]] = {}
    doc: dict[str, Any] = {
        "assignor": assignor,
        "protocol": rng.choice(["sessioned", "compatible"]),
        "connectors": connectors,
        "scheduled_rebalance_max_delay_ms": rng.choice([0, 1000, 10000, 300000]),
        "rounds": [],
    }
    now = rng.randrange(10**6)
    for index in range(rng.randint(2, 6)):
        round_doc: dict[str, Any] = {"time_ms": now}
        if index > 0:
            event = rng.random()
            if event < 0.3 and len(members) < len(pool):
                members = [*members, rng.choice([w for w in pool if w not in members])]
            elif event < 0.5 and len(members) > 1:
                gone = rng.choice(members)
                members = [w for w in members if w != gone]
                owned.pop(gone, None)
            elif event < 0.65:
                round_doc["connectors"] = config()
        if index > 0 and rng.random() < 0.1:
            round_doc["generation"] = index + 3
            round_doc["last_completed_generation"] = index + 1
        round_doc["members"] = [
            {
                "worker_id": w,
                "owned_connectors": sorted(owned.get(w, (set(), set()))[0]),
                "owned_tasks": [list(t) for t in sorted(owned.get(w, (set(), set()))[1])],
            }
            for w in members
        ]
        round_doc["leader"] = members[0]
        doc["rounds"].append(round_doc)
        result = replay_connect(parse_connect_sequence(doc))[-1]
        new_owned: dict[str, tuple[set[str], set[tuple[str, int]]]] = {}
        for worker, a in result.workers.items():
            cs, ts = owned.get(worker, (set(), set()))
            if assignor == "eager":
                cs, ts = set(), set()
            cs = (cs - set(a.revoked_connectors)) | set(a.assigned_connectors)
            ts = (ts - {(t.connector, t.task) for t in a.revoked_tasks}) | {
                (t.connector, t.task) for t in a.assigned_tasks
            }
            new_owned[worker] = (cs, ts)
        owned = new_owned
        if owned and rng.random() < 0.1:  # a stale duplicate claim
            worker = rng.choice(list(owned))
            other = rng.choice(list(owned))
            owned[worker][1].update(owned[other][1])
        now += rng.choice([50, 500, 5000, 60000, 400000])
    return doc
