"""The work of the ``optimal``, ``score`` and ``compare`` subcommands of ``streams-assign``.

Their arguments are declared in ``streams_assign.commands.optimal`` / ``.score`` / ``.compare``
(which import this module only when the subcommand runs, as it needs OR-Tools).

- ``optimal FILE [--problem target|immediate] [--time-limit S] [--json]``: the optimum of one
  problem, with status, objective values, bounds and solve time.
- ``score FILE ASSIGNMENT.json [--json]``: the metrics of an assignment in the output format.
- ``compare FILE [--plot OUT.png] [--time-limit S] [--json]``: Kafka's assignors beside both
  optima, as one table (and a bar chart).

Exit status: 0 on success; 1 when ``optimal`` finds no assignment (INFEASIBLE or UNKNOWN; the
status and explanation are still printed); 2 on bad input or usage (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from streams_assign.api import get_assignor
from streams_assign.commands._common import load_cluster, load_json
from streams_assign.errors import StreamsAssignError, UsageError
from streams_assign.model import Assignment, ClusterState
from streams_assign.optimal.compare import compare_assignors, comparison_table, plot_comparison
from streams_assign.optimal.metrics import METRIC_NAMES, Metrics, parse_assignment, score
from streams_assign.optimal.model import Problem
from streams_assign.optimal.solve import (
    OptimalResult,
    json_number,
    solve_optimal,
)
from streams_assign.report import assignment_table

__all__ = ["OptimalCommandError", "cmd_compare", "cmd_optimal", "cmd_score"]

_PLOT_FORMATS = (".png", ".svg", ".pdf")
_WIDE = 100


#: The error of these subcommands (kept under its former name).
OptimalCommandError = UsageError


def _check_solver_options(args: argparse.Namespace) -> None:
    if not args.time_limit > 0:
        raise OptimalCommandError(f"--time-limit must be > 0 seconds, got {args.time_limit:g}")
    if args.workers < 1:
        raise OptimalCommandError(f"--workers must be >= 1, got {args.workers}")


@contextmanager
def _spinner(message: str) -> Iterator[Any]:
    """A rich spinner on stderr while the solver runs (silent when stderr is not a terminal)."""
    console = Console(stderr=True)
    with console.status(message) as status:
        yield status


def cmd_optimal(args: argparse.Namespace) -> int:
    _check_solver_options(args)
    cluster = load_cluster(args.file)
    problem = Problem(args.problem)
    with _spinner(f"CP-SAT: solving the {problem.value} problem (up to {args.time_limit:g} s)"):
        hint = _kafka_hint(cluster) if problem is Problem.IMMEDIATE else None
        result = solve_optimal(
            cluster,
            problem,
            time_limit=args.time_limit,
            num_workers=args.workers,
            random_seed=args.seed,
            hint=hint,
        )
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        _print_optimal(cluster, result, Console())
    return 0 if result.assignment is not None else 1


def _kafka_hint(cluster: ClusterState) -> Assignment | None:
    """Kafka's HA assignment as a starting point for CP-SAT (none when HA cannot decide)."""
    try:
        return get_assignor("high_availability").assign(cluster)
    except StreamsAssignError:
        return None


def _print_optimal(cluster: ClusterState, result: OptimalResult, console: Console) -> None:
    name = cluster.name or "cluster"
    summary = Table(title=f"{name}: {result.problem.value} optimum ({result.status})")
    summary.add_column("objective (in order)")
    summary.add_column("value", justify="right")
    summary.add_column("proven bound", justify="right")
    summary.add_column("gap", justify="right")
    summary.add_column("stage status")
    for stage in result.stages:
        value = result.objective.get(stage.name)
        bound = result.bound.get(stage.name)
        gap = result.gap(stage.name)
        summary.add_row(
            stage.name,
            "-" if value is None else str(json_number(value)),
            "-" if bound is None else str(json_number(bound)),
            "-" if gap is None else f"{gap:.2%}",
            f"{stage.status} ({stage.seconds:.2f} s)",
        )
    console.print(summary)
    if result.explanation:
        console.print(f"[bold]{result.status}[/]: {result.explanation}")
    if result.assignment is not None:
        console.print(
            assignment_table(cluster, result.assignment, title=f"{result.problem.value} optimum")
        )
    console.print(f"solved in {result.solve_seconds:.2f} s")


def cmd_score(args: argparse.Namespace) -> int:
    cluster = load_cluster(args.file)
    document = load_json(args.assignment)
    try:
        assignment = parse_assignment(cluster, document, source=args.assignment)
    except StreamsAssignError as exc:
        raise OptimalCommandError(str(exc)) from None
    metrics = score(cluster, assignment)
    if args.json:
        print(json.dumps(metrics.to_json(), indent=1))
    else:
        _print_metrics(
            cluster,
            metrics,
            Console(),
            title=f"{Path(args.assignment).name} on {Path(args.file).name}",
        )
    return 0


def _print_metrics(cluster: ClusterState, metrics: Metrics, console: Console, title: str) -> None:
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name in METRIC_NAMES:
        value = metrics.value(name)
        table.add_row(name, f"{value:.3g}" if isinstance(value, float) else str(value))
    table.add_row("active_moves", str(metrics.active_moves))
    table.add_row("standby_moves", str(metrics.standby_moves))
    console.print(table)
    for violation in metrics.violations:
        console.print(f"[red]invalid:[/] {violation}")


def cmd_compare(args: argparse.Namespace) -> int:
    _check_solver_options(args)
    if args.plot is not None:
        plot = Path(args.plot)
        if plot.suffix.lower() not in _PLOT_FORMATS:
            raise OptimalCommandError(f"--plot {plot}: use a {', '.join(_PLOT_FORMATS)} file name")
        if not (plot.parent if str(plot.parent) else Path(".")).is_dir():
            raise OptimalCommandError(f"--plot {plot}: folder {plot.parent} does not exist")
    cluster = load_cluster(args.file)
    with _spinner("comparing assignors") as status:
        comparison = compare_assignors(
            cluster,
            time_limit=args.time_limit,
            num_workers=args.workers,
            random_seed=args.seed,
            progress=lambda message: status.update(f"comparing assignors: {message}"),
        )
    if args.plot is not None:
        try:
            plot_comparison(comparison, args.plot)
        except OSError as exc:
            raise OptimalCommandError(
                f"--plot {args.plot}: cannot write: {exc.strerror or exc}"
            ) from None
        print(f"wrote {args.plot}", file=sys.stderr)
    if args.json:
        print(json.dumps(comparison.to_json(), indent=1))
        return 0
    console = Console()
    if not console.is_terminal or console.width > _WIDE:
        console = Console(width=_WIDE)  # rich wraps the cells so the table fits 100 columns
    console.print(comparison_table(comparison))
    for row in comparison.rows:
        if row.note:
            console.print(f"[yellow]{row.name}:[/] {row.note}")
    return 0
