"""Read the standard client metrics an operator already scrapes from Kafka Streams instances.

Two text forms are read, whichever a monitoring set-up keeps:

- **Kafka's JmxTool** (``kafka-run-class org.apache.kafka.tools.JmxTool --one-time true``, any
  ``--report-format``: ``csv``, ``tsv``, ``properties``, or the default table): one
  ``<object name>:<attribute>`` and its value per line (or a header row of those names and
  rows of values); its ``time`` entry is the scrape time (epoch ms).
- **A Prometheus text exposition** (the Prometheus JMX exporter's ``/metrics`` page, or any
  exporter that keeps the MBean's key properties as labels): ``name{label="value",...} value
  [timestamp]``; the sample's timestamp, else the file's modification time, is the scrape time.

Three metric families are used (names as Kafka's clients register them, 4.2 and 4.4 alike):

``kafka.consumer:type=consumer-fetch-manager-metrics,client-id=C,topic=T,partition=P``
    ``records-lag`` of the **restore consumer** (client id ending ``-restore-consumer``): how
    far, in records, the changelog partition's local copy is behind the high watermark the
    consumer last fetched. Standby tasks and restoring active tasks keep their changelog
    partitions there (Kafka Streams 4.2 names it ``<client>-StateUpdater-<n>-restore-consumer``
    with the state updater, the default; ``<client>-StreamThread-<n>-restore-consumer``
    without). ``FetchMetricsManager`` registers the topic tag twice, as is and with ``.``
    replaced by ``_``; both are read.
``kafka.consumer:type=consumer-coordinator-metrics,client-id=C``
    ``last-rebalance-seconds-ago`` of each stream thread's main consumer: how old the group's
    own state (the offset sums each thread sent at the last rebalance) is.
``kafka.streams:type=stream-state-metrics,thread-id=T,task-id=1_3,<kind>-state-id=STORE``
    Any attribute: which task holds which store, so the changelog ``<app>-STORE-changelog``
    maps to the task's sub-topology without the topology's text.

:func:`read_metrics` reads one file; values that are not numbers (``NaN``: no fetch yet) are
skipped. Nothing here needs the application's code to change.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from streams_assign.errors import LagInputError

__all__ = [
    "MetricsDump",
    "RestoreLag",
    "parse_jmxtool",
    "parse_prometheus",
    "read_metrics",
]

_RESTORE_SUFFIX = "-restore-consumer"
_PROM_LINE = re.compile(
    r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)"
    r"(?:\s+(?P<ts>-?\d+))?\s*$"
)
_PROM_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')


@dataclass(frozen=True, slots=True)
class RestoreLag:
    """One changelog partition of one restore consumer.

    Attributes
    ----------
    client_id:
        The restore consumer's client id (``<client>-StateUpdater-1-restore-consumer``).
    topic, partition:
        The changelog partition.
    records_lag:
        Records behind the high watermark of its last fetch (>= 0).
    """

    client_id: str
    topic: str
    partition: int
    records_lag: int


@dataclass(slots=True)
class MetricsDump:
    """What one metrics file says.

    Attributes
    ----------
    source:
        The file.
    time_ms:
        Scrape time, epoch ms (JmxTool's ``time``, the samples' timestamp, else the file's
        modification time).
    restore_lags:
        ``records-lag`` of every restore-consumer partition.
    last_rebalance_s:
        Main consumer client id -> ``last-rebalance-seconds-ago`` at the scrape.
    store_tasks:
        Store name -> task ids (``1_3``) holding it (``stream-state-metrics``).
    """

    source: str
    time_ms: int | None = None
    restore_lags: list[RestoreLag] = field(default_factory=list)
    last_rebalance_s: dict[str, float] = field(default_factory=dict)
    store_tasks: dict[str, set[str]] = field(default_factory=dict)

    def add(self, domain: str, props: dict[str, str], attribute: str, value: float) -> None:
        """Keep one MBean attribute if it is one of the three families (see the module)."""
        kind = props.get("type", "")
        client = props.get("client-id", props.get("client_id", ""))
        if kind == "consumer-fetch-manager-metrics" and attribute == "records-lag":
            usable = client.endswith(_RESTORE_SUFFIX) and not math.isnan(value)
            if usable and props.get("partition", "").isdigit() and "topic" in props:
                lag = RestoreLag(client, props["topic"], int(props["partition"]), int(value))
                if lag not in self.restore_lags:
                    self.restore_lags.append(lag)
        elif kind == "consumer-coordinator-metrics" and attribute == "last-rebalance-seconds-ago":
            if not math.isnan(value) and value >= 0:
                self.last_rebalance_s[client] = value
        elif kind == "stream-state-metrics" and "task-id" in props:
            for key, store in props.items():
                if key.endswith("-state-id"):
                    self.store_tasks.setdefault(store, set()).add(props["task-id"])
        del domain


def _object_name(text: str, source: str) -> tuple[str, dict[str, str], str] | None:
    """``domain:k=v,...:attribute`` -> (domain, properties, attribute); None if not one."""
    domain, sep, rest = text.partition(":")
    if not sep:
        return None
    names, sep, attribute = rest.rpartition(":")
    if not sep:
        return None
    props = {}
    for pair in names.split(","):
        key, eq, value = pair.partition("=")
        if not eq:
            return None
        props[key.strip()] = value.strip().strip('"')
    del source
    return domain, props, attribute


def _number(text: str) -> float | None:
    try:
        return float(text.strip().strip('"'))
    except ValueError:
        return None


def parse_jmxtool(text: str, source: str = "<jmxtool>") -> MetricsDump:
    """Parse Kafka's ``JmxTool`` output (any ``--report-format``; the last row of a table).

    Raises
    ------
    LagInputError
        When no line is a JmxTool entry (naming the file).
    """
    dump = MetricsDump(source)
    pairs: list[tuple[str, str]] = []
    lines = [line for line in text.splitlines() if line.strip()]
    table = [line for line in lines if line.startswith('"time"')]
    if table:
        header = next(csv.reader(io.StringIO(table[-1])))
        rows = [line for line in lines[lines.index(table[-1]) + 1 :] if line[:1].isdigit()]
        if rows:
            pairs = list(zip(header, next(csv.reader(io.StringIO(rows[-1]))), strict=False))
    else:
        for line in lines:
            for separator in (",", "\t", "="):
                key, sep, value = line.rpartition(separator)
                if sep and (key == "time" or ":" in key) and _number(value) is not None:
                    pairs.append((key, value))
                    break
    if not pairs:
        raise LagInputError(f"--metrics {source}: no JmxTool entry (object name:attribute, value)")
    for key, raw in pairs:
        number = _number(raw)
        if number is None:
            continue
        if key == "time":
            dump.time_ms = int(number)
            continue
        name = _object_name(key, source)
        if name is not None:
            dump.add(name[0], name[1], name[2], number)
    return dump


def parse_prometheus(text: str, source: str = "<prometheus>") -> MetricsDump:
    """Parse a Prometheus text exposition of Kafka's client MBeans.

    A sample counts when its name ends with the attribute (``records_lag``,
    ``last_rebalance_seconds_ago``) and its labels carry the MBean's key properties
    (``client_id``, ``topic``, ``partition``, ``task_id``, ``*_state_id``), as the JMX
    exporter writes them without rules; the metric family is told by the name
    (``..._fetch_manager_...``, ``..._coordinator_...``, ``..._stream_state_...``).

    Raises
    ------
    LagInputError
        When no line is a sample (naming the file).
    """
    dump = MetricsDump(source)
    samples = 0
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = _PROM_LINE.match(line)
        if match is None:
            continue
        value = _number(match["value"])
        if value is None:
            continue
        samples += 1
        labels = {k: _unescape(v) for k, v in _PROM_LABEL.findall(match["labels"] or "")}
        if match["ts"] is not None:
            dump.time_ms = max(dump.time_ms or 0, int(match["ts"]))
        props = {k.replace("_", "-"): v for k, v in labels.items()}
        name = match["name"]
        if "fetch_manager" in name and name.endswith("records_lag"):
            dump.add(
                "kafka.consumer",
                props | {"type": "consumer-fetch-manager-metrics"},
                "records-lag",
                value,
            )
        elif "coordinator" in name and name.endswith("last_rebalance_seconds_ago"):
            dump.add(
                "kafka.consumer",
                props | {"type": "consumer-coordinator-metrics"},
                "last-rebalance-seconds-ago",
                value,
            )
        elif "stream_state" in name:
            dump.add("kafka.streams", props | {"type": "stream-state-metrics"}, name, value)
    if not samples:
        raise LagInputError(f"--metrics {source}: no Prometheus sample (name{{labels}} value)")
    return dump


def _unescape(value: str) -> str:
    return value.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def read_metrics(path: str | Path) -> MetricsDump:
    """Read one metrics file: JmxTool output or a Prometheus exposition (told by its lines).

    Parameters
    ----------
    path:
        The file.

    Returns
    -------
    MetricsDump
        Its scrape time defaults to the file's modification time (epoch ms).

    Raises
    ------
    LagInputError
        When the file is missing, unreadable, or in neither form.
    """
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8", errors="replace")
        mtime_ms = int(target.stat().st_mtime * 1000)
    except OSError as exc:
        raise LagInputError(f"--metrics {path}: cannot read: {exc.strerror or exc}") from None
    first = next((line for line in text.splitlines() if line.strip()), "")
    jmx = first.startswith(("time", '"time"', "Trying to connect")) or (
        "kafka.consumer:type=" in text or "kafka.streams:type=" in text
    )
    dump = parse_jmxtool(text, str(path)) if jmx else parse_prometheus(text, str(path))
    if dump.time_ms is None:
        dump.time_ms = mtime_ms
    return dump
