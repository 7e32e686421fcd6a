"""Standby placement, split as Kafka splits it (one module per class).

- :mod:`~streams_assign.assignors.standby_protocol`: ``StandbyTaskAssignor``, the interface;
- :mod:`~streams_assign.assignors.standby_default`: ``DefaultStandbyTaskAssignor``;
- :mod:`~streams_assign.assignors.tag_aware`: ``ClientTagAwareStandbyTaskAssignor`` (KIP-708);
- :mod:`~streams_assign.assignors.standby_factory`: ``StandbyTaskAssignorFactory``;
- :mod:`~streams_assign.assignors.standby_utils`: ``StandbyTaskAssignmentUtils``.

This module re-exports their public names (the import path other code uses).
"""

from __future__ import annotations

from streams_assign.assignors.standby_default import DefaultStandbyTaskAssignor
from streams_assign.assignors.standby_factory import create_standby_task_assignor
from streams_assign.assignors.standby_protocol import StandbyTaskAssignor
from streams_assign.assignors.standby_utils import assign_standbys_to_least_loaded_clients

__all__ = [
    "DefaultStandbyTaskAssignor",
    "StandbyTaskAssignor",
    "assign_standbys_to_least_loaded_clients",
    "create_standby_task_assignor",
]
