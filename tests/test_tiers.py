"""The test tiers: hypothesis budgets per profile and the markers heavy fixtures add."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.conftest import HEAVY_FIXTURES
from tests.tiers import FAST_PROFILE, FULL_PROFILE, examples


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


def test_an_example_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_examples must be >= 1, got 0"):
        examples(0)


def test_every_jvm_fixture_takes_its_test_out_of_the_fast_tier() -> None:
    assert HEAVY_FIXTURES["spark"] == "spark"
    for fixture in ("kafka_broker", "kafka_reference", "kafka_groups", "kafka_sticky"):
        assert HEAVY_FIXTURES[fixture] == "kafka"

