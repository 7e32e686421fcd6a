"""Read ``kafka-consumer-groups.sh --describe`` output: the members of a Streams application.

Three views of the tool are understood, recognised by their header line:

- ``--members --verbose``: ``CONSUMER-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT``, one line per
  member (every stream thread, even idle ones), ``ASSIGNMENT`` listing ``topic(p1,p2)`` groups
  separated by ``", "``, or ``-`` for none;
- ``--members --verbose`` of Kafka >= 4.0: ``GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS
  CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT``, ``CURRENT-ASSIGNMENT`` written
  ``topic:p1,p2;topic2:p3`` (``-`` for none; the epochs are ``-`` for classic groups);
- ``--members``: the same without ``ASSIGNMENT`` (membership and capacity, no ownership);
- the offsets view ``--describe``: ``TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG
  CONSUMER-ID HOST CLIENT-ID``, one line per owned partition (idle members do not appear).

Newer versions add a leading ``GROUP`` column; columns are found by their header names, so extra
columns are fine as long as only the last one holds spaces.

A Kafka Streams consumer's client id is ``<client.id>-StreamThread-<n>-consumer`` with
``client.id`` defaulting to ``<application.id>-<processId>`` (``StreamThread.getConsumerClientId``
and ``KafkaStreams`` constructor), so the process id (a UUID) and the thread are read from it.
Members whose client id does not have that shape go to the errors table.
"""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from dataclasses import dataclass, field

from lag.error_rows import ErrorRow

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_STREAMS_CLIENT_ID = re.compile(
    rf"^(?P<app>.+)-(?P<process>{_UUID})-StreamThread-(?P<thread>\d+)-consumer$"
)
_ASSIGNMENT_GROUP = re.compile(r"(?P<topic>[^\s,()]+)\((?P<partitions>[0-9,\s]*)\)")
_NONE = "-"
_OWNERSHIP_COLUMNS = {"ASSIGNMENT", "CURRENT-ASSIGNMENT", "TOPIC"}


@dataclass(frozen=True, slots=True)
class Member:
    """One consumer of the group: a stream thread of a Kafka Streams process.

    Attributes
    ----------
    member_id:
        The group member id (``CONSUMER-ID``).
    client_id:
        The consumer's ``client.id`` (``CLIENT-ID``).
    host:
        ``HOST`` as printed (``/10.0.0.7``).
    process_id:
        The Kafka Streams process id (UUID, lower case) read from the client id.
    thread:
        The stream thread number ``n`` of ``StreamThread-<n>``.
    owned:
        Owned (topic, partition) pairs, sorted; ``None`` when the view does not show ownership
        (``--members`` without ``--verbose``).
    """

    member_id: str
    client_id: str
    host: str
    process_id: str
    thread: int
    owned: tuple[tuple[str, int], ...] | None


@dataclass(slots=True)
class Membership:
    """The members read from one or more outputs of ``kafka-consumer-groups.sh``.

    Attributes
    ----------
    members:
        Kafka Streams members by member id.
    errors:
        Lines that were not used, with the reason.
    shows_ownership:
        Whether the view listed owned partitions (verbose members view or offsets view).
    """

    members: dict[str, Member] = field(default_factory=dict)
    errors: list[ErrorRow] = field(default_factory=list)
    shows_ownership: bool = False

    def processes(self) -> dict[str, list[Member]]:
        """Members grouped by process id, each list sorted by thread then member id."""
        grouped: dict[str, list[Member]] = defaultdict(list)
        for member in self.members.values():
            grouped[member.process_id].append(member)
        return {
            pid: sorted(ms, key=lambda m: (m.thread, m.member_id)) for pid, ms in grouped.items()
        }

    def capacity(self) -> dict[str, int]:
        """Number of consumers (stream threads) per process: Kafka's ``ClientState`` capacity.

        Kafka's leader increments a client's capacity once per member subscription
        (``ClientMetadata.addConsumer``), so this counts distinct member ids.
        """
        return {pid: len(ms) for pid, ms in self.processes().items()}

    def owned_partitions(self) -> dict[str, set[tuple[str, int]]]:
        """Owned (topic, partition) pairs per process (empty sets when ownership is unknown)."""
        owned: dict[str, set[tuple[str, int]]] = defaultdict(set)
        for member in self.members.values():
            owned[member.process_id].update(member.owned or ())
        return dict(owned)


def parse_streams_client_id(client_id: str, application_id: str | None) -> tuple[str, int] | None:
    """Process id and thread number of a Kafka Streams consumer client id.

    Parameters
    ----------
    client_id:
        ``<application.id>-<processId>-StreamThread-<n>-consumer``.
    application_id:
        When given, the prefix must equal it.

    Returns
    -------
    tuple or None
        ``(process_id, n)`` with the UUID in canonical lower case, or None for any other id.
    """
    match = _STREAMS_CLIENT_ID.match(client_id)
    if match is None:
        return None
    if application_id is not None and match["app"] != application_id:
        return None
    return str(uuid.UUID(match["process"])), int(match["thread"])


