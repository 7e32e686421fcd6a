"""The ``streams-lag`` subcommands that ask a live cluster: ``members`` (a classic group's decoded
members), ``snapshot`` (the leader's input, freshest source first) and ``streams-group`` (a
KIP-1071 streams group as ``streams_group_sticky``'s input). :mod:`lag.cli` dispatches to them."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from lag.cli_options import add_config_flags, bounded
from streams_assign.errors import LagInputError

__all__ = [
    "add_members_parser",
    "add_snapshot_parser",
    "add_streams_group_parser",
    "run_members",
    "run_snapshot",
    "run_streams_group",
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


def add_snapshot_parser(commands: Any) -> None:
    """``streams-lag snapshot``: the leader's input from a live cluster, freshest source first."""
    snapshot = commands.add_parser(
        "snapshot", help="write the cluster state of a live Kafka Streams group"
    )
    snapshot.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    snapshot.add_argument("--application-id", required=True, help="Kafka Streams application.id")
    add_live_arguments(snapshot)
    add_config_flags(snapshot)
    snapshot.add_argument("--out", required=True, metavar="CLUSTER.json", help="file to write")
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
    group.add_argument(
        "--kafka-jars",
        default=os.environ.get("STREAMS_ASSIGN_KAFKA_HOME", ".kafka") + "/lib-44",
        help="folder of Kafka 4.4+ jars ($STREAMS_ASSIGN_KAFKA_HOME/lib-44 or .kafka/lib-44)",
    )
    group.add_argument(
        "--dumper",
        default="kafka/streams-group-describe/DescribeStreamsGroup.java",
        help="the Admin-API dumper's source file",
    )
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
    from lag.job.snapshot import config_notes, take_snapshot
    from lag.sources.streams_config import CONFIG_FLAGS
    from streams_assign.formats.atomic import dumps_json, write_atomic
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
    try:
        write_atomic(args.out, dumps_json(snapshot.document))
    except OSError as exc:
        raise LagInputError(f"--out {args.out}: cannot write: {exc.strerror or exc}") from None
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


def run_streams_group(args: argparse.Namespace) -> int:
    import json

    from lag.sources.streams_group_describe import (
        describe_streams_group,
        parse_describe_json,
        streams_group_state,
    )
    from lag.sources.streams_group_text import parse_describe_text
    from streams_assign.formats.atomic import write_json_atomic
    from streams_assign.formats.streams_group import dump_streams_group

    if args.bootstrap_server:
        if not args.application_id:
            raise LagInputError("--application-id is required with --bootstrap-server")
        group = describe_streams_group(
            args.bootstrap_server,
            args.application_id,
            kafka_jars=args.kafka_jars,
            dumper=args.dumper,
            timeout_ms=args.timeout_ms,
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
    previous = None
    if args.previous:
        try:
            previous = json.loads(Path(args.previous).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise LagInputError(f"--previous {args.previous}: {exc}") from None
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
