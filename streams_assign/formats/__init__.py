"""The documents streams-assign reads and writes: every file format of the core, in one place.

Modules, one per format or concern:

- :mod:`.cluster_state`: the cluster-state document (load, validate, dump), the input of every
  assignor; with :mod:`.cluster_state_clients` (its ``clients``) and
  :mod:`.cluster_state_extensions` (the optional fields this project adds).
- :mod:`.yaml`: the YAML form of the cluster state (PyYAML, the ``yaml`` extra).
- :mod:`.schema`: the cluster state's JSON Schema, shipped and generated
  (``python -m streams_assign.formats.schema``).
- :mod:`.streams_group`: the streams-group state (KIP-1071) and its assignment; the values are
  in :mod:`streams_assign.streams_group`.
- :mod:`.consumer_group`: the consumer-group state of the classic consumer assignors.
- :mod:`.connect_sequence`: the Connect worker rebalance sequence.
- :mod:`.streams_user_data`: Kafka Streams' ``SubscriptionInfo`` / ``AssignmentInfo`` bytes of
  a classic group's members (and their consumer-protocol envelopes).
- :mod:`.json_file`: a JSON file read with decoding errors raised as the format's own error.
- :mod:`.atomic`: whole-or-nothing file output (:func:`~.atomic.write_atomic`) and the JSON
  layout of every file written.

The values these documents become are defined in :mod:`streams_assign.model` (and
:mod:`streams_assign.streams_group`, :mod:`streams_assign.consumer.model`,
:mod:`streams_assign.connect.model`); their errors in :mod:`streams_assign.errors`.
"""

from __future__ import annotations

__all__: list[str] = []
