"""``streams-assign consumer-assign FILE...``: Kafka's consumer assignors from the command line.

- ``--json``: print exactly the expected-file document (``{"assignment": {...}}``) of the one
  input (several inputs: an object keyed by file path);
- ``--output-dir DIR``: write ``DIR/<input file name>`` for each input (batch mode);
- otherwise a table per input.

Exit status 0, or 2 on bad input (one line naming the file, the JSON path and the value; nothing
is written). Follows the subcommand contract: :func:`configure` and :func:`run`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from streams_assign.errors import ConsumerCommandError, StreamsAssignError

__all__ = ["HELP", "configure", "run"]

HELP = "run Kafka's consumer assignors (range, roundrobin, sticky, cooperative-sticky)"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``consumer-assign`` to ``parser``."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="consumer-group state JSON")
    parser.add_argument("--json", action="store_true", help="print the expected-file document")
    parser.add_argument("--output-dir", metavar="DIR", help="write DIR/<input name> per input")
    parser.add_argument(
        "--assignor",
        choices=["range", "roundrobin", "sticky", "cooperative-sticky"],
        help="override the file's assignor",
    )


def run(args: argparse.Namespace) -> int:
    """Assign every file, then print or write the results (all or nothing).

    Raises
    ------
    ConsumerCommandError
        A file is unreadable or invalid (file, JSON path and value named), the assignor fails
        as Kafka's would, or ``--output-dir`` is not a folder or two inputs share a name.
    """
    from streams_assign.consumer import assign_consumer_group
    from streams_assign.formats.atomic import dumps_json, write_atomic
    from streams_assign.formats.consumer_group import assignment_to_json, load_consumer_state

    results = []
    for name in args.files:
        try:
            state = load_consumer_state(name)
            document = assignment_to_json(assign_consumer_group(state, args.assignor))
        except StreamsAssignError as exc:
            raise ConsumerCommandError(f"{name}: {exc}") from None
        except OSError as exc:
            raise ConsumerCommandError(f"{name}: cannot read: {exc.strerror or exc}") from None
        results.append((Path(name), state, document))
    if args.output_dir is not None:
        out = Path(args.output_dir)
        if not out.is_dir():
            raise ConsumerCommandError(f"--output-dir {out}: not a directory")
        names = [p.name for p, _, _ in results]
        if len(set(names)) != len(names):
            raise ConsumerCommandError("--output-dir: two inputs share a file name")
        for path, _, document in results:
            write_atomic(out / path.name, dumps_json(document))
        print(f"wrote {len(results)} assignment(s) to {out}", file=sys.stderr)
        return 0
    if args.json:
        if len(results) == 1:
            print(json.dumps(results[0][2], indent=1))
        else:
            print(json.dumps({str(p): d for p, _, d in results}, indent=1))
        return 0
    from rich.console import Console

    from streams_assign.consumer.scores import score_consumer_assignment
    from streams_assign.views.tables import print_consumer_assignment

    console = Console()
    for path, state, document in results:
        name = args.assignor or state.assignor
        score = score_consumer_assignment(state, assign_consumer_group(state, name), name)
        print_consumer_assignment(path, state, document, name, score, console)
    return 0
