"""Exceptions of streams-assign: every error raised on purpose, in one tree.

Every error names what is wrong and where, in the JSON-path style of the cluster-state format
(``clients[3].capacity must be >= 1, got 0``), so a user can fix the input without reading code.
Each class also subclasses the builtin it resembles, so ``except ValueError`` keeps working::

    StreamsAssignError (Exception)
    ├── InvalidScenarioError (ValueError)     a cluster-state document breaks the format
    │   └── InvalidTaskIdError                a task id is not "1_3" / "name__1_3"
    ├── InvalidAssignmentError (ValueError)   an assignment document breaks the output format
    ├── UnknownAssignorError (ValueError)     an assignor name not in api.ASSIGNORS
    ├── UsageError (ValueError)               bad command-line arguments (exit status 2)
    ├── MissingExtraError (ImportError)       a feature's optional dependencies are absent
    ├── TaskAssignmentError (RuntimeError)    Kafka's IllegalStateException in an assignor
    └── NotConvergedError (AssertionError)    probing rebalances did not reach a stable state

``InvalidAssignmentError`` is defined beside its parser in ``streams_assign.optimal.metrics``
(which needs OR-Tools' companions) and ``NotConvergedError`` beside the convergence check in
``devtools.generators.convergence_harness``; both subclass :class:`StreamsAssignError`, which
:func:`error_classes` checks in the tests.
"""

from __future__ import annotations

__all__ = [
    "InvalidScenarioError",
    "InvalidTaskIdError",
    "MissingExtraError",
    "StreamsAssignError",
    "TaskAssignmentError",
    "UnknownAssignorError",
    "UsageError",
]


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


class UnknownAssignorError(StreamsAssignError, ValueError):
    """The assignor name is not one of ``streams_assign.api.ASSIGNORS``."""


class UsageError(StreamsAssignError, ValueError):
    """Bad command-line usage: an option out of range, an unreadable file (exit status 2)."""


class MissingExtraError(StreamsAssignError, ImportError):
    """A subcommand or feature needs an optional dependency that is not installed.

    Parameters
    ----------
    feature:
        What needs it (``streams-assign optimal``).
    extra:
        The pip extra that installs it (``optimal``).
    module:
        The missing top-level module (``ortools``).
    """

    def __init__(self, feature: str, extra: str, module: str) -> None:
        self.feature = feature
        self.extra = extra
        self.module = module
        super().__init__(
            f"{feature} needs the '{extra}' extra ({module} is not installed): "
            f"pip install 'streams-assign[{extra}]'",
            name=module,
        )


class TaskAssignmentError(StreamsAssignError, RuntimeError):
    """The assignor reached a state Kafka treats as illegal (Kafka throws IllegalStateException)."""
