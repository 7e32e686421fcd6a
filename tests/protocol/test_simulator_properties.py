"""Property tests of the timeline simulator over random timelines (hypothesis).

- no member is ever handed an assignment of an older generation than the group's;
- no task is owned (running or restoring) by two members at once, eager or cooperative;
- every timeline ends with every task running, or stopped for a named reason; when some
  member is still up after the settle time, every task running.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams_assign.protocol.simulator import REASONS
from streams_assign.protocol.timeline import simulate
from tests.tiers import examples


@st.composite
def timelines(draw: st.DrawFn) -> dict[str, Any]:
    """A timeline document: a start, then a few membership and task events."""
    members = draw(st.integers(1, 5))
    started = members
    events: list[dict[str, Any]] = [{"t": 0, "type": "start", "members": members}]
    t = 0
    for _ in range(draw(st.integers(0, 5))):
        t += draw(st.integers(1, 120)) * 1000
        kind = draw(
            st.sampled_from(
                ["scale_out", "scale_in", "crash", "rolling_bounce", "network_pause", "add_tasks"]
            )
        )
        member = f"m{draw(st.integers(1, started))}"
        if kind == "scale_out":
            count = draw(st.integers(1, 2))
            started += count
            events.append({"t": t, "type": kind, "members": count})
        elif kind == "scale_in":
            events.append({"t": t, "type": kind, "members": 1})
        elif kind == "crash":
            event: dict[str, Any] = {"t": t, "type": kind, "member": member}
            if draw(st.booleans()):
                event["restart_after_ms"] = draw(st.integers(0, 90)) * 1000
            events.append(event)
        elif kind == "rolling_bounce":
            events.append(
                {
                    "t": t,
                    "type": kind,
                    "down_ms": draw(st.integers(1, 20)) * 1000,
                    "interval_ms": draw(st.integers(1, 40)) * 1000,
                }
            )
        elif kind == "network_pause":
            events.append(
                {
                    "t": t,
                    "type": kind,
                    "member": member,
                    "duration_ms": draw(st.integers(1, 90)) * 1000,
                }
            )
        else:
            events.append({"t": t, "type": kind, "tasks": draw(st.integers(1, 5))})
    return {
        "tasks": draw(st.integers(1, 30)),
        "assignor": draw(
            st.sampled_from(
                [
                    "balanced_sticky",
                    "consumer:range",
                    "consumer:roundrobin",
                    "consumer:sticky",
                    "consumer:cooperative-sticky",
                ]
            )
        ),
        "settings": {
            "state_records_per_task": draw(st.sampled_from([0, 20_000, 100_000])),
            "restore_records_per_sec": 20_000,
            "changelog_growth_records_per_sec": draw(st.sampled_from([0, 100])),
            "static_membership": draw(st.booleans()),
            "heartbeat_interval_ms": 3000,
            "session_timeout_ms": draw(st.sampled_from([10_000, 45_000])),
            "task_close_ms": draw(st.sampled_from([0, 50])),
            "task_open_ms": draw(st.sampled_from([0, 30])),
            "heartbeat_jitter": draw(st.booleans()),
            "seed": draw(st.integers(0, 3)),
        },
        "events": events,
        "duration_ms": t + 900_000,
    }


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timeline=timelines(), protocol=st.sampled_from(["eager", "cooperative"]))
def test_random_timelines_keep_the_protocol_invariants(
    timeline: dict[str, Any], protocol: str
) -> None:
    result = simulate(timeline, protocol)
    assert result.violations == []
    assert set(result.final_status.values()) <= {"running", *REASONS}
    if result.final_members:
        stopped = {t: s for t, s in result.final_status.items() if s != "running"}
        assert stopped == {}, f"stopped at the end with {result.final_members} up: {stopped}"
    else:
        assert set(result.final_status.values()) <= {"revoked", "unowned"}
