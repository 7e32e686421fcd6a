"""Errors that help (issue #12, point 4): Kafka's config names, "did you mean", YAML input."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from streams_assign.cli import main
from streams_assign.errors import InvalidScenarioError
from streams_assign.formats.cluster_state import (
    KAFKA_CONFIG_NAMES,
    load_cluster_state,
    loads_cluster_state,
    parse_cluster_state,
)

DOCUMENT: dict[str, Any] = {
    "configs": {"acceptable_recovery_lag": 100, "num_standby_replicas": 1},
    "stateful_tasks": ["0_0", "0_1", "1_3"],
    "stateless_tasks": ["2_0"],
    "clients": [
        {
            "id": "00000000-0000-0000-0000-000000000001",
            "capacity": 2,
            "prev_active": ["0_0", "1_3"],
            "task_lags": {"0_0": -2, "1_3": 7},
        },
        {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1, "task_lags": {"0_1": 0}},
    ],
}

YAML_TEXT = """\
# the same state as DOCUMENT, in YAML
configs:
  acceptable.recovery.lag: 100
  num.standby.replicas: 1
stateful_tasks: [0_0, 0_1, 1_3]
stateless_tasks:
  - 2_0
clients:
  - id: 00000000-0000-0000-0000-000000000001
    capacity: 2
    prev_active: [0_0, 1_3]
    task_lags: {0_0: -2, 1_3: 7}
  - id: 00000000-0000-0000-0000-000000000002
    capacity: 1
    task_lags:
      0_1: 0
"""


def require_yaml() -> None:
    try:
        import yaml  # noqa: F401
    except ModuleNotFoundError:
        pytest.fail("PyYAML is missing: make setup installs the 'yaml' extra")


def document() -> dict[str, Any]:
    return copy.deepcopy(DOCUMENT)


def test_kafka_config_names_are_aliases_of_ours() -> None:
    ours = parse_cluster_state(document())
    dotted = document()
    dotted["configs"] = {"acceptable.recovery.lag": 100, "num.standby.replicas": 1}
    assert parse_cluster_state(dotted) == ours
    for kafka_name, our_name in KAFKA_CONFIG_NAMES.items():
        assert kafka_name.replace(".", "_") == our_name


def test_a_config_given_under_both_names_is_refused() -> None:
    doubled = document()
    doubled["configs"]["num.standby.replicas"] = 2
    with pytest.raises(InvalidScenarioError, match=r"configs\.num\.standby\.replicas: .*twice"):
        parse_cluster_state(doubled)


def test_a_dotted_config_value_is_checked_like_ours() -> None:
    bad = document()
    bad["configs"] = {"max.warmup.replicas": 0}
    with pytest.raises(InvalidScenarioError, match=r"configs\.max_warmup_replicas: must be >= 1"):
        parse_cluster_state(bad)


@pytest.mark.parametrize(
    ("change", "path", "suggestion"),
    [
        (lambda d: d.update(stateful_task=[]), "stateful_task", "stateful_tasks"),
        (
            lambda d: d["configs"].update(num_standby_replica=1),
            "configs.num_standby_replica",
            "num_standby_replicas",
        ),
        (
            lambda d: d["configs"].update({"num.standby.replica": 1}),
            "configs.num.standby.replica",
            "num.standby.replicas",
        ),
        (
            lambda d: d["clients"][1].update(task_lag={}),
            "clients[1].task_lag",
            "task_lags",
        ),
    ],
)
def test_unknown_keys_name_the_closest_known_one(change, path: str, suggestion: str) -> None:
    bad = document()
    change(bad)
    with pytest.raises(InvalidScenarioError) as caught:
        parse_cluster_state(bad)
    assert str(caught.value).startswith(f"{path}: unknown")
    assert f"did you mean {suggestion!r}?" in str(caught.value)


def test_an_unknown_key_far_from_every_name_gets_no_suggestion() -> None:
    bad = document()
    bad["zzzz"] = 1
    with pytest.raises(InvalidScenarioError, match=r"^zzzz: unknown field$"):
        parse_cluster_state(bad)


def test_yaml_file_reads_as_the_json_document(tmp_path: Path) -> None:
    require_yaml()
    path = tmp_path / "state.yaml"
    path.write_text(YAML_TEXT, encoding="utf-8")
    assert load_cluster_state(path) == parse_cluster_state(document())
    # Not JSON, but YAML: read as YAML whatever the file name.
    assert loads_cluster_state(YAML_TEXT) == parse_cluster_state(document())


def test_malformed_yaml_names_line_and_column(tmp_path: Path, capsys) -> None:
    require_yaml()
    path = tmp_path / "bad.yml"
    path.write_text("clients: [\n  - id: x\n", encoding="utf-8")
    assert main(["assign", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert str(path) in err and "malformed YAML" in err and "line" in err


def test_json_errors_stay_json_errors() -> None:
    with pytest.raises(InvalidScenarioError, match=r"^malformed JSON: .* line 1 column"):
        loads_cluster_state('{"clients": [}')


def test_the_cli_reads_yaml_and_prints_the_same_assignment(tmp_path: Path, capsys) -> None:
    require_yaml()
    as_yaml = tmp_path / "state.yaml"
    as_yaml.write_text(YAML_TEXT, encoding="utf-8")
    as_json = tmp_path / "state.json"
    as_json.write_text(json.dumps(DOCUMENT), encoding="utf-8")
    assert main(["assign", "--json", str(as_yaml)]) == 0
    from_yaml = json.loads(capsys.readouterr().out)
    assert main(["assign", "--json", str(as_json)]) == 0
    assert json.loads(capsys.readouterr().out) == from_yaml
