"""The metrics reader on real JmxTool and Prometheus JMX-exporter outputs of Kafka Streams 4.2.1
(tests/corpora/tool-samples/metrics-*, PROVENANCE.md says how they were taken)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from devtools.paths import CORPORA
from lag.sources.metrics import parse_jmxtool, parse_prometheus, read_metrics
from streams_assign.errors import LagInputError

SAMPLES = CORPORA / "tool-samples"
#: Each scrape, the instance's own report taken with it, and its application id.
CASES = {
    "metrics-jmxtool-table-4.2.1.txt": ("metrics-sample-instance-1.json", "metrics-sample"),
    "metrics-prometheus-4.2.1.txt": ("metrics-sample-instance-1.json", "metrics-sample"),
    "metrics-jmxtool-table-4.4.0.txt": (
        "metrics-sample-4.4.0-instance-1.json",
        "metrics-sample-44",
    ),
}


def _standby_partitions(instance: dict[str, Any], app: str) -> set[tuple[str, int]]:
    stores = {"1": "order-totals", "2": "payment-counts"}
    out = set()
    for _active, standby in instance["threads"].values():
        for task in standby:
            sub, part = task.split("_")
            out.add((f"{app}-{stores[sub]}-changelog", int(part)))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_restore_consumer_lags_are_the_standbys_changelog_partitions(name: str) -> None:
    report, app = CASES[name]
    INSTANCE = json.loads((SAMPLES / report).read_text())
    dump = read_metrics(SAMPLES / name)
    pid = INSTANCE["pid"]
    expected = _standby_partitions(INSTANCE, app)
    assert {(lag.topic, lag.partition) for lag in dump.restore_lags} == expected
    assert all(lag.client_id.endswith("-restore-consumer") for lag in dump.restore_lags)
    assert all(pid in lag.client_id for lag in dump.restore_lags)
    # Caught up when the sample was taken: the instance's own positions equal the end offsets.
    assert {lag.records_lag for lag in dump.restore_lags} == {0}
    threads = {f"{t}-consumer" for t in INSTANCE["threads"]}
    assert set(dump.last_rebalance_s) == threads
    assert all(seconds > 0 for seconds in dump.last_rebalance_s.values())
    assert dump.store_tasks == {
        "order-totals": {f"1_{p}" for p in range(4)},
        "payment-counts": {f"2_{p}" for p in range(4)},
    }
    assert dump.time_ms is not None


def test_jmxtool_key_value_format_and_its_scrape_time() -> None:
    dump = read_metrics(SAMPLES / "metrics-jmxtool-csv-4.2.1.txt")
    assert dump.time_ms == 1795802287661
    assert {(lag.topic[-26:], lag.partition) for lag in dump.restore_lags} == {
        ("opprobe-order-totals-changelog"[-26:], 0),
        ("opprobe-payment-counts-changelog"[-26:], 0),
        ("opprobe-order-totals-changelog"[-26:], 2),
        ("opprobe-payment-counts-changelog"[-26:], 2),
    }
    # The main consumers' source partitions are not restore positions.
    assert not any("StreamThread-1-consumer" in lag.client_id for lag in dump.restore_lags)


def test_properties_and_tsv_formats_read_like_csv() -> None:
    name = (
        "kafka.consumer:type=consumer-fetch-manager-metrics,client-id=a-StateUpdater-1-restore-"
        "consumer,topic=a-s-changelog,partition=3:records-lag"
    )
    for sep in ("=", "\t", ","):
        dump = parse_jmxtool(f"time{sep}17\n{name}{sep}42.0\n", "x")
        assert dump.time_ms == 17
        assert [(d.partition, d.records_lag) for d in dump.restore_lags] == [(3, 42)]


def test_nan_lag_is_skipped_and_labels_are_unescaped() -> None:
    text = (
        'k_consumer_fetch_manager_metrics_records_lag{client_id="a-StateUpdater-1-restore-'
        'consumer",topic="t\\"x",partition="0"} NaN\n'
        'k_consumer_fetch_manager_metrics_records_lag{client_id="a-StateUpdater-1-restore-'
        'consumer",topic="t\\"x",partition="1"} 5 1700000000000\n'
    )
    dump = parse_prometheus(text)
    assert [(d.topic, d.partition, d.records_lag) for d in dump.restore_lags] == [('t"x', 1, 5)]
    assert dump.time_ms == 1700000000000


@pytest.mark.parametrize("text", ["", "hello world\n", "# HELP only\n"])
def test_files_in_neither_form_name_the_file(tmp_path, text: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "scrape.txt"
    path.write_text(text)
    with pytest.raises(LagInputError, match="scrape.txt"):
        read_metrics(path)


def test_missing_file_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(LagInputError, match="nope.txt: cannot read"):
        read_metrics(tmp_path / "nope.txt")
