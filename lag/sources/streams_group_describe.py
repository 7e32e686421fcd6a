"""Read a live streams group (KIP-1071, ``group.protocol=streams``) as its operator can.

Two inputs, both turned into a :class:`DescribedGroup`:

- **The Admin API** (``StreamsGroupDescribe``, api key 89), through the dumper
  ``kafka/streams-group-describe/DescribeStreamsGroup.java`` run on Kafka 4.4's jars
  (``Admin#describeStreamsGroups``, ``#describeTopics``, ``#describeConfigs`` of the GROUP
  resource): members with member epoch, process id, client id, rack, instance id, client tags,
  current and target assignments, the task offsets and end offsets each member last reported;
  subtopologies with their topics; the group's configs. kafka-python 3.0 knows the api key but
  has no message schema for it, hence the JVM. :func:`describe_streams_group` runs it;
  :func:`parse_describe_json` reads its JSON.
- **The describe tool's text** (``kafka-streams-groups.sh --describe --members --verbose``,
  Kafka's ``StreamsGroupCommand``): member id, member epoch, process id, client id, current and
  target assignments only: no offsets, end offsets, client tags, rack or instance id, and no
  topology (partition counts and stateful flags must be given).
  :func:`lag.sources.streams_group_text.parse_describe_text`.

:func:`streams_group_state` writes the state the twin ``streams_group_sticky`` reads
(:mod:`streams_assign.formats.streams_group`): members in the order of a Java ``HashMap`` keyed
by member id filled in the broker's order (``TargetAssignmentBuilder``), each holding its
current assignment (``assignedTasks``) and its last offsets report, with the age of that report
in ``meta``. Every error is a :class:`~streams_assign.errors.LagInputError` naming the input and
the field.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streams_assign.errors import LagInputError
from streams_assign.streams_group import (
    StreamsGroupConfigs,
    StreamsGroupMember,
    StreamsGroupState,
    StreamsGroupSubtopology,
    java_string_order,
)

__all__ = [
    "DUMPER_FILE",
    "DescribedGroup",
    "DescribedMember",
    "MemberTasks",
    "describe_streams_group",
    "parse_describe_json",
    "read_live_streams_group",
    "reader_paths",
    "streams_group_state",
]

#: File name of the Admin-API dumper (``kafka/streams-group-describe/`` in the repository).
DUMPER_FILE = "DescribeStreamsGroup.java"
#: Kafka's default ``group.streams.task.offset.interval.ms`` (members report offsets this often).
DEFAULT_TASK_OFFSET_INTERVAL_MS = 60_000

Tasks = dict[str, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class MemberTasks:
    """Active, standby and warm-up tasks of a member: subtopology id -> sorted partitions."""

    active: Tasks = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DescribedMember:
    """One member (a stream thread) as ``StreamsGroupDescribe`` returns it.

    ``task_offsets`` / ``task_end_offsets`` (subtopology -> partition -> offset sum, records)
    are None when the input cannot carry them (the describe tool's text), as are
    ``client_tags``, ``rack_id`` and ``instance_id``.
    """

    member_id: str
    member_epoch: int
    process_id: str
    client_id: str
    assignment: MemberTasks
    target_assignment: MemberTasks
    client_host: str | None = None
    instance_id: str | None = None
    rack_id: str | None = None
    client_tags: Mapping[str, str] | None = None
    task_offsets: Mapping[str, Mapping[int, int]] | None = None
    task_end_offsets: Mapping[str, Mapping[int, int]] | None = None
    is_classic: bool = False


@dataclass(frozen=True, slots=True)
class DescribedGroup:
    """A streams group as described: epochs, topology, configs and members in the broker's order.

    Attributes
    ----------
    topology:
        Subtopology id -> (tasks, stateful); None from the describe tool's text.
    configs:
        The group's configs (``streams.num.standby.replicas`` ...); empty from the text.
    observed_at_ms:
        When the description was taken (epoch ms), None when unknown.
    source:
        ``"admin"`` or ``"describe-text"``.
    """

    group_id: str
    state: str | None
    group_epoch: int | None
    target_assignment_epoch: int
    topology_epoch: int
    members: tuple[DescribedMember, ...]
    topology: Mapping[str, tuple[int, bool]] | None = None
    configs: Mapping[str, str | None] = field(default_factory=dict)
    assignor: str | None = None
    kafka_version: str | None = None
    observed_at_ms: int | None = None
    source: str = "admin"


# --- the Admin API through the dumper ------------------------------------------------------------


def describe_streams_group(
    bootstrap_server: str,
    group_id: str,
    *,
    kafka_jars: str | Path,
    dumper: str | Path,
    java: str = "java",
    timeout_ms: int = 30_000,
) -> DescribedGroup:
    """Describe a live streams group through Kafka's Admin client (the dumper, on Kafka 4.4's jars).

    Parameters
    ----------
    bootstrap_server:
        ``HOST:PORT`` of the cluster (plaintext).
    group_id:
        The group id: the Streams ``application.id``.
    kafka_jars:
        A folder of Kafka 4.4+ jars (``kafka-clients``, Jackson): ``.kafka/lib-44`` of a checkout
        or the ``libs/`` of a Kafka distribution.
    dumper:
        ``DescribeStreamsGroup.java`` (run from source, Java 11+).
    java:
        The ``java`` program.
    timeout_ms:
        Time-out of each Admin request, milliseconds.

    Raises
    ------
    LagInputError
        When the jars or the dumper are missing, the group is unknown or not a streams group
        (a classic or consumer group), or the cluster does not answer: one line naming the
        group and Kafka's error.
    """
    jars = Path(kafka_jars)
    if not any(jars.glob("kafka-clients-*.jar")):
        raise LagInputError(f"--kafka-jars {jars}: no kafka-clients jar there (Kafka 4.4+ jars)")
    if not Path(dumper).is_file():
        raise LagInputError(f"--dumper {dumper}: no such file")
    command = [
        java,
        "-Xmx128m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        # A JVM ignores TMPDIR: pass this process's temp folder on as java.io.tmpdir.
        f"-Djava.io.tmpdir={tempfile.gettempdir()}",
        "-Dlog4j.configuration=file:/dev/null",
        "-cp",
        str(jars / "*"),
        str(dumper),
        bootstrap_server,
        group_id,
        str(timeout_ms),
    ]
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout_ms / 1000 * 3 + 60,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LagInputError(f"group {group_id!r}: the describe dumper failed: {exc}") from None
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise LagInputError(
            f"group {group_id!r}: the describe dumper printed no JSON (status "
            f"{result.returncode}): {result.stderr.strip()[-400:]}"
        )
    return parse_describe_json(lines[-1], source=f"{bootstrap_server} group {group_id!r}")


def reader_paths(
    kafka_jars: str | Path | None = None, dumper: str | Path | None = None
) -> tuple[Path, Path]:
    """The Kafka 4.4 jar folder and the dumper's source file, defaults filled in.

    Defaults: ``$STREAMS_ASSIGN_KAFKA_HOME/lib-44`` else ``.kafka/lib-44``, and
    ``kafka/streams-group-describe/DescribeStreamsGroup.java``, each taken in the current folder
    when it is there, else in the checkout the ``lag`` package was installed from.
    """
    import os

    checkout = Path(__file__).resolve().parents[2]
    home = os.environ.get("STREAMS_ASSIGN_KAFKA_HOME")
    chosen = []
    for given, default in (
        (kafka_jars, Path(home) / "lib-44" if home else Path(".kafka") / "lib-44"),
        (dumper, Path("kafka") / "streams-group-describe" / DUMPER_FILE),
    ):
        if given is not None:
            chosen.append(Path(given))
        elif default.is_absolute() or default.exists():
            chosen.append(default)
        else:
            chosen.append(checkout / default)
    return chosen[0], chosen[1]


def read_live_streams_group(
    bootstrap_server: str,
    group_id: str,
    *,
    kafka_jars: str | Path | None = None,
    dumper: str | Path | None = None,
    timeout_ms: int = 30_000,
    topology: Mapping[str, tuple[int, bool]] | None = None,
    num_standby_replicas: int | None = None,
    previous: Mapping[str, Any] | None = None,
    exclude_members: Sequence[str] = (),
) -> tuple[DescribedGroup, StreamsGroupState]:
    """A live streams group and the state the broker's assignor would get next: the one reader
    of ``streams-lag streams-group``, ``streams-lag snapshot`` and ``streams-assign``'s live mode.

    :func:`describe_streams_group` (jars and dumper from :func:`reader_paths`), then
    :func:`streams_group_state` (``topology``, ``num_standby_replicas``, ``previous`` and
    ``exclude_members`` as it takes them).

    Raises
    ------
    LagInputError
        As those two do, and when the group has no members (nothing for the assignor to place
        tasks on: an ``Empty`` group, whose application is stopped).
    """
    jars, source = reader_paths(kafka_jars, dumper)
    group = describe_streams_group(
        bootstrap_server, group_id, kafka_jars=jars, dumper=source, timeout_ms=timeout_ms
    )
    if not group.members:
        raise LagInputError(
            f"streams group {group_id!r} at {bootstrap_server} has no members (state "
            f"{group.state}): is the application running?"
        )
    state = streams_group_state(
        group,
        topology=topology,
        num_standby_replicas=num_standby_replicas,
        previous=previous,
        exclude_members=exclude_members,
    )
    return group, state


def parse_describe_json(text: str | Mapping[str, Any], source: str) -> DescribedGroup:
    """Read the dumper's JSON document (text or parsed).

    Raises
    ------
    LagInputError
        Naming ``source`` and the JSON path: not JSON, an ``error`` document (Kafka's
        ``GroupIdNotFoundException`` for an unknown group or one of another type), a field
        missing or of the wrong type, or a group of classic members.
    """
    if isinstance(text, str):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LagInputError(
                f"{source}: not a streams-group description: invalid JSON at line {exc.lineno} "
                f"column {exc.colno} (truncated?)"
            ) from None
    else:
        doc = text
    if not isinstance(doc, Mapping):
        raise LagInputError(f"{source}: not a streams-group description: not a JSON object")
    if "error" in doc:
        err = doc["error"] if isinstance(doc["error"], Mapping) else {}
        raise LagInputError(
            f"{source}: StreamsGroupDescribe failed: {err.get('type')}: {err.get('message')}"
        )
    get = _Fields(doc, source)
    group_id = get.text("group_id")
    partitions = get.obj("topic_partitions")
    topology: dict[str, tuple[int, bool]] = {}
    for i, sub in enumerate(get.array("subtopologies")):
        path = f"subtopologies[{i}]"
        sub_get = _Fields(sub, source, path)
        topics = [*sub_get.array("source_topics"), *sub_get.obj("repartition_source_topics")]
        counts = []
        for topic in topics:
            if not isinstance(partitions.get(topic), int):
                raise LagInputError(
                    f"{source}: topic_partitions.{topic}: missing (a source topic of {path})"
                )
            counts.append(partitions[topic])
        stateful = bool(sub_get.obj("state_changelog_topics"))
        topology[sub_get.text("id")] = (max(counts, default=0), stateful)
    members = []
    for i, raw in enumerate(get.array("members")):
        m = _Fields(raw, source, f"members[{i}]")
        if m.flag("is_classic"):
            raise LagInputError(
                f"{source}: members[{i}] ({m.text('member_id')}): a classic-protocol member in a "
                "streams group: its offsets and tasks are not reported through StreamsGroupDescribe"
            )
        members.append(
            DescribedMember(
                member_id=m.text("member_id"),
                member_epoch=m.integer("member_epoch"),
                process_id=m.text("process_id"),
                client_id=m.text("client_id"),
                client_host=m.opt_text("client_host"),
                instance_id=m.opt_text("instance_id"),
                rack_id=m.opt_text("rack_id"),
                client_tags={str(k): str(v) for k, v in m.obj("client_tags").items()},
                task_offsets=_offsets(m, "task_offsets"),
                task_end_offsets=_offsets(m, "task_end_offsets"),
                assignment=_tasks(m, "assignment"),
                target_assignment=_tasks(m, "target_assignment"),
            )
        )
    configs = {str(k): (None if v is None else str(v)) for k, v in get.obj("configs").items()}
    return DescribedGroup(
        group_id=group_id,
        state=get.text("state"),
        group_epoch=get.integer("group_epoch"),
        target_assignment_epoch=get.integer("target_assignment_epoch"),
        topology_epoch=get.integer("topology_epoch"),
        members=tuple(members),
        topology=topology,
        configs=configs,
        assignor=get.opt_text("assignor"),
        kafka_version=get.opt_text("kafka_version"),
        observed_at_ms=get.integer("observed_at_ms"),
        source="admin",
    )


class _Fields:
    """Typed access to one JSON object with errors naming ``source`` and the path."""

    def __init__(self, obj: Any, source: str, path: str = "") -> None:
        if not isinstance(obj, Mapping):
            raise LagInputError(f"{source}: {path or '(document)'}: must be an object")
        self.obj_ = obj
        self.source = source
        self.path = path

    def _get(self, key: str, kinds: tuple[type, ...], what: str) -> Any:
        where = f"{self.path}.{key}" if self.path else key
        if key not in self.obj_:
            raise LagInputError(f"{self.source}: {where}: missing (truncated description?)")
        value = self.obj_[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise LagInputError(f"{self.source}: {where}: must be {what}, got {value!r:.60}")
        return value

    def text(self, key: str) -> str:
        return str(self._get(key, (str,), "a string"))

    def opt_text(self, key: str) -> str | None:
        value = self._get(key, (str, type(None)), "a string or null")
        return None if value is None else str(value)

    def integer(self, key: str) -> int:
        return int(self._get(key, (int,), "an integer"))

    def flag(self, key: str) -> bool:
        return bool(self._get(key, (bool,), "true or false"))

    def array(self, key: str) -> list[Any]:
        return list(self._get(key, (list,), "a list"))

    def obj(self, key: str) -> Mapping[str, Any]:
        value: Mapping[str, Any] = self._get(key, (dict,), "an object")
        return value


def _offsets(m: _Fields, key: str) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    for j, entry in enumerate(m.array(key)):
        ok = (
            isinstance(entry, list)
            and len(entry) == 3
            and isinstance(entry[0], str)
            and all(isinstance(x, int) and not isinstance(x, bool) for x in entry[1:])
        )
        if not ok:
            raise LagInputError(
                f"{m.source}: {m.path}.{key}[{j}]: must be [subtopology, partition, offset], "
                f"got {entry!r:.60}"
            )
        out.setdefault(entry[0], {})[entry[1]] = entry[2]
    return out


def _tasks(m: _Fields, key: str) -> MemberTasks:
    raw = _Fields(m.obj(key), m.source, f"{m.path}.{key}")
    kinds = []
    for kind in ("active", "standby", "warmup"):
        tasks: Tasks = {}
        for sub, parts in raw.obj(kind).items():
            if not isinstance(parts, list) or not all(
                isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in parts
            ):
                raise LagInputError(
                    f"{m.source}: {raw.path}.{kind}.{sub}: must be a list of partitions"
                )
            if parts:
                tasks[str(sub)] = tuple(sorted(parts))
        kinds.append(tasks)
    return MemberTasks(*kinds)


# --- the state the twin reads --------------------------------------------------------------------


def streams_group_state(
    group: DescribedGroup,
    *,
    topology: Mapping[str, tuple[int, bool]] | None = None,
    num_standby_replicas: int | None = None,
    previous: Mapping[str, Any] | None = None,
    exclude_members: Sequence[str] = (),
) -> StreamsGroupState:
    """The streams-group state of a described group, as the broker's assignor would get it next.

    Each member holds its current assignment (``assignedTasks``) and its last reported task
    offsets (none from the describe tool's text). Members are listed in the iteration order of
    a Java ``HashMap`` keyed by member id and filled in the broker's member order (Kafka's
    ``TargetAssignmentBuilder`` builds its ``GroupSpec`` so), via
    :class:`streams_assign.java.hash_order.JavaHashMap`.

    ``meta`` says where the state came from and, per member, how old its offsets report can be:
    ``offsets_report.interval_ms`` (``streams.task.offset.interval.ms``: a member reports when it
    joins and then once per interval, so the report is at most that old plus one heartbeat) and,
    when ``previous`` (an earlier output of this function) holds the same report,
    ``unchanged_since_ms`` (the report is at least ``observed_at_ms - unchanged_since_ms`` old).

    Parameters
    ----------
    topology:
        Subtopology id -> (tasks, stateful), required when the description has none (text).
    num_standby_replicas:
        Overrides ``streams.num.standby.replicas`` of the group's configs (required from text).
    previous:
        An earlier state document of the same group (JSON), for the reports' ages.
    exclude_members:
        Member ids left out (members known to be gone: a killed process before its session
        expires).

    Raises
    ------
    LagInputError
        When the topology or the standby count is unknown, or a member holds a task of a
        subtopology the topology lacks.
    """
    from streams_assign.java.hash_order import JavaHashMap, java_string_hash_code

    topo = topology if topology is not None else group.topology
    if topo is None:
        raise LagInputError(
            f"group {group.group_id!r}: the describe tool's text has no topology: give the "
            "subtopologies' partition counts and stateful flags"
        )
    standbys = num_standby_replicas
    if standbys is None:
        raw = group.configs.get("streams.num.standby.replicas")
        if raw is None:
            raise LagInputError(
                f"group {group.group_id!r}: streams.num.standby.replicas unknown (not in the "
                "description): give it"
            )
        standbys = int(raw)
    interval = int(
        group.configs.get("streams.task.offset.interval.ms") or DEFAULT_TASK_OFFSET_INTERVAL_MS
    )
    before = _previous_reports(previous)
    ordered: JavaHashMap[str, StreamsGroupMember] = JavaHashMap(java_string_hash_code)
    reports: dict[str, Any] = {}
    gone = set(exclude_members)
    for m in group.members:
        if m.member_id in gone:
            continue
        _check_subtopologies(group.group_id, m, topo)
        member = _state_member(m)
        offsets = member.task_offsets
        ordered.put(m.member_id, member)
        report: dict[str, Any] = {"interval_ms": interval, "reported": m.task_offsets is not None}
        seen = before.get(m.member_id)
        if seen is not None and seen[0] == _offsets_key(offsets):
            report["unchanged_since_ms"] = seen[1]
        elif group.observed_at_ms is not None:
            report["unchanged_since_ms"] = group.observed_at_ms
        reports[m.member_id] = report
    subtopologies = {
        s: StreamsGroupSubtopology(partitions=topo[s][0], stateful=topo[s][1])
        for s in sorted(topo, key=java_string_order)
    }
    meta = {
        "kind": "streams-group-describe",
        "source": group.source,
        "group_id": group.group_id,
        "kafka_version": group.kafka_version,
        "observed_at_ms": group.observed_at_ms,
        "group_epoch": group.group_epoch,
        "target_assignment_epoch": group.target_assignment_epoch,
        "assignor": group.assignor,
        "member_order": "Java HashMap of member ids (TargetAssignmentBuilder)",
        "offsets_report": reports,
    }
    return StreamsGroupState(
        configs=StreamsGroupConfigs(num_standby_replicas=standbys),
        topology=subtopologies,
        members=tuple(ordered[m] for m in ordered),
        meta=meta,
    )


def _state_member(m: DescribedMember) -> StreamsGroupMember:
    return StreamsGroupMember(
        member_id=m.member_id,
        process_id=m.process_id,
        instance_id=m.instance_id,
        rack_id=m.rack_id,
        client_tags=dict(m.client_tags or {}),
        active_tasks=dict(m.assignment.active),
        standby_tasks=dict(m.assignment.standby),
        warmup_tasks=dict(m.assignment.warmup),
        task_offsets={s: dict(p) for s, p in (m.task_offsets or {}).items()},
        task_end_offsets={s: dict(p) for s, p in (m.task_end_offsets or {}).items()},
    )


def _check_subtopologies(
    group_id: str, m: DescribedMember, topology: Mapping[str, tuple[int, bool]]
) -> None:
    for kind, tasks in (("active", m.assignment.active), ("standby", m.assignment.standby)):
        for sub in tasks:
            if sub not in topology:
                raise LagInputError(
                    f"group {group_id!r} member {m.member_id}: {kind} task of subtopology "
                    f"{sub!r}, which the topology lacks"
                )


def _offsets_key(offsets: Mapping[str, Mapping[int, int]]) -> str:
    return json.dumps({s: {str(p): o for p, o in sorted(v.items())} for s, v in offsets.items()})


def _previous_reports(previous: Mapping[str, Any] | None) -> dict[str, tuple[str, int]]:
    if not previous:
        return {}
    meta = previous.get("meta") or {}
    reports = meta.get("offsets_report") or {}
    out = {}
    for member in previous.get("members") or []:
        since = (reports.get(member.get("member_id")) or {}).get("unchanged_since_ms")
        if isinstance(since, int):
            offsets = {
                s: {int(p): o for p, o in v.items()}
                for s, v in (member.get("task_offsets") or {}).items()
            }
            out[member["member_id"]] = (_offsets_key(offsets), since)
    return out
