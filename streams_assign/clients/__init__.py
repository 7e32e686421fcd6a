"""Streams-style task assignment inside Python consumer groups (aiokafka, kafka-python).

The adapters plug streams-assign into a consumer group as its partition assignor: the app
describes its topology (:class:`Topology`), every consumer of a process shares one
:class:`StreamsProcess`, and the group leader decides active tasks, standby tasks and warmup
replicas as Kafka Streams' ``StreamsPartitionAssignor`` does. See ``docs/clients.md``.

The client libraries are imported only by their adapter modules
(``streams_assign.clients.aiokafka_adapter``, ``streams_assign.clients.kafka_python_adapter``),
installed with the ``clients`` extra.
"""

from streams_assign.clients.codec import AssignmentInfo, SubscriptionInfo
from streams_assign.clients.core import (
    PROTOCOL_NAME,
    MemberState,
    StreamsProcess,
    StreamsSettings,
    decide,
)
from streams_assign.clients.topology import Topology
from streams_assign.errors import CodecError, TopologyError
from streams_assign.model import Subtopology

__all__ = [
    "PROTOCOL_NAME",
    "AssignmentInfo",
    "CodecError",
    "MemberState",
    "StreamsProcess",
    "StreamsSettings",
    "SubscriptionInfo",
    "Subtopology",
    "Topology",
    "TopologyError",
    "decide",
]
