"""Java-collection emulation, in one private package.

Kafka's answers depend on Java's collections in a few places; these modules reproduce them:

- :mod:`.hash_order`: ``HashMap`` / ``HashSet`` iteration order and the hash codes of
  ``TaskId``, ``UUID`` and ``String`` (public as ``streams_assign.javacompat``);
- :mod:`.priority`: ``ConstrainedPrioritySet`` and ``java.util.PriorityQueue``, both the fast
  lazy heap and the structure-for-structure literal one;
- :mod:`.heap`: Java's stale heap in the HA movements, replayed exactly when it can go stale.

The literal mode (``HighAvailabilityTaskAssignor(literal=True)``) is carried by
``AssignmentState.literal``.
"""

__all__: list[str] = []
