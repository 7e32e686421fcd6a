"""Connect's ``IncrementalCooperativeAssignor`` (KIP-415), one leader across rounds.

Each rebalance the leader compares what the members report they run with the configuration
and with its own memory of the previous assignment (kept only while the generations chain):

- deleted connectors/tasks and duplicates are revoked;
- lost work (owned in the previous assignment, reported by nobody) waits up to
  ``scheduled.rebalance.max.delay.ms`` for its worker to come back, then goes to the workers
  that were empty while waiting (or is dealt as new work);
- load-balancing revocations take the excess off overloaded workers, in one round, but a
  second revoking round in a row is delayed with an exponential back-off (KIP-415 follow-up
  KAFKA-12495);
- new work is dealt to the least loaded workers.

Java collection orders that decide outcomes are replayed: the ``HashMap`` of members (which
worker keeps a ``+1`` extra in the load-balancing revocations), each member's reported order
(which connectors/tasks are revoked first), and the ``HashSet`` the candidate workers for lost
work are collected from (who gets the first lost item).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from streams_assign.connect.model import (
    PROTOCOL_VERSIONS,
    ConnectorTaskId,
    ConnectRound,
    ConnectSequence,
)
from streams_assign.connect.protocol import reported_ownership
from streams_assign.connect.result import RoundResult, WorkerAssignment
from streams_assign.java.hash_order import JavaHashMap, JavaHashSet, java_string_hash_code

__all__ = ["IncrementalCooperativeAssignor", "T", "replay_incremental"]

T = TypeVar("T")


def _ordered(items: Iterable[T]) -> dict[T, None]:
    """A ``LinkedHashSet``: insertion order, no duplicates."""
    return dict.fromkeys(items)


@dataclass
class _WorkerLoad:
    """``WorkerCoordinator.WorkerLoad``: a worker and the work it will run."""

    worker: str
    connectors: dict[str, None]
    tasks: dict[ConnectorTaskId, None]

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


@dataclass
class _ConnectorsAndTasks:
    connectors: dict[str, None] = field(default_factory=dict)
    tasks: dict[ConnectorTaskId, None] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks

    def add_all(self, other: _ConnectorsAndTasks) -> None:
        self.connectors.update(other.connectors)
        self.tasks.update(other.tasks)


def _exponential_backoff(max_delay: int) -> Callable[[int], int]:
    """``ExponentialBackoff(maxDelay == 0 ? 0 : 1, 40, maxDelay, 0)``: attempt -> milliseconds."""
    initial = min(max_delay, 0 if max_delay == 0 else 1)
    exp_max = math.log(max_delay / max(initial, 1)) / math.log(40) if max_delay > initial else 0.0

    def backoff(attempts: int) -> int:
        if exp_max == 0:
            return initial
        term = initial * math.pow(40, min(attempts, exp_max))
        return min(int(term), max_delay)

    return backoff


class IncrementalCooperativeAssignor:
    """The leader's ``IncrementalCooperativeAssignor`` and the state it keeps between rounds.

    Parameters
    ----------
    max_delay_ms:
        ``scheduled.rebalance.max.delay.ms`` (milliseconds): how long lost work waits for its
        worker to return, and the cap of the back-off between successive revoking rounds.
    protocol:
        ``sessioned`` (assignment version 2) or ``compatible`` (version 1).

    References
    ----------
    ``org.apache.kafka.connect.runtime.distributed.IncrementalCooperativeAssignor`` (Kafka
    4.x); KIP-415 (incremental cooperative rebalancing in Connect), KIP-507 (sessioned).
    """

    def __init__(self, max_delay_ms: int, protocol: str = "sessioned") -> None:
        self.max_delay = max_delay_ms
        self.version = PROTOCOL_VERSIONS[protocol]
        self.previous_assignment = _ConnectorsAndTasks()
        self.previous_revocation = _ConnectorsAndTasks()
        self.revoked_in_previous = False
        self.candidate_workers: dict[str, None] = {}
        self.scheduled_rebalance = 0
        self.delay = 0
        self.previous_generation_id = -1
        self.previous_members: set[str] = set()
        self.num_successive_revoking_rebalances = 0
        self._backoff = _exponential_backoff(max_delay_ms)
        self._now = 0

    # -- one rebalance --------------------------------------------------------------------
    def perform_assignment(self, round_: ConnectRound) -> RoundResult:
        """Compute every member's ``ExtendedAssignment`` for one rebalance.

        Parameters
        ----------
        round_:
            The members with their reported connectors and tasks, the configuration, the
            generation and last completed generation, and the time (milliseconds).

        Returns
        -------
        RoundResult
            Per member the connectors/tasks to start and to stop, and the delay (ms) until
            the next scheduled rebalance; ``debug`` holds the reported order and the state.
        """
        self._now = round_.time_ms
        member_ids: JavaHashMap[str, None] = JavaHashMap(java_string_hash_code)
        for member in round_.members:
            member_ids.put(member.worker_id, None)
        by_id = {m.worker_id: m for m in round_.members}
        reported: dict[str, tuple[list[str], list[ConnectorTaskId]]] = {}
        member_assignments: dict[str, _ConnectorsAndTasks] = {}  # in Java HashMap order
        for worker in member_ids:
            connectors, tasks = reported_ownership(by_id[worker])
            reported[worker] = (connectors, tasks)
            member_assignments[worker] = _ConnectorsAndTasks(_ordered(connectors), _ordered(tasks))
        increments, revoked = self._perform_task_assignment(round_, member_assignments)
        workers = {}
        for member in round_.members:
            assigned = increments[member.worker_id]
            gone = revoked.get(member.worker_id, _ConnectorsAndTasks())
            workers[member.worker_id] = WorkerAssignment(
                tuple(assigned.connectors),
                tuple(assigned.tasks),
                tuple(gone.connectors),
                tuple(gone.tasks),
                delay_ms=self.delay,
                version=self.version,
                config_offset=round_.config_offset,
            )
        debug = {
            "reported": {
                w: {"connectors": c, "tasks": [[t.connector, t.task] for t in ts]}
                for w, (c, ts) in reported.items()
            },
            "assignor_state": self.state_to_json(),
        }
        return RoundResult(
            round_.leader, round_.generation, round_.config_offset, round_.time_ms, workers, debug
        )

    def _perform_task_assignment(
        self, round_: ConnectRound, member_assignments: dict[str, _ConnectorsAndTasks]
    ) -> tuple[dict[str, _ConnectorsAndTasks], dict[str, _ConnectorsAndTasks]]:
        if self.previous_generation_id != round_.last_completed_generation:
            self.previous_assignment = _ConnectorsAndTasks()
        configured = _configured(round_)
        active = _ConnectorsAndTasks()
        for assignment in member_assignments.values():
            active.add_all(assignment)
        self._check_previous_revocation(active)

        previous = self.previous_assignment
        deleted = _diff(previous, configured)
        duplicated = _duplicated(member_assignments)
        lost = _diff(previous, active, deleted)
        created = _diff(configured, previous, active)

        current_loads = {
            w: (
                [c for c in a.connectors if c not in deleted.connectors],
                [t for t in a.tasks if t not in deleted.tasks],
            )
            for w, a in member_assignments.items()
        }
        to_revoke: dict[str, _ConnectorsAndTasks] = {}
        deleted_to_revoke = _intersection(deleted, member_assignments)
        duplicated_to_revoke = _intersection(duplicated, member_assignments)
        _add_all(to_revoke, deleted_to_revoke)
        _add_all(to_revoke, duplicated_to_revoke)

        loads = [_WorkerLoad(w, a.connectors, a.tasks) for w, a in member_assignments.items()]
        _remove_all(loads, deleted_to_revoke)
        _remove_all(loads, duplicated_to_revoke)

        lost_to_reassign = _ConnectorsAndTasks()
        self._handle_lost_assignments(lost, lost_to_reassign, loads)

        self._revoke_for_balance(configured, loads, to_revoke)

        to_assign = _ConnectorsAndTasks()
        to_assign.add_all(created)
        to_assign.add_all(lost_to_reassign)
        _assign_connectors(loads, list(to_assign.connectors))
        _assign_tasks(loads, list(to_assign.tasks))

        increments = {
            load.worker: _ConnectorsAndTasks(
                _ordered(c for c in load.connectors if c not in current_loads[load.worker][0]),
                _ordered(t for t in load.tasks if t not in current_loads[load.worker][1]),
            )
            for load in loads
        }
        self._compute_previous_assignment(to_revoke, loads, lost)
        self.previous_generation_id = round_.generation
        self.previous_members = set(member_assignments)
        return increments, to_revoke

    def _check_previous_revocation(self, active: _ConnectorsAndTasks) -> None:
        """After a revoking round: when a revoked connector or task is still running, the
        running assignment becomes the previous one (the revocation did not happen)."""
        if self.previous_revocation.is_empty():
            return
        if any(c in active.connectors for c in self.previous_revocation.connectors) or any(
            t in active.tasks for t in self.previous_revocation.tasks
        ):
            self.previous_assignment = _ConnectorsAndTasks(
                dict(active.connectors), dict(active.tasks)
            )
        self.previous_revocation = _ConnectorsAndTasks()

    def _revoke_for_balance(
        self,
        configured: _ConnectorsAndTasks,
        loads: list[_WorkerLoad],
        to_revoke: dict[str, _ConnectorsAndTasks],
    ) -> None:
        """Revocations that balance the load, unless a delay runs; successive revoking
        rebalances back off (the balancing step of Kafka's ``performTaskAssignment``)."""
        if self.delay != 0:
            self.revoked_in_previous = False
            return
        balancing = self._load_balancing_revocations(configured, loads)
        if self.revoked_in_previous and balancing:
            self.num_successive_revoking_rebalances += 1
            self.delay = self._backoff(self.num_successive_revoking_rebalances)
            if self.delay != 0:
                self.scheduled_rebalance = self._now + self.delay
            else:
                _add_all(to_revoke, balancing)
                _remove_all(loads, balancing)
        elif balancing:
            _add_all(to_revoke, balancing)
            _remove_all(loads, balancing)
            self.revoked_in_previous = True
        elif self.revoked_in_previous:
            self.revoked_in_previous = False
            self.num_successive_revoking_rebalances = 0

    def _compute_previous_assignment(
        self,
        revoked: dict[str, _ConnectorsAndTasks],
        loads: list[_WorkerLoad],
        lost: _ConnectorsAndTasks,
    ) -> None:
        previous = _ConnectorsAndTasks()
        for load in loads:
            previous.connectors.update(load.connectors)
            previous.tasks.update(load.tasks)
        for gone in revoked.values():
            for c in gone.connectors:
                previous.connectors.pop(c, None)
            for t in gone.tasks:
                previous.tasks.pop(t, None)
            self.previous_revocation.add_all(gone)
        previous.add_all(lost)
        self.previous_assignment = previous

    # -- lost work ------------------------------------------------------------------------
    def _reset_delay(self) -> None:
        self.candidate_workers.clear()
        self.scheduled_rebalance = 0
        self.delay = 0

    def _handle_lost_assignments(
        self,
        lost: _ConnectorsAndTasks,
        lost_to_reassign: _ConnectorsAndTasks,
        loads: list[_WorkerLoad],
    ) -> None:
        if lost.is_empty() and not self.revoked_in_previous:
            self._reset_delay()
            return
        now = self._now
        active_members = {load.worker for load in loads}
        if self.scheduled_rebalance <= 0 and active_members >= self.previous_members:
            lost_to_reassign.add_all(lost)
            return
        if self.max_delay == 0:
            lost_to_reassign.add_all(lost)
            return
        if self.scheduled_rebalance > 0 and now >= self.scheduled_rebalance:
            by_worker = {load.worker: load for load in loads}
            candidates = [by_worker[w] for w in self.candidate_workers if w in by_worker]
            if candidates:
                for i, connector in enumerate(lost.connectors):
                    candidates[i % len(candidates)].connectors.setdefault(connector, None)
                for i, task in enumerate(lost.tasks):
                    candidates[i % len(candidates)].tasks.setdefault(task, None)
            else:
                lost_to_reassign.add_all(lost)
            self._reset_delay()
            self.revoked_in_previous = False
        else:
            # Collectors.toSet(): a HashSet of the empty workers, in the loads' order.
            empty = JavaHashSet(java_string_hash_code, (ld.worker for ld in loads if ld.is_empty()))
            for worker in empty:
                self.candidate_workers.setdefault(worker, None)
            if now < self.scheduled_rebalance:
                remaining = self.scheduled_rebalance - now
                self.delay = min(remaining, self.max_delay) if remaining > 0 else 0
            else:
                self.delay = self.max_delay
            self.scheduled_rebalance = now + self.delay

    # -- load balancing -------------------------------------------------------------------
    def _load_balancing_revocations(
        self, configured: _ConnectorsAndTasks, loads: list[_WorkerLoad]
    ) -> dict[str, _ConnectorsAndTasks]:
        if all(load.is_empty() for load in loads) or configured.is_empty():
            return {}
        result: dict[str, _ConnectorsAndTasks] = {}
        connector_revocations = _balancing_revocations(
            len(configured.connectors), loads, lambda ld: ld.connectors
        )
        task_revocations = _balancing_revocations(len(configured.tasks), loads, lambda ld: ld.tasks)
        for worker, connectors in connector_revocations.items():
            result.setdefault(worker, _ConnectorsAndTasks()).connectors.update(_ordered(connectors))
        for worker, tasks in task_revocations.items():
            result.setdefault(worker, _ConnectorsAndTasks()).tasks.update(_ordered(tasks))
        return result

    def state_to_json(self) -> dict[str, Any]:
        """The assignor's memory after a round (a diagnostic, sorted lists)."""

        def dump(ct: _ConnectorsAndTasks) -> dict[str, Any]:
            return {
                "connectors": sorted(ct.connectors),
                "tasks": [[t.connector, t.task] for t in sorted(ct.tasks)],
            }

        return {
            "previous_assignment": dump(self.previous_assignment),
            "previous_revocation": dump(self.previous_revocation),
            "revoked_in_previous": self.revoked_in_previous,
            "num_successive_revoking_rebalances": self.num_successive_revoking_rebalances,
            "scheduled_rebalance": self.scheduled_rebalance,
            "delay": self.delay,
            "previous_generation_id": self.previous_generation_id,
            "previous_members": sorted(self.previous_members),
            "candidate_workers_for_reassignment": sorted(self.candidate_workers),
        }


def _balancing_revocations(
    total: int, loads: list[_WorkerLoad], allocation: Callable[[_WorkerLoad], dict[Any, None]]
) -> dict[str, list[Any]]:
    """``loadBalancingRevocations``: the first excess items of each overloaded worker."""
    workers = len(loads)
    minimum = total // workers
    extra = total % workers
    sizes = [len(allocation(ld)) for ld in loads]
    at_min = sum(1 for s in sizes if s == minimum)
    at_extra = sum(1 for s in sizes if s == minimum + 1)
    if at_extra == extra and at_min + at_extra == workers:
        return {}
    result: dict[str, list[Any]] = {}
    allocated_extras = 0
    for load, size in zip(loads, sizes, strict=True):
        if size <= minimum:
            continue
        if allocated_extras < extra:
            allocated_extras += 1
            if size == minimum + 1:
                continue
            cap = minimum + 1
        else:
            cap = minimum
        result[load.worker] = list(allocation(load))[: size - cap]
    return result


def _configured(round_: ConnectRound) -> _ConnectorsAndTasks:
    """The round's configured connectors and their tasks, in name and task-number order."""
    configured_connectors = sorted(round_.connectors)
    configured_tasks = {
        ConnectorTaskId(c, t) for c in configured_connectors for t in range(round_.connectors[c])
    }
    return _ConnectorsAndTasks(_ordered(configured_connectors), _ordered(configured_tasks))


def _diff(base: _ConnectorsAndTasks, *subtract: _ConnectorsAndTasks) -> _ConnectorsAndTasks:
    """``diff``: what ``base`` has and none of ``subtract`` has, sorted (a ``TreeSet``)."""
    connectors = set(base.connectors)
    tasks = set(base.tasks)
    for other in subtract:
        connectors.difference_update(other.connectors)
        tasks.difference_update(other.tasks)
    return _ConnectorsAndTasks(_ordered(sorted(connectors)), _ordered(sorted(tasks)))


def _duplicated(member_assignments: dict[str, _ConnectorsAndTasks]) -> _ConnectorsAndTasks:
    connector_counts: dict[str, int] = {}
    task_counts: dict[ConnectorTaskId, int] = {}
    for assignment in member_assignments.values():
        for c in assignment.connectors:
            connector_counts[c] = connector_counts.get(c, 0) + 1
        for t in assignment.tasks:
            task_counts[t] = task_counts.get(t, 0) + 1
    return _ConnectorsAndTasks(
        _ordered(c for c, n in connector_counts.items() if n > 1),
        _ordered(t for t, n in task_counts.items() if n > 1),
    )


def _intersection(
    items: _ConnectorsAndTasks, member_assignments: dict[str, _ConnectorsAndTasks]
) -> dict[str, _ConnectorsAndTasks]:
    return {
        w: _ConnectorsAndTasks(
            _ordered(c for c in a.connectors if c in items.connectors),
            _ordered(t for t in a.tasks if t in items.tasks),
        )
        for w, a in member_assignments.items()
    }


def _add_all(base: dict[str, _ConnectorsAndTasks], more: dict[str, _ConnectorsAndTasks]) -> None:
    for worker, assignment in more.items():
        base.setdefault(worker, _ConnectorsAndTasks()).add_all(assignment)


def _remove_all(loads: list[_WorkerLoad], remove: dict[str, _ConnectorsAndTasks]) -> None:
    for load in loads:
        gone = remove.get(load.worker)
        if gone is None:
            continue
        for c in gone.connectors:
            load.connectors.pop(c, None)
        for t in gone.tasks:
            load.tasks.pop(t, None)


def _deal(
    loads: list[_WorkerLoad], items: list[Any], allocation: Callable[[_WorkerLoad], dict[Any, None]]
) -> None:
    """``assignConnectors``/``assignTasks``: fill the least loaded workers level by level."""
    loads.sort(key=lambda ld: (len(allocation(ld)), ld.worker))
    first = loads[0]
    position = 0
    while position < len(items):
        first_load = len(allocation(first))
        up_to = next(
            (i for i, ld in enumerate(loads) if len(allocation(ld)) > first_load), len(loads)
        )
        for load in loads[:up_to]:
            allocation(load).setdefault(items[position], None)
            position += 1
            if position == len(items):
                break


def _assign_connectors(loads: list[_WorkerLoad], connectors: list[str]) -> None:
    _deal(loads, connectors, lambda ld: ld.connectors)


def _assign_tasks(loads: list[_WorkerLoad], tasks: list[ConnectorTaskId]) -> None:
    _deal(loads, tasks, lambda ld: ld.tasks)


def replay_incremental(sequence: ConnectSequence) -> list[RoundResult]:
    """Run one leader's :class:`IncrementalCooperativeAssignor` over every round."""
    assignor = IncrementalCooperativeAssignor(
        sequence.scheduled_rebalance_max_delay_ms, sequence.protocol
    )
    return [assignor.perform_assignment(r) for r in sequence.rounds]
