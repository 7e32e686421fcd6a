"""Read ``kafka-streams-groups.sh --describe --group G --members --verbose`` (Kafka 4.4's
``StreamsGroupCommand``) into a :class:`~lag.sources.streams_group_describe.DescribedGroup`.

The fallback when the Admin API's ``StreamsGroupDescribe`` cannot be run: the text has member
id, member epoch, process id, client id and the current and target assignments only, no task
offsets, end offsets, client tags, rack, instance id, topology or configs.
"""

from __future__ import annotations

import re

from lag.sources.streams_group_describe import DescribedGroup, DescribedMember, MemberTasks, Tasks
from streams_assign.errors import LagInputError

__all__ = ["parse_describe_text"]

# --- the describe tool's text --------------------------------------------------------------------

_HEADER = (
    "GROUP",
    "TARGET-ASSIGNMENT-EPOCH",
    "TOPOLOGY-EPOCH",
    "MEMBER",
    "MEMBER-PROTOCOL",
    "MEMBER-EPOCH",
    "PROCESS",
    "CLIENT-ID",
    "ASSIGNMENTS",
)
_SECTION = re.compile(r"(TARGET-ACTIVE|TARGET-STANDBY|TARGET-WARMUP|ACTIVE|STANDBY|WARMUP):")
_TASKS = re.compile(r"^(\S+):\[(\d+(?:,\d+)*)?\]$")


def parse_describe_text(text: str, source: str) -> DescribedGroup:
    """Read ``kafka-streams-groups.sh --describe --group G --members --verbose`` (Kafka 4.4).

    One header line, then one line per member: group, target-assignment epoch, topology epoch,
    member id, member protocol, member epoch, process id, client id and the assignments
    (``ACTIVE: 0:[1,3]; STANDBY: ...; TARGET-ACTIVE: ...; TARGET-STANDBY: ...;``).

    Raises
    ------
    LagInputError
        Naming ``source`` and the line: no header (the output of another ``--describe`` view or
        of another tool), a line with missing columns or an unreadable assignment (a truncated
        output), a member of the ``classic`` protocol, or no member at all.
    """
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    header = next((i for i, line in enumerate(lines) if line.split()[:1] == ["GROUP"]), None)
    if header is None or tuple(lines[header].split()) != _HEADER:
        raise LagInputError(
            f"{source}: not the output of kafka-streams-groups --describe --members --verbose "
            f"(expected the header {' '.join(_HEADER)})"
        )
    members = []
    group_id = ""
    epochs = (0, 0)
    for n, line in enumerate(lines[header + 1 :], start=header + 2):
        cols = line.split(maxsplit=8)
        if len(cols) < 9:
            raise LagInputError(f"{source}: line {n}: {len(cols)} columns, expected 9 (truncated?)")
        try:
            target_epoch, topology_epoch, member_epoch = int(cols[1]), int(cols[2]), int(cols[5])
        except ValueError:
            raise LagInputError(f"{source}: line {n}: an epoch is not a number") from None
        if cols[4] != "streams":
            raise LagInputError(
                f"{source}: line {n}: member {cols[3]} speaks the {cols[4]!r} protocol, "
                "not 'streams'"
            )
        group_id, epochs = cols[0], (target_epoch, topology_epoch)
        sections = _assignment_sections(cols[8], f"{source}: line {n}")
        members.append(
            DescribedMember(
                member_id=cols[3],
                member_epoch=member_epoch,
                process_id=cols[6],
                client_id=cols[7],
                assignment=MemberTasks(
                    sections["ACTIVE"], sections["STANDBY"], sections.get("WARMUP", {})
                ),
                target_assignment=MemberTasks(
                    sections["TARGET-ACTIVE"],
                    sections["TARGET-STANDBY"],
                    sections.get("TARGET-WARMUP", {}),
                ),
            )
        )
    if not members:
        raise LagInputError(f"{source}: no member lines after the header")
    return DescribedGroup(
        group_id=group_id,
        state=None,
        group_epoch=None,
        target_assignment_epoch=epochs[0],
        topology_epoch=epochs[1],
        members=tuple(members),
        source="describe-text",
    )


def _assignment_sections(text: str, where: str) -> dict[str, Tasks]:
    parts = _SECTION.split(text)
    if parts[0].strip():
        raise LagInputError(f"{where}: assignments start with {parts[0].strip()[:30]!r}")
    sections: dict[str, Tasks] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        tasks: Tasks = {}
        for item in body.split(";"):
            item = item.strip()
            if not item or item == "-":
                continue
            match = _TASKS.match(item)
            if match is None:
                raise LagInputError(f"{where}: {name}: unreadable tasks {item!r}")
            if match.group(2):
                tasks[match.group(1)] = tuple(sorted(int(p) for p in match.group(2).split(",")))
        sections[name] = tasks
    for name in ("ACTIVE", "STANDBY", "TARGET-ACTIVE", "TARGET-STANDBY"):
        if name not in sections:
            raise LagInputError(f"{where}: no {name}: section (truncated?)")
    return sections
