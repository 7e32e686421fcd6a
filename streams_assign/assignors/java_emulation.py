"""Where the literal mode is decided: the structures the HA assignor's steps are built with.

Kafka's ``HighAvailabilityTaskAssignor`` gets some answers from Java's collections (a
``ConstrainedPrioritySet`` over clients, a ``PriorityQueue`` whose comparator reads loads that
change while a client is queued, the all-pairs balancing loop). The assignor's steps ask
:attr:`AssignmentState.java <streams_assign.assignors.state.AssignmentState>` for those
structures and never test which mode runs; :func:`java_emulation` is the one place that picks:

- :class:`FastJavaEmulation` (the default): the same answers through faster structures (a lazy
  heap, :class:`~streams_assign.assignors.caught_up_clients.ExactCaughtUpClients`, balancing
  over the pairs that can move);
- :class:`LiteralJavaEmulation` (``literal=True``, verification only): Kafka's structures as
  written, at Kafka's running time; the tests compare the two.

The mode is what these objects hand out, never a flag they expose: a test reads every other
module of :mod:`streams_assign.assignors` and fails if one reads the mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from streams_assign.assignors.balance_pairs import AllPairs, BalancingPairs, movable_pairs
from streams_assign.assignors.caught_up_clients import CaughtUpClientsState, ExactCaughtUpClients
from streams_assign.assignors.priority_set import (
    ConstrainedPrioritySet,
    KafkaLiteralPrioritySet,
    PrioritySet,
)
from streams_assign.java.hash_order import java_uuid_hash_code

#: ``constraint(client, task)``: whether a client may take a task.
Constraint = Callable[[int, int], bool]


class JavaEmulation(Protocol):
    """The structures the HA steps use where Kafka's answer comes from Java's collections."""

    def priority_set(self, weights: Sequence[float], constraint: Constraint) -> PrioritySet:
        """A ``ConstrainedPrioritySet`` over client indices ordered by ``(weight, ProcessId)``."""
        ...

    def caught_up_clients_by_task_load(self, state: CaughtUpClientsState) -> PrioritySet:
        """``TaskMovement``'s queue of caught-up clients by ``assignedTaskLoad``."""
        ...

    def balancing_pairs(self, capacity: list[int], counts: list[int]) -> BalancingPairs:
        """The (source, destination) pairs ``balanceTasksOverThreads`` visits, and the loads."""
        ...


class FastJavaEmulation:
    """Kafka's answers through faster structures (the default mode).

    Notes
    -----
    ``priority_set`` is :class:`~streams_assign.assignors.priority_set.ConstrainedPrioritySet`
    (a lazy heap: same answers while callers re-offer every client whose weight changed, as all
    of Kafka's callers do); the movement queue is
    :class:`~streams_assign.assignors.caught_up_clients.ExactCaughtUpClients`, which reproduces
    Java's stale heap; balancing visits only the pairs where a move can happen.
    """

    def priority_set(self, weights: Sequence[float], constraint: Constraint) -> PrioritySet:
        """The lazy-heap ``ConstrainedPrioritySet``."""
        return ConstrainedPrioritySet(weights, constraint)

    def caught_up_clients_by_task_load(self, state: CaughtUpClientsState) -> PrioritySet:
        """:class:`~streams_assign.assignors.caught_up_clients.ExactCaughtUpClients`."""
        return ExactCaughtUpClients(state)

    def balancing_pairs(self, capacity: list[int], counts: list[int]) -> BalancingPairs:
        """The pairs where a move can happen (:func:`~.balance_pairs.movable_pairs`)."""
        return movable_pairs(capacity, counts)


class LiteralJavaEmulation:
    """Kafka's structures as written (verification mode, Kafka's running time).

    Parameters
    ----------
    client_ids:
        Process ids (UUID text) by client index; their ``UUID.hashCode()`` decides the
        ``HashSet`` order in which a ``ConstrainedPrioritySet`` offers rejected clients back.
    """

    def __init__(self, client_ids: Sequence[str]) -> None:
        self.hash_code: list[int] = [java_uuid_hash_code(c) for c in client_ids]

    def priority_set(self, weights: Sequence[float], constraint: Constraint) -> PrioritySet:
        """:class:`~streams_assign.assignors.priority_set.KafkaLiteralPrioritySet`."""
        return KafkaLiteralPrioritySet(weights, constraint, self.hash_code)

    def caught_up_clients_by_task_load(self, state: CaughtUpClientsState) -> PrioritySet:
        """The literal set over ``state.task_load``, constrained to caught-up clients."""
        return KafkaLiteralPrioritySet(state.task_load, state.caught_up, self.hash_code)

    def balancing_pairs(self, capacity: list[int], counts: list[int]) -> BalancingPairs:
        """Every pair, on every pass, as Kafka's loop is written."""
        return AllPairs(capacity, counts)


def java_emulation(literal: bool, client_ids: Sequence[str]) -> JavaEmulation:
    """The one switch of the literal mode.

    Parameters
    ----------
    literal:
        True for Kafka's structures as written (:class:`LiteralJavaEmulation`), False for the
        fast equivalents (:class:`FastJavaEmulation`).
    client_ids:
        Process ids by client index (UUID text).

    Returns
    -------
    JavaEmulation
        The structures the HA steps are built with.
    """
    if literal:
        return LiteralJavaEmulation(client_ids)
    return FastJavaEmulation()


__all__ = [
    "Constraint",
    "FastJavaEmulation",
    "JavaEmulation",
    "LiteralJavaEmulation",
    "java_emulation",
]
