"""The task runtime: an aiokafka or kafka-python app is its processing function plus a few lines.

What Kafka Streams' runtime does for a Java app, for the tasks streams-assign places:

* one store per stateful task behind :class:`~streams_assign.clients.state.KeyValueStore`
  (``RuntimeConfig(store="sqlite")``, durable with Kafka's ``.checkpoint`` files, or
  ``store="memory"``), written through :meth:`TaskContext.put`, which also writes the
  task's changelog partition;
* one standby reader per process, keeping every standby and warmup store at its changelog's
  end, which drops a task as soon as it turns active;
* restore on promotion: the task's source partitions stay paused while its store reads the
  changelog from its position (its checkpoint, or how far the standby got) to the end;
* checkpoints every ``checkpoint_interval_s`` and when a task is revoked or restored;
* commits safe around rebalances (see :mod:`~streams_assign.clients.runtime.aio` and
  :mod:`~streams_assign.clients.runtime.sync` for each client's listener rules).

**At-least-once.** Each batch is processed, then every changelog and sink write of it is sent
and acknowledged, then the batch's input offsets are committed. So no input record is lost;
but the records a member processed after its last successful commit (at most the batches since
then: one batch, or two when a rebalance refused the commit) are processed again by the next
owner when the member dies or its commit is refused by a rebalance: their effects on state and
sinks can be applied twice. Exactly-once (transactions) is not implemented.

``StreamsApp`` (aiokafka, async) and ``SyncStreamsApp`` (kafka-python, threads) take the same
:class:`RuntimeConfig`, :class:`~streams_assign.clients.topology.Topology` and function; they
are imported on first use, so this package needs neither client to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streams_assign.clients.runtime.context import (
    SOURCE_HEADER,
    STORES,
    WRITER_HEADER,
    ProcessFn,
    RuntimeConfig,
    TaskContext,
)
from streams_assign.clients.runtime.tasks import TaskManager

if TYPE_CHECKING:
    from streams_assign.clients.runtime.aio import StreamsApp
    from streams_assign.clients.runtime.sync import SyncStreamsApp

__all__ = [
    "SOURCE_HEADER",
    "STORES",
    "WRITER_HEADER",
    "ProcessFn",
    "RuntimeConfig",
    "StreamsApp",
    "SyncStreamsApp",
    "TaskContext",
    "TaskManager",
]


def __getattr__(name: str) -> Any:
    if name == "StreamsApp":
        from streams_assign.clients.runtime.aio import StreamsApp

        return StreamsApp
    if name == "SyncStreamsApp":
        from streams_assign.clients.runtime.sync import SyncStreamsApp

        return SyncStreamsApp
    raise AttributeError(name)
