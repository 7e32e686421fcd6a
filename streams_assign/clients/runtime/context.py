"""What an app gives the runtime (:class:`RuntimeConfig`) and what its function sees
(:class:`TaskContext`).

The processing function is the same for both clients: ``process(ctx, record)``, plain and
synchronous, called once per input record of an active task. ``record`` is the client's
consumer record (``topic``, ``partition``, ``offset``, ``key``, ``value``, ``headers``, bytes).
What it writes through ``ctx`` is sent by the runtime after the batch, and the batch's input
offsets are committed only once every write is acknowledged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streams_assign.clients.core import StreamsSettings
from streams_assign.clients.state import InMemoryStore, KeyValueStore, StoreFactory, TaskStore
from streams_assign.errors import StateError
from streams_assign.model import TaskId, TopicPartition

__all__ = [
    "STORES",
    "SOURCE_HEADER",
    "WRITER_HEADER",
    "EventSink",
    "PendingWrite",
    "ProcessFn",
    "RuntimeConfig",
    "TaskContext",
]

#: Header on every changelog record: the process id that wrote it.
WRITER_HEADER = "writer"
#: Header on every changelog record: ``topic/partition/offset`` of the input record it came from.
SOURCE_HEADER = "source"
#: The store kinds :class:`RuntimeConfig` accepts by name.
STORES: Mapping[str, StoreFactory] = {"sqlite": TaskStore, "memory": InMemoryStore}

#: Receives each runtime event: ``(name, fields)``; see :class:`RuntimeConfig`.
EventSink = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """One app process's settings.

    Attributes
    ----------
    bootstrap_servers, application_id, state_dir:
        ``bootstrap.servers``, ``application.id`` (the group id), ``state.dir``.
    consumers:
        Group members (stream threads) in this process: its capacity.
    settings:
        Kafka Streams' assignment configs (``num.standby.replicas``,
        ``acceptable.recovery.lag`` ...).
    store:
        ``"sqlite"`` (durable, checkpointed) or ``"memory"`` (no checkpoint; restored from the
        changelog after a restart).
    session_timeout_ms:
        ``session.timeout.ms`` of every member.
    checkpoint_interval_s:
        How often each store's ``.checkpoint`` is written, in seconds.
    endpoint:
        ``host:port`` for interactive queries, or ``None``.
    client_assignor:
        A client library's own assignor (class) instead of streams-assign, for comparisons:
        no standbys, every new owner restores from its local checkpoint.
    cooperative:
        kafka-python only: the cooperative protocol (KIP-429).
    consumer_config, producer_config:
        More client settings (security, ...), passed to every consumer / the producer.
    on_event:
        Called with each event: ``started``; ``assigned`` (member, index, generation,
        active, standby, warmup, next_probing_ms) after each rebalance; ``restored`` (member,
        task, records, start, end, ms) when a promoted task may process again; ``kept``
        (member, task, generation) for a task kept across a cooperative rebalance. Every
        event also has ``t`` (epoch seconds) and ``process`` (the process id).
    """

    bootstrap_servers: str
    application_id: str
    state_dir: str | Path
    consumers: int = 1
    settings: StreamsSettings = field(default_factory=StreamsSettings)
    store: str = "sqlite"
    session_timeout_ms: int = 10_000
    checkpoint_interval_s: float = 0.2
    endpoint: str | None = None
    client_assignor: Any = None
    cooperative: bool = False
    consumer_config: Mapping[str, Any] = field(default_factory=dict)
    producer_config: Mapping[str, Any] = field(default_factory=dict)
    on_event: EventSink | None = None

    def store_factory(self) -> StoreFactory:
        """The factory of :attr:`store`.

        Raises
        ------
        StateError
            For a store name other than ``sqlite`` and ``memory``.
        """
        try:
            return STORES[self.store]
        except KeyError:
            raise StateError(
                f"store: expected one of {sorted(STORES)}, got {self.store!r}"
            ) from None


@dataclass(slots=True)
class PendingWrite:
    """A record the function wrote, sent by the runtime after the batch.

    ``store`` is set for changelog writes: its position moves past the acknowledged offset.
    """

    topic: str
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes]]
    store: KeyValueStore | None = None


class TaskContext:
    """What the processing function sees for one task.

    Attributes
    ----------
    task:
        The :class:`~streams_assign.model.TaskId`.
    store:
        The task's :class:`~streams_assign.clients.state.KeyValueStore`; ``None`` for a
        stateless task.
    record:
        The input record being processed.
    """

    def __init__(
        self,
        task: TaskId,
        store: KeyValueStore | None,
        changelog: TopicPartition | None,
        process_id: str,
    ) -> None:
        self.task = task
        self.store = store
        self.record: Any = None
        self._changelog = changelog
        self._writer = process_id.encode()
        self.writes: list[PendingWrite] = []

    def get(self, key: str) -> str | None:
        """The task's stored value of ``key``, or ``None``.

        Raises
        ------
        StateError
            For a stateless task (its sub-topology has no changelog topic).
        """
        return self._stateful_store().get(key)

    def put(self, key: str, value: str | None) -> None:
        """Store ``value`` under ``key`` (``None`` deletes) and write it to the changelog.

        Raises
        ------
        StateError
            For a stateless task.
        """
        store = self._stateful_store()
        assert self._changelog is not None
        topic, partition = self._changelog
        store.put(key, value, self._changelog, -1)
        source = f"{self.record.topic}/{self.record.partition}/{self.record.offset}"
        self.writes.append(
            PendingWrite(
                topic,
                partition,
                key.encode(),
                None if value is None else value.encode(),
                [(WRITER_HEADER, self._writer), (SOURCE_HEADER, source.encode())],
                store,
            )
        )

    def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        partition: int | None = None,
    ) -> None:
        """Produce a record to ``topic`` (a sink); sent and acknowledged before the commit."""
        self.writes.append(PendingWrite(topic, partition, key, value, []))

    def _stateful_store(self) -> KeyValueStore:
        if self.store is None:
            raise StateError(f"task {self.task}: its sub-topology has no store (no changelog)")
        return self.store


#: The app's function: called once per input record of an active task.
ProcessFn = Callable[[TaskContext, Any], None]
