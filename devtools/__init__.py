"""Repository tooling: Kafka's own code run beside ours, and seeded generators of inputs.

Not installed with the package (``pyproject.toml`` lists only ``streams_assign*`` and ``lag*``)
and imported by no module of ``streams_assign`` or ``lag``: the tests, the benchmarks and the
Makefile use it from a checkout, where the repository root is on ``sys.path``.

- :mod:`devtools.kafka`: JVMs answering JSON lines, a KRaft broker, the Streams app runner,
  Kafka's reference assignors as harnesses, the end-to-end scenarios and the real-cluster demo.
- :mod:`devtools.generators`: seeded random cluster states and streams-group states, and
  Kafka's convergence harness;
- :mod:`devtools.spark_cluster`: a Spark standalone cluster on loopback;
- :mod:`devtools.paths`: the repository root and the folders the harnesses build from.
"""

__all__: list[str] = []
