"""``streams-assign init OUT.yaml|OUT.json [--force]``: a commented example cluster state.

The example is a small, valid state to edit: three clients (one new, with no local state), two
stateful subtopologies and a stateless one, one standby replica. YAML output carries a comment on
every field (reading YAML needs the ``yaml`` extra); JSON output, which cannot hold comments,
points to the documentation in ``description``. Base install.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from streams_assign.errors import UsageError

__all__ = ["EXAMPLE_YAML", "configure", "example_document", "run"]

#: The commented example (YAML); ``example_document`` is the same document as JSON.
EXAMPLE_YAML = """\
# A Kafka Streams cluster state: what the group leader knows at a rebalance.
# Format: docs/formats.md; JSON Schema: streams_assign/data/cluster-state.schema.json.
# Try it:   streams-assign assign THIS_FILE
#           streams-assign plan THIS_FILE --kill 00000000-0000-0000-0000-0000000000a1
name: example
description: three instances, the third just joined with no local state
configs:
  # Kafka's config names with dots as underscores (the dotted names work too).
  acceptable_recovery_lag: 10000          # records; within this a client counts as caught up
  max_warmup_replicas: 2                  # warmup replicas per rebalance
  num_standby_replicas: 1                 # standby copies of each stateful task
  probing_rebalance_interval_ms: 600000   # ms between probing rebalances (>= 60000)
# Task ids are <subtopology>_<partition>.
stateful_tasks: [0_0, 0_1, 0_2, 0_3, 1_0, 1_1]
stateless_tasks: [2_0, 2_1]
# Per stateful task, the sum of its changelog end offsets (records); optional. A client with no
# local state for a task is this far behind.
changelog_end_offset_sums: {0_0: 500000, 0_1: 500000, 0_2: 500000, 0_3: 500000,
                            1_0: 80000, 1_1: 80000}
clients:
  - id: 00000000-0000-0000-0000-0000000000a1   # the process id (a UUID)
    capacity: 2                                 # stream threads
    prev_active: [0_0, 0_1, 1_0, 2_0]           # what it ran at the last rebalance
    prev_standby: [0_2, 1_1]
    # Changelog lag in records per task it has local state for: -2 = running as active,
    # -3 = unknown; a stateful task not listed means no local state.
    task_lags: {0_0: -2, 0_1: -2, 1_0: -2, 0_2: 1200, 1_1: 40}
  - id: 00000000-0000-0000-0000-0000000000a2
    capacity: 2
    prev_active: [0_2, 0_3, 1_1, 2_1]
    prev_standby: [0_0, 0_1, 1_0]
    task_lags: {0_2: -2, 0_3: -2, 1_1: -2, 0_0: 300, 0_1: 25000, 1_0: 0}
  - id: 00000000-0000-0000-0000-0000000000a3   # a new instance: no previous tasks, no state
    capacity: 2
"""


def example_document() -> dict[str, object]:
    """The example as a JSON document (the YAML's data, without its comments)."""
    sums = {"0_0": 500000, "0_1": 500000, "0_2": 500000, "0_3": 500000, "1_0": 80000}
    sums["1_1"] = 80000
    return {
        "name": "example",
        "description": "three instances, the third just joined with no local state; "
        "fields explained in docs/formats.md (write a .yaml file for a commented version)",
        "configs": {
            "acceptable_recovery_lag": 10000,
            "max_warmup_replicas": 2,
            "num_standby_replicas": 1,
            "probing_rebalance_interval_ms": 600000,
        },
        "stateful_tasks": ["0_0", "0_1", "0_2", "0_3", "1_0", "1_1"],
        "stateless_tasks": ["2_0", "2_1"],
        "changelog_end_offset_sums": sums,
        "clients": [
            {
                "id": "00000000-0000-0000-0000-0000000000a1",
                "capacity": 2,
                "prev_active": ["0_0", "0_1", "1_0", "2_0"],
                "prev_standby": ["0_2", "1_1"],
                "task_lags": {"0_0": -2, "0_1": -2, "1_0": -2, "0_2": 1200, "1_1": 40},
            },
            {
                "id": "00000000-0000-0000-0000-0000000000a2",
                "capacity": 2,
                "prev_active": ["0_2", "0_3", "1_1", "2_1"],
                "prev_standby": ["0_0", "0_1", "1_0"],
                "task_lags": {"0_2": -2, "0_3": -2, "1_1": -2, "0_0": 300, "0_1": 25000, "1_0": 0},
            },
            {"id": "00000000-0000-0000-0000-0000000000a3", "capacity": 2},
        ],
    }


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``init`` to its parser."""
    parser.add_argument(
        "output", metavar="OUT", help="file to write: .yaml/.yml (commented) or .json"
    )
    parser.add_argument("--force", action="store_true", help="overwrite OUT if it exists")


def run(args: argparse.Namespace) -> int:
    """Write the example whole (never half a file); refuse to overwrite without ``--force``.

    Raises
    ------
    UsageError
        For another suffix than .yaml, .yml or .json, an existing OUT without ``--force``, or a
        folder that does not exist or cannot be written; nothing is written then.
    """
    from streams_assign.cli._common import check_output, write_rendered
    from streams_assign.formats.atomic import dumps_json

    target = Path(args.output)
    check_output(args.output, "init", (".yaml", ".yml", ".json"))
    if target.exists() and not args.force:
        raise UsageError(f"init {target}: exists; give --force to overwrite it")
    content = dumps_json(example_document()) if target.suffix.lower() == ".json" else EXAMPLE_YAML
    write_rendered([("init", str(target), content)])
    return 0
