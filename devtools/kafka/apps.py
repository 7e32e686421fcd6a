"""The Java applications the Streams app runner (:mod:`devtools.kafka.streams_app`) starts:
their main classes, producers, sub-topologies and stores."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLICKS_APP", "LOG4J", "MAIN_CLASS", "ORDERS_APP", "PRODUCE_CLASS", "STORES", "AppSpec"]

MAIN_CLASS = "streamsassign.app.OrdersApp"
PRODUCE_CLASS = "streamsassign.app.Produce"
#: Stores of the topology, whose changelogs are ``<application.id>-<store>-changelog``.
STORES = ("order-totals", "payment-counts")


@dataclass(frozen=True)
class AppSpec:
    """Which Java application the instances run (``StreamsCluster(app=...)``).

    Attributes
    ----------
    main_class:
        The instance's main class (arguments as ``OrdersApp`` takes them).
    produce:
        The producer's main class and its leading arguments (then bootstrap, prefix, count,
        keys, start, partitions).
    subtopologies:
        Sub-topologies of the topology: its tasks are this many times the input partitions.
    stores:
        The topology's stores.
    """

    main_class: str
    produce: tuple[str, ...]
    subtopologies: int
    stores: tuple[str, ...]


ORDERS_APP = AppSpec(MAIN_CLASS, (PRODUCE_CLASS,), 3, STORES)
#: ``streamsassign.app.ClicksApp``: three sources in one sub-topology, a table store, a window
#: store, two repartition topics, a stateless sub-topology (4 sub-topologies, 3 stateful).
CLICKS_APP = AppSpec(
    "streamsassign.app.ClicksApp",
    ("streamsassign.app.ClicksApp", "produce"),
    4,
    ("users-store", "page-counts", "name-totals"),
)

#: log4j 1 settings of every instance: warnings on stderr, the assignor's decisions at INFO.
LOG4J = """\
log4j.rootLogger=WARN, err
log4j.appender.err=org.apache.log4j.ConsoleAppender
log4j.appender.err.Target=System.err
log4j.appender.err.layout=org.apache.log4j.PatternLayout
log4j.appender.err.layout.ConversionPattern=[%d] %p [%t] %m (%c)%n
log4j.logger.org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor=INFO
log4j.logger.org.apache.kafka.streams.processor.internals.assignment=INFO
log4j.logger.io.streamsassign=INFO
"""
