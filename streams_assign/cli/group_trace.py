"""``streams-assign group-trace FILE... [--json]``: replay group traces on the coordinator.

Each FILE is a trace of ``scenarios/kafka-group`` (``input/`` or ``flows/``). With ``--json`` the
output document of each trace is printed (one document, or an object keyed by file name for
several); without it, one line per event. ``--check`` compares with Kafka's recording (the
``expected/`` file beside ``input/``, or a flow's own ``expect`` list) and exits 1 on a
difference. Bad input exits 2 with one line on stderr and prints nothing.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

__all__ = [
    "configure",
    "run",
]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``group-trace``."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="group trace JSON file(s)")
    parser.add_argument("--json", action="store_true", help="print the output document(s)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare with Kafka's recording (expected/<name> or the flow's expect list)",
    )


def _kafka_differences(path: Path, document: dict[str, Any], got: dict[str, Any]) -> list[str]:
    from streams_assign.protocol.expectations import check_expectations

    if "expect" in document:
        return check_expectations(got, document["expect"])
    expected_path = path.parent.parent / "expected" / path.name
    if not expected_path.is_file():
        return [f"no Kafka recording at {expected_path}"]
    expected = json.loads(expected_path.read_text())
    problems = []
    for mine, kafka in zip(got["events"], expected["events"], strict=False):
        for key in ("timers_fired", "responses"):
            if mine[key] != kafka[key]:
                problems.append(f"event {kafka['i']}: {key} differ")
        for key in ("exists", "state", "generation", "leader", "members"):
            if mine["group"].get(key) != kafka["group"].get(key):
                problems.append(f"event {kafka['i']}: group.{key} differ")
    if len(got["events"]) != len(expected["events"]):
        problems.append("event counts differ")
    return problems


def run(args: argparse.Namespace) -> int:
    """Replay each file; returns 0, or 1 when ``--check`` finds a difference.

    Raises
    ------
    InvalidTraceError
        For an unreadable or malformed trace (the CLI exits 2).
    """
    from streams_assign.protocol.trace import load_trace, run_trace

    results = []
    for name in args.files:
        path = Path(name)
        document = load_trace(path)
        results.append((path, document, run_trace(document, str(path))))
    status = 0
    if args.json:
        if len(results) == 1:
            print(json.dumps(results[0][2], indent=1))
        else:
            print(json.dumps({str(p): out for p, _, out in results}, indent=1))
    else:
        for path, _, out in results:
            print(
                f"{path}: group {out['group_id']}, {out['summary']['events']} events, "
                f"{out['summary']['responses']} responses"
            )
            for event in out["events"]:
                group = event["group"]
                answers = ", ".join(
                    f"{r['member']}:{r['api']}={r['error']}" for r in event["responses"]
                )
                print(
                    f"  {event['i']:>3} t={event['t']:>7} {event['type']:<12} "
                    f"{event.get('member', ''):<6} -> {group['state']} "
                    f"gen={group.get('generation', '-')} [{answers}]"
                )
    if args.check:
        import sys

        for path, document, out in results:
            problems = _kafka_differences(path, document, out)
            verdict = "identical to Kafka" if not problems else f"{len(problems)} difference(s)"
            print(f"{path}: {verdict}", file=sys.stderr)
            for problem in problems[:10]:
                print(f"  {problem}", file=sys.stderr)
            if problems:
                status = 1
    return status
