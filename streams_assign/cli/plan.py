"""``streams-assign plan STATE [--add N] [--remove ID...] [--kill ID...] [--bounce ID...] ...``.

What-if planning from the current cluster state: builds the next rebalance's input as Kafka's
group leader would see it after the changes (:mod:`streams_assign.simulation.whatif`), then runs
the whole convergence of each assignor (:mod:`streams_assign.simulation.probing`): every
rebalance's moves, warmup replicas and probing flag, the records restored, the task-minutes
unavailable, the rebalances and the time until stable; then Kafka's real rebalance chain
(:mod:`streams_assign.simulation.chain`: immediate follow-ups after withheld tasks, probing
rebalances, ``session.timeout.ms`` from ``--streams-config``), and with ``--add`` but without
every ``--add-id`` how the chain varies with where the new process ids sort
(``--streams-config`` is read by ``lag.sources.streams_config``, plain Python). Base install,
except ``--rates`` (the ``lag`` extra: pyarrow) and ``--plot`` / ``--report`` (the ``report``
extra: matplotlib, Jinja2).

With ``--bootstrap-server`` on a streams group (KIP-1071) ``plan`` predicts the chain of target
computations its one change causes instead, as ``streams-chain`` does (``--kill P``,
``--remove P``, ``--bounce P`` or ``--add 1 [--add-id UUID] [--capacity THREADS]``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from streams_assign.errors import UsageError

__all__ = ["configure", "run"]

#: Kafka's default ``session.timeout.ms`` (since 3.0, KIP-735), in milliseconds.
DEFAULT_SESSION_TIMEOUT_MS = 45_000
DEFAULT_RESTORE_RATE = 10_000.0
DEFAULT_FOLLOW_UP_MS = 1000
DEFAULT_ID_SAMPLES = 5


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``plan`` to its parser."""
    parser.add_argument(
        "file", metavar="STATE", nargs="?", help="current cluster-state file (JSON or YAML)"
    )
    # Live cluster: ask the cluster, then plan (streams_assign/cli/_live.py).
    from streams_assign.cli._live import add_live_options

    add_live_options(parser)
    change = parser.add_argument_group("changes before the next rebalance")
    change.add_argument("--add", type=int, default=0, metavar="N", help="add N new instances")
    change.add_argument(
        "--capacity",
        type=int,
        metavar="C",
        help="stream threads of each added instance (default: the most common capacity)",
    )
    change.add_argument("--zone", metavar="Z", help="client tag (zone) of the added instances")
    change.add_argument(
        "--add-id",
        action="append",
        default=[],
        metavar="UUID",
        help="process id of an added instance (repeatable; Kafka Streams keeps it in "
        "<state.dir>/<application.id>/kafka-streams-process-metadata)",
    )
    for option, what in (
        ("--remove", "shut down (graceful, leaves the group)"),
        ("--kill", "crash (dropped after session.timeout.ms)"),
        ("--bounce", "restart with their state directories"),
    ):
        change.add_argument(
            option,
            nargs="+",
            action="extend",
            default=[],
            metavar="ID",
            help=f"instances that {what}: process id or a unique prefix of it",
        )
    change.add_argument("--standbys", type=int, metavar="R", help="new num.standby.replicas")
    how = parser.add_argument_group("convergence")
    how.add_argument(
        "--assignor",
        action="append",
        metavar="NAME",
        help="assignor to plan with (repeatable; default every registered one that imports)",
    )
    how.add_argument(
        "--restore-rate",
        type=float,
        metavar="R",
        help=f"records/s one client restores for one task (default {DEFAULT_RESTORE_RATE:g}, "
        "or the median of --rates)",
    )
    how.add_argument(
        "--rates",
        metavar="RESTORE.parquet",
        help="per-(client, task) restore rates from a streams-lag restore table",
    )
    how.add_argument("--max-rounds", type=int, default=50, help="rebalances at most (default 50)")
    how.add_argument(
        "--optimal",
        action="store_true",
        help="also solve the target optimum of the next state with CP-SAT (optimal extra) and "
        "show its one-step cost beside each convergence",
    )
    how.add_argument(
        "--time-limit",
        type=float,
        default=10.0,
        metavar="S",
        help="CP-SAT wall-time limit in seconds for --optimal (default 10)",
    )
    how.add_argument(
        "--session-timeout-ms",
        type=int,
        help="session.timeout.ms: how long a crashed instance's tasks wait (default: "
        "--streams-config, else Kafka's 45000)",
    )
    how.add_argument(
        "--follow-up-ms",
        type=int,
        default=DEFAULT_FOLLOW_UP_MS,
        help="milliseconds from a decision that withholds tasks to its immediate follow-up "
        f"rebalance (default {DEFAULT_FOLLOW_UP_MS})",
    )
    how.add_argument(
        "--race-evidence",
        metavar="LEADER.log",
        help="a real chain's leader log from the change on (its 'Decided on assignment' lines): "
        "settle the chain's timing races with the inputs the leader logged",
    )
    how.add_argument(
        "--id-samples",
        type=int,
        default=DEFAULT_ID_SAMPLES,
        metavar="K",
        help="with --add but without every --add-id: plan K placements of the new process ids "
        f"in Java's UUID order and report the range (default {DEFAULT_ID_SAMPLES}; 0: off)",
    )
    out = parser.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print the plan as JSON")
    out.add_argument("--write-state", metavar="OUT.json", help="write the next cluster state")
    out.add_argument("--plot", metavar="OUT.png", help="draw the convergence (.png/.svg/.pdf)")
    out.add_argument("--report", metavar="OUT.html", help="write a self-contained HTML report")


