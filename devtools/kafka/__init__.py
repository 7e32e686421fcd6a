"""Test and benchmark helpers that run Apache Kafka's own code beside ours.

They start JVMs, brokers and Kafka's tools from the jars that ``kafka/pom.xml`` fetches into
``.kafka/`` (``make kafka``), and build the harnesses and the Streams app from ``kafka/``.
"""

__all__: list[str] = []
