"""Read ``kafka-get-offsets.sh`` output: one ``topic:partition:offset`` line per partition.

``kafka-get-offsets.sh --topic-partitions ... --time latest`` (``GetOffsetShell``) prints the end
offset of each partition; the changelog end offsets the group leader fetches with
``Admin#listOffsets(OffsetSpec.latest())`` in
``StreamsPartitionAssignor.computeEndOffsetSumsByTask`` are the same numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lag.error_rows import ErrorRow
from lag.kafka_rules import INT_MAX, LONG_MAX

_DIGITS = re.compile(r"^[0-9]+$")


@dataclass(frozen=True, slots=True)
class EndOffset:
    """The end offset of one partition, with where it was read.

    Attributes
    ----------
    topic, partition:
        The partition.
    offset:
        Its end (log-end) offset, in records (>= 0).
    line:
        1-based line number in the source file.
    """

    topic: str
    partition: int
    offset: int
    line: int


def parse_get_offsets(
    text: str, source: str = "end-offsets"
) -> tuple[list[EndOffset], list[ErrorRow]]:
    """Parse ``kafka-get-offsets.sh`` output.

    Parameters
    ----------
    text:
        The tool's output, unchanged; blank lines are skipped.
    source:
        Name of the input for the errors table (the file path).

    Returns
    -------
    offsets : list of EndOffset
        One entry per well-formed line, in file order.
    errors : list of ErrorRow
        Lines not used: wrong field count, non-numeric (or negative) partition or offset, a
        partition listed twice (the later line is the error).

    Notes
    -----
    Topic names cannot contain ``:`` (legal characters are ``[a-zA-Z0-9._-]``), so a line splits
    into exactly three fields. Numbers are plain ASCII digits (Python's ``int`` would also take
    ``1_000`` or ``+5``, which the tool never prints).
    """
    offsets: list[EndOffset] = []
    errors: list[ErrorRow] = []
    seen: dict[tuple[str, int], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        fields = stripped.split(":")
        if len(fields) != 3 or not fields[0]:
            errors.append(
                ErrorRow(
                    source,
                    number,
                    line,
                    f"wrong field count: expected topic:partition:offset, got {len(fields)} fields",
                )
            )
            continue
        topic, partition_text, offset_text = fields
        if not (_DIGITS.match(partition_text) and _DIGITS.match(offset_text)):
            errors.append(
                ErrorRow(source, number, line, "non-numeric partition or offset: expected digits")
            )
            continue
        partition, offset = int(partition_text), int(offset_text)
        if partition > INT_MAX or offset > LONG_MAX:
            errors.append(
                ErrorRow(source, number, line, "out of range: partition or offset too large")
            )
            continue
        key = (topic, partition)
        if key in seen:
            errors.append(
                ErrorRow(source, number, line, f"duplicate partition: already on line {seen[key]}")
            )
            continue
        seen[key] = number
        offsets.append(EndOffset(topic, partition, offset, number))
    return offsets, errors
