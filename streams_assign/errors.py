"""Exceptions of streams-assign and its lag jobs: every error raised on purpose, in one tree.

Every error names what is wrong and where, in the JSON-path style of the cluster-state format
(``clients[3].capacity must be >= 1, got 0``), so a user can fix the input without reading code.
Each class also subclasses the builtin it resembles, so ``except ValueError`` keeps working::

    StreamsAssignError (Exception)              every error raised on purpose
    ├── InvalidScenarioError (ValueError)       a cluster-state document breaks the format
    │   ├── InvalidTaskIdError                  a task id is not "1_3" / "name__1_3"
    │   ├── InvalidStreamsGroupError            a streams-group state document breaks its format
    │   ├── InvalidConsumerStateError           a consumer-group state document breaks its format
    │   └── InvalidConnectSequenceError         a Connect sequence document breaks its format
    ├── InvalidAssignmentError (ValueError)     an assignment document breaks the output format
    ├── InvalidTimelineError (ValueError)       a timeline document breaks its format
    ├── InvalidTraceError (ValueError)          a group trace breaks its format
    ├── PlanInputError (ValueError)             a what-if change does not fit the cluster state
    ├── LagInputError (ValueError)              a lag job's required input is missing or unusable
    ├── CodecError (ValueError)                 subscription or assignment user data is unreadable
    ├── StateError (ValueError)                 a state directory file cannot be read
    ├── TopologyError (ValueError)              a topology description cannot be turned into tasks
    ├── UnknownAssignorError (ValueError)       an assignor name not in the registry
    ├── UnknownGroupAssignorError (ValueError)  an assignor name the group simulator lacks
    ├── UsageError (ValueError)                 bad command-line arguments (exit status 2)
    ├── ConsumerCommandError (ValueError)       bad input or usage of consumer-assign
    ├── ConnectCommandError (ValueError)        bad input or usage of connect-replay
    ├── StreamsGroupUsageError (ValueError)     a classic assignor given a streams-group state
    ├── MissingSourceTopicError (LookupError)   a source topic is absent from the metadata
    ├── MissingExtraError (ImportError)         a feature's optional dependencies are absent
    ├── TaskAssignmentError (RuntimeError)      Kafka's IllegalStateException in an assignor
    ├── TaskAssignorException (RuntimeError)    Kafka's TaskAssignorException (streams group)
    ├── CoordinatorStateError (RuntimeError)    Kafka's IllegalStateException in the coordinator
    └── NotConvergedError (AssertionError)      probing rebalances did not reach a stable state

A class drawn under another subclasses it; the builtin in parentheses is its other base.
``tests/architecture/test_errors_module.py`` checks that every exception class of
``streams_assign`` and ``lag`` is defined in this module and that this drawing matches them.
"""

from __future__ import annotations

__all__ = [
    "CodecError",
    "ConnectCommandError",
    "ConsumerCommandError",
    "CoordinatorStateError",
    "InvalidAssignmentError",
    "InvalidConnectSequenceError",
    "InvalidConsumerStateError",
    "InvalidScenarioError",
    "InvalidStreamsGroupError",
    "InvalidTaskIdError",
    "InvalidTimelineError",
    "InvalidTraceError",
    "LagInputError",
    "MissingExtraError",
    "MissingSourceTopicError",
    "NotConvergedError",
    "PlanInputError",
    "StateError",
    "StreamsAssignError",
    "StreamsGroupUsageError",
    "TaskAssignmentError",
    "TaskAssignorException",
    "TopologyError",
    "UnknownAssignorError",
    "UnknownGroupAssignorError",
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


class InvalidStreamsGroupError(InvalidScenarioError):
    """A streams-group state document breaks the format's rules.

    The message names the file (when read from one), the JSON path and the offending value,
    for example ``sg.json: members[2].task_offsets.0.5: must be an integer >= 0, got -1``.
    """


class InvalidConsumerStateError(InvalidScenarioError):
    """A consumer-group state document breaks the format (path and value in the message)."""


class InvalidConnectSequenceError(InvalidScenarioError):
    """A Connect sequence document breaks the format (path and value in the message)."""


class InvalidAssignmentError(StreamsAssignError, ValueError):
    """An assignment document does not fit the output format or the cluster state.

    Parameters
    ----------
    path:
        Where the bad value sits, as a JSON path (``clients.<id>.active[2]``).
    message:
        What is wrong with it, including the offending value.
    """

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.reason = message
        super().__init__(f"{path}: {message}" if path else message)


class InvalidTimelineError(StreamsAssignError, ValueError):
    """A timeline document breaks the format: names the file, the JSON path and the value."""


class InvalidTraceError(StreamsAssignError, ValueError):
    """A group trace breaks the format: names the file, the JSON path and the value."""


class PlanInputError(StreamsAssignError, ValueError):
    """A what-if change that does not fit the cluster state (unknown or ambiguous client id,
    a client named twice, no client left, a count out of range)."""


class LagInputError(StreamsAssignError, ValueError):
    """A required input of a lag job is missing or unusable.

    The message is one line that names the input (option and path) and what is wrong with it; the
    CLI prints it as ``streams-lag: error: <message>`` and exits with status 2.
    """


class CodecError(StreamsAssignError, ValueError):
    """User data that cannot be decoded (truncated, malformed, or of an unsupported version)."""


class StateError(StreamsAssignError, ValueError):
    """A state directory file that cannot be read (names the file and the bad line)."""


class TopologyError(StreamsAssignError, ValueError):
    """A topology description that cannot be turned into tasks (names the field and value)."""


class UnknownAssignorError(StreamsAssignError, ValueError):
    """The assignor name is not one of ``streams_assign.api.ASSIGNORS``."""


class UnknownGroupAssignorError(StreamsAssignError, ValueError):
    """The simulator's assignor name is not known."""


class UsageError(StreamsAssignError, ValueError):
    """Bad command-line usage: an option out of range, an unreadable file (exit status 2)."""


class ConsumerCommandError(StreamsAssignError, ValueError):
    """Bad input or usage of ``consumer-assign`` (exit status 2)."""


class ConnectCommandError(StreamsAssignError, ValueError):
    """Bad input or usage of ``connect-replay`` (exit status 2)."""


class StreamsGroupUsageError(StreamsAssignError, ValueError):
    """A classic assignor was asked to decide a streams-group state."""


class MissingSourceTopicError(StreamsAssignError, LookupError):
    """A source topic has no partitions in the cluster's metadata (it does not exist).

    Kafka Streams' ``MissingSourceTopicException``: the app cannot start without its source
    topics.
    """


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


class TaskAssignorException(StreamsAssignError, RuntimeError):
    """Kafka's ``TaskAssignorException``: no process or member can take an active task.

    Raised, for example, for a group without members whose topology has tasks.
    """


class CoordinatorStateError(StreamsAssignError, RuntimeError):
    """The coordinator reached a state Kafka rejects with ``IllegalStateException``."""


class NotConvergedError(StreamsAssignError, AssertionError):
    """The assignor still asked for a probing rebalance after the iteration limit."""
