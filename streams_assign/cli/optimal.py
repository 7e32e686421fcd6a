"""``streams-assign optimal FILE [--problem target|immediate] [--same-rules [--no-zone-rule]]
[--time-limit S] [--json]``.

The proven optimum of one problem with CP-SAT (needs the ``optimal`` extra: OR-Tools), with
its status, objective values, proven bounds and solve time. Exit status 1 when CP-SAT finds no
assignment (INFEASIBLE or UNKNOWN; the status and explanation are still printed).
"""

from __future__ import annotations

import argparse
from typing import Any

from streams_assign.cli._solver import add_solver_options
from streams_assign.errors import StreamsAssignError, UsageError

__all__ = ["PROBLEMS", "configure", "run"]

#: ``streams_assign.optimal.model.Problem`` values (a test checks they agree).
PROBLEMS = ("target", "immediate")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``optimal`` to its parser."""
    parser.add_argument("file", metavar="FILE", help="cluster-state JSON file")
    parser.add_argument(
        "--problem",
        choices=PROBLEMS,
        default=PROBLEMS[0],
        help="target: best balanced converged assignment; immediate: best next assignment "
        "under Kafka's availability rule (default target)",
    )
    parser.add_argument(
        "--same-rules",
        action="store_true",
        help="immediate problem with the hard rules of the lag_aware_sticky assignor: converged "
        "active balance, stateless tasks to the least loaded, KIP-708 zone violations "
        "minimised first (docs/improved-assignor.md)",
    )
    parser.add_argument(
        "--no-zone-rule",
        action="store_true",
        help="with --same-rules: leave the zone rule out (the rules lag_aware_sticky keeps)",
    )
    add_solver_options(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    """Solve and print the result (or its JSON).

    Returns
    -------
    int
        0, or 1 when CP-SAT finds no assignment.

    Raises
    ------
    UsageError
        For a bad input file (named), a time limit <= 0 seconds, fewer than one worker,
        ``--same-rules`` without ``--problem immediate``, or ``--no-zone-rule`` without
        ``--same-rules``.
    """
    import json

    from rich.console import Console

    from streams_assign.cli._common import load_cluster, naming
    from streams_assign.cli._solver import check_solver_options, spinner
    from streams_assign.optimal.model import Problem
    from streams_assign.optimal.solve import solve_optimal
    from streams_assign.views.optimal_tables import print_optimum

    with naming(args.file):
        check_solver_options(args)
        cluster = load_cluster(args.file)
        problem = Problem(args.problem)
        same_rules = bool(getattr(args, "same_rules", False))
        if same_rules and problem is not Problem.IMMEDIATE:
            raise UsageError("--same-rules needs --problem immediate")
        if getattr(args, "no_zone_rule", False) and not same_rules:
            raise UsageError("--no-zone-rule needs --same-rules")
        message = f"CP-SAT: solving the {problem.value} problem (up to {args.time_limit:g} s)"
        with spinner(message):
            # The same-rules model starts best from an assignment that keeps its rules.
            hint = (
                _hint(cluster, "lag_aware_sticky" if same_rules else "high_availability")
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
            print_optimum(cluster, result, Console())
        return 0 if result.assignment is not None else 1


def _hint(cluster: Any, assignor: str = "high_availability") -> Any:
    """An assignor's output (Kafka's HA by default) as a starting point for CP-SAT (none when
    it cannot decide)."""
    from streams_assign.assignors import get_assignor

    try:
        return get_assignor(assignor).assign(cluster)
    except StreamsAssignError:
        return None
