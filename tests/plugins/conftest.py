"""One JVM of the lag_aware_sticky plug-in jar's harness for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devtools.kafka.java import JavaError, KafkaJarsMissingError
from devtools.kafka.plugin_harness import PluginHarness


@pytest.fixture(scope="session")
def kafka_plugin() -> Iterator[PluginHarness]:
    """The plug-in jar's core in one JVM (built by Maven when stale), stopped at session end.

    Fails (never skips) when the jar cannot be built or no JDK is found.
    """
    try:
        harness = PluginHarness(jvm_args=("-Xmx256m", "-XX:+UseSerialGC"))
    except (JavaError, KafkaJarsMissingError) as exc:
        pytest.fail(f"the plug-in tests need the plug-in jar (make kafka): {exc}", pytrace=False)
    with harness:
        yield harness
