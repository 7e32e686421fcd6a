"""The ``streams-lag compute`` pipeline: inputs checked, Spark job run, outputs written.

Text inputs are parsed and every local path checked before Spark starts, so a missing or
unusable required input fails in a second with one line (exit status 2). Outputs are written
last, each whole or not at all: the tables first, the cluster-state file at the very end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from lag.error_rows import ErrorRow
from lag.outputs.progress import Stages
from lag.sources.members import Membership, parse_members
from lag.sources.topology import Topology, parse_topology
from streams_assign.errors import LagInputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from lag.job.job import LagJob


@dataclass(frozen=True)
class ComputeRequest:
    """Everything ``streams-lag compute`` was asked to do (paths as given).

    Attributes
    ----------
    application_id, topology, members, end_offsets:
        Required inputs (see docs/lag.md).
    state_dirs, offsets:
        Local state: instance state directories, or offset-row files (exactly one is non-empty).
    output:
        Cluster-state JSON path.
    lags_table, restore_table, errors_table:
        Optional table outputs.
    at:
        Cluster state as of this epoch ms (None = latest).
    master, driver_memory:
        Spark session settings (None = defaults).
    rate_window:
        Snapshots spanned by the catch-up rate.
    configs:
        Assignment configs (Kafka names with underscores; ``rack_aware_assignment_tags`` a
        tuple).
    description:
        The cluster state's ``description`` (where each config came from), or None.
    persist:
        Cache the per-snapshot aggregates that every output reads (see
        :func:`lag.job.job.compute_lags`).
    """

    application_id: str
    topology: str
    members: list[str]
    end_offsets: list[str]
    output: str
    state_dirs: list[str] = field(default_factory=list)
    offsets: list[str] = field(default_factory=list)
    lags_table: str | None = None
    restore_table: str | None = None
    errors_table: str | None = None
    at: int | None = None
    master: str | None = None
    driver_memory: str | None = None
    rate_window: int = 2
    configs: dict[str, Any] = field(default_factory=dict)
    description: str | None = None
    persist: bool = True


@dataclass
class ComputeSummary:
    """What a compute run produced, for the summary printed on stderr.

    Attributes
    ----------
    document:
        The cluster-state document written.
    errors:
        Error rows per reason.
    non_members:
        Processes with local state that are not in the group.
    outputs:
        Paths written.
    """

    document: dict[str, Any]
    errors: dict[str, int]
    non_members: list[str]
    outputs: list[str]
    at: int | None = None

    def client_rows(self) -> list[dict[str, Any]]:
        """Per client: stateful tasks caught up, lagging and without local state; largest lags.

        A task counts as caught up by Kafka's rule (``is_caught_up``: a running active's -2, or a
        lag within ``acceptable.recovery.lag``); lagging when its lag is beyond that (or -3,
        unknown); without state when the client reported no offset sum for it.

        Returns
        -------
        list of dict
            ``id``, ``capacity``, ``active`` (running active tasks), ``caught_up``, ``lagging``,
            ``no_state`` (counts of stateful tasks) and ``largest`` (up to three
            ``(task id, lag in records)``, largest first), clients in the document's order.
        """
        from streams_assign.model import is_caught_up

        configs = self.document["configs"]
        acceptable = configs.get("acceptable_recovery_lag", 10_000)
        stateful = len(self.document["stateful_tasks"])
        rows = []
        for client in self.document["clients"]:
            lags = dict(client["task_lags"])
            caught = [t for t, lag in lags.items() if is_caught_up(lag, acceptable)]
            behind = sorted(
                ((t, lag) for t, lag in lags.items() if t not in caught and lag >= 0),
                key=lambda item: -item[1],
            )
            rows.append(
                {
                    "id": client["id"],
                    "capacity": client["capacity"],
                    "active": sum(1 for lag in lags.values() if lag == -2),
                    "caught_up": len(caught),
                    "lagging": len(lags) - len(caught),
                    "no_state": stateful - len(lags),
                    "largest": behind[:3],
                }
            )
        return rows

    def text(self) -> str:
        """A few lines: clients, tasks, lags, errors, outputs."""
        clients = self.document["clients"]
        lags = sum(len(c["task_lags"]) for c in clients)
        moment = "the latest snapshot" if self.at is None else f"{self.at} (epoch ms)"
        lines = [
            f"cluster state as of {moment}: {len(clients)} client(s), "
            f"{len(self.document['stateful_tasks'])} stateful and "
            f"{len(self.document['stateless_tasks'])} stateless task(s), {lags} task lag(s)",
        ]
        if self.non_members:
            lines.append(
                f"left out: {len(self.non_members)} process(es) with local state that are not "
                f"group members ({', '.join(self.non_members[:3])}"
                f"{', ...' if len(self.non_members) > 3 else ''})"
            )
        total = sum(self.errors.values())
        if total:
            detail = ", ".join(f"{reason} {count}" for reason, count in self.errors.items())
            lines.append(f"errors: {total} row(s) not used ({detail})")
        else:
            lines.append("errors: none")
        lines.append("wrote " + ", ".join(self.outputs))
        return "\n".join(lines)


def read_text_input(option: str, path: str) -> str:
    """The text of a required local input file.

    Parameters
    ----------
    option:
        The CLI option, for the message.
    path:
        A local file.

    Returns
    -------
    str
        Its UTF-8 text.

    Raises
    ------
    LagInputError
        When it does not exist or cannot be read as UTF-8.
    """
    target = Path(path)
    if not target.is_file():
        raise LagInputError(f"{option} {path}: no such file")
    try:
        return target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LagInputError(f"{option} {path}: unreadable: {exc}") from None


def load_membership(paths: list[str], application_id: str) -> Membership:
    """Parse and merge ``kafka-consumer-groups.sh`` outputs.

    Parameters
    ----------
    paths:
        Files of any of the tool's three views.
    application_id:
        Members of other applications are error rows.

    Returns
    -------
    Membership
        Members of all files, with every file's error rows.

    Raises
    ------
    LagInputError
        When a file is missing, or no file holds a Kafka Streams member of the application.
    """
    merged = Membership()
    for path in paths:
        part = parse_members(read_text_input("--members", path), application_id, source=path)
        merged.members.update(part.members)
        merged.errors.extend(part.errors)
        merged.shows_ownership |= part.shows_ownership
    if merged.members and not merged.shows_ownership:
        merged.errors.append(
            ErrorRow(
                " ".join(paths),
                None,
                "",
                "no ownership: this view lists no owned partitions (use --members --verbose); "
                "running active tasks are unknown, so none reports -2",
            )
        )
    if not merged.members:
        reasons = {e.reason.split(":", 1)[0] for e in merged.errors}
        raise LagInputError(
            f"--members {' '.join(paths)}: no Kafka Streams member of application "
            f"{application_id!r} ({len(merged.errors)} line(s) not used: "
            f"{', '.join(sorted(reasons)) or 'empty'})"
        )
    return merged


def _check_output(option: str, path: str | None) -> None:
    if path is None or "://" in path:
        return
    parent = Path(path).absolute().parent
    if not parent.is_dir():
        raise LagInputError(f"{option} {path}: folder {parent} does not exist")


def prepare(request: ComputeRequest) -> tuple[Topology, Membership]:
    """Parse the text inputs and check every path, without Spark.

    Parameters
    ----------
    request:
        The compute request.

    Returns
    -------
    tuple
        The parsed :class:`Topology` and :class:`Membership`.

    Raises
    ------
    LagInputError
        For the first missing or unusable input.
    """
    from lag.spark.readers import require_exists

    topology = parse_topology(
        read_text_input("--topology", request.topology), source=request.topology
    )
    membership = load_membership(request.members, request.application_id)
    for path in request.end_offsets:
        require_exists("--end-offsets", path)
    if bool(request.state_dirs) == bool(request.offsets):
        raise LagInputError("give local state with exactly one of --state-dirs or --offsets")
    for path in request.state_dirs:
        if not Path(path).is_dir():
            raise LagInputError(f"--state-dirs {path}: no such directory")
    if request.state_dirs:
        from lag.sources.checkpoints import check_process_ids

        check_process_ids(list(request.state_dirs), request.application_id)
    for path in request.offsets:
        require_exists("--offsets", path)
    _check_output("--output", request.output)
    _check_output("--lags-table", request.lags_table)
    _check_output("--restore-table", request.restore_table)
    _check_output("--errors-table", request.errors_table)
    return topology, membership


def build_job(
    request: ComputeRequest,
    spark: SparkSession,
    topology: Topology,
    membership: Membership,
) -> LagJob:
    """Read the row inputs into DataFrames and set up the lag job.

    Parameters
    ----------
    request:
        The compute request (state directories are collected here, in Python).
    spark:
        The session.
    topology, membership:
        From :func:`prepare`.

    Returns
    -------
    LagJob
        Lazy tables; the two small actions of :func:`lag.job.job.compute_lags` have run.

    Raises
    ------
    LagInputError
        When a row input cannot be read, or the end offsets name no changelog of the topology.
    """
    from lag.job.job import compute_lags, reads_restore_from_lags
    from lag.sources.checkpoints import collect_state_dirs
    from lag.spark.readers import offset_rows_dataframe, read_end_offsets, read_offset_rows
    from streams_assign.model import AssignmentConfigs

    errors: list[ErrorRow] = list(membership.errors)
    if request.state_dirs:
        collected = collect_state_dirs(list(request.state_dirs), request.application_id)
        errors.extend(collected.errors)
        offsets = offset_rows_dataframe(spark, collected.rows)
    else:
        offsets = read_offset_rows(spark, request.offsets)
    end_offsets, end_errors = read_end_offsets(spark, request.end_offsets)
    errors.extend(end_errors)
    try:
        configs = AssignmentConfigs(**request.configs)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise LagInputError(f"configs: {exc}") from None
    return compute_lags(
        spark,
        application_id=request.application_id,
        topology=topology,
        membership=membership,
        offsets=offsets,
        end_offsets=end_offsets,
        configs=configs,
        rate_window=request.rate_window,
        errors=errors,
        end_source=" ".join(request.end_offsets),
        # Restore read back from the Parquet lag table: nothing left for a cache to serve.
        persist=request.persist
        and not reads_restore_from_lags(request.lags_table, request.restore_table),
    )


def validate_document(document: dict[str, Any], path: str) -> None:
    """Check a cluster-state document with the core's parser before it is written.

    Parameters
    ----------
    document:
        The cluster state the job built.
    path:
        Where it would be written (named in the message).

    Raises
    ------
    LagInputError
        When ``streams_assign.formats.cluster_state.parse_cluster_state`` refuses it (naming
        the JSON path and the value); nothing is written then.
    """
    from streams_assign.errors import InvalidScenarioError
    from streams_assign.formats.cluster_state import parse_cluster_state

    try:
        parse_cluster_state(document)
    except InvalidScenarioError as exc:
        raise LagInputError(f"--output {path}: the cluster state is not valid: {exc}") from None


def run_compute(
    request: ComputeRequest, progress: TextIO | None = None, spark: SparkSession | None = None
) -> ComputeSummary:
    """Run ``streams-lag compute`` end to end.

    Parameters
    ----------
    request:
        What to read and write.
    progress:
        Stream for the stage lines (None = silent).
    spark:
        A session to use (tests); None = :func:`lag.spark.session.get_spark` with
        ``request.master``.

    Returns
    -------
    ComputeSummary

    Raises
    ------
    LagInputError
        When a required input is missing or unusable (nothing is written then).
    """
    from lag.job.job import LAG_PLAIN_COLUMNS
    from lag.outputs.tables import write_table
    from lag.spark.session import get_spark
    from lag.spark.sizing import local_input_bytes
    from streams_assign.formats.atomic import write_json_atomic

    outputs = [p for p in (request.lags_table, request.restore_table, request.errors_table) if p]
    stages = Stages(4 + len(outputs), progress)
    with stages.stage("checking inputs"):
        topology, membership = prepare(request)
    with stages.stage("starting Spark"):
        # Offset rows from state directories are one moment of checkpoints: counted as none.
        input_bytes = local_input_bytes([*request.offsets, *request.end_offsets])
        session = spark or get_spark(
            request.master, driver_memory=request.driver_memory, input_bytes=input_bytes
        )
    with stages.stage("reading inputs, planning tasks"):
        job = build_job(request, session, topology, membership)
    try:
        with stages.stage("offset sums, as-of end offsets, cluster state"):
            document = job.cluster_state(at=request.at)
            if request.description is not None:
                document = {"name": document["name"], "description": request.description} | {
                    k: v for k, v in document.items() if k != "name"
                }
            non_members = job.non_member_processes(request.at)
        if request.lags_table:
            with stages.stage(f"writing lag table {request.lags_table}"):
                write_table(job.lags, request.lags_table, plain_columns=LAG_PLAIN_COLUMNS)
        if request.restore_table:
            with stages.stage(f"writing restore table {request.restore_table}"):
                write_table(job.restore_after(request.lags_table), request.restore_table)
        if request.errors_table:
            with stages.stage(f"writing errors table {request.errors_table}"):
                write_table(job.errors(), request.errors_table, single_file=True)
        errors = job.error_summary()
        validate_document(document, request.output)
        write_json_atomic(request.output, document)
    finally:
        job.unpersist()
    return ComputeSummary(document, errors, non_members, [request.output, *outputs], at=request.at)
