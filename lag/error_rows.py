"""The errors table of the lag jobs: one row per bad input line, never dropped silently.

Two kinds of bad input exist. A *required input that is missing or unusable* (no topology file,
a members file without a single Kafka Streams member, ...) stops the job:
:class:`streams_assign.errors.LagInputError`, printed by the CLI as one line, exit status 2.
Everything smaller (a malformed line, an offset for a topic no store owns, a checkpoint file
Kafka itself could not read) is kept as an :class:`ErrorRow` in the *errors table* and counted in
the summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ERROR_COLUMNS", "ErrorRow", "summarize_reasons"]

#: Columns of the errors table, in order (see docs/lag.md).
ERROR_COLUMNS = ("source", "line", "raw", "reason")


@dataclass(frozen=True, slots=True)
class ErrorRow:
    """One row of the errors table.

    Attributes
    ----------
    source:
        The file the bad input came from (path as given), or a short name such as ``members``.
    line:
        1-based line number in ``source``, or ``None`` for row inputs (Parquet) and whole files.
    raw:
        The offending text as read (the line, or a JSON rendering of the row).
    reason:
        Why it was not used, in words a user can act on.
    """

    source: str
    line: int | None
    raw: str
    reason: str

    def as_tuple(self) -> tuple[str, int | None, str, str]:
        """The row as a tuple in :data:`ERROR_COLUMNS` order."""
        return (self.source, self.line, self.raw, self.reason)


def summarize_reasons(rows: Iterable[ErrorRow]) -> Counter[str]:
    """Count error rows by their reason's first words (the part before the first colon).

    Parameters
    ----------
    rows:
        Error rows, any number.

    Returns
    -------
    collections.Counter
        Reason prefix to number of rows.
    """
    return Counter(row.reason.split(":", 1)[0] for row in rows)
