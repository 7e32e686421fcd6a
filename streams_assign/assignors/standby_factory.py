"""Which standby assignor runs: Kafka's ``StandbyTaskAssignorFactory``."""

from __future__ import annotations

from streams_assign.assignors.standby import DefaultStandbyTaskAssignor, StandbyTaskAssignor
from streams_assign.assignors.state import AssignmentState
from streams_assign.assignors.tag_aware import ClientTagAwareStandbyTaskAssignor

__all__ = ["create_standby_task_assignor"]


def create_standby_task_assignor(state: AssignmentState) -> StandbyTaskAssignor:
    """Kafka's ``StandbyTaskAssignorFactory.create`` as the HA assignor calls it.

    Client tags configured (``rack_aware_assignment_tags``) select the client-tag-aware assignor;
    otherwise the default one. (The HA assignor passes no rack-aware assignor, so Kafka's
    ``client.rack`` fallback does not apply here.)
    """
    if state.cluster.configs.rack_aware_assignment_tags:
        return ClientTagAwareStandbyTaskAssignor()
    return DefaultStandbyTaskAssignor()
