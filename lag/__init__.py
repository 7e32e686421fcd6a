"""PySpark jobs that turn a Kafka Streams fleet's operator data into changelog lags.

Inputs are the real tool outputs (``Topology#describe()``, ``kafka-consumer-groups.sh``,
``kafka-get-offsets.sh``) and the instances' local state (checkpoint files, RocksDB stores, or
offset rows any exporter can write); outputs are the cluster-state JSON that ``streams_assign``
reads, a lag table, a restore table and an errors table. See ``docs/lag.md``. Importing the
package does not import Spark.

Modules, in the order the data flows:

- :mod:`lag.sources` (plain Python): :mod:`~lag.sources.topology`, :mod:`~lag.sources.members`,
  :mod:`~lag.sources.get_offsets`, :mod:`~lag.sources.checkpoint_file`,
  :mod:`~lag.sources.rocksdb_stores`, :mod:`~lag.sources.checkpoints`,
  :mod:`~lag.sources.streams_config`, :mod:`~lag.sources.streams_group_state`,
  :mod:`~lag.sources.live_cluster`, :mod:`~lag.sources.metrics`;
- :mod:`lag.spark`: :mod:`~lag.spark.session`, :mod:`~lag.spark.readers`,
  :mod:`~lag.spark.sizing`, :mod:`~lag.spark.worker_imports`;
- :mod:`lag.job`: :mod:`~lag.job.layout`, :mod:`~lag.job.row_keys`,
  :mod:`~lag.job.offset_sums`, :mod:`~lag.job.asof_join`, :mod:`~lag.job.job`,
  :mod:`~lag.job.restore`, :mod:`~lag.job.cluster_state`; :mod:`~lag.job.snapshot` (a live
  group's state, no Spark: ``streams-lag snapshot``);
- :mod:`lag.outputs`: :mod:`~lag.outputs.tables`, :mod:`~lag.outputs.progress`;
- :mod:`lag.pipeline`: ``streams-lag compute`` end to end (inputs checked, job run, outputs
  written); :mod:`lag.cli` and :mod:`lag.__main__`: the ``streams-lag`` command;
  :mod:`lag.demo`: the end-to-end demo (``python -m lag.demo``);
- :mod:`lag.fleet`: synthetic fleets (``streams-lag generate``): :mod:`~lag.fleet.spec`,
  :mod:`~lag.fleet.generate`, :mod:`~lag.fleet.history`;
- shared: :mod:`lag.kafka_rules` (Kafka's sentinels and task-id order), :mod:`lag.error_rows` (the
  quarantined rows of the errors table; the exceptions are in :mod:`streams_assign.errors`).
"""

import logging

# Log records of lag reach the handlers the program configures, and none by default.
logging.getLogger(__name__).addHandler(logging.NullHandler())
