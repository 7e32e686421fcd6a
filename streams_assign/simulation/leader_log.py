"""The group leader's decisions as Kafka Streams logs them, read back as evidence for a chain.

Kafka Streams' ``HighAvailabilityTaskAssignor`` logs each decision at INFO: "Decided on
assignment: {<process id>=[activeTasks: ([...]) standbyTasks: ([...]) prevActiveTasks: ([...])
prevStandbyTasks: ([...]) changelogOffsetTotalsByTask: ([...]) taskLagTotals: ([...]) ...],
...} with [no] followup probing rebalance" (``ClientState#toString``; read from Kafka Streams
4.2.1 and 4.4.0 leaders by ``tests/e2e/test_chain.py``). Each
line therefore holds the assignor's whole per-client input (previous tasks, lag per stateful
task) beside its output. :func:`read_decisions` parses such lines (a log file's other lines are
skipped), with the "Client <process id> per-consumer assignment:" lines that follow each
decision in the leader's log (``StreamsPartitionAssignor``: per stream thread, the tasks it
reported as previously owned active and standby); :func:`race_evidence` turns them into the
:class:`~streams_assign.simulation.chain.RaceEvidence` that settles a chain's timing races.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from streams_assign.errors import StreamsAssignError
from streams_assign.model import TaskId
from streams_assign.simulation.races import RaceEvidence

__all__ = ["LoggedClient", "LoggedDecision", "race_evidence", "read_decisions"]

_DECISION = re.compile(r"Decided on assignment: (?P<body>.*) with (?P<no>no )?followup probing")
_CLIENT = re.compile(
    r"(?P<pid>[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})="
    r"\[activeTasks: \(\[(?P<active>[^\]]*)\]\)"
    r" standbyTasks: \(\[(?P<standby>[^\]]*)\]\)"
    r"(?: assignedTasks: \(\[[^\]]*\]\))?"
    r" prevActiveTasks: \(\[(?P<prev_active>[^\]]*)\]\)"
    r" prevStandbyTasks: \(\[(?P<prev_standby>[^\]]*)\]\)"
    r" changelogOffsetTotalsByTask: \(\[[^\]]*\]\)"
    r" taskLagTotals: \(\[(?P<lags>[^\]]*)\]\)"
)
_TIME = re.compile(r"^\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")
_PER_CONSUMER = re.compile(
    r"Client (?P<pid>[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}) per-consumer assignment:"
)
_PREV_OWNED = re.compile(r"^\s*prev owned (?P<kind>active|standby) \{(?P<body>.*)\}\s*$")
_MEMBER = re.compile(r"StreamThread-(?P<thread>\d+)-consumer[^=,]*=\[(?P<tasks>[^\]]*)\]")


@dataclass(frozen=True)
class LoggedClient:
    """One client of a logged decision: the assignor's input and output.

    Attributes
    ----------
    active, standby:
        The decision (standbys include warmups).
    prev_active, prev_standby:
        The client's previous tasks as the leader read them (``ClientState``: owned
        partitions' tasks and tasks reported with offset sum ``-2``; the other reported tasks).
    lags:
        ``taskLagTotals``: per stateful task, the lag in records (-2 for a running active).
    """

    active: tuple[TaskId, ...]
    standby: tuple[TaskId, ...]
    prev_active: tuple[TaskId, ...]
    prev_standby: tuple[TaskId, ...]
    lags: dict[TaskId, int]

    @property
    def reported(self) -> dict[TaskId, int]:
        """The lag of each stateful task the client reported (previous active or standby)."""
        previous = set(self.prev_active) | set(self.prev_standby)
        return {t: lag for t, lag in self.lags.items() if t in previous}


@dataclass(frozen=True)
class LoggedDecision:
    """One "Decided on assignment" line.

    Attributes
    ----------
    time_ms:
        When it was logged, milliseconds since the epoch in the log's local time zone, or
        ``None`` when the line has no log4j time stamp.
    probing:
        Whether the decision asked for a probing rebalance.
    clients:
        Per process id.
    threads:
        Per process id, per stream thread number, the stateful and stateless tasks the thread
        reported (the "per-consumer assignment" lines the leader logs after the decision, when
        the log has them).
    """

    time_ms: float | None
    probing: bool
    clients: dict[str, LoggedClient]
    threads: dict[str, dict[int, frozenset[TaskId]]] = field(default_factory=dict)


def _tasks(text: str) -> tuple[TaskId, ...]:
    return tuple(sorted(TaskId.parse(t.strip()) for t in text.split(",") if t.strip()))


def _lags(text: str, where: str) -> dict[TaskId, int]:
    lags = {}
    for item in (x.strip() for x in text.split(",") if x.strip()):
        task, _, value = item.partition("=")
        try:
            lags[TaskId.parse(task)] = int(value)
        except ValueError:
            raise StreamsAssignError(f"{where}: unreadable taskLagTotals entry {item!r}") from None
    return lags


def read_decisions(lines: Iterable[str], where: str = "log") -> list[LoggedDecision]:
    """Every "Decided on assignment" line among ``lines``, in their order.

    Raises
    ------
    StreamsAssignError
        When a decision line names no client in the expected form (``where`` and the line
        number in the message).
    """
    decisions: list[LoggedDecision] = []
    block: str | None = None
    for number, line in enumerate(lines, start=1):
        consumer = _PER_CONSUMER.search(line)
        if consumer is not None:
            block = consumer["pid"]
            continue
        owned = _PREV_OWNED.match(line)
        if owned is not None and block is not None and decisions:
            threads = decisions[-1].threads.setdefault(block, {})
            for member in _MEMBER.finditer(owned["body"]):
                thread = int(member["thread"])
                threads[thread] = threads.get(thread, frozenset()) | frozenset(
                    _tasks(member["tasks"])
                )
            continue
        match = _DECISION.search(line)
        if match is None:
            continue
        clients = {}
        for client in _CLIENT.finditer(match["body"]):
            at = f"{where}:{number}"
            clients[client["pid"]] = LoggedClient(
                active=_tasks(client["active"]),
                standby=_tasks(client["standby"]),
                prev_active=_tasks(client["prev_active"]),
                prev_standby=_tasks(client["prev_standby"]),
                lags=_lags(client["lags"], at),
            )
        if not clients:
            raise StreamsAssignError(
                f"{where}:{number}: a 'Decided on assignment' line without a client in "
                "Kafka's ClientState form"
            )
        stamp = _TIME.match(line)
        time_ms = (
            datetime.strptime(stamp["time"], "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000
            if stamp
            else None
        )
        decisions.append(LoggedDecision(time_ms, match["no"] is None, clients))
    return decisions


def race_evidence(decisions: Iterable[LoggedDecision]) -> RaceEvidence:
    """The evidence of a chain's decisions, the first being the chain's first rebalance."""
    logged = list(decisions)
    return RaceEvidence(
        tuple({pid: c.reported for pid, c in d.clients.items()} for d in logged),
        tuple(d.threads for d in logged),
    )
