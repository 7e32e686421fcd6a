"""``streams-assign connect-replay FILE...``: Connect's assignors over a sequence of rounds.

- ``--json``: print exactly the expected-file document (``{"rounds": [...]}``) of the one input
  (several inputs: an object keyed by file path);
- ``--output-dir DIR``: write ``DIR/<input file name>`` for each input (batch mode);
- ``--scores``: with ``--json``, print the per-round scores instead (revoked, moved, downtime);
- otherwise a table per round and the scores.

Exit status 0, or 2 on bad input (one line naming the file, the JSON path and the value; nothing
is written). Follows the subcommand contract: :func:`configure` and :func:`run`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from streams_assign.errors import ConnectCommandError, StreamsAssignError

__all__ = ["HELP", "configure", "run"]

HELP = "replay Kafka Connect's eager or incremental cooperative assignor round by round"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``connect-replay`` to ``parser``."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="Connect sequence JSON")
    parser.add_argument("--json", action="store_true", help="print the expected-file document")
    parser.add_argument("--output-dir", metavar="DIR", help="write DIR/<input name> per input")
    parser.add_argument(
        "--scores", action="store_true", help="with --json: print the scores per round instead"
    )
    parser.add_argument(
        "--rebalance-ms",
        type=int,
        default=1000,
        metavar="MS",
        help="assumed length of one rebalance for the downtime score (default 1000 ms)",
    )


def _dumps(document: object) -> str:
    """The expected files' layout: indent 1, keys sorted, a final newline."""
    return json.dumps(document, indent=1, sort_keys=True) + "\n"


def run(args: argparse.Namespace) -> int:
    """Replay every file, then print or write the results (all or nothing).

    Raises
    ------
    ConnectCommandError
        A file is unreadable or invalid (file, JSON path and value named), ``--rebalance-ms``
        is negative, or ``--output-dir`` is not a folder or two inputs share a name.
    """
    from streams_assign.connect import replay_connect, rounds_to_json
    from streams_assign.connect.scores import score_sequence
    from streams_assign.formats.atomic import write_atomic
    from streams_assign.formats.connect_sequence import load_connect_sequence

    if args.rebalance_ms < 0:
        raise ConnectCommandError(f"--rebalance-ms must be >= 0, got {args.rebalance_ms}")
    results = []
    for name in args.files:
        try:
            sequence = load_connect_sequence(name)
            rounds = replay_connect(sequence)
        except StreamsAssignError as exc:
            raise ConnectCommandError(f"{name}: {exc}") from None
        except OSError as exc:
            raise ConnectCommandError(f"{name}: cannot read: {exc.strerror or exc}") from None
        scores = score_sequence(sequence, rounds, args.rebalance_ms)
        results.append((Path(name), sequence, rounds, scores))
    if args.output_dir is not None:
        out = Path(args.output_dir)
        if not out.is_dir():
            raise ConnectCommandError(f"--output-dir {out}: not a directory")
        names = [p.name for p, *_ in results]
        if len(set(names)) != len(names):
            raise ConnectCommandError("--output-dir: two inputs share a file name")
        for path, _, rounds, _ in results:
            write_atomic(out / path.name, _dumps(rounds_to_json(rounds)))
        print(f"wrote {len(results)} replay(s) to {out}", file=sys.stderr)
        return 0
    if args.json:
        docs = {
            str(p): (s.to_json() if args.scores else rounds_to_json(r)) for p, _, r, s in results
        }
        print(_dumps(next(iter(docs.values())) if len(docs) == 1 else docs), end="")
        return 0
    from rich.console import Console

    from streams_assign.views.tables import print_connect_replay

    console = Console()
    for path, sequence, rounds, scores in results:
        print_connect_replay(path, sequence, rounds, scores, console)
    return 0
