"""``streams-assign plan``: outputs, and the bad-input rules (exit 2, path and value named,
nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main
from streams_assign.formats.cluster_state import load_cluster_state
from streams_assign.simulation.whatif import Changes, apply_changes

CRASH = CORPORA / "kafka-diff" / "input" / "s0002-crash.json"


@pytest.fixture(scope="module")
def crash() -> Path:
    if not CRASH.exists():
        pytest.fail(f"shared scenario {CRASH} is missing")
    return CRASH


def test_write_state_is_the_what_if_state(crash: Path, tmp_path: Path) -> None:
    cluster = load_cluster_state(crash)
    victim = cluster.clients[2].id
    out = tmp_path / "next.json"
    status = main(
        [
            "plan",
            str(crash),
            "--kill",
            victim[:8],
            "--add",
            "1",
            "--assignor",
            "sticky",
            "--write-state",
            str(out),
        ]
    )
    assert status == 0
    assert load_cluster_state(out) == apply_changes(cluster, Changes(kill=(victim,), add=1))


def test_json_output_is_deterministic(crash: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "plan",
        str(crash),
        "--bounce",
        load_cluster_state(crash).clients[0].id,
        "--json",
        "--assignor",
        "high_availability",
        "--restore-rate",
        "3000",
    ]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert main(argv) == 0
    assert capsys.readouterr().out == first
    document = json.loads(first)
    (ha,) = document["assignors"]
    assert ha["records_restored"] == sum(r["records_restored"] for r in ha["rounds"])
    assert ha["rebalances"] == len(ha["rounds"])


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--kill", "zzzz"], "--kill 'zzzz': no client"),
        (["--assignor", "high_availabilty"], "did you mean 'high_availability'"),
        (["--restore-rate", "0"], "--restore-rate must be > 0 records/s, got 0"),
        (["--add", "-1"], "--add must be >= 0 instances, got -1"),
        (["--plot", "out.gif"], "--plot out.gif: use a .png, .svg, .pdf file name"),
        (["--report", "missing-dir/r.html"], "folder missing-dir does not exist"),
        (["--add", "1", "--add-id", "nope"], "--add-id 'nope': not a UUID"),
        (["--follow-up-ms", "-1"], "--follow-up-ms must be >= 0, got -1"),
        (["--streams-config", "app.properties"], "--streams-config app.properties: no such file"),
    ],
)
def test_bad_options_exit_2_and_write_nothing(
    crash: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    needle: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    state = tmp_path / "next.json"
    status = main(["plan", str(crash), "--write-state", str(state), *extra])
    err = capsys.readouterr().err
    assert status == 2
    assert needle in err and err.count("\n") == 1
    assert not state.exists()
    assert list(tmp_path.iterdir()) == []


def test_bad_state_file_is_named_with_its_json_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(CRASH.read_text())
    document["clients"][1]["capacity"] = 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    assert main(["plan", str(bad), "--add", "1"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "clients[1].capacity" in err and "got 0" in err


def test_rates_table_gives_per_replica_rates(crash: Path, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cluster = load_cluster_state(crash)
    client = cluster.clients[0]
    task = cluster.stateful_tasks[0]
    table = pa.table(
        {
            "process_id": [client.id, client.id, cluster.clients[1].id],
            "task_id": [str(task), str(cluster.stateful_tasks[1]), str(task)],
            "restore_rate": [100.0, None, 300.0],
        }
    )
    path = tmp_path / "restore.parquet"
    pq.write_table(table, path)
    from streams_assign.simulation.rates import read_restore_rates

    rates = read_restore_rates(path, None)
    assert rates.rate(client.id, task) == 100.0
    assert rates.rate(cluster.clients[2].id, task) == 200.0  # the task's median
    assert rates.default == 200.0  # median of all measured rates
    assert rates.rate(client.id, cluster.stateful_tasks[1]) == 200.0  # null gives no measure


def test_rates_table_without_its_column_is_refused(
    crash: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "restore.parquet"
    pq.write_table(pa.table({"process_id": ["x"], "task_id": ["0_0"], "rate": [1.0]}), path)
    assert main(["plan", str(crash), "--rates", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"--rates {path}: no column restore_rate" in err


def test_session_timeout_and_configs_come_from_the_streams_config(
    crash: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    properties = tmp_path / "app.properties"
    properties.write_text(
        "consumer.session.timeout.ms=12345\nsession.timeout.ms=99\n"
        "probing.rebalance.interval.ms=70000\n"
    )
    victim = load_cluster_state(crash).clients[0].id
    argv = ["plan", str(crash), "--kill", victim, "--assignor", "high_availability", "--json"]
    assert main([*argv, "--streams-config", str(properties)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["session_timeout_ms"] == 12345
    assert document["probing_rebalance_interval_ms"] == 70000
    (chain,) = document["chains"]
    assert chain["chain"][0]["time_ms"] == 12345
    assert chain["chain"][0]["kind"] == "membership change"
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["session_timeout_ms"] == 45000
    assert "session.timeout.ms = 45000 (Kafka's default; not given)" in captured.err


def test_add_without_ids_reports_the_spread_over_uuid_order(
    crash: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["plan", str(crash), "--add", "1", "--assignor", "high_availability", "--json"]
    assert main([*argv, "--id-samples", "3"]) == 0
    spread = json.loads(capsys.readouterr().out)["id_order"]
    assert len(spread["samples"]) == 3
    low, high = spread["range"]["moves"]
    assert low == min(s["moves"] for s in spread["samples"])
    assert high == max(s["moves"] for s in spread["samples"])
    given_id = spread["samples"][2]["add_ids"][0]
    assert main([*argv, "--add-id", given_id]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["id_order"] is None
    assert document["chains"][0]["moves"] == spread["samples"][2]["moves"]
