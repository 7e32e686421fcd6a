"""streams-assign inside faust-streaming apps: one setting, a registered assignor at the leader.

``faust.App(..., PartitionAssignor="streams_assign.clients.faust:StreamsPartitionAssignor")``
runs Kafka's ``HighAvailabilityTaskAssignor`` (or any assignor of
``streams_assign.assignors.ASSIGNORS``) on faust's topic groups, with the lags of the workers'
table stores; ``LagAwareStickyPartitionAssignor`` runs ``lag_aware_sticky``. See the faust
section of ``docs/clients.md`` and ``examples/faust_app.py``.

Importing this package imports faust (the ``faust`` extra); nothing else in streams-assign
imports it.
"""

from streams_assign.clients.faust.assignor import (
    LagAwareStickyPartitionAssignor,
    StreamsPartitionAssignor,
)

__all__ = [
    "LagAwareStickyPartitionAssignor",
    "StreamsPartitionAssignor",
]