def _check(args: argparse.Namespace) -> None:
    if args.restore_rate is not None and not args.restore_rate > 0:
        raise UsageError(f"--restore-rate must be > 0 records/s, got {args.restore_rate:g}")
    if args.max_rounds < 1:
        raise UsageError(f"--max-rounds must be >= 1, got {args.max_rounds}")
    if not args.time_limit > 0:
        raise UsageError(f"--time-limit must be > 0 seconds, got {args.time_limit:g}")
    if args.session_timeout_ms is not None and args.session_timeout_ms < 0:
        raise UsageError(f"--session-timeout-ms must be >= 0, got {args.session_timeout_ms}")
    if args.follow_up_ms < 0:
        raise UsageError(f"--follow-up-ms must be >= 0, got {args.follow_up_ms}")
    if args.id_samples < 0:
        raise UsageError(f"--id-samples must be >= 0, got {args.id_samples}")
    from streams_assign.cli._common import check_output

    check_output(args.plot, "--plot", (".png", ".svg", ".pdf"))
    check_output(args.report, "--report", (".html", ".htm"))
    check_output(args.write_state, "--write-state", (".json",))


def run(args: argparse.Namespace) -> int:
    """Plan the changes and print (or write) the convergence of each assignor.

    Returns
    -------
    int
        0 on success.

    Raises
    ------
    UsageError
        For a bad option value, an unreadable or invalid state or rates file (named, with the
        JSON path or column and the value), an unknown client id or assignor; nothing is
        written then.
    """
    _check(args)
    from streams_assign.cli._common import load_cluster, naming

    # Live cluster or state file (streams_assign/cli/_live.py).
    from streams_assign.cli._live import live_label, live_requested, load_live_cluster
    from streams_assign.simulation.plan import Plan, build_plan, chosen_assignors
    from streams_assign.simulation.whatif import Changes

    live = live_requested(args, args.file)
    if live:
        args.file = live_label(args)
        cluster = load_live_cluster(
            args, streams_group_check=lambda state: _streams_group_change(args, state)
        )
    else:
        cluster = load_cluster(args.file)
    from streams_assign.streams_group import StreamsGroupState

    if isinstance(cluster, StreamsGroupState):
        return _plan_streams_group(args, cluster)
    cluster, session_timeout, notes = _with_streams_config(args, cluster)
    with naming(args.file):
        assignors = chosen_assignors(args.assignor)
        rates = _rates(args)
        changes = Changes(
            add=args.add,
            capacity=args.capacity,
            zone=args.zone,
            remove=tuple(args.remove),
            kill=tuple(args.kill),
            bounce=tuple(args.bounce),
            standbys=args.standbys,
            add_ids=tuple(args.add_id),
        )
        plan: Plan = build_plan(
            cluster,
            changes,
            assignors,
            rates,
            max_rounds=args.max_rounds,
            session_timeout_ms=session_timeout,
            source=str(args.file),
            follow_up_ms=args.follow_up_ms,
            id_samples=args.id_samples,
            evidence=_evidence(args.race_evidence),
        )
    if args.optimal:
        plan = _with_optimum(plan, args.time_limit)
    _write_outputs(args, plan)
    if notes:
        import sys

        print("\n".join(notes), file=sys.stderr)
    if args.json:
        import json

        print(json.dumps(plan.to_json(), indent=1))
    else:
        from streams_assign.views.chain_tables import print_chains
        from streams_assign.views.convergence_tables import print_plan

        print_plan(plan)
        print_chains(plan)
        for line in _race_lines(plan):
            print(line)
    return 0


