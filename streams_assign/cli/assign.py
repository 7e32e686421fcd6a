"""``streams-assign assign FILE... [--json] [--output-dir DIR] [--assignor NAME]``.

The next rebalance's assignment of each cluster-state file (Kafka's
``HighAvailabilityTaskAssignor`` by default), or of each streams-group state (KIP-1071, told apart
by its ``members`` and ``topology``; decided by the twin of the group's configured assignor:
``streams_group_sticky``, the group coordinator's ``StickyTaskAssignor``, or lag_aware_sticky's
broker form). With ``--bootstrap-server HOST:PORT --application-id APP`` the input is the live
group, a classic or a streams group (:mod:`streams_assign.cli._live`). With ``--output-dir``
(batch mode) every good input's assignment is written whole to ``DIR/<input file name>``, the
bad inputs are listed on one line and the exit status is 2 when there is any.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from streams_assign.errors import StreamsAssignError, StreamsGroupUsageError, UsageError

__all__ = ["ASSIGNOR_CHOICES", "configure", "group_assignor", "run"]

#: The assignor names of ``assignors.ASSIGNORS`` and their aliases (kept here so that
#: ``--help`` imports no assignor; a test checks both lists agree).
ASSIGNOR_CHOICES = (
    "fallback_prior",
    "high_availability",
    "lag_aware_sticky",
    "legacy_sticky",
    "sticky",
    "streams_group_sticky",
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``assign`` to its parser."""
    parser.add_argument("files", nargs="*", metavar="FILE", help="cluster-state JSON file(s)")
    # Live cluster: ask the cluster, then assign (streams_assign/cli/_live.py).
    from streams_assign.cli._live import add_live_options

    add_live_options(parser)
    parser.add_argument("--json", action="store_true", help="print the output JSON")
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write DIR/<input file name> for each input (batch mode; DIR is created)",
    )
    parser.add_argument(
        "--assignor",
        default=None,
        choices=ASSIGNOR_CHOICES,
        help="which assignor decides (default high_availability for a cluster state, "
        "streams_group_sticky for a streams-group state, which lag_aware_sticky also decides; "
        "fallback_prior runs instead when "
        "every stateful lag is -3, as Kafka does after a failed lag fetch)",
    )


def run(args: argparse.Namespace) -> int:
    """Assign each input; print a table per input, the JSON, or write the batch.

    Returns
    -------
    int
        0 on success.

    Raises
    ------
    UsageError
        For an unreadable or invalid input (naming the file, JSON path and value); in batch
        mode after the good inputs are written.
    """
    from streams_assign.cli._common import load_input
    from streams_assign.cli._live import live_label, live_requested, load_live_cluster

    # Live cluster or state files (streams_assign/cli/_live.py).
    live = live_requested(args, args.files)
    if args.output_dir is not None:
        if live:
            raise UsageError("--output-dir takes state files, not a live cluster")
        return _batch(args)
    if live:
        args.files = [live_label(args)]
    results = []
    for path in args.files:
        state = (
            load_live_cluster(args, streams_group_check=lambda s: group_assignor(s, args.assignor))
            if live
            else load_input(path)
        )
        try:
            results.append((Path(path), state, _decide(state, args)))
        except StreamsAssignError as exc:
            raise UsageError(f"{path}: {exc}") from None
    if args.json:
        import json

        if len(results) == 1:
            print(json.dumps(results[0][2].to_json(), indent=1))
        else:
            print(json.dumps({str(p): a.to_json() for p, _, a in results}, indent=1))
        return 0
    from streams_assign.cli._common import console
    from streams_assign.streams_group import StreamsGroupState
    from streams_assign.views.tables import print_assignment, print_streams_group_assignment

    out = console()
    for _, state, assignment in results:
        if isinstance(state, StreamsGroupState):
            print_streams_group_assignment(
                state, assignment, console=out, assignor=group_assignor(state, args.assignor)
            )
            continue
        print_assignment(state, assignment, console=out)
        for warning in state.warnings:
            out.print(f"[yellow]warning:[/] {warning}")
    return 0


