"""The job's inputs, read in plain Python (no Spark): what the operator tools and instances hold.

- :mod:`lag.sources.topology`: ``Topology#describe()`` text (sub-topologies, stores, changelogs);
- :mod:`lag.sources.members`: ``kafka-consumer-groups.sh --describe`` (the group's members);
- :mod:`lag.sources.get_offsets`: ``kafka-get-offsets.sh`` lines (end offsets);
- :mod:`lag.sources.checkpoint_file`: one ``.checkpoint`` file (``OffsetCheckpoint``);
- :mod:`lag.sources.rocksdb_stores`: offsets inside Kafka Streams 4.3+ RocksDB stores;
- :mod:`lag.sources.checkpoints`: instance state directories walked into offset rows;
- :mod:`lag.sources.streams_config`: the application's properties file (assignment configs);
- :mod:`lag.sources.streams_group_state`: the group's own state (``DescribeGroups``);
- :mod:`lag.sources.live_cluster`: ``ListGroups``, ``ListOffsets``, ``--command-config``;
- :mod:`lag.sources.metrics`: JmxTool and Prometheus scrapes of the instances' client metrics.
"""
