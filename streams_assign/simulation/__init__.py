"""Rebalances over time: replay probing rebalances, plan what-if changes, score convergences.

- :mod:`~streams_assign.simulation.replay`: probing rebalances from a cluster state with state
  restoring between them (``streams-assign simulate``).
- :mod:`~streams_assign.simulation.probing`: the whole convergence of one assignor, every
  rebalance's decision and what it costs (restore rates in
  :class:`~streams_assign.simulation.probing.RestoreRates`).
- :mod:`~streams_assign.simulation.whatif`: the next cluster state after adding, removing,
  killing or bouncing instances, or changing ``num.standby.replicas``.
- :mod:`~streams_assign.simulation.chain`: Kafka's real rebalance chain (classic protocol,
  cooperative rebalancing): immediate follow-ups after withheld tasks, probing rebalances.
- :mod:`~streams_assign.simulation.id_order`: new process ids placed across ``java.util.UUID``
  order, to show how a plan depends on where a new instance's id sorts.
- :mod:`~streams_assign.simulation.plan`: all of them together for ``streams-assign plan``.
- :mod:`~streams_assign.simulation.rates`: restore rates from a ``streams-lag`` restore table.
- :mod:`~streams_assign.simulation.scores`: convergences beside the optimum's one-step cost
  (``streams-assign compare``).
- :mod:`~streams_assign.simulation.streams_group_chain`: every target computation a kill, join,
  leave or bounce causes in a streams group (``streams-assign streams-chain``).

Their tables, plots and HTML pages are in :mod:`streams_assign.views`.
"""

__all__: list[str] = []
