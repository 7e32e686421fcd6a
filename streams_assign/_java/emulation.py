"""Where the literal mode is decided: the structures the HA assignor's steps are built with.

Kafka's ``HighAvailabilityTaskAssignor`` gets some answers from Java's collections (a
``ConstrainedPrioritySet`` over clients, a ``PriorityQueue`` whose comparator reads loads that
change while a client is queued, the all-pairs balancing loop). The assignor's steps ask
:attr:`AssignmentState.java <streams_assign.assignors.state.AssignmentState>` for those
structures and never test which mode runs; :func:`java_emulation` is the one place that picks:

- :class:`FastJavaEmulation` (the default): the same answers through faster structures (a lazy
  heap, :class:`~streams_assign._java.heap.ExactCaughtUpClients`, balancing over the pairs that
  can move);
- :class:`LiteralJavaEmulation` (``literal=True``, verification only): Kafka's structures as
  written, at Kafka's running time; the tests compare the two.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from streams_assign._java.heap import ExactCaughtUpClients
from streams_assign._java.priority import (
    ConstrainedPrioritySet,
    KafkaLiteralPrioritySet,
    PrioritySet,
)
from streams_assign.model import java_uuid_hash_code

if TYPE_CHECKING:
    from streams_assign.assignors.state import AssignmentState

#: ``constraint(client, task)``: whether a client may take a task.
Constraint = Callable[[int, int], bool]


class JavaEmulation(Protocol):
    """The structures the HA steps use where Kafka's answer comes from Java's collections."""

    #: True when the structures are Kafka's own, structure for structure (verification mode).
    literal: bool
    #: True when ``balanceTasksOverThreads`` runs Kafka's loop as written (every pair, every
    #: pass); False when it visits only the pairs where a move can happen.
    visits_every_pair: bool

    def priority_set(self, weights: Sequence[float], constraint: Constraint) -> PrioritySet:
        """A ``ConstrainedPrioritySet`` over client indices ordered by ``(weight, ProcessId)``."""
        ...

    def caught_up_clients_by_task_load(self, state: AssignmentState) -> PrioritySet:
        """``TaskMovement``'s queue of caught-up clients by ``assignedTaskLoad``."""
        ...


class FastJavaEmulation:
    """Kafka's answers through faster structures (the default mode).

    Notes
    -----
    ``priority_set`` is :class:`~streams_assign._java.priority.ConstrainedPrioritySet` (a lazy
    heap: same answers while callers re-offer every client whose weight changed, as all of
    Kafka's callers do); the movement queue is
    :class:`~streams_assign._java.heap.ExactCaughtUpClients`, which reproduces Java's stale heap.
    """

    literal = False
    visits_every_pair = False

    def priority_set(self, weights: Sequence[float], constraint: Constraint) -> PrioritySet:
        """The lazy-heap ``ConstrainedPrioritySet``."""
        return ConstrainedPrioritySet(weights, constraint)

    def caught_up_clients_by_task_load(self, state: AssignmentState) -> PrioritySet:
        """:class:`~streams_assign._java.heap.ExactCaughtUpClients` over ``state``."""
        return ExactCaughtUpClients(state)


class LiteralJavaEmulation:
    """Kafka's structures as written (verification mode, Kafka's running time).

    Parameters
    ----------
    client_ids:
        Process ids (UUID text) by client index; their ``UUID.hashCode()`` decides the
        ``HashSet`` order in which a ``ConstrainedPrioritySet`` offers rejected clients back.
    """

    literal = True
    visits_every_pair = True

    def __init__(self, client_ids: Sequence[str]) -> None:
        self.hash_code: list[int] = [java_uuid_hash_code(c) for c in client_ids]

    def priority_set(self, weights: Sequence[float], constraint: Constraint) -> PrioritySet:
        """:class:`~streams_assign._java.priority.KafkaLiteralPrioritySet`."""
        return KafkaLiteralPrioritySet(weights, constraint, self.hash_code)

    def caught_up_clients_by_task_load(self, state: AssignmentState) -> PrioritySet:
        """The literal set over ``state.task_load``, constrained to caught-up clients."""
        return KafkaLiteralPrioritySet(state.task_load, state.caught_up, self.hash_code)


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
