"""Where a new instance's process id sorts, and how much the plan depends on it.

Kafka Streams' leader iterates clients in ``java.util.UUID`` order (``TreeMap`` / ``TreeSet``
keyed by ``ProcessId``) and breaks ties between equally good clients by that order
(``HighAvailabilityTaskAssignor``, ``ClientState`` comparators). A new instance picks a random
process id (``StateDirectory#initializeProcessId``) unless its state directory already holds
one, so before it starts nobody knows where it sorts. :func:`ids_across_order` draws
process ids, one per gap between the current clients in that order (the gaps spread evenly
when fewer samples are asked for), so a plan can be run once per gap and the outcomes compared.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from streams_assign.model import process_id_sort_key

__all__ = ["ids_across_order", "java_uuid_ordinal", "uuid_at_ordinal"]

_HALF = 1 << 63
_SPAN = 1 << 64


def java_uuid_ordinal(process_id: str) -> int:
    """The rank of a UUID in ``java.util.UUID.compareTo`` order, as an integer in [0, 2**128)."""
    msb, lsb = process_id_sort_key(process_id)
    return (msb + _HALF) * _SPAN + (lsb + _HALF)


def uuid_at_ordinal(ordinal: int) -> str:
    """The UUID string at rank ``ordinal`` of :func:`java_uuid_ordinal` (its inverse).

    Raises
    ------
    ValueError
        When ``ordinal`` is outside [0, 2**128).
    """
    if not 0 <= ordinal < _SPAN * _SPAN:
        raise ValueError(f"ordinal must be in [0, 2**128), got {ordinal}")
    msb, lsb = divmod(ordinal, _SPAN)
    value = ((msb - _HALF) % _SPAN) << 64 | ((lsb - _HALF) % _SPAN)
    return str(uuid.UUID(int=value))


def ids_across_order(existing: Sequence[str], count: int, samples: int) -> list[tuple[str, ...]]:
    """Sets of ``count`` new process ids, each set in one gap of the current ids' Java order.

    Parameters
    ----------
    existing:
        The current clients' process ids.
    count:
        New ids per set (>= 1); a set's ids are consecutive inside its gap.
    samples:
        Sets wanted (>= 1). With ``n`` current clients there are ``n + 1`` gaps (before the
        first, between neighbours, after the last); fewer samples take gaps spread evenly
        from the first to the last.

    Returns
    -------
    list of tuple of str
        One set per chosen gap, in gap order, each new id distinct from ``existing``.

    Raises
    ------
    ValueError
        For ``count`` or ``samples`` < 1, or a gap too narrow for ``count`` ids.

    Examples
    --------
    >>> ids = ids_across_order(["00000000-0000-0000-0000-000000000001"], 1, 2)
    >>> ids[0][0] < "0", ids[1][0] > "00000000-0000-0000-0000-000000000001"
    (False, True)
    """
    if count < 1 or samples < 1:
        raise ValueError(f"count and samples must be >= 1, got {count}, {samples}")
    bounds = [-1, *sorted(java_uuid_ordinal(pid) for pid in existing), _SPAN * _SPAN]
    gaps = len(bounds) - 1
    chosen = sorted({round(i * (gaps - 1) / max(1, samples - 1)) for i in range(samples)})
    result = []
    for gap in chosen[:gaps]:
        low, high = bounds[gap], bounds[gap + 1]
        step = (high - low) // (count + 1)
        if step < 1:
            raise ValueError(f"no room for {count} ids between two adjacent process ids")
        result.append(tuple(uuid_at_ordinal(low + step * (k + 1)) for k in range(count)))
    return result
