"""Fixtures of the subcommand tests: the hand-made data files of ``tests/optimal/data``."""

from __future__ import annotations

import pytest

from tests.optimal.conftest import DataFiles


@pytest.fixture(scope="session")
def data() -> DataFiles:
    """The hand-made cluster states and assignments of ``tests/optimal/data``."""
    return DataFiles()
