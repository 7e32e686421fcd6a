"""``streams-lag`` end to end: exit statuses, one-line errors, whole-or-nothing outputs, the
generator's determinism and the demo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lag.cli import main
from lag.fleet.generate import generate
from lag.fleet.spec import FleetSpec
from lag.outputs.tables import write_table
from streams_assign.formats.cluster_state import parse_cluster_state

SMALL = FleetSpec(instances=3, tasks=12, stores=2, standbys=1, seed=3, new_instances=1)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fleet")
    generate(SMALL, out)
    return out


def compute_args(fleet: Path, output: Path, *extra: str) -> list[str]:
    return [
        "compute",
        "--application-id",
        "orders-app",
        "--topology",
        str(fleet / "topology.txt"),
        "--members",
        str(fleet / "members.txt"),
        "--end-offsets",
        str(fleet / "end-offsets.txt"),
        "--output",
        str(output),
        "--quiet",
        *extra,
    ]


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("streams-lag: error: ")
    assert "Traceback" not in err[0]
    return err[0]


# --- failures: exit 2, one line, nothing written -------------------------------------------------


def test_missing_topology_exits_2_with_one_line(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "cluster.json"
    args = compute_args(fleet, output, "--state-dirs", str(fleet / "state"))
    args[args.index("--topology") + 1] = str(tmp_path / "nope.txt")

    assert main(args) == 2
    line = one_line_error(capsys)
    assert "--topology" in line and "no such file" in line
    assert not output.exists()


def test_members_without_streams_member_exit_2_and_keep_the_old_output(
    fleet: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "cluster.json"
    output.write_text('{"old": true}\n')
    args = compute_args(fleet, output, "--state-dirs", str(fleet / "state" / "instance-01"))
    args[args.index("--members") + 1] = str(samples / "consumer-groups-members-verbose.txt")

    assert main(args) == 2
    line = one_line_error(capsys)
    assert "no Kafka Streams member of application 'orders-app'" in line
    assert "not a Streams consumer id" in line
    assert output.read_text() == '{"old": true}\n'


@pytest.mark.parametrize("option", ["--offsets", "--state-dirs", "--end-offsets"])
def test_missing_local_state_or_end_offsets_exit_2(
    option: str, fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = compute_args(fleet, tmp_path / "c.json", "--offsets", str(tmp_path / "offsets.parquet"))
    if option == "--state-dirs":
        args[-2:] = ["--state-dirs", str(tmp_path / "no-state")]
    elif option == "--end-offsets":
        args[-2:] = ["--state-dirs", str(fleet / "state" / "instance-01")]
        args[args.index("--end-offsets") + 1] = str(tmp_path / "end.txt")

    assert main(args) == 2
    assert option in one_line_error(capsys)


@pytest.mark.spark
def test_corrupt_offsets_file_exits_2_naming_the_file(
    fleet: Path, tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "offsets.parquet"
    bad.write_bytes(b"not parquet at all")
    output = tmp_path / "c.json"

    assert main(compute_args(fleet, output, "--offsets", str(bad))) == 2
    line = one_line_error(capsys)
    assert f"--offsets {bad}: unreadable as parquet" in line
    assert not output.exists()


def test_output_into_a_missing_folder_exits_2(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = compute_args(
        fleet, tmp_path / "absent" / "c.json", "--state-dirs", str(fleet / "state" / "instance-01")
    )

    assert main(args) == 2
    assert "--output" in one_line_error(capsys)


# --- success -------------------------------------------------------------------------------------


@pytest.mark.spark
def test_compute_writes_cluster_state_and_tables(
    fleet: Path, tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    state = fleet / "state"
    bad = tmp_path / "state-copy"
    shutil.copytree(state, bad)
    broken = next(bad.glob("instance-01/orders-app/*/.checkpoint"))
    broken.write_text("0\n5\nonly one line 1\n")
    output = tmp_path / "cluster.json"
    args = compute_args(
        fleet,
        output,
        "--state-dirs",
        *sorted(str(p) for p in bad.iterdir()),
        "--lags-table",
        str(tmp_path / "lags.csv"),
        "--restore-table",
        str(tmp_path / "restore.parquet"),
        "--errors-table",
        str(tmp_path / "errors.jsonl"),
        "--num-standby-replicas",
        "1",
    )

    assert main(args) == 0
    err = capsys.readouterr().err
    assert "4 client(s)" in err and "errors: 1 row(s) not used (unreadable checkpoint 1)" in err
    document = json.loads(output.read_text())
    state_obj = parse_cluster_state(document)
    assert len(state_obj.clients) == 4 and document["configs"]["num_standby_replicas"] == 1
    newcomer = [c for c in document["clients"] if not c["prev_active"]]
    assert len(newcomer) == 1 and newcomer[0]["task_lags"] == {}
    # Each table is ONE file of the format its name ends with.
    lag_lines = (tmp_path / "lags.csv").read_text().splitlines()
    assert lag_lines[0].startswith("snapshot_time,process_id,task_id") and len(lag_lines) > 1
    assert pq.read_table(tmp_path / "restore.parquet").num_rows > 0
    errors = [json.loads(line) for line in (tmp_path / "errors.jsonl").read_text().splitlines()]
    assert [(e["source"], e["reason"].split(":")[0]) for e in errors] == [
        (str(broken), "unreadable checkpoint")
    ]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.spark
def test_compute_takes_the_configs_from_the_applications_properties_file(
    fleet: Path, tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    props = tmp_path / "app.properties"
    props.write_text(
        "application.id=orders-app\n"
        "# the assignment configs of the running application\n"
        "num.standby.replicas = 1\n"
        "acceptable.recovery.lag: 500\n"
        "max.warmup.replicas=5\n"
        "rack.aware.assignment.tags=zone\n"
    )
    output = tmp_path / "cluster.json"
    args = compute_args(
        fleet,
        output,
        "--state-dirs",
        *sorted(str(p) for p in (fleet / "state").iterdir()),
        "--streams-config",
        str(props),
        "--max-warmup-replicas",
        "3",
    )

    assert main(args) == 0
    err = capsys.readouterr().err
    document = json.loads(output.read_text())
    assert document["configs"] == {
        "acceptable_recovery_lag": 500,
        "max_warmup_replicas": 3,  # the flag over the file
        "num_standby_replicas": 1,
        "probing_rebalance_interval_ms": 600_000,
        "rack_aware_assignment_tags": ["zone"],
    }
    assert "probing.rebalance.interval.ms = 600000 (Kafka's default; not given)" in err
    assert "acceptable.recovery.lag = " not in err  # given: not a default
    assert document["description"] == (
        f"configs: acceptable.recovery.lag=500 ({props}); max.warmup.replicas=3 (flag "
        f"--max-warmup-replicas); num.standby.replicas=1 ({props}); "
        "probing.rebalance.interval.ms=600000 (Kafka's default); "
        f"rack.aware.assignment.tags=zone ({props})"
    )
    state = parse_cluster_state(document)
    assert state.configs.rack_aware_assignment_tags == ("zone",)
    assert set(document["changelog_end_offset_sums"]) == set(document["stateful_tasks"])


@pytest.mark.parametrize("flag", ["--moment-join", "--interval-join", "--restore-from-lag-table"])
def test_compute_offers_no_join_plan_options(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job chooses its as-of join plan itself: ``compute`` refuses the engine's internals."""
    from lag.cli import build_parser

    args = ["compute", "--application-id", "a", "--topology", "t", "--members", "m"]
    args += ["--end-offsets", "e", "--offsets", "o", "--output", str(tmp_path / "c.json"), flag]
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(args)
    assert exited.value.code == 2
    assert f"unrecognized arguments: {flag}" in capsys.readouterr().err


