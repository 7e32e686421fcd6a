"""Shared fixtures: where the shared Kafka scenarios live."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SCENARIOS = SHARED / "scenarios"


@pytest.fixture(scope="session")
def shared_scenarios() -> Path:
    """``../shared/scenarios`` beside the repository (skips when absent)."""
    if not SCENARIOS.is_dir():
        pytest.skip("../shared/scenarios is not present beside the repository")
    return SCENARIOS