def _plan_streams_group(args: argparse.Namespace, state: Any) -> int:
    """``plan`` on a live streams group (KIP-1071): the chain of target computations its one
    change (:func:`_streams_group_change`) causes, as ``streams-chain`` predicts and prints it
    (:func:`streams_assign.cli.streams_chain.report_chain`); returns 0.

    Raises
    ------
    UsageError
        As :func:`_streams_group_change` does.
    """
    from streams_assign.cli.streams_chain import report_chain

    change = _streams_group_change(args, state)
    return report_chain(
        state,
        change,
        source=str(args.file),
        draws=args.id_samples,
        fresh_process=change.kind == "join" and not args.add_id,
        as_json=args.json,
    )


def _streams_group_change(args: argparse.Namespace, state: Any) -> Any:
    """The chain's change from ``plan``'s options, checked.

    ``--kill P`` is a kill (one computation at session expiry), ``--remove P`` a leave,
    ``--bounce P`` a bounce of P's threads, ``--add 1`` a join of ``--capacity`` threads
    (default: the most common threads per process) with process id ``--add-id`` (else a fresh
    one, and whether each result depends on the new ids is drawn ``--id-samples`` times).

    Returns
    -------
    streams_assign.simulation.streams_group_chain.ChainChange

    Raises
    ------
    UsageError
        For an option of the classic convergence only, more or less than one change, an
        unknown process, or a group whose assignor the chain does not run.
    """
    import random
    import uuid
    from collections import Counter

    from streams_assign.cli.assign import group_assignor
    from streams_assign.simulation.streams_group_chain import ChainChange

    where = f"{args.file}: a streams group (KIP-1071)"
    _refuse_classic_options(args, where)
    actions = (("kill", args.kill), ("leave", args.remove), ("bounce", args.bounce))
    changes = [(kind, p) for kind, ids in actions for p in ids] + [("join", "")] * args.add
    if len(changes) != 1 or len(args.add_id) > 1:
        raise UsageError(
            f"{where}: plan predicts the chain of one change: --kill P, --remove P, --bounce P "
            "or --add 1 (with at most one --add-id)"
        )
    twin = group_assignor(state, None)
    if set(args.assignor or [twin]) != {"streams_group_sticky"} or twin != "streams_group_sticky":
        raise UsageError(
            f"{where}: its chain is predicted with streams_group_sticky only (the group's "
            f"assignor: {twin}); the next target: streams-assign assign"
        )
    kind, process = changes[0]
    threads = Counter(m.process_id for m in state.members)
    if kind == "join":
        count = args.capacity or Counter(threads.values()).most_common(1)[0][0]
        fresh = str(uuid.UUID(int=random.Random(0).getrandbits(128), version=4))
        process = args.add_id[0] if args.add_id else fresh
    else:
        found = sorted(p for p in threads if p.startswith(process))
        if len(found) != 1:
            raise UsageError(
                f"{where}: --{'remove' if kind == 'leave' else kind} {process}: "
                f"{'no' if not found else 'more than one'} process of the group has that id "
                f"(processes: {', '.join(sorted(threads))})"
            )
        process, count = found[0], threads[found[0]]
    if count < 1 or (kind in ("join", "bounce") and args.id_samples < 2):
        raise UsageError(f"{where}: --capacity >= 1 and --id-samples >= 2 for a join or bounce")
    how: Any = kind
    return ChainChange(kind=how, process_id=process, threads=count)