def _decide(state: Any, args: argparse.Namespace) -> Any:
    """The assignment of one input: per member for a streams group, per client otherwise."""
    from streams_assign.assignors import assign
    from streams_assign.streams_group import StreamsGroupState

    if isinstance(state, StreamsGroupState):
        return _decide_streams_group(state, args.assignor)
    return assign(state, assignor=args.assignor or "high_availability")


def _decide_streams_group(state: Any, chosen: str | None) -> Any:
    """The group coordinator's decision for a streams-group state.

    Raises
    ------
    StreamsGroupUsageError
        When ``--assignor`` names a classic assignor: ``streams_group_sticky`` (the group
        coordinator's ``StickyTaskAssignor``, the default) or ``lag_aware_sticky`` (its broker
        form) decide for a streams group.
    TaskAssignorException
        When Kafka's assignor throws (a group without members but with tasks).
    """
    from streams_assign.assignors import assign_group

    return assign_group(state, group_assignor(state, chosen))


#: The group's ``streams.assignor.name`` (``StreamsGroupDescribe``'s assignor) -> its twin here:
#: Kafka's ``StickyTaskAssignor`` and the lag_aware_sticky plug-in (KIP-1357).
_CONFIGURED_TWIN = {"sticky": "streams_group_sticky", "lag_aware_sticky": "lag_aware_sticky"}


def group_assignor(state: Any, chosen: str | None) -> str:
    """Which of ``GROUP_ASSIGNORS`` decides a streams-group state: ``--assignor`` when given,
    else the twin of the assignor the group is configured with (``meta.assignor``, which
    ``streams-lag streams-group`` / ``snapshot`` write from the description), else
    ``streams_group_sticky`` (Kafka's default).

    Raises
    ------
    StreamsGroupUsageError
        When ``chosen`` is a classic assignor, or the group's assignor has no twin here and no
        ``--assignor`` is given.
    """
    from streams_assign.assignors import GROUP_ASSIGNORS

    if chosen is not None:
        if chosen not in GROUP_ASSIGNORS:
            raise StreamsGroupUsageError(
                f"a streams-group state (members + topology) is decided by "
                f"{' or '.join(GROUP_ASSIGNORS)}, not --assignor {chosen}"
            )
        return chosen
    configured = (state.meta or {}).get("assignor")
    if configured is None:
        return "streams_group_sticky"
    if configured not in _CONFIGURED_TWIN:
        raise StreamsGroupUsageError(
            f"meta.assignor: the group's assignor is {configured!r}, which no assignor here "
            f"twins; give --assignor {' or --assignor '.join(GROUP_ASSIGNORS)} to predict with "
            "one of them"
        )
    return _CONFIGURED_TWIN[configured]


def _batch(args: argparse.Namespace) -> int:
    from streams_assign.cli._common import load_input, output_dir
    from streams_assign.formats.atomic import dumps_json, write_atomic

    names = [Path(p).name for p in args.files]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise UsageError(f"--output-dir: two inputs share a file name: {', '.join(twice)}")
    out = output_dir(args.output_dir)
    failures: list[str] = []
    written = 0
    for path in args.files:
        try:
            assignment: Any = _decide(load_input(path), args)
        except UsageError as exc:
            failures.append(str(exc))
            continue
        except StreamsAssignError as exc:
            failures.append(f"{path}: {exc}")
            continue
        try:
            write_atomic(out / Path(path).name, dumps_json(assignment.to_json()))
        except OSError as exc:
            failures.append(f"{out / Path(path).name}: cannot write: {exc.strerror or exc}")
            continue
        written += 1
    if failures:
        raise UsageError(
            f"wrote {written} assignment(s) to {out}; {len(failures)} of {len(args.files)} "
            "input(s) not assigned: " + "; ".join(failures)
        )
    print(f"wrote {written} assignment(s) to {out}", file=sys.stderr)
    return 0
