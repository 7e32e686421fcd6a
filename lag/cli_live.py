"""The ``streams-lag`` subcommands that ask a live cluster: ``members`` (a classic group's decoded
members), ``snapshot`` (a classic group: the leader's input, freshest source first; a streams
group: the state its broker's assignor reads) and ``streams-group`` (a KIP-1071 streams group as
``streams_group_sticky``'s input, live or from a saved description). :mod:`lag.cli` dispatches
to them. Both streams-group paths read the group with
:func:`lag.sources.streams_group_describe.read_live_streams_group`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lag.cli_options import add_config_flags, bounded
from streams_assign.errors import LagInputError

__all__ = [
    "add_members_parser",
    "add_reader_arguments",
    "add_snapshot_parser",
    "add_streams_group_parser",
    "run_members",
    "run_snapshot",
    "run_streams_group",
    "run_streams_group_snapshot",
    "streams_group_summary",
    "streams_group_table",
]


def add_live_arguments(parser: Any) -> None:
    """The options that reach a live cluster (shared with ``streams-assign``'s live mode)."""
    parser.add_argument(
        "--command-config",
        metavar="CLIENT.PROPERTIES",
        help="Kafka client properties (security.protocol, sasl.*, ssl.* with PEM files)",
    )
    parser.add_argument(
        "--streams-config",
        metavar="APP.PROPERTIES",
        help="the application's Kafka Streams properties (assignment configs; the rest fall "
        "back to Kafka's defaults, said on stderr)",
    )
    parser.add_argument(
        "--metrics",
        nargs="+",
        default=[],
        metavar="FILE",
        help="JmxTool output or Prometheus exposition of the running instances (restore "
        "consumers' records-lag, last-rebalance-seconds-ago, stream-state-metrics)",
    )
    parser.add_argument(
        "--state-dirs",
        nargs="+",
        default=[],
        metavar="DIR",
        help="state directories of the instances (.checkpoint files, with their mtime)",
    )
    parser.add_argument("--topology", help="Topology#describe() text (optional)")
    parser.add_argument(
        "--timeout-ms", type=bounded(1, 3_600_000), default=30_000, help="per request (30000)"
    )


def add_reader_arguments(parser: Any) -> None:
    """Where the streams-group reader finds Kafka 4.4's jars and its Admin-API dumper
    (:func:`lag.sources.streams_group_describe.reader_paths` fills in the defaults)."""
    parser.add_argument(
        "--kafka-jars",
        metavar="DIR",
        help="streams groups: folder of Kafka 4.4+ jars (default $STREAMS_ASSIGN_KAFKA_HOME/"
        "lib-44, else .kafka/lib-44)",
    )
    parser.add_argument(
        "--dumper",
        metavar="FILE",
        help="streams groups: the Admin-API dumper's source (default kafka/streams-group-"
        "describe/DescribeStreamsGroup.java)",
    )


def add_snapshot_parser(commands: Any) -> None:
    """``streams-lag snapshot``: the leader's input from a live cluster, freshest source first."""
    snapshot = commands.add_parser(
        "snapshot", help="write the cluster state of a live Kafka Streams group"
    )
    snapshot.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    snapshot.add_argument("--application-id", required=True, help="Kafka Streams application.id")
    add_live_arguments(snapshot)
    add_config_flags(snapshot)
    add_reader_arguments(snapshot)
    snapshot.add_argument(
        "--out",
        required=True,
        metavar="STATE.json",
        help="file to write: a cluster state (classic group) or a streams-group state",
    )
    snapshot.add_argument("--quiet", action="store_true", help="no table on stderr")


def add_streams_group_parser(commands: Any) -> None:
    """``streams-lag streams-group``: a live streams group (KIP-1071) as the twin's input."""
    group = commands.add_parser(
        "streams-group",
        help="write a streams group's state (StreamsGroupDescribe) for streams_group_sticky",
    )
    source = group.add_mutually_exclusive_group(required=True)
    source.add_argument("--bootstrap-server", metavar="HOST:PORT", help="describe the live group")
    source.add_argument(
        "--describe",
        metavar="FILE",
        help="a saved description: the dumper's JSON, or kafka-streams-groups --describe "
        "--members --verbose text",
    )
    group.add_argument("--application-id", help="Kafka Streams application.id (the group id)")
    group.add_argument("--out", required=True, help="the streams-group state JSON to write")
    add_reader_arguments(group)
    group.add_argument(
        "--topology",
        metavar="SUB=PARTITIONS[:stateful],...",
        help="subtopologies, required with the describe tool's text (e.g. 0=6,1=6:stateful)",
    )
    group.add_argument("--num-standby-replicas", type=bounded(0, 2**31 - 1))
    group.add_argument("--previous", help="an earlier output, for the offsets reports' ages")
    group.add_argument(
        "--exclude-member", action="append", default=[], help="leave out this member id"
    )
    group.add_argument(
        "--timeout-ms", type=bounded(1, 3_600_000), default=30_000, help="per request (30000)"
    )


def add_members_parser(commands: Any) -> None:
    """``streams-lag members``: a live classic Streams group's decoded members (DescribeGroups)."""
    members = commands.add_parser(
        "members", help="print the decoded subscription and assignment of every group member"
    )
    members.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    members.add_argument("--application-id", required=True, help="Kafka Streams application.id")
    members.add_argument(
        "--timeout-ms", type=bounded(1, 3_600_000), default=30_000, help="per request (30000)"
    )
    members.add_argument("--json", action="store_true", help="one JSON document on stdout")


def run_members(args: argparse.Namespace) -> int:
    import json

    from lag.sources.streams_group_state import member_document, read_streams_members

    members = read_streams_members(args.bootstrap_server, args.application_id, args.timeout_ms)
    docs = [member_document(m) for m in members]
    if args.json:
        print(json.dumps({"application_id": args.application_id, "members": docs}, indent=1))
        return 0
    for doc in docs:
        print(f"{doc['client_id']} ({doc['member_id']}, {doc['client_host']})")
        for key in ("process_id", "version", "user_endpoint", "client_tags", "task_offset_sums"):
            print(f"  {key}: {doc['subscription'][key]}")
        assignment = doc["assignment"] or {"active_tasks": "-", "standby_tasks": "-"}
        print(f"  active: {assignment['active_tasks']}")
        print(f"  standby: {assignment['standby_tasks']}")
    print(f"{len(docs)} member(s) in group {args.application_id}", file=sys.stderr)
    return 0


def run_snapshot(args: argparse.Namespace) -> int:
    """Write the live group's state: a classic group's cluster state (:func:`take_snapshot`), or
    a streams group's state (:func:`run_streams_group_snapshot`), by the type ``ListGroups``
    gives."""
    from lag.sources.live_cluster import live_group_type, read_command_config

    properties = read_command_config(args.command_config)
    kind = live_group_type(args.bootstrap_server, args.application_id, properties, args.timeout_ms)
    if kind == "streams":
        return run_streams_group_snapshot(args)
    return _run_classic_snapshot(args)


def given_live_options(args: argparse.Namespace) -> list[str]:
    """The live-mode options the user gave (a value other than the default), as ``--name``."""
    from lag.cli_options import STREAMS_GROUP_UNUSED

    return [
        option
        for option in STREAMS_GROUP_UNUSED
        if getattr(args, option[2:].replace("-", "_"), None) not in (None, [], ())
    ]


def run_streams_group_snapshot(args: argparse.Namespace) -> int:
    """``streams-lag snapshot`` on a streams group: the state ``streams-lag streams-group``
    writes, through the same reader (:func:`read_live_streams_group`), and a summary per member
    with how old its offsets report can be."""
    from lag.cli_options import refuse_for_streams_group
    from lag.sources.streams_group_describe import read_live_streams_group
    from streams_assign.formats.streams_group import dump_streams_group

    refuse_for_streams_group(given_live_options(args), args.application_id)
    group, state = read_live_streams_group(
        args.bootstrap_server,
        args.application_id,
        kafka_jars=args.kafka_jars,
        dumper=args.dumper,
        timeout_ms=args.timeout_ms,
        num_standby_replicas=args.num_standby_replicas,
    )
    _write(args.out, dump_streams_group(state))
    if not args.quiet:
        from rich.console import Console

        Console(stderr=True, width=120).print(streams_group_table(state))
    print(f"wrote {args.out}: {streams_group_summary(group, state)}", file=sys.stderr)
    return 0


def streams_group_summary(group: Any, state: Any) -> str:
    """One line: which form was written, from which group, and how old the reports can be."""
    configured = group.configs.get("streams.num.standby.replicas")
    standbys = state.configs.num_standby_replicas
    override = (
        f" (given; the group's is {configured})"
        if configured is not None and str(standbys) != configured
        else ""
    )
    interval = next(iter(state.meta["offsets_report"].values()))["interval_ms"]
    return (
        f"a streams-group state (KIP-1071: the input of the broker's task assignor, not a "
        f"classic cluster state) of group {group.group_id!r}: {len(state.members)} member(s) of "
        f"{len({m.process_id for m in state.members})} process(es), group epoch "
        f"{group.group_epoch}, target epoch {group.target_assignment_epoch}, assignor "
        f"{group.assignor or 'unknown'}, num.standby.replicas {standbys}{override}; each "
        f"member's offsets report is at most {interval / 1000:g} s old "
        "(streams.task.offset.interval.ms) plus a heartbeat"
    )


def streams_group_table(state: Any) -> Any:
    """Per member, in the broker's order: process, tasks held, and its offsets report (how
    many tasks, the lag it gives: reported end offset - reported offset, summed over them, in
    records, and how old it can be).

    Returns
    -------
    rich.table.Table
    """
    from rich.table import Table

    reports = state.meta["offsets_report"]
    observed = state.meta.get("observed_at_ms")
    table = Table(title="members, in the broker's order: the offsets each last reported")
    for name in ("member", "process", "active", "standby", "reported", "lag", "age"):
        table.add_column(name, justify="right" if name in ("active", "standby", "lag") else "left")
    for m in state.members:
        report = reports[m.member_id]
        count = sum(len(p) for p in m.task_offsets.values())
        behind = [
            max(0, end - m.task_offsets[s][p])
            for s, ends in m.task_end_offsets.items()
            for p, end in ends.items()
            if p in m.task_offsets.get(s, {})
        ]
        since = report.get("unchanged_since_ms")
        age = f"<= {report['interval_ms'] / 1000:g} s"
        if since is not None and observed is not None and since < observed:
            age = f"{(observed - since) / 1000:.1f} s .. {age[3:]}"
        table.add_row(
            m.member_id,
            m.process_id[:8],
            str(sum(len(p) for p in m.active_tasks.values())),
            str(sum(len(p) for p in m.standby_tasks.values())),
            f"{count} task(s)" if count else "none",
            f"{sum(behind):,}" if behind else "-",
            age,
        )
    return table


def _write(path: str, document: Any) -> None:
    from streams_assign.formats.atomic import dumps_json, write_atomic

    try:
        write_atomic(path, dumps_json(document))
    except OSError as exc:
        raise LagInputError(f"--out {path}: cannot write: {exc.strerror or exc}") from None


def _run_classic_snapshot(args: argparse.Namespace) -> int:
    from lag.job.snapshot import config_notes, take_snapshot
    from lag.sources.streams_config import CONFIG_FLAGS
    from streams_assign.formats.cluster_state import parse_cluster_state

    snapshot, resolved = take_snapshot(
        args.bootstrap_server,
        args.application_id,
        command_config=args.command_config,
        streams_config=args.streams_config,
        metrics=args.metrics,
        state_dirs=args.state_dirs,
        topology=args.topology,
        timeout_ms=args.timeout_ms,
        flags={flag: getattr(args, flag[2:].replace("-", "_")) for flag in CONFIG_FLAGS},
    )
    try:
        parse_cluster_state(snapshot.document)
    except Exception as exc:  # never write a state the assignor would refuse
        raise LagInputError(f"snapshot of {args.application_id!r} is not valid: {exc}") from None
    _write(args.out, snapshot.document)
    if not args.quiet:
        from rich.console import Console

        Console(stderr=True, width=120).print(provenance_table(snapshot))
    for note in [*config_notes(resolved), *snapshot.notes]:
        print(f"streams-lag: {note}", file=sys.stderr)
    clients = snapshot.document["clients"]
    print(
        f"wrote {args.out}: {len(clients)} client(s), "
        f"{len(snapshot.document['stateful_tasks'])} stateful task(s)",
        file=sys.stderr,
    )
    return 0


def provenance_table(snapshot: Any) -> Any:
    """Which source each (process, task) offset sum came from, and how old it was.

    Returns
    -------
    rich.table.Table
    """
    from rich.table import Table

    table = Table(title="offset sums: the freshest source per (process, task)")
    for name in ("process", "task", "source", "offset sum", "lag", "age"):
        table.add_column(name, justify="right" if name in ("offset sum", "lag", "age") else "left")
    for row in snapshot.provenance:
        age = "-" if row.as_of_ms is None else f"{(snapshot.time_ms - row.as_of_ms) / 1000:.1f} s"
        table.add_row(
            row.process_id[:8], row.task, row.source, f"{row.offset_sum:,}", f"{row.lag:,}", age
        )
    return table


def _topology_option(text: str) -> dict[str, tuple[int, bool]]:
    topology = {}
    for item in text.split(","):
        sub, _, spec = item.partition("=")
        count, _, flag = spec.partition(":")
        if not sub or not count.isdigit() or int(count) < 1 or flag not in ("", "stateful"):
            raise LagInputError(f"--topology: {item!r} is not SUB=PARTITIONS[:stateful]")
        topology[sub] = (int(count), flag == "stateful")
    return topology


def _previous(path: str | None) -> Any:
    import json

    if not path:
        return None
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LagInputError(f"--previous {path}: {exc}") from None


def run_streams_group(args: argparse.Namespace) -> int:

    from lag.sources.streams_group_describe import (
        parse_describe_json,
        read_live_streams_group,
        streams_group_state,
    )
    from lag.sources.streams_group_text import parse_describe_text
    from streams_assign.formats.atomic import write_json_atomic
    from streams_assign.formats.streams_group import dump_streams_group

    previous = _previous(args.previous)
    if args.bootstrap_server:
        if not args.application_id:
            raise LagInputError("--application-id is required with --bootstrap-server")
        group, state = read_live_streams_group(
            args.bootstrap_server,
            args.application_id,
            kafka_jars=args.kafka_jars,
            dumper=args.dumper,
            timeout_ms=args.timeout_ms,
            topology=_topology_option(args.topology) if args.topology else None,
            num_standby_replicas=args.num_standby_replicas,
            previous=previous,
            exclude_members=args.exclude_member,
        )
    else:
        try:
            text = Path(args.describe).read_text(encoding="utf-8")
        except OSError as exc:
            raise LagInputError(f"--describe {args.describe}: {exc.strerror}") from None
        if text.lstrip().startswith("{"):
            group = parse_describe_json(text, source=args.describe)
        else:
            group = parse_describe_text(text, source=args.describe)
        if args.application_id and group.group_id != args.application_id:
            raise LagInputError(
                f"--describe {args.describe}: group {group.group_id!r}, not "
                f"--application-id {args.application_id!r}"
            )
        state = streams_group_state(
            group,
            topology=_topology_option(args.topology) if args.topology else None,
            num_standby_replicas=args.num_standby_replicas,
            previous=previous,
            exclude_members=args.exclude_member,
        )
    write_json_atomic(args.out, dump_streams_group(state))
    print(
        f"{len(state.members)} member(s) of streams group {group.group_id} "
        f"(target epoch {group.target_assignment_epoch}) written to {args.out}",
        file=sys.stderr,
    )
    return 0
