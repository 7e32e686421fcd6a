"""Test and benchmark helpers that run Apache Kafka's own code beside ours.

Nothing here is imported by the assignors: these helpers start JVMs, brokers and Kafka's tools
from the jars that ``kafka/pom.xml`` fetches into ``.kafka/`` (``make kafka``).
"""

__all__: list[str] = []