def parse_members(
    text: str, application_id: str | None = None, source: str = "members"
) -> Membership:
    """Parse one output of ``kafka-consumer-groups.sh --describe`` (any of its three views).

    Parameters
    ----------
    text:
        The tool's output, unchanged (several groups or a leading GROUP column are fine).
    application_id:
        The Streams ``application.id``; members of other applications are errors.
    source:
        Name of the input for the errors table (the file path).

    Returns
    -------
    Membership
        Members of the application and the error rows of every line not used.

    Notes
    -----
    Blank lines and repeated header lines are skipped. A data line before any header, with the
    wrong number of fields, a non-numeric count, or a malformed ``ASSIGNMENT`` is an error row;
    so is a member whose client id is not a Streams consumer id (reason
    ``not a Streams consumer id``). In the offsets view, partitions with no owner (``-``) are
    not errors: they show a partition nobody consumes.
    """
    membership = Membership()
    columns: list[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if "CONSUMER-ID" in fields and "CLIENT-ID" in fields:
            columns = fields
            membership.shows_ownership |= bool(_OWNERSHIP_COLUMNS & set(fields))
            continue
        if columns is None:
            membership.errors.append(
                ErrorRow(
                    source, number, line, "not a consumer-groups line: no header line before it"
                )
            )
            continue
        _parse_data_line(membership, columns, fields, line, number, application_id, source)
    return membership


def _parse_data_line(
    membership: Membership,
    columns: list[str],
    fields: list[str],
    line: str,
    number: int,
    application_id: str | None,
    source: str,
) -> None:
    def fail(reason: str) -> None:
        membership.errors.append(ErrorRow(source, number, line, reason))

    last_may_hold_spaces = columns[-1] == "ASSIGNMENT"
    if len(fields) < len(columns) or (len(fields) > len(columns) and not last_may_hold_spaces):
        fail(f"wrong field count: {len(fields)} fields, the header has {len(columns)}")
        return
    if last_may_hold_spaces:
        fields = fields[: len(columns) - 1] + [" ".join(fields[len(columns) - 1 :])]
    row = dict(zip(columns, fields, strict=True))
    member_id, client_id, host = row["CONSUMER-ID"], row["CLIENT-ID"], row.get("HOST", _NONE)

    owned: tuple[tuple[str, int], ...] | None = None
    if "TOPIC" in row:
        if member_id == _NONE:
            return  # a partition without an owner: nothing to attribute
        if not row.get("PARTITION", "").isdigit():
            fail(f"non-numeric partition: {row.get('PARTITION')!r}")
            return
        owned = ((row["TOPIC"], int(row["PARTITION"])),)
    if "#PARTITIONS" in row and not row["#PARTITIONS"].isdigit():
        fail(f"non-numeric #PARTITIONS: {row['#PARTITIONS']!r}")
        return
    if "ASSIGNMENT" in row:
        parsed = _parse_assignment(row["ASSIGNMENT"])
        if parsed is None:
            fail(f"malformed ASSIGNMENT: {row['ASSIGNMENT']!r} (expected topic(p1,p2), ... or -)")
            return
        if "#PARTITIONS" in row and len(parsed) != int(row["#PARTITIONS"]):
            fail(
                f"count mismatch: #PARTITIONS is {row['#PARTITIONS']}, "
                f"ASSIGNMENT lists {len(parsed)}"
            )
            return
        owned = parsed
    if "CURRENT-ASSIGNMENT" in row:
        parsed = _parse_current_assignment(row["CURRENT-ASSIGNMENT"])
        if parsed is None or ("#PARTITIONS" in row and len(parsed) != int(row["#PARTITIONS"])):
            fail(
                f"malformed CURRENT-ASSIGNMENT: {row['CURRENT-ASSIGNMENT']!r} (expected "
                f"topic:p1,p2;... or -, {row.get('#PARTITIONS', '?')} partitions)"
            )
            return
        owned = parsed

    identity = parse_streams_client_id(client_id, application_id)
    if identity is None:
        expected = f"{application_id or '<application.id>'}-<processId>-StreamThread-<n>-consumer"
        fail(f"not a Streams consumer id: client id {client_id!r} is not {expected}")
        return
    process_id, thread = identity
    known = membership.members.get(member_id)
    if known is not None and owned is not None and known.owned is not None:
        owned = tuple(sorted(set(known.owned) | set(owned)))
    membership.members[member_id] = Member(member_id, client_id, host, process_id, thread, owned)


def _parse_assignment(text: str) -> tuple[tuple[str, int], ...] | None:
    text = text.strip()
    if text == _NONE:
        return ()
    pairs: list[tuple[str, int]] = []
    position = 0
    for match in _ASSIGNMENT_GROUP.finditer(text):
        if text[position : match.start()].strip(" ,"):
            return None
        numbers = [p.strip() for p in match["partitions"].split(",") if p.strip()]
        if not numbers:
            return None
        pairs.extend((match["topic"], int(p)) for p in numbers)
        position = match.end()
    if not pairs or text[position:].strip(" ,"):
        return None
    return tuple(sorted(set(pairs)))


def _parse_current_assignment(text: str) -> tuple[tuple[str, int], ...] | None:
    """``topic:p1,p2;topic2:p3`` as Kafka >= 4.0 prints it (``getAssignmentString``)."""
    text = text.strip()
    if text == _NONE:
        return ()
    pairs: list[tuple[str, int]] = []
    for group in text.split(";"):
        topic, colon, partitions = group.rpartition(":")
        numbers = partitions.split(",")
        if not topic or not colon or not all(n.isdigit() for n in numbers):
            return None
        pairs.extend((topic, int(n)) for n in numbers)
    return tuple(sorted(set(pairs)))
