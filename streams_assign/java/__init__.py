"""Java semantics Kafka's answers depend on, and nothing above :mod:`streams_assign.model`.

- :mod:`.hash_order`: ``HashMap`` / ``HashSet`` iteration order, the hash codes of ``TaskId``,
  ``UUID`` and ``String``, and Java ``int`` arithmetic;
- :mod:`.priority_queue`: ``java.util.PriorityQueue`` step by step, and the order it polls in.

Kafka's own structures built on them (``ConstrainedPrioritySet``, ``TaskMovement``'s queue) and
the switch between their fast and literal forms sit beside the assignment state, in
:mod:`streams_assign.assignors.priority_set`, :mod:`streams_assign.assignors.caught_up_clients`
and :mod:`streams_assign.assignors.java_emulation`.
"""

__all__: list[str] = []
