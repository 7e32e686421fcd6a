"""Seeded generators of inputs and simulators for the tests and benchmarks.

- :mod:`~devtools.generators.cluster_states`: random and shaped cluster-state documents and the
  one process-id maker;
- :mod:`~devtools.generators.streams_groups`: random streams-group states (KIP-1071);
- :mod:`~devtools.generators.convergence_harness`: Kafka's ``TaskAssignorConvergenceTest``
  harness.
"""

__all__: list[str] = []
