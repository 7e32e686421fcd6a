"""``streams-lag``: collect local state, compute changelog lags with Spark, generate test fleets.

Subcommands
-----------
``collect STATE_DIR... -o offsets.parquet``
    Walk Kafka Streams state directories (plain Python) and write offset rows.
``compute --application-id APP --topology T --members M --end-offsets E (--state-dirs D... |
--offsets P...) [--streams-config app.properties] --output cluster.json``
    The Spark job: lags per (process, task), the cluster-state file, and on request the lag
    table, the restore table and the errors table. The assignment configs come from the flags,
    else from the application's properties file, else Kafka's defaults (each said on stderr).
``generate --instances N --tasks T --out DIR``
    A synthetic fleet in the real formats.
``members --bootstrap-server HOST:PORT --application-id APP [--json]``
    The members of a live classic Kafka Streams group, their ``SubscriptionInfo`` and
    ``AssignmentInfo`` decoded (``DescribeGroups``).

Exit status: 0 on success (bad input lines are counted, not fatal), 2 when a required input is
missing or unusable (one line on stderr, no traceback), 1 when the Spark job fails (one line;
``STREAMS_LAG_TRACEBACK=1`` shows the trace) or on an unexpected error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lag.error_rows import ErrorRow, summarize_reasons
from lag.kafka_rules import LONG_MAX
from streams_assign.errors import CodecError, LagInputError

if TYPE_CHECKING:
    from lag.pipeline import ComputeSummary

EXIT_INPUT = 2


def parse_time(text: str) -> int:
    """Epoch milliseconds from ``1767225600000`` or an ISO-8601 time (UTC when no zone is given).

    Raises
    ------
    argparse.ArgumentTypeError
        For anything else.
    """
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not epoch ms or ISO-8601: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _bounded(low: int, high: int = LONG_MAX) -> Any:
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {value}")
        return value

    return convert


def _tag_list(text: str) -> tuple[str, ...]:
    from lag.sources.streams_config import CONFIG_FLAGS

    try:
        tags: tuple[str, ...] = CONFIG_FLAGS["--rack-aware-assignment-tags"].parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    return tags


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``streams-lag`` (its subcommands)."""
    parser = argparse.ArgumentParser(
        prog="streams-lag",
        description="Changelog lags of a Kafka Streams application, computed with Spark, "
        "written as the cluster-state file the assignor reads.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add_collect_parser(commands)
    add_compute_parser(commands)
    add_generate_parser(commands)
    add_members_parser(commands)
    add_streams_group_parser(commands)
    return parser


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
    group.add_argument("--num-standby-replicas", type=_bounded(0, 2**31 - 1))
    group.add_argument("--previous", help="an earlier output, for the offsets reports' ages")
    group.add_argument(
        "--exclude-member", action="append", default=[], help="leave out this member id"
    )
    group.add_argument(
        "--timeout-ms", type=_bounded(1, 3_600_000), default=30_000, help="per request (30000)"
    )


def add_members_parser(commands: Any) -> None:
    """``streams-lag members``: a live classic Streams group's decoded members (DescribeGroups)."""
    members = commands.add_parser(
        "members", help="print the decoded subscription and assignment of every group member"
    )
    members.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT")
    members.add_argument("--application-id", required=True, help="Kafka Streams application.id")
    members.add_argument(
        "--timeout-ms", type=_bounded(1, 3_600_000), default=30_000, help="per request (30000)"
    )
    members.add_argument("--json", action="store_true", help="one JSON document on stdout")


def add_collect_parser(commands: Any) -> None:
    """``streams-lag collect``: state directories into offset rows (plain Python)."""
    collect = commands.add_parser("collect", help="read state directories into offset rows")
    collect.add_argument(
        "state_dirs",
        nargs="+",
        metavar="STATE_DIR",
        help="state.dir or <state.dir>/<application.id> of each instance",
    )
    collect.add_argument("-o", "--output", required=True, help="offset rows: .parquet, or .jsonl")
    collect.add_argument("--application-id", help="selects <state.dir>/<application.id>")
    collect.add_argument(
        "--snapshot-time", type=parse_time, help="stamp rows with this time (epoch ms or ISO-8601)"
    )
    collect.add_argument("--errors-table", help="write the errors table here (Parquet/.jsonl/.csv)")


def add_compute_parser(commands: Any) -> None:
    """``streams-lag compute``: the Spark job's inputs, outputs and the assignment configs."""
    compute = commands.add_parser("compute", help="compute lags and write the cluster state")
    compute.add_argument("--application-id", required=True, help="Kafka Streams application.id")
    compute.add_argument("--topology", required=True, help="text of Topology#describe()")
    compute.add_argument(
        "--members", required=True, nargs="+", help="kafka-consumer-groups.sh --describe output(s)"
    )
    compute.add_argument(
        "--end-offsets",
        required=True,
        nargs="+",
        help="kafka-get-offsets.sh text, or end-offset rows",
    )
    local = compute.add_mutually_exclusive_group(required=True)
    local.add_argument("--state-dirs", nargs="+", help="state directories of the instances")
    local.add_argument("--offsets", nargs="+", help="offset rows (Parquet or JSON Lines)")
    compute.add_argument("--output", required=True, help="cluster-state JSON to write")
    compute.add_argument(
        "--lags-table",
        help="write the lag table here: one file for .parquet/.csv/.jsonl, a folder of part "
        "files for a name ending in /",
    )
    compute.add_argument("--restore-table", help="write the restore table here")
    compute.add_argument("--errors-table", help="write the errors table here")
    compute.add_argument(
        "--at", type=parse_time, help="cluster state as of this time (epoch ms or ISO-8601)"
    )
    compute.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    compute.add_argument("--driver-memory", help="spark.driver.memory of a local session, e.g. 4g")
    compute.add_argument(
        "--rate-window",
        type=_bounded(2, 10_000),
        default=2,
        help="snapshots spanned by the catch-up rate (default 2)",
    )
    compute.add_argument(
        "--streams-config",
        metavar="APP.PROPERTIES",
        help="the application's Kafka Streams properties file: the assignment configs below "
        "are taken from it unless given as flags",
    )
    compute.add_argument(
        "--acceptable-recovery-lag", type=_bounded(0), help="default: file, else 10000"
    )
    compute.add_argument(
        "--max-warmup-replicas", type=_bounded(1, 2**31 - 1), help="default: file, else 2"
    )
    compute.add_argument(
        "--num-standby-replicas", type=_bounded(0, 2**31 - 1), help="default: file, else 0"
    )
    compute.add_argument(
        "--probing-rebalance-interval-ms", type=_bounded(60_000), help="default: file, else 600000"
    )
    compute.add_argument(
        "--rack-aware-assignment-tags",
        type=_tag_list,
        metavar="TAG[,TAG...]",
        help="rack.aware.assignment.tags (default: file, else none)",
    )
    compute.add_argument("--quiet", action="store_true", help="no progress lines")


def add_generate_parser(commands: Any) -> None:
    """``streams-lag generate``: a synthetic fleet in the real formats."""
    generate = commands.add_parser("generate", help="write a synthetic fleet in the real formats")
    generate.add_argument("--instances", type=_bounded(1, 100_000), required=True)
    generate.add_argument(
        "--tasks",
        type=_bounded(1, 10_000_000),
        required=True,
        help="about this many tasks (3 sub-topologies)",
    )
    generate.add_argument("--stores", type=_bounded(1, 1000), default=2)
    generate.add_argument("--standbys", type=_bounded(0, 1000), default=1)
    generate.add_argument(
        "--new-instances",
        type=_bounded(0, 100_000),
        default=0,
        help="processes that just joined (no state, idle threads)",
    )
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--application-id", default="orders-app")
    generate.add_argument(
        "--snapshots",
        type=_bounded(1, 10**9),
        default=1,
        help="> 1 writes a history as Parquet rows",
    )
    generate.add_argument(
        "--rows",
        type=lambda s: int(float(s)),
        help="about this many offset rows (sets --snapshots)",
    )
    generate.add_argument(
        "--layout",
        choices=("dirs", "parquet"),
        help="state dirs (default for one moment) or offset rows",
    )
    generate.add_argument("--out", required=True, help="destination folder")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``streams-lag``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "collect":
            return _collect(args)
        if args.command == "compute":
            return _compute(args)
        if args.command == "members":
            return _members(args)
        if args.command == "streams-group":
            return _streams_group(args)
        return _generate(args)
    except (LagInputError, CodecError) as exc:
        print(f"streams-lag: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as exc:
        # A Spark failure (a corrupt file met while the job runs, a lost executor) is reported
        # in one line too; set STREAMS_LAG_TRACEBACK=1 to see the whole Java and Python trace.
        if not type(exc).__module__.startswith(("pyspark", "py4j")) or os.environ.get(
            "STREAMS_LAG_TRACEBACK"
        ):
            raise
        from lag.spark.readers import spark_error_line

        print(f"streams-lag: error: Spark job failed: {spark_error_line(exc)}", file=sys.stderr)
        return 1


def _members(args: argparse.Namespace) -> int:
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


def _topology_option(text: str) -> dict[str, tuple[int, bool]]:
    topology = {}
    for item in text.split(","):
        sub, _, spec = item.partition("=")
        count, _, flag = spec.partition(":")
        if not sub or not count.isdigit() or int(count) < 1 or flag not in ("", "stateful"):
            raise LagInputError(f"--topology: {item!r} is not SUB=PARTITIONS[:stateful]")
        topology[sub] = (int(count), flag == "stateful")
    return topology


def _streams_group(args: argparse.Namespace) -> int:
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


def _print_errors(errors: dict[str, int], stream: Any = None) -> None:
    stream = stream or sys.stderr
    total = sum(errors.values())
    if not total:
        print("errors: none", file=stream)
        return
    detail = ", ".join(f"{reason} {count}" for reason, count in errors.items())
    print(f"errors: {total} row(s) not used ({detail})", file=stream)


def _collect(args: argparse.Namespace) -> int:
    from lag.sources.checkpoints import collect_state_dirs, write_offset_rows

    result = collect_state_dirs(args.state_dirs, args.application_id, args.snapshot_time)
    write_offset_rows(result.rows, args.output)
    if args.errors_table:
        _write_small_errors(result.errors, args.errors_table)
    print(
        f"collected {len(result.rows)} offset row(s) from {len(result.processes)} instance(s) "
        f"into {args.output}",
        file=sys.stderr,
    )
    _print_errors(dict(summarize_reasons(result.errors)))
    return 0


def _write_small_errors(errors: list[ErrorRow], path: str) -> None:
    """Errors of the plain-Python commands, without Spark: JSON Lines, CSV or Parquet file."""
    import csv
    import io
    import json

    from lag.error_rows import ERROR_COLUMNS
    from streams_assign.formats.atomic import write_atomic

    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        write_atomic(
            path,
            "".join(
                json.dumps(dict(zip(ERROR_COLUMNS, e.as_tuple(), strict=True))) + "\n"
                for e in errors
            ),
        )
    elif suffix == ".csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(ERROR_COLUMNS)
        writer.writerows(e.as_tuple() for e in errors)
        write_atomic(path, buffer.getvalue())
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table(
            {c: [e.as_tuple()[i] for e in errors] for i, c in enumerate(ERROR_COLUMNS)}
        )
        sink = io.BytesIO()
        pq.write_table(
            table.cast(
                pa.schema(
                    [
                        ("source", pa.string()),
                        ("line", pa.int64()),
                        ("raw", pa.string()),
                        ("reason", pa.string()),
                    ]
                )
            ),
            sink,
        )
        write_atomic(path, sink.getvalue())


def _compute(args: argparse.Namespace) -> int:
    from lag.pipeline import ComputeRequest, run_compute
    from lag.sources.streams_config import CONFIG_FLAGS, resolve_configs

    configs = resolve_configs(
        {flag: getattr(args, flag[2:].replace("-", "_")) for flag in CONFIG_FLAGS},
        args.streams_config,
    )
    request = ComputeRequest(
        application_id=args.application_id,
        topology=args.topology,
        members=list(args.members),
        end_offsets=list(args.end_offsets),
        state_dirs=list(args.state_dirs or []),
        offsets=list(args.offsets or []),
        output=args.output,
        lags_table=args.lags_table,
        restore_table=args.restore_table,
        errors_table=args.errors_table,
        at=args.at,
        master=args.master,
        driver_memory=args.driver_memory,
        rate_window=args.rate_window,
        configs=configs.values,
        description=configs.description(),
    )
    summary = run_compute(request, progress=None if args.quiet else sys.stderr)
    if not args.quiet:
        from rich.console import Console

        Console(stderr=True).print(summary_table(summary))
    for note in configs.notes():
        print(f"streams-lag: {note}", file=sys.stderr)
    print(summary.text(), file=sys.stderr)
    return 0


def summary_table(summary: ComputeSummary, limit: int = 20) -> Any:
    """The per-client summary as a ``rich`` table (the ``limit`` clients lagging most).

    Parameters
    ----------
    summary:
        What ``compute`` produced.
    limit:
        Most clients shown; the caption says how many were left out.

    Returns
    -------
    rich.table.Table
    """
    from rich.table import Table

    rows = summary.client_rows()
    shown = sorted(rows, key=lambda r: (-r["lagging"], -r["no_state"]))[:limit]
    order = {r["id"]: i for i, r in enumerate(rows)}
    shown.sort(key=lambda r: order[r["id"]])
    acceptable = summary.document["configs"].get("acceptable_recovery_lag", 10_000)
    table = Table(
        title=f"stateful tasks per client (caught up = lag <= {acceptable:,} records)",
        caption=None if len(rows) <= limit else f"{len(rows) - limit} more client(s) not shown",
    )
    for name in ("client", "threads", "running active", "caught up", "lagging", "no state"):
        table.add_column(name, justify="left" if name == "client" else "right")
    table.add_column("largest lags (records)")
    for r in shown:
        table.add_row(
            r["id"],
            str(r["capacity"]),
            str(r["active"]),
            str(r["caught_up"]),
            str(r["lagging"]),
            str(r["no_state"]),
            ", ".join(f"{t} {lag:,}" for t, lag in r["largest"]) or "-",
        )
    return table


def _generate(args: argparse.Namespace) -> int:
    from lag.fleet.generate import generate
    from lag.fleet.history import snapshots_for_rows
    from lag.fleet.spec import FleetSpec, build_fleet

    spec = FleetSpec(
        application_id=args.application_id,
        instances=args.instances,
        tasks=args.tasks,
        stores=args.stores,
        standbys=args.standbys,
        seed=args.seed,
        new_instances=args.new_instances,
    )
    snapshots = args.snapshots
    if args.rows:
        snapshots = snapshots_for_rows(build_fleet(spec), args.rows)
    layout = args.layout or ("parquet" if snapshots > 1 else "dirs")
    try:
        manifest = generate(spec, args.out, snapshots=snapshots, layout=layout)
    except ValueError as exc:
        raise LagInputError(str(exc)) from None
    rows = manifest.get("offset_rows")
    detail = f", {rows} offset rows over {snapshots} snapshot(s)" if rows else ""
    print(
        f"generated {spec.instances} instance(s), {manifest['partitions'] * 3} task(s), "
        f"{len(manifest['replicas'])} replica(s){detail} in {args.out}",
        file=sys.stderr,
    )
    return 0


def run() -> None:
    """Console-script entry point (``streams-lag``): exits with :func:`main`'s status."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    run()
