"""Kafka's JoinGroup and SyncGroup response data, with the message defaults."""

from __future__ import annotations

from typing import Any

__all__ = [
    "EMPTY_ASSIGNMENT",
    "join_response",
    "sync_response",
]

EMPTY_ASSIGNMENT = b""


def join_response(
    error: str,
    member_id: str = "",
    generation: int = -1,
    protocol_type: str | None = None,
    protocol: str | None = None,
    leader: str = "",
    skip_assignment: bool = False,
    members: list[tuple[str, str | None, bytes]] | None = None,
) -> dict[str, Any]:
    """A ``JoinGroupResponseData`` with Kafka's defaults."""
    return {
        "error": error,
        "member_id": member_id,
        "generation": generation,
        "protocol_type": protocol_type,
        "protocol": protocol,
        "leader": leader,
        "skip_assignment": skip_assignment,
        "members": members or [],
    }


def sync_response(
    error: str,
    protocol_type: str | None = None,
    protocol: str | None = None,
    assignment: bytes = EMPTY_ASSIGNMENT,
) -> dict[str, Any]:
    """A ``SyncGroupResponseData`` with Kafka's defaults."""
    return {
        "error": error,
        "protocol_type": protocol_type,
        "protocol": protocol,
        "assignment": assignment,
    }
