"""``streams-assign streams-chain STATE``: every target computation a change causes in a streams
group (KIP-1071), and which results depend on the new members' random ids.

STATE is a streams-group state (``streams-lag streams-group`` writes one from a live group).
One change per run: ``--kill P`` (one computation when P's session expires), ``--leave P``,
``--join P --threads N`` (the first thread alone, then all threads an assignment interval
later, from the reconciliation state ``--reconciliation`` names) or ``--bounce P --threads N``.
See :mod:`streams_assign.simulation.streams_group_chain`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["configure", "report_chain", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``streams-chain`` (argparse only)."""
    parser.add_argument("file", metavar="STATE", help="a streams-group state (JSON)")
    change = parser.add_mutually_exclusive_group(required=True)
    for kind in ("kill", "leave", "join", "bounce"):
        change.add_argument(f"--{kind}", metavar="PROCESS_ID", help=f"{kind} this process")
    parser.add_argument("--threads", type=int, default=1, help="threads of a joining process")
    parser.add_argument(
        "--member-id", action="append", default=[], help="a joining thread's member id, in order"
    )
    parser.add_argument(
        "--first-alone", type=int, default=1, help="threads in a join's first computation (1)"
    )
    parser.add_argument(
        "--reconciliation", choices=("released-only", "full"), default="released-only"
    )
    parser.add_argument("--fresh-process", action="store_true", help="the process id is unknown")
    parser.add_argument("--draws", type=int, default=20, help="random id draws (20)")
    parser.add_argument("--json", action="store_true", help="one JSON document")


def run(args: argparse.Namespace) -> int:
    """Print the chain; returns 0 (bad input raises a ``StreamsAssignError``)."""
    from streams_assign.errors import UsageError
    from streams_assign.formats.streams_group import load_streams_group
    from streams_assign.simulation.streams_group_chain import ChainChange

    try:
        state = load_streams_group(args.file)
    except OSError as exc:
        raise UsageError(f"{args.file}: cannot read: {exc.strerror or exc}") from None
    kind: Any = next(k for k in ("kill", "leave", "join", "bounce") if getattr(args, k))
    if args.threads < 1 or not 1 <= args.first_alone <= args.threads:
        raise UsageError(f"--threads {args.threads} / --first-alone {args.first_alone}: bad")
    change = ChainChange(
        kind=kind,
        process_id=getattr(args, kind),
        threads=args.threads,
        member_ids=tuple(args.member_id) or None,
        first_alone=args.first_alone,
    )
    return report_chain(
        state,
        change,
        source=args.file,
        reconciliation=args.reconciliation,
        draws=args.draws,
        fresh_process=args.fresh_process,
        as_json=args.json,
    )


def report_chain(
    state: Any,
    change: Any,
    *,
    source: str,
    reconciliation: str = "released-only",
    draws: int = 20,
    fresh_process: bool = False,
    as_json: bool = False,
) -> int:
    """Predict the chain ``change`` causes from ``state`` and print it (``streams-chain``, and
    ``plan`` on a live streams group); returns 0.

    Parameters
    ----------
    state, change:
        A :class:`~streams_assign.streams_group.StreamsGroupState` and a
        :class:`~streams_assign.simulation.streams_group_chain.ChainChange`.
    source:
        The input's name, for messages.
    reconciliation, draws, fresh_process:
        As :func:`~streams_assign.simulation.streams_group_chain.id_dependence` takes them;
        the dependence on new ids is drawn for a join or bounce without ``change.member_ids``.
    as_json:
        One JSON document on stdout instead of the text.

    Raises
    ------
    UsageError
        When the chain cannot be predicted (a process without members ...), naming ``source``.
    """
    from streams_assign.errors import UsageError
    from streams_assign.simulation.streams_group_chain import (
        id_dependence,
        predict_chain,
        split_expiries,
    )

    how: Any = reconciliation
    try:
        chain = predict_chain(state, change, reconciliation=how)
        depends = (
            id_dependence(
                state, change, reconciliation=how, draws=draws, fresh_process=fresh_process
            )
            if change.kind in ("join", "bounce") and not change.member_ids
            else [{"per_process": False, "per_thread": False}] * len(chain.computations)
        )
        splits = split_expiries(state, change, reconciliation=how)
    except ValueError as exc:
        raise UsageError(f"{source}: {exc}") from None
    document = chain.to_json()
    for entry, dep in zip(document["computations"], depends, strict=True):
        entry["depends_on_new_ids"] = dep
    if change.kind == "kill":
        document["split_expiries"] = splits
    if as_json:
        print(json.dumps(document, indent=1))
        return 0
    for i, entry in enumerate(document["computations"], start=1):
        dep = entry["depends_on_new_ids"]
        print(
            f"computation {i}: {entry['trigger']} ({len(entry['members'])} members; depends on "
            f"new ids: per process {'yes' if dep['per_process'] else 'no'}, per thread "
            f"{'yes' if dep['per_thread'] else 'no'})"
        )
        for member, target in entry["target"].items():
            active = " ".join(f"{s}_{p}" for s, ps in target["active"].items() for p in ps)
            standby = " ".join(f"{s}_{p}" for s, ps in target["standby"].items() for p in ps)
            print(f"  {member}: active [{active}] standby [{standby}]")
    if splits:
        print(
            "if the killed process's sessions expire apart, with a computation between them "
            "(two computations):"
        )
        for split in splits:
            same = (
                "the same"
                if split["final_equal_per_thread"]
                else "the same per process, other per thread"
                if split["final_equal_per_process"]
                else "other per process"
            )
            print(
                f"  {', '.join(split['first'])} fenced first: final target {same} "
                f"({split['actives_on_other_members']} active(s) on other members)"
            )
    return 0
