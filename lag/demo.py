"""``python -m lag.demo``: from a fleet's raw operator data to the next rebalance, in one run.

The bundled data (``lag/data/demo/``, made by ``streams-lag generate --instances 3
--new-instances 1 --tasks 12 --stores 2 --standbys 1 --seed 4``) is what an operator can fetch
from a running application: the ``Topology#describe()`` text, ``kafka-consumer-groups.sh
--describe --members --verbose``, ``kafka-get-offsets.sh`` of the changelogs and the state
directories of four instances (one of them just joined, with no state yet).

Steps: collect the checkpoint files into offset rows (plain Python); compute lags with the Spark
job (local mode) and write the cluster-state file; run ``streams_assign.assign`` on it
(Kafka's ``HighAvailabilityTaskAssignor``) and print what the next rebalance does.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEMO_DATA = Path(__file__).parent / "data" / "demo"
APPLICATION_ID = "orders-app"


def default_output_dir() -> Path:
    """``out/lag-demo`` at the repository root when run from a checkout, else a temp folder."""
    root = Path(__file__).resolve().parents[1]
    if (root / "pyproject.toml").exists() and (root / "lag").is_dir():
        return root / "out" / "lag-demo"
    return Path(tempfile.mkdtemp(prefix="streams-lag-demo-"))


def lag_table(document: dict[str, Any]) -> Any:
    """A rich table of the cluster state: per client, its threads, active tasks and task lags."""
    from rich.table import Table

    table = Table(title="Changelog lag per client (records; -2 = running active)")
    table.add_column("client", no_wrap=True)
    table.add_column("threads", justify="right")
    table.add_column("active now", overflow="fold")
    table.add_column("local state: task lag", overflow="fold")
    for client in document["clients"]:
        lags = client.get("task_lags", {})
        shown = ", ".join(f"{task} {lag:,}" for task, lag in lags.items() if lag != -2) or "-"
        table.add_row(
            client["id"][:8],
            str(client["capacity"]),
            ", ".join(client["prev_active"]) or "-",
            shown,
        )
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; returns the exit status (0, or 2 when the bundled data is missing)."""
    from rich.console import Console

    from lag.pipeline import ComputeRequest, run_compute
    from lag.sources.checkpoints import collect_state_dirs, write_offset_rows

    parser = argparse.ArgumentParser(prog="python -m lag.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="output folder (default: out/lag-demo)")
    parser.add_argument("--master", help="Spark master (default local[*])")
    args = parser.parse_args(argv)
    console = Console(stderr=False)
    state_dirs = sorted((DEMO_DATA / "state").glob("instance-*"))
    if not state_dirs:
        print(f"lag.demo: error: no demo data in {DEMO_DATA}", file=sys.stderr)
        return 2
    out = args.out or default_output_dir()
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    console.rule("1. collect: checkpoint files -> offset rows")
    collected = collect_state_dirs([str(d) for d in state_dirs], APPLICATION_ID)
    offsets = out / "offsets.parquet"
    write_offset_rows(collected.rows, offsets)
    console.print(
        f"{len(collected.rows)} offset rows from {len(collected.processes)} state directories "
        f"-> {offsets}"
    )

    console.rule("2. Spark lag job (local mode) -> cluster state")
    request = ComputeRequest(
        application_id=APPLICATION_ID,
        topology=str(DEMO_DATA / "topology.txt"),
        members=[str(DEMO_DATA / "members.txt")],
        end_offsets=[str(DEMO_DATA / "end-offsets.txt")],
        offsets=[str(offsets)],
        output=str(out / "cluster.json"),
        lags_table=str(out / "lags.parquet"),
        master=args.master,
        configs={"num_standby_replicas": 1},
    )
    summary = run_compute(request, progress=sys.stderr)
    console.print(summary.text())
    console.print(lag_table(summary.document))

    console.rule("3. streams_assign.assign -> the next rebalance")
    try:
        import streams_assign
        from streams_assign.views.tables import print_assignment
    except (
        ImportError
    ) as exc:  # the core is part of this repository; only a broken install lacks it
        print(f"lag.demo: error: the streams_assign core is not importable: {exc}", file=sys.stderr)
        return 2
    cluster = streams_assign.parse_cluster_state(summary.document)
    assignment = streams_assign.assign(cluster)
    print_assignment(
        cluster, assignment, console=console, title=f"{APPLICATION_ID}: next rebalance"
    )
    console.print(f"done in {time.perf_counter() - started:.0f} s; files in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
