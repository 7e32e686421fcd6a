"""The streams-group state format (KIP-1071): load, validate, dump, convert.

A streams group (``group.protocol=streams``, KIP-1071) is assigned by the group coordinator on
the broker, not by a Streams client acting as leader. What its ``TaskAssignor`` sees is a
``GroupSpec`` (the members, each one stream thread, with its process id, rack, client tags,
currently owned active / standby / warm-up tasks and reported changelog offset sums), a
``TopologyDescriber`` (subtopologies with their partition counts and whether they are stateful)
and the group's ``AssignmentConfigs``. This package reads and writes that state in the JSON
format of ``tests/corpora/kafka-streams-group/FORMAT.md`` and the assignor's decision in
the matching output format.

The two formats of this project are told apart by their fields: a streams-group state has
``members`` and ``topology``; a classic cluster state (:mod:`streams_assign.scenario`) has
``clients``. See :func:`is_streams_group_document`.

The package is split by concern: :mod:`.model` (the typed state and decision),
:mod:`.format` (load, validate, dump) and :mod:`.convert` (from a classic cluster state); every
public name is importable from here.
"""

from __future__ import annotations

from streams_assign.streams_group.convert import from_cluster_state
from streams_assign.streams_group.format import (
    dump_streams_group,
    is_streams_group_document,
    load_streams_group,
    loads_streams_group,
    parse_streams_group,
)
from streams_assign.streams_group.model import (
    InvalidStreamsGroupError,
    StreamsGroupAssignment,
    StreamsGroupConfigs,
    StreamsGroupMember,
    StreamsGroupMemberAssignment,
    StreamsGroupState,
    Subtopology,
)

# Importable from here as before the split (the twin uses them), not part of ``__all__``.
from streams_assign.streams_group.model import TaskOffsets as TaskOffsets  # noqa: E402
from streams_assign.streams_group.model import TaskSet as TaskSet  # noqa: E402
from streams_assign.streams_group.model import java_string_order as java_string_order  # noqa: E402

__all__ = [
    "InvalidStreamsGroupError",
    "StreamsGroupAssignment",
    "StreamsGroupConfigs",
    "StreamsGroupMember",
    "StreamsGroupMemberAssignment",
    "StreamsGroupState",
    "Subtopology",
    "dump_streams_group",
    "from_cluster_state",
    "is_streams_group_document",
    "load_streams_group",
    "loads_streams_group",
    "parse_streams_group",
]
