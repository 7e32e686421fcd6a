"""Spark plumbing of the lag job: the session, the row readers, the sizing rules, the workers.

- :mod:`lag.spark.session`: the session (local, or spark-submit's);
- :mod:`lag.spark.readers`: offset rows, end offsets and error rows as DataFrames;
- :mod:`lag.spark.sizing`: shuffle partitions, scan splits, Arrow batches;
- :mod:`lag.spark.worker_imports`: cheap import-cache invalidation in the Python workers.
"""
