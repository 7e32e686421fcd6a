"""The test tiers' hypothesis budgets: the full example counts in ``make test``, fewer in the
edit loop.

``tests/conftest.py`` registers two hypothesis profiles: ``full`` (hypothesis' defaults without
its wall-time checks, what ``make test`` and CI run) and ``fast`` (what ``make test-fast``
loads with ``--hypothesis-profile=fast``). A test that sets its own ``max_examples`` passes it
through :func:`examples`, so the explicit count holds in the full run and shrinks in the fast
one; the property asserted is the same in both tiers, only the number of generated inputs
differs.
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["FAST_PROFILE", "FULL_PROFILE", "examples"]

#: Name of the edit-loop profile (``make test-fast``).
FAST_PROFILE = "fast"
#: Name of the profile of ``make test`` and CI (hypothesis' own defaults).
FULL_PROFILE = "full"


def examples(full: int) -> int:
    """The ``max_examples`` of a property test in the tier that runs.

    Parameters
    ----------
    full:
        Examples the test draws in the full run (``make test``); must be >= 1.

    Returns
    -------
    int
        ``full`` under every profile but ``fast``; under ``fast``, a fifth of it, at least 5
        and never more than ``full``.

    Raises
    ------
    ValueError
        When ``full`` is below 1.
    """
    if full < 1:
        raise ValueError(f"max_examples must be >= 1, got {full}")
    if settings.get_current_profile_name() == FAST_PROFILE:
        return min(full, max(5, full // 5))
    return full
