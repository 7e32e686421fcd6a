"""``streams-assign compare FILE [--assignor NAME...] [--plot OUT.png] [--report OUT.html] ...``.

Kafka's assignors beside both optima, as one table and optionally a bar chart (needs the
``optimal`` extra: OR-Tools and matplotlib), then each assignor's whole convergence until stable
beside the target optimum's one-step cost.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from streams_assign.cli._solver import add_solver_options
from streams_assign.errors import UsageError

__all__ = ["configure", "run"]

_PLOT_FORMATS = (".png", ".svg", ".pdf")


#: Why ``compare --bootstrap-server`` refuses a streams group (KIP-1071), and what to run.
STREAMS_GROUP_HINT = (
    "compare ranks the classic assignors and their optima on a classic cluster state, which a "
    "streams group has not; its broker's next target: streams-assign assign --bootstrap-server "
    "... --application-id ..."
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``compare`` to its parser."""
    parser.add_argument("file", metavar="FILE", nargs="?", help="cluster-state JSON file")
    # Live cluster: ask the cluster, then compare (streams_assign/cli/_live.py).
    from streams_assign.cli._live import add_live_options

    add_live_options(parser)
    parser.add_argument(
        "--plot", metavar="OUT.png", help="also draw a bar chart (.png, .svg or .pdf)"
    )
    add_solver_options(parser)
    parser.add_argument(
        "--assignor",
        action="append",
        metavar="NAME",
        help="assignor to compare (repeatable; default every registered one that imports)",
    )
    parser.add_argument(
        "--restore-rate",
        type=float,
        default=10_000.0,
        metavar="R",
        help="records/s one client restores for one task, for the whole convergence "
        "(default 10000)",
    )
    parser.add_argument(
        "--max-rounds", type=int, default=50, help="rebalances at most per convergence (50)"
    )
    parser.add_argument("--report", metavar="OUT.html", help="write a self-contained HTML report")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")


def run(args: argparse.Namespace) -> int:
    """Compare and print the tables (or the JSON); write the plot and the report if asked.

    Raises
    ------
    UsageError
        For a bad input file (named), a bad output name, a time limit <= 0 seconds, fewer
        than one worker, a restore rate <= 0 records/s, fewer than one round or an unknown
        assignor; nothing is written then.
    """
    import json
    from pathlib import Path

    from streams_assign.cli._common import check_output, load_cluster, naming, write_rendered

    # Live cluster or state file (streams_assign/cli/_live.py).
    from streams_assign.cli._live import live_label, live_requested, load_live_cluster
    from streams_assign.cli._solver import check_solver_options, spinner
    from streams_assign.optimal.compare import compare_assignors
    from streams_assign.simulation.plan import chosen_assignors
    from streams_assign.simulation.probing import RestoreRates
    from streams_assign.simulation.scores import convergence_scores, optimum_one_step, scores_json

    live = live_requested(args, args.file)
    if live:
        args.file = live_label(args)
    with naming(args.file):
        check_solver_options(args)
        check_output(args.plot, "--plot", _PLOT_FORMATS)
        check_output(args.report, "--report", (".html", ".htm"))
        if not args.restore_rate > 0:
            raise UsageError(f"--restore-rate must be > 0 records/s, got {args.restore_rate:g}")
        if args.max_rounds < 1:
            raise UsageError(f"--max-rounds must be >= 1, got {args.max_rounds}")
        assignors = chosen_assignors(args.assignor)
        cluster = (
            load_live_cluster(args, streams_group_hint=STREAMS_GROUP_HINT)
            if live
            else load_cluster(args.file)
        )
        with spinner("comparing assignors") as status:
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
            from streams_assign.views.plots import comparison_figure, render

            figure = comparison_figure(comparison)
            outputs.append(("--plot", args.plot, render(figure, Path(args.plot).suffix)))
        if args.report is not None:
            from streams_assign.views.page import compare_page

            page = compare_page(comparison, scores, to_go, args.restore_rate, str(args.file))
            outputs.append(("--report", args.report, page))
        write_rendered(outputs)
        if args.json:
            document = comparison.to_json()
            document["convergence"] = scores_json(scores, optimum)
            print(json.dumps(document, indent=1))
            return 0
        from streams_assign.views.optimal_tables import print_comparison

        print_comparison(comparison, to_go, scores, optimum, args.restore_rate)
        return 0
