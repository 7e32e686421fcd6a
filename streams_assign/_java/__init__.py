"""Java-collection emulation, in one private package.

Kafka's answers depend on Java's collections in a few places; these modules reproduce them:

- :mod:`.hash_order`: ``HashMap`` / ``HashSet`` iteration order and the hash codes of
  ``TaskId``, ``UUID`` and ``String`` (public as ``streams_assign.javacompat``);
- :mod:`.priority`: ``ConstrainedPrioritySet`` and ``java.util.PriorityQueue``, both the fast
  lazy heap and the structure-for-structure literal one;
- :mod:`.heap`: Java's stale heap in the HA movements, replayed exactly when it can go stale;
- :mod:`.emulation`: the one place the literal mode is decided
  (``HighAvailabilityTaskAssignor(literal=True)``): ``AssignmentState.java`` is built there and
  hands the HA steps their structures, so no algorithm module tests the mode.
"""

__all__: list[str] = []
