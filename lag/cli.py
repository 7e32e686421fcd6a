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
``snapshot --bootstrap-server HOST:PORT --application-id APP [--command-config client.properties]
[--streams-config app.properties] [--metrics FILE...] [--state-dirs DIR...] --out cluster.json``
    A classic group: the group leader's exact input from a live cluster (plain Python, no
    Spark): the group's own state, ``ListOffsets``, scraped metrics and state directories, the
    freshest source winning per (task, process); prints which source each offset sum came from
    and its age. A streams group (KIP-1071, ``ListGroups`` says which): the state
    ``streams-group`` writes, through the same reader, with how old each member's offsets
    report can be; ``--metrics``, ``--state-dirs``, ``--streams-config``, ``--topology`` and the
    classic assignors' configs are refused for it (the broker's assignor reads only what the
    members reported and the group's configs).
``streams-group (--bootstrap-server HOST:PORT --application-id APP | --describe FILE) --out F``
    A streams group's state (KIP-1071, ``StreamsGroupDescribe`` through Kafka 4.4's Admin client,
    or the describe tool's text) as ``streams_group_sticky``'s input, members in the broker's
    iteration order, with how old each member's offsets report is.

Exit status: 0 on success (bad input lines are counted, not fatal), 2 when a required input is
missing or unusable (one line on stderr, no traceback), 1 when the Spark job fails (one line;
``STREAMS_LAG_TRACEBACK=1`` shows the trace) or on an unexpected error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lag.cli_live import (
    add_members_parser,
    add_snapshot_parser,
    add_streams_group_parser,
    run_members,
    run_snapshot,
    run_streams_group,
)
from lag.cli_options import EXIT_INPUT, add_config_flags, bounded, parse_time
from lag.error_rows import ErrorRow, summarize_reasons
from streams_assign.errors import CodecError, LagInputError

if TYPE_CHECKING:
    from lag.pipeline import ComputeSummary


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``streams-lag`` (four subcommands)."""
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
    add_snapshot_parser(commands)
    add_streams_group_parser(commands)
    return parser


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
        type=bounded(2, 10_000),
        default=2,
        help="snapshots spanned by the catch-up rate (default 2)",
    )
    compute.add_argument(
        "--streams-config",
        metavar="APP.PROPERTIES",
        help="the application's Kafka Streams properties file: the assignment configs below "
        "are taken from it unless given as flags",
    )
    add_config_flags(compute)
    compute.add_argument("--quiet", action="store_true", help="no progress lines")


def add_generate_parser(commands: Any) -> None:
    """``streams-lag generate``: a synthetic fleet in the real formats."""
    generate = commands.add_parser("generate", help="write a synthetic fleet in the real formats")
    generate.add_argument("--instances", type=bounded(1, 100_000), required=True)
    generate.add_argument(
        "--tasks",
        type=bounded(1, 10_000_000),
        required=True,
        help="about this many tasks (3 sub-topologies)",
    )
    generate.add_argument("--stores", type=bounded(1, 1000), default=2)
    generate.add_argument("--standbys", type=bounded(0, 1000), default=1)
    generate.add_argument(
        "--new-instances",
        type=bounded(0, 100_000),
        default=0,
        help="processes that just joined (no state, idle threads)",
    )
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--application-id", default="orders-app")
    generate.add_argument(
        "--snapshots",
        type=bounded(1, 10**9),
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
            return run_members(args)
        if args.command == "snapshot":
            return run_snapshot(args)
        if args.command == "streams-group":
            return run_streams_group(args)
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
