"""Checks of a replayed trace against the ``expect`` list of a named flow (``flows/``).

Each expectation names an event and one of: ``response`` (some response completed during the
event has these fields; a join's ``members`` is compared as a set of member names),
``group`` (the group's state fields), ``response_count`` or ``timer_fired``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "check_expectations",
]


def _response_matches(response: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    for key, value in wanted.items():
        got = response.get(key)
        if key == "members" and response.get("api") == "join":
            # Flows list the leader's members as a set of names (Kafka's tests assert sets).
            got = sorted(m["member"] for m in response.get("members", []))
            value = sorted(value)
        elif (
            key == "members"
            and response.get("api") == "leave"
            and value
            and isinstance(value[0], str)
        ):
            got = [m["member"] for m in response.get("members", [])]
        if got != value:
            return False
    return True


def check_expectations(output: Mapping[str, Any], expect: Sequence[Mapping[str, Any]]) -> list[str]:
    """The expectations ``output`` fails, one message each (empty when all hold).

    Parameters
    ----------
    output:
        A document returned by :func:`streams_assign.protocol.trace.run_trace`.
    expect:
        The flow's ``expect`` entries.
    """
    failures = []
    events = output["events"]
    for n, entry in enumerate(expect):
        i = entry["event"]
        if not 0 <= i < len(events):
            failures.append(f"expect[{n}]: no event {i}")
            continue
        event = events[i]
        if "response" in entry and not any(
            _response_matches(r, entry["response"]) for r in event["responses"]
        ):
            failures.append(
                f"expect[{n}]: event {i} has no response {dict(entry['response'])}; "
                f"got {event['responses']}"
            )
        if "group" in entry:
            group = event["group"]
            for key, value in entry["group"].items():
                if group.get(key) != value:
                    failures.append(
                        f"expect[{n}]: event {i} group.{key} = {group.get(key)!r}, want {value!r}"
                    )
        if "response_count" in entry and len(event["responses"]) != entry["response_count"]:
            failures.append(
                f"expect[{n}]: event {i} has {len(event['responses'])} responses, "
                f"want {entry['response_count']}"
            )
        if "timer_fired" in entry:
            wanted = entry["timer_fired"]
            if not any(
                all(t.get(k) == v for k, v in wanted.items()) for t in event["timers_fired"]
            ):
                failures.append(
                    f"expect[{n}]: event {i} fired no timer {dict(wanted)}; "
                    f"got {event['timers_fired']}"
                )
    return failures
