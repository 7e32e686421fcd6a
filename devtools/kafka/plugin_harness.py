"""The lag_aware_sticky plug-in jar (``kafka/assignor/``) beside the Python reference.

:func:`plugin_jar` builds ``kafka/assignor/target/streams-assign-assignor-<version>.jar`` with
Maven (dependencies from Maven Central, ``provided`` scope) unless it is newer than every source.
:class:`PluginHarness` keeps one JVM running the jar's harness main class
(``io.streamsassign.assignor.harness.Harness``) through :class:`~devtools.kafka.java.JavaBatch`
and answers one cluster state per request with the Java core's decision; :func:`python_decision`
gives the Python reference's decision in the same shape, and :func:`disagreements` lists where
the two differ (the differential of ``tests/plugins/`` and ``benchmarks/plugin_differential.py``).
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from devtools.generators.cluster_states import random_cluster_state, random_scenario
from devtools.generators.streams_groups import random_streams_group
from devtools.kafka.java import JavaBatch, JavaError, java_executable
from devtools.paths import KAFKA_SOURCES
from streams_assign.model import LATEST_OFFSET, LONG_MAX_VALUE, ClusterState

__all__ = [
    "HARNESS_CLASS",
    "PLUGIN_POM",
    "PluginHarness",
    "cluster_request",
    "disagreements",
    "draw_group",
    "draw_state",
    "fed_back",
    "group_disagreements",
    "python_group_decision",
    "plugin_jar",
    "python_decision",
]

#: The Maven module of the plug-in.
PLUGIN_MODULE = KAFKA_SOURCES / "assignor"
PLUGIN_POM = PLUGIN_MODULE / "pom.xml"
#: The harness main class inside the jar.
HARNESS_CLASS = "io.streamsassign.assignor.harness.Harness"


def _version() -> str:
    text = PLUGIN_POM.read_text()
    after = text.split("<artifactId>streams-assign-assignor</artifactId>", 1)[1]
    return after.split("<version>", 1)[1].split("</version>", 1)[0].strip()


def plugin_jar(build: bool = True) -> Path:
    """The plug-in jar, built with ``mvn -f kafka/assignor/pom.xml package`` when missing or older
    than a source file (or the pom).

    Raises
    ------
    JavaError
        When Maven fails (its output's tail in the message) or ``build`` is False and the jar
        is missing or stale.
    """
    jar = PLUGIN_MODULE / "target" / f"streams-assign-assignor-{_version()}.jar"
    sources = [PLUGIN_POM, *(PLUGIN_MODULE / "src").rglob("*.java")]
    newest = max(f.stat().st_mtime for f in sources)
    if jar.exists() and jar.stat().st_mtime >= newest:
        return jar
    if not build:
        raise JavaError(f"{jar} is missing or older than its sources: run `make kafka`")
    java_executable("javac")  # a clear error when no JDK is installed
    result = subprocess.run(
        ["mvn", "-q", "-B", "-f", str(PLUGIN_POM), "package"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0 or not jar.exists():
        tail = (result.stdout + result.stderr)[-4000:]
        raise JavaError(f"mvn package of {PLUGIN_POM} failed:\n{tail}")
    return jar


def cluster_request(cluster: ClusterState) -> dict[str, Any]:
    """The harness's request for one validated cluster state (the fields the core reads)."""
    configs = cluster.configs
    ends = cluster.changelog_end_offset_sums
    return {
        "cluster": {
            "configs": {
                "acceptable_recovery_lag": configs.acceptable_recovery_lag,
                "max_warmup_replicas": configs.max_warmup_replicas,
                "num_standby_replicas": configs.num_standby_replicas,
                "rack_aware_assignment_tags": list(configs.rack_aware_assignment_tags),
            },
            "stateful_tasks": [str(t) for t in cluster.stateful_tasks],
            "stateless_tasks": [str(t) for t in cluster.stateless_tasks],
            "changelog_end_offset_sums": (
                None if ends is None else {str(t): v for t, v in ends.items()}
            ),
            "clients": [
                {
                    "id": client.id,
                    "capacity": client.capacity,
                    "prev_active": [str(t) for t in client.prev_active],
                    "prev_standby": [str(t) for t in client.prev_standby],
                    "task_lags": {str(t): lag for t, lag in client.task_lags.items()},
                    "tags": dict(client.tags),
                }
                for client in cluster.clients
            ],
        }
    }


def python_decision(cluster: ClusterState) -> dict[str, Any]:
    """The Python reference's decision (``LagAwareStickyTaskAssignor``) in the harness's shape."""
    from streams_assign.assignors.lag_aware_sticky import LagAwareStickyTaskAssignor

    result = LagAwareStickyTaskAssignor().assign(cluster)
    return {
        "clients": {
            pid: {
                "active": sorted(str(t) for t in c.active),
                "standby": sorted(str(t) for t in c.standby),
                "warmup": sorted(str(t) for t in c.warmup),
            }
            for pid, c in result.clients.items()
        },
        "probing_rebalance_needed": result.probing_rebalance_needed,
    }


def _normalised(decision: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "clients": {
            pid: {kind: sorted(tasks) for kind, tasks in c.items()}
            for pid, c in decision["clients"].items()
        },
        "probing_rebalance_needed": decision["probing_rebalance_needed"],
    }


def disagreements(python: Mapping[str, Any], java: Mapping[str, Any]) -> list[str]:
    """Where two decisions differ: one line per client and kind, or the probing flag.

    An answer with ``error`` (the Java core threw) is one disagreement naming the exception.
    """
    if "error" in java:
        return [f"java failed: {java['error']}"]
    mine, theirs = _normalised(python), _normalised(java)
    out = []
    for pid in sorted(set(mine["clients"]) | set(theirs["clients"])):
        a = mine["clients"].get(pid, {})
        b = theirs["clients"].get(pid, {})
        for kind in ("active", "standby", "warmup"):
            if a.get(kind) != b.get(kind):
                out.append(f"{pid} {kind}: python {a.get(kind)} java {b.get(kind)}")
    if mine["probing_rebalance_needed"] != theirs["probing_rebalance_needed"]:
        out.append(
            f"probing_rebalance_needed: python {mine['probing_rebalance_needed']} "
            f"java {theirs['probing_rebalance_needed']}"
        )
    return out


class PluginHarness:
    """One JVM running the plug-in jar's core on cluster states (and streams groups).

    Parameters
    ----------
    jvm_args:
        JVM options; ``-Xmx512m`` by default.
    jar:
        The plug-in jar to run (default :func:`plugin_jar`, built when stale); a long run
        passes a copy, so a rebuild meanwhile cannot change the classes under it.

    Raises
    ------
    JavaError
        When the jar cannot be built or the JVM fails.
    """

    def __init__(self, jvm_args: tuple[str, ...] = ("-Xmx512m",), jar: Path | None = None) -> None:
        self.jar = plugin_jar() if jar is None else jar
        self._batch = JavaBatch(HARNESS_CLASS, str(self.jar), jvm_args=jvm_args)

    def decide(self, cluster: ClusterState) -> dict[str, Any]:
        """The Java core's decision for one cluster state (``nanos``: its time in the JVM)."""
        answer: dict[str, Any] = self._batch.request(cluster_request(cluster))
        return answer

    def request(self, document: Mapping[str, Any]) -> Any:
        """Send one raw harness request (for example ``{"group": ...}``)."""
        return self._batch.request(dict(document))

    def compare(self, cluster: ClusterState) -> list[str]:
        """Disagreements between the Python reference and the Java core on one state."""
        return disagreements(python_decision(cluster), self.decide(cluster))

    def close(self) -> None:
        """Stop the JVM."""
        self._batch.close()

    def __enter__(self) -> PluginHarness:
        self._batch.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def draw_state(rng: random.Random) -> dict[str, Any]:
    """One random cluster-state document for the differential.

    :func:`~devtools.generators.cluster_states.random_cluster_state` (a third with client tags,
    a fifth with up to 30 clients and 120 tasks) or
    :func:`~devtools.generators.cluster_states.random_scenario`; a quarter of them also give
    ``changelog_end_offset_sums`` (small, large or ``Long.MAX_VALUE`` per task), so clients
    without state may count as caught up.
    """
    roll = rng.random()
    if roll < 0.2:
        document = random_scenario(rng)
    elif roll < 0.4:
        document = random_cluster_state(rng, max_clients=30, max_tasks=120, tags=rng.random() < 0.3)
    else:
        document = random_cluster_state(rng, tags=rng.random() < 0.35)
    if rng.random() < 0.25:
        ends = {}
        for task in document["stateful_tasks"]:
            if rng.random() < 0.8:
                ends[task] = rng.choice([0, 50, 5_000, 20_000, 2_000_000, LONG_MAX_VALUE])
        document["changelog_end_offset_sums"] = ends
    return document


def fed_back(
    document: Mapping[str, Any], decision: Mapping[str, Any], rng: random.Random
) -> dict[str, Any]:
    """The next rebalance after ``decision`` ran: its actives and standbys become the previous
    assignment; actives report ``-2``, standbys (warmups included) a lag that may have caught up.
    """
    acceptable = document.get("configs", {}).get("acceptable_recovery_lag", 10_000)
    clients = []
    for client in document["clients"]:
        mine = decision["clients"][client["id"]]
        lags: dict[str, int] = {}
        for task in mine["standby"]:
            bound = acceptable if acceptable < LONG_MAX_VALUE else 10_000
            lags[task] = rng.choice([0, bound, bound + 1, 10 * bound + 7, -3])
        for task in mine["active"]:
            if task in document["stateful_tasks"]:
                lags[task] = LATEST_OFFSET
        clients.append(
            {
                **client,
                "prev_active": list(mine["active"]),
                "prev_standby": [t for t in mine["standby"] if t not in mine["active"]],
                "task_lags": lags,
            }
        )
        clients[-1].pop("consumers", None)
    return {**document, "clients": clients}


def draw_group(rng: random.Random) -> dict[str, Any]:
    """One random streams-group state for the broker form's differential.

    :func:`~devtools.generators.streams_groups.random_streams_group`, with
    ``task_end_offsets`` added to most members: per reported offset an end offset at, just
    above, well above (beyond ``acceptable.recovery.lag``) or below it, or ``Long.MAX_VALUE``
    (as Kafka Streams 4.4 members report for some standby tasks), some left out. About 30 %
    of the groups have a standby or warm-up task that its process reported no offset for.
    """
    document = random_streams_group(rng)
    for member in document.get("members", []):
        if rng.random() < 0.2:
            continue
        ends: dict[str, dict[str, int]] = {}
        for sub, parts in member.get("task_offsets", {}).items():
            for p, offset in parts.items():
                if rng.random() < 0.85:
                    lag = rng.choice([0, 7, 10_000, 10_001, 250_000, -5, LONG_MAX_VALUE])
                    ends.setdefault(sub, {})[p] = min(max(0, offset + lag), LONG_MAX_VALUE)
        member["task_end_offsets"] = ends
    return document


def python_group_decision(document: Mapping[str, Any]) -> dict[str, Any]:
    """The Python broker form's decision (``assign_group(..., "lag_aware_sticky")``) as JSON."""
    from streams_assign.assignors import assign_group

    decided: dict[str, Any] = assign_group(document, "lag_aware_sticky").to_json()
    return decided


def group_disagreements(python: Mapping[str, Any], java: Mapping[str, Any]) -> list[str]:
    """Members whose tasks differ between two streams-group decisions (or the Java error)."""
    if "error" in java:
        return [f"java failed: {java['error']}"]
    mine, theirs = python["members"], java["members"]
    out = []
    for member in sorted(set(mine) | set(theirs)):
        a, b = mine.get(member, {}), theirs.get(member, {})
        for kind in ("active", "standby"):
            left = {s: sorted(p) for s, p in a.get(kind, {}).items() if p}
            right = {s: sorted(p) for s, p in b.get(kind, {}).items() if p}
            if left != right:
                out.append(f"{member} {kind}: python {left} java {right}")
    return out
