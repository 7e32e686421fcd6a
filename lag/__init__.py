"""PySpark jobs that turn a Kafka Streams fleet's operator data into changelog lags.

Inputs are the real tool outputs (``Topology#describe()``, ``kafka-consumer-groups.sh``,
``kafka-get-offsets.sh``) and the instances' local state (checkpoint files, or offset rows any
exporter can write); outputs are the cluster-state JSON that ``streams_assign`` reads, a lag table,
a restore table and an errors table. See ``docs/lag.md``.

Modules: :mod:`lag.topology`, :mod:`lag.members`, :mod:`lag.get_offsets` and :mod:`lag.collect`
(with :mod:`lag.rocksdb_state` for Kafka Streams 4.3+ stores) read the inputs (plain Python);
:mod:`lag.readers` and :mod:`lag.job` are the Spark job;
:mod:`lag.pipeline` and :mod:`lag.cli` run it (``streams-lag``); :mod:`lag.generate` writes
synthetic fleets; :mod:`lag.demo` is the end-to-end demo. Importing the package does not import
Spark.
"""

import logging

# Log records of lag reach the handlers the program configures, and none by default.
logging.getLogger(__name__).addHandler(logging.NullHandler())