def _refuse_classic_options(args: argparse.Namespace, where: str) -> None:
    """Refuse the first option of the classic convergence a streams group's chain has no use
    for (it has no probing rebalances, warm-ups or restore model)."""
    given = {
        "--zone": args.zone is not None,
        "--standbys": args.standbys is not None,
        "--optimal": args.optimal,
        "--rates": args.rates is not None,
        "--restore-rate": args.restore_rate is not None,
        "--session-timeout-ms": args.session_timeout_ms is not None,
        "--follow-up-ms": args.follow_up_ms != DEFAULT_FOLLOW_UP_MS,
        "--max-rounds": args.max_rounds != 50,
        "--write-state": args.write_state is not None,
        "--plot": args.plot is not None,
        "--report": args.report is not None,
        "--race-evidence": args.race_evidence is not None,
    }
    for option, present in given.items():
        if present:
            raise UsageError(
                f"{where}: {option} is an option of a classic group's convergence; plan "
                "predicts a streams group's chain of target computations (streams-chain)"
            )


def _race_lines(plan: Any) -> list[str]:
    """Per chain with timing races: which rebalances depend on them, and the chain where every
    racing replica is late, beside the planned one (docs/planning.md, "Races")."""
    lines = []
    for chain in plan.chains:
        racing = chain.racing_rebalances
        if not racing:
            continue
        count = sum(len(r.races) for r in chain.rebalances)
        late = chain.if_late
        how = (
            "settled by the leader's log"
            if late is None and chain.races == "model"
            else "planned: as fast as the rate allows, except tasks new to a thread that "
            "rejoins at once"
            if chain.races == "model"
            else f"planned: every one {chain.races}"
        )
        lines.append(
            f"{chain.assignor}: rebalances {', '.join(map(str, racing))} depend on {count} "
            "race(s): whether a replica placed a moment earlier was initialised and restored "
            f"by its thread's rejoin ({how})."
        )
        if late is not None:
            summary = late.summary(chain.final)
            lines.append(
                f"  if every racing replica is late: {summary['rebalances']} rebalances "
                f"({summary['follow_ups']} follow-ups, {summary['probing_rebalances']} probing), "
                f"stable after {summary['stable_ms'] / 1000:.1f} s (planned "
                f"{len(chain.rebalances)}, {chain.stable_ms / 1000:.1f} s), "
                f"{summary['actives_placed_otherwise']} final active(s) placed otherwise "
                "(a real chain's races are settled by --race-evidence LEADER.log)."
            )
        elif chain.races == "model":
            unsettled = sum(len(r.unsettled) for r in chain.rebalances)
            lines.append(
                f"  settled by --race-evidence; {unsettled} race(s) the log did not settle "
                "(the logged value is not one the race can produce)."
            )
    return lines


