"""Exceptions of streams-assign.

Every error names what is wrong and where, in the JSON-path style of the cluster-state format
(``clients[3].capacity must be >= 1, got 0``), so a user can fix the input without reading code.
"""

from __future__ import annotations


class StreamsAssignError(Exception):
    """Base class of every error raised on purpose by streams-assign."""


class InvalidScenarioError(StreamsAssignError, ValueError):
    """A cluster-state document (or a value inside it) breaks the format's rules.

    Parameters
    ----------
    path:
        Where the bad value sits, as a JSON path (``clients[3].capacity``); empty for the whole
        document.
    message:
        What is wrong with it, including the offending value.
    """

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.reason = message
        super().__init__(f"{path}: {message}" if path else message)


class InvalidTaskIdError(InvalidScenarioError):
    """A task id is not ``<subtopology>_<partition>`` or ``<name>__<subtopology>_<partition>``."""


class TaskAssignmentError(StreamsAssignError, RuntimeError):
    """The assignor reached a state Kafka treats as illegal (Kafka throws IllegalStateException)."""
