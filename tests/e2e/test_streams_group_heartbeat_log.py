"""The task offsets a Kafka 4.4 target computation used, read from the broker's request log
(``lag.sources.streams_group_log.HeartbeatLog``): which heartbeats count, on a hand-written log
in the layout of Kafka 4.4.0's ``server.log`` (``docs/e2e.md``, streams-group section)."""

from __future__ import annotations

import json

import pytest

from lag.sources.streams_group_log import read_heartbeat_log, read_target_computations
from streams_assign.errors import LagInputError

_G = "[GroupCoordinator id=1 topic=__consumer_offsets partition=0] [GroupId g]"


def _beat(member: str, epoch: int, offsets: dict[int, int] | None) -> str:
    body = {
        "requestHeader": {"requestApiKeyName": "STREAMS_GROUP_HEARTBEAT"},
        "request": {
            "groupId": "g",
            "memberId": member,
            "taskOffsets": None
            if offsets is None
            else [{"subtopologyId": "1", "partition": p, "offset": o} for p, o in offsets.items()],
        },
        "response": {"errorCode": 0, "memberEpoch": epoch},
        "totalTimeMs": 2.0,
    }
    stamp = "[2026-11-27 22:13:33,600]"
    return f"{stamp} DEBUG Completed request:{json.dumps(body)} (kafka.request.logger)"


def _state(member: str, epoch: int) -> str:
    return (
        f"[2026-11-27 22:13:33,600] INFO {_G}[MemberId {member}] Member's new assignment state: "
        f"epoch={epoch}, previousEpoch={epoch}, state=STABLE, assignedTasks=(active=[], "
        "standby=[], warmup=[]) and tasksPendingRevocation=(active=[], standby=[], warmup=[])"
    )


def _log(*lines: str) -> str:
    head = [
        f"[2026-11-27 22:13:30,000] INFO {_G}[MemberId {m}] Member updated its member metadata "
        f"to StreamsGroupMember[memberId={m}, processId=p{m}, rest]"
        for m in "ABCD"
    ]
    return "\n".join(head + list(lines))


_COMPUTED = (
    f"[2026-11-27 22:13:33,641] DEBUG {_G} Computed a new target assignment for epoch 7 with "
    "'sticky' assignor in 1ms: {A=(active=[], standby=[], warmup=[]), B=(active=[], standby=[], "
    "warmup=[]), C=(active=[], standby=[], warmup=[]), D=(active=[], standby=[], warmup=[])}. "
    "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
)


def test_each_member_gets_the_offsets_the_broker_held_when_it_computed() -> None:
    text = _log(
        _beat("A", 6, {0: 10}),
        _beat("B", 6, {0: 20}),
        _beat("D", 6, {0: 40}),
        _COMPUTED,
        _state("C", 7),  # C's heartbeat made the computation
        _beat("A", 6, {0: 11}),  # processed before, answered after the commit
        _beat("C", 7, {0: 30}),  # the trigger: its offsets were stored first
        _state("B", 7),
        _beat("B", 7, {0: 21}),  # after: B's state changed in between
        _beat("D", 7, {0: 41}),  # after: answered the new epoch
        _beat("A", 6, None),  # no offsets sent: A keeps its last ones
    )
    (computation,) = read_target_computations(text, "g", "log")
    offsets = read_heartbeat_log(text, "g", "log").offsets_at(computation)
    assert offsets == {
        "A": {"1": {0: 11}},
        "B": {"1": {0: 20}},
        "C": {"1": {0: 30}},
        "D": {"1": {0: 40}},
    }


def test_a_log_without_the_request_logger_is_refused() -> None:
    with pytest.raises(LagInputError, match=r"log: no streams group heartbeat.*request\.logger"):
        read_heartbeat_log(_log(_COMPUTED), "g", "log")
