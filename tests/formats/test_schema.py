"""The shipped JSON Schema of the cluster-state format: generated from the model, and agreeing
with the parser on the shared states, ``streams-assign init``'s example and bad values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.paths import CORPORA
from streams_assign.cli import main
from streams_assign.formats.schema import load_schema


def test_shipped_schema_is_the_generated_one() -> None:
    from streams_assign.formats.schema import cluster_state_schema

    assert load_schema() == json.loads(json.dumps(cluster_state_schema()))


def test_every_shared_state_and_the_example_pass_the_schema(tmp_path: Path) -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema())
    paths = sorted((CORPORA / "kafka-diff" / "input").glob("*.json"))[::5]
    paths += sorted((CORPORA / "kafka-ext" / "input").glob("*.json"))[::5]
    if len(paths) < 20:
        pytest.fail(f"shared scenarios missing under {CORPORA}")
    example = tmp_path / "e.json"
    assert main(["init", str(example)]) == 0
    for path in [*paths, example]:
        errors = [e.message for e in validator.iter_errors(json.loads(path.read_text()))]
        assert errors == [], path.name


def test_schema_rejects_what_the_parser_rejects() -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema())
    good = json.loads((CORPORA / "kafka-diff" / "input" / "s0002-crash.json").read_text())
    for path, value in (
        (("clients", 0, "capacity"), 0),
        (("configs", "probing_rebalance_interval_ms"), 1000),
        (("clients", 0, "id"), "not-a-uuid"),
        (("stateful_tasks", 0), "x_1"),
    ):
        document = json.loads(json.dumps(good))
        node = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        assert list(validator.iter_errors(document)), path
    document = json.loads(json.dumps(good))
    document["configs"]["num.standby.replicas"] = 1  # Kafka's name is an alias
    assert list(validator.iter_errors(document)) == []
    document["confgs"] = {}
    assert list(validator.iter_errors(document))