def _evidence(path: str | None) -> Any:
    """The race evidence of ``--race-evidence`` (None without it)."""
    if path is None:
        return None
    from streams_assign.errors import StreamsAssignError
    from streams_assign.simulation.leader_log import race_evidence, read_decisions

    try:
        with open(path, encoding="utf-8", errors="replace") as log:
            decisions = read_decisions(log, path)
    except OSError as exc:
        raise UsageError(f"--race-evidence {path}: {exc.strerror}") from None
    except StreamsAssignError as exc:
        raise UsageError(f"--race-evidence {exc}") from None
    if not decisions:
        raise UsageError(f"--race-evidence {path}: no 'Decided on assignment' line")
    return race_evidence(decisions)


def _with_streams_config(args: argparse.Namespace, cluster: Any) -> tuple[Any, int, list[str]]:
    """The state with the configs ``--streams-config`` sets, ``session.timeout.ms``, and one
    note per value that fell back to Kafka's default."""
    from dataclasses import replace

    notes: list[str] = []
    if args.streams_config is not None:
        from lag.sources.streams_config import CONFIG_FLAGS, resolve_configs
        from streams_assign.errors import StreamsAssignError

        try:
            resolved = resolve_configs({}, args.streams_config)
        except StreamsAssignError as exc:
            raise UsageError(str(exc)) from None
        given = {
            spec.field: resolved.values[spec.field]
            for spec in CONFIG_FLAGS.values()
            if resolved.origins[spec.name] == args.streams_config
        }
        if "rack_aware_assignment_tags" in given:
            given["rack_aware_assignment_tags"] = tuple(given["rack_aware_assignment_tags"])
        try:
            cluster = replace(cluster, configs=replace(cluster.configs, **given))
        except StreamsAssignError as exc:
            raise UsageError(f"--streams-config {args.streams_config}: {exc}") from None
    if args.session_timeout_ms is not None:
        return cluster, args.session_timeout_ms, notes
    from streams_assign.cli._live import session_timeout_ms

    from_app = session_timeout_ms(args)
    if from_app is not None:
        return cluster, from_app, notes
    notes.append(f"session.timeout.ms = {DEFAULT_SESSION_TIMEOUT_MS} (Kafka's default; not given)")
    return cluster, DEFAULT_SESSION_TIMEOUT_MS, notes


def _with_optimum(plan: Any, time_limit: float) -> Any:
    """The plan with the target optimum's one-step cost of its next state (CP-SAT)."""
    from dataclasses import replace

    from streams_assign.optimal.model import Problem
    from streams_assign.optimal.solve import solve_optimal

    result = solve_optimal(plan.after, Problem.TARGET, time_limit=time_limit)
    if result.metrics is None:
        return plan
    optimum = {
        "restore_records": int(result.metrics.restore_records),
        "moves": int(result.metrics.moves),
    }
    return replace(plan, optimum=optimum)


def _rates(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from streams_assign.simulation.probing import RestoreRates

    if args.rates is None:
        return RestoreRates(default=args.restore_rate or DEFAULT_RESTORE_RATE)
    from streams_assign.simulation.rates import read_restore_rates

    if not Path(args.rates).exists():
        raise UsageError(f"--rates {args.rates}: no such file or folder")
    return read_restore_rates(args.rates, args.restore_rate)


def _write_outputs(args: argparse.Namespace, plan: Any) -> None:
    """Render every requested output first (the next state, the plot, the report), then write
    each whole (nothing on a bad input)."""
    from streams_assign.cli._common import write_rendered

    outputs: list[tuple[str, str, str | bytes]] = []
    if args.write_state is not None:
        from streams_assign.formats.atomic import dumps_json
        from streams_assign.formats.cluster_state import cluster_state_to_json

        state = dumps_json(cluster_state_to_json(plan.after))
        outputs.append(("--write-state", args.write_state, state))
    if args.plot is not None:
        from streams_assign.views.plots import plan_figure, render

        outputs.append(("--plot", args.plot, render(plan_figure(plan), Path(args.plot).suffix)))
    if args.report is not None:
        from streams_assign.views.page import plan_page

        outputs.append(("--report", args.report, plan_page(plan)))
    write_rendered(outputs)
