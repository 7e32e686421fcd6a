"""The lag job's stages, in the order they run (:func:`lag.job.job.compute_lags` ties them).

- :mod:`lag.job.layout`: tasks, stateful sub-topologies and running actives (plain Python);
- :mod:`lag.job.row_keys`: compact row keys (``pkey``, ``task_key``) and their decoding;
- :mod:`lag.job.offset_sums`: row validation, Kafka's lag rules, offset sums;
- :mod:`lag.job.asof_join`: the as-of join of offset sums with end offsets (a merge per task);
- :mod:`lag.job.job`: :func:`~lag.job.job.compute_lags` and its result,
  :class:`~lag.job.job.LagJob`;
- :mod:`lag.job.restore`: the restore table;
- :mod:`lag.job.cluster_state`: the cluster-state document at a moment.
"""
