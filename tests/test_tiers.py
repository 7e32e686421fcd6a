"""The test tiers: hypothesis budgets per profile and the markers heavy fixtures add."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.tiers import FAST_PROFILE, FULL_PROFILE, examples

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def profile() -> Iterator[None]:
    """Restore the profile this run loaded after a test switches it."""
    loaded = settings.get_current_profile_name()
    yield
    settings.load_profile(loaded)


def test_full_profile_keeps_every_tests_own_example_count(profile: None) -> None:
    settings.load_profile(FULL_PROFILE)
    assert [examples(n) for n in (1, 5, 60, 150)] == [1, 5, 60, 150]


def test_fast_profile_draws_a_fifth_but_at_least_five_and_never_more(profile: None) -> None:
    settings.load_profile(FAST_PROFILE)
    assert [examples(n) for n in (1, 5, 24, 60, 150)] == [1, 5, 5, 12, 30]
    assert settings.default.max_examples < settings.get_profile(FULL_PROFILE).max_examples


@pytest.mark.parametrize("name", [FULL_PROFILE, FAST_PROFILE])
def test_no_profile_asserts_on_wall_time(name: str) -> None:
    # A deadline or the too_slow health check fails at random on a loaded shared machine.
    assert settings.get_profile(name).deadline is None
    assert HealthCheck.too_slow in settings.get_profile(name).suppress_health_check


def test_an_example_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_examples must be >= 1, got 0"):
        examples(0)


#: Each fixture that starts a JVM and the marker that takes its tests out of the fast tier.
JVM_FIXTURES = {
    "spark": "spark",
    "kafka_broker": "kafka",
    "kafka_reference": "kafka",
    "kafka_groups": "kafka",
    "kafka_sticky": "kafka",
    "kafka_plugin": "kafka",
}
FAST_TIER = "not spark and not kafka"
REAL_HOOK = "from tests.conftest import pytest_collection_modifyitems\n"
#: Hooks of the tiny suite's conftest that write down what the collection selected.
RECORDER = """
import json


def pytest_deselected(items):
    DESELECTED.extend(items)


def pytest_collection_finish(session):
    def row(item):
        return sorted(m.name for m in item.iter_markers() if m.name in ("spark", "kafka"))

    with open("collected.json", "w") as out:
        json.dump({
            "selected": {item.name: row(item) for item in session.items},
            "deselected": {item.name: row(item) for item in DESELECTED},
        }, out)


DESELECTED = []
"""


def collect(tmp_path: Path, hook: str) -> dict[str, dict[str, list[str]]]:
    """Collect a tiny suite with ``-m "not spark and not kafka"``: its tests and markers.

    The suite has one test per JVM fixture (a stand-in of the same name, so nothing starts),
    one reaching ``kafka_broker`` through another fixture, and one plain test; its conftest
    holds ``hook``, the source of a ``pytest_collection_modifyitems``.

    Returns
    -------
    dict
        ``{"selected": {test: markers}, "deselected": {test: markers}}``.
    """
    stand_ins = "".join(
        f"@pytest.fixture(name={name!r})\ndef _{name}() -> None:\n    return None\n\n"
        for name in JVM_FIXTURES
    )
    (tmp_path / "conftest.py").write_text(
        "import pytest\n\n"
        + hook
        + RECORDER
        + stand_ins
        + "@pytest.fixture\ndef through_kafka(kafka_broker: None) -> None:\n    return None\n"
    )
    tests = "".join(
        f"def test_{name}({name}: None) -> None:\n    pass\n\n" for name in JVM_FIXTURES
    )
    (tmp_path / "test_tiny.py").write_text(
        tests
        + "def test_through_kafka(through_kafka: None) -> None:\n    pass\n\n"
        + "def test_plain() -> None:\n    pass\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    spark: s\n    kafka: k\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "-q",
            "--strict-markers",
            "-m",
            FAST_TIER,
            str(tmp_path),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: every test deselected
    return json.loads((tmp_path / "collected.json").read_text())


def expected() -> dict[str, dict[str, list[str]]]:
    heavy = {f"test_{name}": [marker] for name, marker in JVM_FIXTURES.items()}
    return {
        "selected": {"test_plain": []},
        "deselected": {**heavy, "test_through_kafka": ["kafka"]},
    }


def test_every_jvm_fixture_takes_its_test_out_of_the_fast_tier(tmp_path: Path) -> None:
    assert collect(tmp_path, REAL_HOOK) == expected()


def test_the_tier_check_fails_when_the_hook_marks_nothing(tmp_path: Path) -> None:
    broken = "def pytest_collection_modifyitems(items):\n    pass\n"
    collected = collect(tmp_path, broken)
    assert collected != expected()
    assert collected["deselected"] == {}
    assert set(collected["selected"]) == {f"test_{name}" for name in JVM_FIXTURES} | {
        "test_through_kafka",
        "test_plain",
    }
