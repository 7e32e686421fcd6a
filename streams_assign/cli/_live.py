"""Ask a live cluster, then answer: the options ``plan``, ``assign`` and ``compare`` share.

With ``--bootstrap-server HOST:PORT --application-id APP`` a subcommand builds its input from
the running Kafka Streams group instead of a file, as ``streams-lag snapshot`` does: for a
classic group the cluster state (:func:`lag.job.snapshot.take_snapshot`: the group's own state,
``ListOffsets``, the given metrics scrapes and state directories, the freshest source per
(process, task)); for a streams group (KIP-1071, ``ListGroups`` says which) the streams-group
state its broker's assignor reads (``StreamsGroupDescribe`` through Kafka 4.4's Admin client,
:func:`lag.sources.streams_group_describe.read_live_streams_group`). ``lag`` is imported only
when the cluster is asked, so ``--help`` and file inputs stay light.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from streams_assign.errors import UsageError

__all__ = [
    "add_live_options",
    "live_label",
    "live_requested",
    "load_live_cluster",
    "session_timeout_ms",
]

#: Where Kafka Streams takes the main consumer's ``session.timeout.ms`` from, first match wins
#: (``StreamsConfig.getMainConsumerConfigs``: ``main.consumer.`` over ``consumer.`` over the
#: plain name).
_SESSION_TIMEOUT_KEYS = (
    "main.consumer.session.timeout.ms",
    "consumer.session.timeout.ms",
    "session.timeout.ms",
)


def add_live_options(parser: argparse.ArgumentParser) -> None:
    """Add the live-cluster options (a group of their own in ``--help``)."""
    live = parser.add_argument_group(
        "live cluster (instead of a state file: ask the cluster, then answer)"
    )
    live.add_argument("--bootstrap-server", metavar="HOST:PORT", help="a broker of the cluster")
    live.add_argument("--application-id", metavar="APP", help="Kafka Streams application.id")
    live.add_argument(
        "--command-config",
        metavar="CLIENT.PROPERTIES",
        help="Kafka client properties: security.protocol, sasl.*, ssl.* (PEM files)",
    )
    live.add_argument(
        "--streams-config",
        metavar="APP.PROPERTIES",
        help="the application's properties (acceptable.recovery.lag, num.standby.replicas, "
        "max.warmup.replicas, probing.rebalance.interval.ms, rack.aware.assignment.tags); "
        "the others are Kafka's defaults, said on stderr",
    )
    live.add_argument(
        "--metrics",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="JmxTool output or Prometheus exposition of the running instances",
    )
    live.add_argument(
        "--state-dirs",
        nargs="+",
        action="extend",
        default=[],
        metavar="DIR",
        help="the instances' state directories",
    )
    live.add_argument(
        "--timeout-ms", type=int, default=30_000, help="per request to the cluster (30000)"
    )
    live.add_argument(
        "--kafka-jars",
        metavar="DIR",
        help="streams groups: Kafka 4.4+ jars for the Admin-API reader (default "
        "$STREAMS_ASSIGN_KAFKA_HOME/lib-44, else .kafka/lib-44)",
    )
    live.add_argument(
        "--dumper",
        metavar="FILE",
        help="streams groups: the reader's source (default kafka/streams-group-describe/"
        "DescribeStreamsGroup.java)",
    )


def live_requested(args: argparse.Namespace, files: Any) -> bool:
    """Whether the cluster is asked; checks that exactly one input is given.

    Raises
    ------
    UsageError
        When both a state file and ``--bootstrap-server`` are given, neither, or only one of
        ``--bootstrap-server`` / ``--application-id``.
    """
    live = args.bootstrap_server is not None or args.application_id is not None
    if live and (args.bootstrap_server is None or args.application_id is None):
        raise UsageError("--bootstrap-server and --application-id go together")
    if live and files:
        raise UsageError("give a state file or --bootstrap-server/--application-id, not both")
    if not live and not files:
        raise UsageError("give a state file, or --bootstrap-server HOST:PORT --application-id APP")
    if args.timeout_ms < 1:
        raise UsageError(f"--timeout-ms must be >= 1, got {args.timeout_ms}")
    return live


def live_label(args: argparse.Namespace) -> str:
    """How the live input is named in messages and reports."""
    return f"{args.application_id}@{args.bootstrap_server}"


def load_live_cluster(
    args: argparse.Namespace,
    *,
    streams_group_hint: str | None = None,
    streams_group_check: Callable[[Any], object] | None = None,
) -> Any:
    """The state of the live group, validated; a summary line on stderr.

    ``ListGroups`` says the group's type: a classic group gives its cluster state
    (:func:`lag.job.snapshot.take_snapshot`), a streams group (KIP-1071) the streams-group state
    its broker's assignor reads (:func:`lag.sources.streams_group_describe.
    read_live_streams_group`, the reader of ``streams-lag streams-group``).

    Parameters
    ----------
    streams_group_hint:
        When given, a streams group is refused with this advice (a subcommand without a
        streams-group form).
    streams_group_check:
        Called with a streams group's state before anything is printed: the subcommand's own
        checks (raising ``UsageError``), so that a refusal is the only line on stderr.

    Returns
    -------
    ClusterState or StreamsGroupState

    Raises
    ------
    UsageError
        For anything the cluster or the files could not give, an option a streams group has no
        use for (``--metrics`` ...), or a refused streams group (one line naming what and
        where); nothing is written then.
    """
    import logging

    from streams_assign.errors import StreamsAssignError

    # kafka-python logs every refused connection at ERROR; the error raised below says what
    # failed in one line, so its records stay out of the command's stderr.
    kafka_logger = logging.getLogger("kafka")
    propagate, kafka_logger.propagate = kafka_logger.propagate, False
    try:
        from lag.sources.live_cluster import live_group_type, read_command_config

        properties = read_command_config(args.command_config)
        kind = live_group_type(
            args.bootstrap_server, args.application_id, properties, args.timeout_ms
        )
        if kind == "streams":
            if streams_group_hint is not None:
                raise UsageError(f"a streams group (KIP-1071): {streams_group_hint}")
            return _load_streams_group(args, streams_group_check)
        return _load_classic(args)
    except StreamsAssignError as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(str(exc)) from None
    finally:
        kafka_logger.propagate = propagate


def _load_streams_group(args: argparse.Namespace, check: Callable[[Any], object] | None) -> Any:
    from lag.cli_live import given_live_options, streams_group_summary
    from lag.cli_options import refuse_for_streams_group
    from lag.sources.streams_group_describe import read_live_streams_group

    refuse_for_streams_group(given_live_options(args), args.application_id)
    group, state = read_live_streams_group(
        args.bootstrap_server,
        args.application_id,
        kafka_jars=args.kafka_jars,
        dumper=args.dumper,
        timeout_ms=args.timeout_ms,
    )
    if check is not None:
        check(state)
    print(f"{live_label(args)}: {streams_group_summary(group, state)}", file=sys.stderr)
    return state


def _load_classic(args: argparse.Namespace) -> Any:
    from lag.job.snapshot import config_notes, take_snapshot
    from streams_assign.formats.cluster_state import parse_cluster_state

    snapshot, resolved = take_snapshot(
        args.bootstrap_server,
        args.application_id,
        command_config=args.command_config,
        streams_config=args.streams_config,
        metrics=args.metrics,
        state_dirs=args.state_dirs,
        timeout_ms=args.timeout_ms,
    )
    state = parse_cluster_state(snapshot.document)
    for note in [*config_notes(resolved), *snapshot.notes]:
        print(f"note: {note}", file=sys.stderr)
    print(f"{live_label(args)}: {snapshot.document['description']}", file=sys.stderr)
    return state


def session_timeout_ms(args: argparse.Namespace) -> int | None:
    """The application's ``session.timeout.ms`` from ``--streams-config``, None when not set.

    Raises
    ------
    UsageError
        When the file cannot be read, or the value is not a non-negative integer (naming the
        file, key and value).
    """
    if args.streams_config is None:
        return None
    from streams_assign.errors import StreamsAssignError

    try:
        from lag.sources.streams_config import read_properties

        properties = read_properties(args.streams_config)
    except StreamsAssignError as exc:
        raise UsageError(str(exc)) from None
    for key in _SESSION_TIMEOUT_KEYS:
        if key in properties:
            raw = properties[key].strip()
            if not raw.isdigit():
                raise UsageError(f"--streams-config {args.streams_config}: {key} = {raw!r}")
            return int(raw)
    return None
