"""Kafka's ``.checkpoint`` file (``OffsetCheckpoint``, version 0): changelog offsets of a task.

Kafka Streams up to 4.2 writes one per task folder; 4.3+ writes one per custom persistent store
(``.checkpoint_<store>``) and a downgrade one with ``upgrade.from`` below 4.3. Read by
:mod:`lag.sources.checkpoints` (state directories) and :mod:`lag.sources.rocksdb_stores`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from lag.error_rows import ErrorRow
from lag.kafka_rules import INT_MAX, LONG_MAX, OFFSET_UNKNOWN

__all__ = ["CHECKPOINT_FILE", "Checkpoint", "read_checkpoint"]

#: The checkpoint file of a task folder.
CHECKPOINT_FILE = ".checkpoint"
_JAVA_LONG = re.compile(r"^[+-]?[0-9]+$")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The usable entries of one ``.checkpoint`` file.

    Attributes
    ----------
    entries:
        ``(topic, partition, offset, line)``: offsets >= 0 or -4 (unknown), as
        ``OffsetCheckpoint.read`` keeps them.
    """

    entries: tuple[tuple[str, int, int, int], ...]


def read_checkpoint(path: str | os.PathLike[str]) -> tuple[Checkpoint | None, list[ErrorRow]]:
    """Read a ``.checkpoint`` file as Kafka's ``OffsetCheckpoint.read`` does.

    Parameters
    ----------
    path:
        The checkpoint file.

    Returns
    -------
    checkpoint : Checkpoint or None
        None when Kafka could not read the file either (then the task counts as having no local
        state: ``TaskManager.getTaskOffsetSums`` logs the exception and reports nothing).
    errors : list of ErrorRow
        Why the file (or an entry of it) was not used.

    Notes
    -----
    Version 0 only: line 1 the version, line 2 the entry count N, then ``topic partition offset``
    lines split on whitespace. Kafka throws (and the file is unusable) on an unknown version, a
    line without exactly three fields, a non-numeric number, a premature end, or a count that
    does not match; it skips, with a warning, an entry whose offset is negative but not -4
    (and lowers the expected count). Those skipped entries are error rows too, but the rest of
    the file is used. A repeated partition keeps the later offset, which then fails the count
    check, as in Kafka's map-based reader.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [ErrorRow(source, None, "", f"unreadable checkpoint: {exc}")]
    lines = text.splitlines()

    def unusable(number: int | None, raw: str, reason: str) -> tuple[None, list[ErrorRow]]:
        return None, [ErrorRow(source, number, raw, f"unreadable checkpoint: {reason}")]

    if len(lines) < 2:
        return unusable(None, text[:200], "file ended prematurely (no version or count line)")
    if lines[0].strip() != lines[0] or not _JAVA_LONG.match(lines[0]):
        return unusable(1, lines[0], "non-numeric version line")
    if int(lines[0]) != 0:
        return unusable(1, lines[0], f"unknown checkpoint version {int(lines[0])}")
    if lines[1].strip() != lines[1] or not _JAVA_LONG.match(lines[1]):
        return unusable(2, lines[1], "non-numeric entry count")
    expected = int(lines[1])

    errors: list[ErrorRow] = []
    offsets: dict[tuple[str, int], tuple[int, int]] = {}
    for number, line in enumerate(lines[2:], start=3):
        pieces = re.split(r"\s+", line)
        while len(pieces) > 1 and pieces[-1] == "":
            pieces.pop()  # Java's Pattern.split drops trailing empty strings
        if len(pieces) != 3:
            return unusable(
                number,
                line,
                f"malformed line: {len(pieces)} fields, expected topic partition offset",
            )
        topic, partition_text, offset_text = pieces
        if not (_JAVA_LONG.match(partition_text) and _JAVA_LONG.match(offset_text)):
            return unusable(number, line, "non-numeric partition or offset")
        partition, offset = int(partition_text), int(offset_text)
        if not (-(2**31) <= partition <= INT_MAX and -(2**63) <= offset <= LONG_MAX):
            return unusable(number, line, "partition or offset out of Java's int/long range")
        if offset >= 0 or offset == OFFSET_UNKNOWN:
            offsets[(topic, partition)] = (offset, number)
        else:
            expected -= 1
            errors.append(
                ErrorRow(
                    source, number, line, f"invalid offset skipped: {offset} (Kafka skips it too)"
                )
            )
    if len(offsets) != expected:
        return unusable(
            None, "", f"count mismatch: expected {expected} entries, found {len(offsets)}"
        )
    entries = tuple((t, p, o, n) for (t, p), (o, n) in offsets.items())
    return Checkpoint(entries), errors
