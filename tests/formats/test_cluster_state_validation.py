"""Bad input: every validation rule of the cluster-state format names the JSON path and value,
through the API (``InvalidScenarioError``) and the CLI (exit 2, one line on stderr, nothing
written); plus the CLI's batch and JSON outputs."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from streams_assign.assignors import assign
from streams_assign.cli import main
from streams_assign.errors import InvalidScenarioError
from streams_assign.formats.cluster_state import loads_cluster_state, parse_cluster_state

P1 = "00000000-0000-0000-0000-000000000001"
P2 = "00000000-0000-0000-0000-000000000002"
HEX_ID = "abcdef00-0000-0000-0000-00000000000f"

#: The example of docs/scenario-format.md, plus a second client.
BASE: dict[str, Any] = {
    "name": "format example",
    "description": "the cluster state of scenario-format.md",
    "configs": {
        "acceptable_recovery_lag": 10000,
        "max_warmup_replicas": 2,
        "num_standby_replicas": 1,
        "probing_rebalance_interval_ms": 600000,
    },
    "stateful_tasks": ["0_0", "0_1", "1_0"],
    "stateless_tasks": ["2_0", "2_1"],
    "clients": [
        {
            "id": P1,
            "capacity": 2,
            "prev_active": ["0_0", "2_0"],
            "prev_standby": ["0_1"],
            "task_lags": {"0_0": -2, "0_1": 1200},
        },
        {"id": P2, "capacity": 1, "task_lags": {"1_0": 0}},
    ],
}


def base() -> dict[str, Any]:
    return copy.deepcopy(BASE)


def with_change(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    document = base()
    change(document)
    return document


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        target: Any = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _delete(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        target: Any = document
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


#: id -> (change to BASE, JSON path named in the error, the offending value as printed).
BAD_DOCUMENTS: dict[str, tuple[Callable[[dict[str, Any]], None], str, str]] = {
    "lag_of_a_stateless_task": (
        _set(["clients", 0, "task_lags", "2_0"], 5),
        "clients[0].task_lags.2_0",
        "stateless",
    ),
    "duplicate_client_id": (_set(["clients", 1, "id"], P1), "clients[1].id", P1),
    "duplicate_client_id_in_other_letter_case": (
        _set(["clients"], [{"id": HEX_ID, "capacity": 1}, {"id": HEX_ID.upper(), "capacity": 1}]),
        "clients[1].id",
        HEX_ID,
    ),
    "task_both_stateful_and_stateless": (
        _set(["stateless_tasks"], ["2_0", "0_1"]),
        "stateless_tasks[1]",
        "0_1",
    ),
    "stateful_task_listed_twice": (
        _set(["stateful_tasks"], ["0_0", "0_1", "0_0"]),
        "stateful_tasks[2]",
        "0_0",
    ),
    "stateless_task_listed_twice": (
        _set(["stateless_tasks"], ["2_1", "2_1"]),
        "stateless_tasks[1]",
        "2_1",
    ),
    "task_listed_twice_as_written_differently": (
        _set(["stateful_tasks"], ["0_1", "0_01"]),
        "stateful_tasks[1]",
        "0_1",
    ),
    "prev_active_task_listed_twice": (
        _set(["clients", 0, "prev_active"], ["0_0", "0_0"]),
        "clients[0].prev_active[1]",
        "0_0",
    ),
    "malformed_stateful_task_id": (
        _set(["stateful_tasks"], ["0_0", "0-1"]),
        "stateful_tasks[1]",
        "'0-1'",
    ),
    "malformed_stateless_task_id": (
        _set(["stateless_tasks"], ["two_zero"]),
        "stateless_tasks[0]",
        "'two_zero'",
    ),
    "malformed_prev_active_task_id": (
        _set(["clients", 0, "prev_active"], ["0_0_0"]),
        "clients[0].prev_active[0]",
        "'0_0_0'",
    ),
    "malformed_prev_standby_task_id": (
        _set(["clients", 0, "prev_standby"], [""]),
        "clients[0].prev_standby[0]",
        "''",
    ),
    "malformed_task_id_in_task_lags": (
        _set(["clients", 1, "task_lags"], {"1:0": 3}),
        "clients[1].task_lags.1:0",
        "'1:0'",
    ),
    "non_string_task_id": (_set(["stateful_tasks"], [0]), "stateful_tasks[0]", "got 0"),
    "capacity_zero": (_set(["clients", 1, "capacity"], 0), "clients[1].capacity", "got 0"),
    "capacity_negative": (_set(["clients", 0, "capacity"], -3), "clients[0].capacity", "got -3"),
    "capacity_fraction": (_set(["clients", 0, "capacity"], 1.5), "clients[0].capacity", "1.5"),
    "capacity_string": (_set(["clients", 0, "capacity"], "2"), "clients[0].capacity", "'2'"),
    "capacity_boolean": (_set(["clients", 0, "capacity"], True), "clients[0].capacity", "True"),
    "capacity_missing": (_delete(["clients", 1, "capacity"]), "clients[1].capacity", "missing"),
    "lag_minus_one": (
        _set(["clients", 0, "task_lags", "0_1"], -1),
        "clients[0].task_lags.0_1",
        "-1",
    ),
    "lag_minus_four": (
        _set(["clients", 0, "task_lags", "0_1"], -4),
        "clients[0].task_lags.0_1",
        "got -4",
    ),
    "lag_not_an_integer": (
        _set(["clients", 0, "task_lags", "0_1"], 12.5),
        "clients[0].task_lags.0_1",
        "12.5",
    ),
    "acceptable_recovery_lag_negative": (
        _set(["configs", "acceptable_recovery_lag"], -1),
        "configs.acceptable_recovery_lag",
        "got -1",
    ),
    "acceptable_recovery_lag_beyond_long": (
        _set(["configs", "acceptable_recovery_lag"], 2**63),
        "configs.acceptable_recovery_lag",
        str(2**63),
    ),
    "max_warmup_replicas_zero": (
        _set(["configs", "max_warmup_replicas"], 0),
        "configs.max_warmup_replicas",
        "got 0",
    ),
    "num_standby_replicas_negative": (
        _set(["configs", "num_standby_replicas"], -1),
        "configs.num_standby_replicas",
        "got -1",
    ),
    "probing_rebalance_interval_below_a_minute": (
        _set(["configs", "probing_rebalance_interval_ms"], 59999),
        "configs.probing_rebalance_interval_ms",
        "got 59999",
    ),
    "config_not_an_integer": (
        _set(["configs", "num_standby_replicas"], "1"),
        "configs.num_standby_replicas",
        "'1'",
    ),
    "unknown_config_key": (
        _set(["configs", "num_standbys"], 1),
        "configs.num_standbys",
        "unknown config key",
    ),
    "client_id_not_a_uuid": (_set(["clients", 0, "id"], "P1"), "clients[0].id", "'P1'"),
    "client_id_with_a_bad_hex_digit": (
        _set(["clients", 1, "id"], "00000000-0000-0000-0000-00000000000g"),
        "clients[1].id",
        "00000000-0000-0000-0000-00000000000g",
    ),
    "client_id_empty": (_set(["clients", 0, "id"], ""), "clients[0].id", "''"),
    "client_id_not_a_string": (_set(["clients", 0, "id"], 42), "clients[0].id", "42"),
    "client_id_missing": (_delete(["clients", 0, "id"]), "clients[0].id", "None"),
    "unknown_client_field": (
        _set(["clients", 0, "lags"], {}),
        "clients[0].lags",
        "unknown field",
    ),
    "unknown_top_level_field": (_set(["expect"], {}), "expect", "unknown field"),
    "name_not_a_string": (_set(["name"], 7), "name", "must be a string"),
    "no_clients": (_set(["clients"], []), "clients", "at least one client"),
}


@pytest.mark.parametrize("case", sorted(BAD_DOCUMENTS))
def test_bad_document_is_rejected_naming_its_json_path_and_value(case: str):
    change, path, value = BAD_DOCUMENTS[case]
    with pytest.raises(InvalidScenarioError) as error:
        parse_cluster_state(with_change(change))
    assert error.value.path == path
    message = str(error.value)
    assert message.startswith(f"{path}: ")
    assert value in message
    assert "\n" not in message


def test_the_base_document_is_valid():
    cluster = parse_cluster_state(base())
    assert len(cluster.clients) == 2
    assert cluster.warnings == ()


def test_name_and_description_are_kept():
    cluster = parse_cluster_state(base())
    assert (cluster.name, cluster.description) == (BASE["name"], BASE["description"])


def test_name_and_description_are_optional():
    document = base()
    del document["name"], document["description"]
    assert parse_cluster_state(document).name is None


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_empty_json_is_rejected(text: str):
    with pytest.raises(InvalidScenarioError, match="empty document"):
        loads_cluster_state(text)


def test_empty_json_object_is_rejected_for_its_missing_clients():
    with pytest.raises(InvalidScenarioError, match="^clients: ") as error:
        loads_cluster_state("{}")
    assert error.value.path == "clients"


def test_json_that_is_not_an_object_is_rejected():
    with pytest.raises(InvalidScenarioError, match="expected a JSON object, got a list"):
        loads_cluster_state("[]")


def test_malformed_json_is_rejected_with_its_position():
    with pytest.raises(InvalidScenarioError, match=r"malformed JSON: .* line 2 column \d+"):
        loads_cluster_state('{"clients": [\n  {"id": }]}')


def test_lag_of_a_task_in_neither_list_is_ignored_with_a_warning():
    document = with_change(_set(["clients", 1, "task_lags", "9_9"], 5))
    cluster = parse_cluster_state(document)
    assert any("clients[1].task_lags.9_9" in w and "neither" in w for w in cluster.warnings)
    assert "9_9" not in {str(task) for task in cluster.clients[1].task_lags}
    result = assign(cluster)
    assert all("9_9" not in map(str, c.active + c.standby) for c in result.clients.values())


def test_ignored_lag_assigns_as_if_it_were_absent():
    with_unknown = with_change(_set(["clients", 1, "task_lags", "9_9"], 5))
    assert assign(with_unknown).to_json() == assign(base()).to_json()


# -- the CLI ------------------------------------------------------------------------------------


def write(directory: Path, name: str, document: dict[str, Any] | str) -> Path:
    path = directory / name
    text = document if isinstance(document, str) else json.dumps(document)
    path.write_text(text, encoding="utf-8")
    return path


def assert_one_line_error(err: str, *needles: str) -> None:
    assert err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert err.startswith("streams-assign: error: ")
    for needle in needles:
        assert needle in err


@pytest.mark.parametrize("case", sorted(BAD_DOCUMENTS))
def test_cli_exits_2_with_one_line_naming_path_and_value(case: str, tmp_path: Path, capsys):
    change, path, value = BAD_DOCUMENTS[case]
    bad = write(tmp_path, "bad.json", with_change(change))
    assert main(["assign", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert_one_line_error(err, str(bad), f"{path}: ", value)


@pytest.mark.parametrize(
    ("text", "needle"),
    [("", "empty document"), ("{", "malformed JSON"), ("[1, 2]", "expected a JSON object")],
)
def test_cli_rejects_unparsable_files_in_one_line(text: str, needle: str, tmp_path: Path, capsys):
    bad = write(tmp_path, "bad.json", text)
    assert main(["assign", "--json", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert_one_line_error(err, needle)


def test_cli_reports_a_missing_file_in_one_line(tmp_path: Path, capsys):
    missing = tmp_path / "absent.json"
    assert main(["assign", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert_one_line_error(err, str(missing), "cannot read")


@pytest.mark.parametrize("bad_first", [True, False])
def test_cli_batch_writes_the_good_inputs_and_lists_the_bad(
    bad_first: bool, tmp_path: Path, capsys
):
    inputs, out_dir = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    out_dir.mkdir()
    good = write(inputs, "good.json", base())
    bad = write(inputs, "bad.json", with_change(_set(["clients", 0, "capacity"], 0)))
    files = [bad, good] if bad_first else [good, bad]
    assert main(["assign", *map(str, files), "--output-dir", str(out_dir)]) == 2
    _, err = capsys.readouterr()
    assert_one_line_error(err, str(bad), "clients[0].capacity", "1 of 2")
    assert str(good) not in err
    assert [p.name for p in out_dir.iterdir()] == ["good.json"]
    written = json.loads((out_dir / "good.json").read_text(encoding="utf-8"))
    assert written == assign(good).to_json()


def test_cli_batch_creates_a_missing_output_dir(tmp_path: Path, capsys):
    source = write(tmp_path, "in.json", base())
    out_dir = tmp_path / "new" / "out"
    assert main(["assign", str(source), "--output-dir", str(out_dir)]) == 0
    assert [p.name for p in out_dir.iterdir()] == ["in.json"]


def test_cli_batch_refuses_an_output_dir_that_is_a_file(tmp_path: Path, capsys):
    source = write(tmp_path, "in.json", base())
    blocker = write(tmp_path, "out", "")
    assert main(["assign", str(source), "--output-dir", str(blocker)]) == 2
    _, err = capsys.readouterr()
    assert_one_line_error(err, str(blocker), "not a directory")


def test_cli_batch_writes_each_assignment_under_its_input_file_name(tmp_path: Path, capsys):
    inputs, out_dir = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    out_dir.mkdir()
    first = write(inputs, "first.json", base())
    second = write(inputs, "second.json", with_change(_set(["configs", "num_standby_replicas"], 0)))
    assert main(["assign", str(first), str(second), "--output-dir", str(out_dir)]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["first.json", "second.json"]
    for source in (first, second):
        written = json.loads((out_dir / source.name).read_text(encoding="utf-8"))
        assert written == assign(source).to_json()


def test_cli_batch_refuses_two_inputs_with_the_same_file_name(tmp_path: Path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "out").mkdir()
    one = write(tmp_path / "a", "same.json", base())
    two = write(tmp_path / "b", "same.json", base())
    assert main(["assign", str(one), str(two), "--output-dir", str(tmp_path / "out")]) == 2
    _, err = capsys.readouterr()
    assert_one_line_error(err, "share a file name")
    assert list((tmp_path / "out").iterdir()) == []


def test_cli_json_output_equals_the_assignment_json(tmp_path: Path, capsys):
    source = write(tmp_path, "in.json", base())
    assert main(["assign", "--json", str(source)]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out) == assign(source).to_json()


def test_cli_json_output_of_several_inputs_is_keyed_by_path(tmp_path: Path, capsys):
    first = write(tmp_path, "first.json", base())
    second = write(
        tmp_path, "second.json", with_change(_set(["configs", "max_warmup_replicas"], 1))
    )
    assert main(["assign", "--json", str(first), str(second)]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out) == {
        str(first): assign(first).to_json(),
        str(second): assign(second).to_json(),
    }


def test_cli_assigns_a_document_with_an_ignored_lag(tmp_path: Path, capsys):
    source = write(tmp_path, "in.json", with_change(_set(["clients", 0, "task_lags", "7_7"], 1)))
    assert main(["assign", "--json", str(source)]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out) == assign(base()).to_json()