@pytest.mark.spark
def test_failed_table_write_leaves_the_previous_table(tmp_path: Path, spark: Any) -> None:
    from pyspark.sql import functions as F

    target = tmp_path / "table.parquet"
    write_table(spark.range(3), str(target))
    write_table(spark.range(5), str(target))
    assert pq.read_table(target).num_rows == 5

    failing = spark.range(4).select(
        F.when(F.col("id") == 3, F.raise_error(F.lit("boom"))).otherwise(F.col("id")).alias("id")
    )
    with pytest.raises(Exception, match="boom"):
        write_table(failing, str(target))
    assert pq.read_table(target).num_rows == 5
    assert [p.name for p in tmp_path.iterdir()] == ["table.parquet"]


def test_collect_writes_offset_rows_and_its_errors(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs = sorted(str(p) for p in (fleet / "state").iterdir())
    assert (
        main(
            [
                "collect",
                *dirs,
                "-o",
                str(tmp_path / "o.parquet"),
                "--errors-table",
                str(tmp_path / "e.csv"),
            ]
        )
        == 0
    )
    checkpoints = list((fleet / "state").glob("*/orders-app/*/.checkpoint"))
    entries = sum(int(p.read_text().splitlines()[1]) for p in checkpoints)
    assert pq.read_table(tmp_path / "o.parquet").num_rows == entries
    assert (tmp_path / "e.csv").read_text().splitlines() == ["source,line,raw,reason"]
    assert "errors: none" in capsys.readouterr().err


def test_generate_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    base = [
        "generate",
        "--instances",
        "3",
        "--tasks",
        "9",
        "--stores",
        "3",
        "--standbys",
        "2",
        "--seed",
        "9",
    ]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    assert main([*base, "--out", str(tmp_path / "b")]) == 0
    assert main([*base, "--snapshots", "3", "--out", str(tmp_path / "c")]) == 0

    files_a = sorted(
        p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file()
    )
    files_b = sorted(
        p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file()
    )
    assert files_a == files_b and len(files_a) > 10
    assert all(
        (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files_a
    )
    history = pq.read_table(tmp_path / "c" / "offsets.parquet")
    assert (
        len(set(history.column("snapshot_time").to_pylist())) == 3 * 3
    )  # 3 snapshots x 3 processes


@pytest.mark.spark
def test_demo_runs_the_whole_pipeline(
    tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from lag.demo import main as demo_main

    assert demo_main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "next rebalance" in out and "Probing rebalance" in out
    assert json.loads((tmp_path / "cluster.json").read_text())["name"] == "orders-app"


def test_summary_table_counts_caught_up_lagging_and_stateless_tasks_per_client() -> None:
    from rich.console import Console

    from lag.cli import summary_table
    from lag.pipeline import ComputeSummary

    a, b = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    document = {
        "configs": {"acceptable_recovery_lag": 100},
        "stateful_tasks": ["0_0", "0_1", "0_2", "0_3"],
        "stateless_tasks": [],
        "clients": [
            {"id": a, "capacity": 2, "task_lags": {"0_0": -2, "0_1": 100, "0_2": 101}},
            {"id": b, "capacity": 1, "task_lags": {"0_3": -3}},
        ],
    }
    summary = ComputeSummary(document, {}, [], ["c.json"])

    rows = {r["id"]: r for r in summary.client_rows()}
    assert {k: rows[a][k] for k in ("active", "caught_up", "lagging", "no_state")} == {
        "active": 1,
        "caught_up": 2,
        "lagging": 1,
        "no_state": 1,
    }
    assert rows[a]["largest"] == [("0_2", 101)]
    assert (rows[b]["caught_up"], rows[b]["lagging"], rows[b]["no_state"]) == (0, 1, 3)
    console = Console(width=160, record=True)
    console.print(summary_table(summary))
    assert "0_2 101" in console.export_text()
