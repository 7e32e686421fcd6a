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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from streams_assign.api import get_assignor
from streams_assign.commands._common import load_cluster, load_json
from streams_assign.errors import StreamsAssignError, UsageError
from streams_assign.model import Assignment, ClusterState
from streams_assign.optimal.compare import (
    compare_assignors,
    comparison_figure,
    comparison_table,
)
from streams_assign.optimal.metrics import METRIC_NAMES, Metrics, parse_assignment, score
from streams_assign.optimal.model import Problem
from streams_assign.optimal.solve import (
    OptimalResult,
    json_number,
    solve_optimal,
)
from streams_assign.planning.convergence import RestoreRates
from streams_assign.planning.scores import (
    convergence_scores,
    convergence_vs_optimum_table,
    optimum_one_step,
    scores_json,
)
from streams_assign.report import assignment_table

__all__ = ["cmd_compare", "cmd_optimal", "cmd_score"]

_PLOT_FORMATS = (".png", ".svg", ".pdf")
_WIDE = 100


def _check_solver_options(args: argparse.Namespace) -> None:
    if not args.time_limit > 0:
        raise UsageError(f"--time-limit must be > 0 seconds, got {args.time_limit:g}")
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")


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
    same_rules = bool(getattr(args, "same_rules", False))
    if same_rules and problem is not Problem.IMMEDIATE:
        raise UsageError("--same-rules needs --problem immediate")
    if getattr(args, "no_zone_rule", False) and not same_rules:
        raise UsageError("--no-zone-rule needs --same-rules")
    with _spinner(f"CP-SAT: solving the {problem.value} problem (up to {args.time_limit:g} s)"):
        # The same-rules model starts best from an assignment that keeps its rules.
        hint = (
            _kafka_hint(cluster, "lag_aware_sticky" if same_rules else "high_availability")
            if problem is Problem.IMMEDIATE
            else None
        )
        result = solve_optimal(
            cluster,
            problem,
            time_limit=args.time_limit,
            num_workers=args.workers,
            random_seed=args.seed,
            hint=hint,
            same_rules=same_rules,
            zone_rule=not getattr(args, "no_zone_rule", False),
        )
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        _print_optimal(cluster, result, Console())
    return 0 if result.assignment is not None else 1


def _kafka_hint(cluster: ClusterState, assignor: str = "high_availability") -> Assignment | None:
    """An assignor's output (Kafka's HA by default) as a starting point for CP-SAT (none when
    it cannot decide)."""
    try:
        return get_assignor(assignor).assign(cluster)
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
        raise UsageError(str(exc)) from None
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
    from streams_assign.planning.output import check_output, write_rendered
    from streams_assign.planning.plan import chosen_assignors

    check_output(args.plot, "--plot", _PLOT_FORMATS)
    check_output(args.report, "--report", (".html", ".htm"))
    if not args.restore_rate > 0:
        raise UsageError(
            f"--restore-rate must be > 0 records/s, got {args.restore_rate:g}"
        )
    if args.max_rounds < 1:
        raise UsageError(f"--max-rounds must be >= 1, got {args.max_rounds}")
    assignors = chosen_assignors(args.assignor)
    cluster = load_cluster(args.file)
    with _spinner("comparing assignors") as status:
        comparison = compare_assignors(
            cluster,
            time_limit=args.time_limit,
            num_workers=args.workers,
            random_seed=args.seed,
            progress=lambda message: status.update(f"comparing assignors: {message}"),
        )
        comparison = replace(
            comparison,
            rows=tuple(
                row
                for row in comparison.rows
                if row.name.startswith("optimal_") or row.name in assignors
            ),
        )
        status.update("comparing assignors: whole convergences")
        scores = convergence_scores(
            cluster, assignors, RestoreRates(args.restore_rate), max_rounds=args.max_rounds
        )
    to_go = {name: c.probing_rebalances for name, c in scores.items() if c.converged}
    optimum = optimum_one_step(comparison)
    outputs: list[tuple[str, str, str | bytes]] = []
    if args.plot is not None:
        from streams_assign.planning.plots import render

        outputs.append(
            ("--plot", args.plot, render(comparison_figure(comparison), Path(args.plot).suffix))
        )
    if args.report is not None:
        outputs.append(("--report", args.report, _compare_page(args, comparison, scores, to_go)))
    write_rendered(outputs)
    if args.json:
        document = comparison.to_json()
        document["convergence"] = scores_json(scores, optimum)
        print(json.dumps(document, indent=1))
        return 0
    console = Console()
    if not console.is_terminal or console.width > _WIDE:
        console = Console(width=_WIDE)  # rich wraps the cells so the table fits 100 columns
    console.print(comparison_table(comparison, probing_to_go=to_go))
    for row in comparison.rows:
        if row.note:
            console.print(f"[yellow]{row.name}:[/] {row.note}")
    console.print(
        convergence_vs_optimum_table(
            scores,
            optimum,
            title=f"until stable (restore {args.restore_rate:g} records/s per task)",
        )
    )
    return 0


def _compare_page(
    args: argparse.Namespace, comparison: Any, scores: Any, to_go: dict[str, int]
) -> str:
    """The HTML report of ``compare --report``: both tables, the bar charts, the convergence."""
    from streams_assign.optimal.compare import COLUMNS, _gap_cell, _short, _target_gap_cell
    from streams_assign.planning.page import PageTable, convergence_tables, render_page
    from streams_assign.planning.plots import convergence_figure

    rows = []
    for row in comparison.rows:
        cells = (
            [_short(getattr(row.metrics, name)) for name, _ in COLUMNS]
            if row.metrics is not None
            else ["-"] * len(COLUMNS)
        )
        rows.append(
            (
                row.name,
                row.status,
                *cells,
                _gap_cell(comparison.gap(row, Problem.IMMEDIATE)).replace("\n", ", "),
                _target_gap_cell(comparison.gap(row, Problem.TARGET), to_go.get(row.name)).replace(
                    "\n", " "
                ),
            )
        )
    first = PageTable(
        "Next rebalance: assignors vs the optimum",
        ("assignor", "status", *(h for _, h in COLUMNS), "gap to immediate", "gap to target"),
        rows,
    )
    tables = [first, *convergence_tables(list(scores.values()))]
    figures = [("Assignors vs the optimum (next rebalance)", comparison_figure(comparison))]
    if scores:
        figures.append(("Whole convergence", convergence_figure(list(scores.values()))))
    name = comparison.cluster.name or str(args.file)
    summary = [
        f"{len(comparison.cluster.clients)} clients; restore rate {args.restore_rate:g} "
        "records/s per task; probing rebalances every "
        f"{comparison.cluster.configs.probing_rebalance_interval_ms} ms."
    ]
    return render_page(f"How far from optimal is {name}?", summary, tables, figures)
