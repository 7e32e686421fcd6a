"""The files ``plan`` writes: checked before any work, rendered whole, then written atomically."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from streams_assign.errors import UsageError

__all__ = ["check_output", "write_outputs", "write_rendered"]


def check_output(path: str | None, option: str, suffixes: Sequence[str]) -> None:
    """Refuse an output path before any work: wrong suffix or missing folder.

    Raises
    ------
    UsageError
        Naming the option, the path and what is wrong.
    """
    if path is None:
        return
    target = Path(path)
    if target.suffix.lower() not in suffixes:
        raise UsageError(f"{option} {path}: use a {', '.join(suffixes)} file name")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    if target.is_dir():
        raise UsageError(f"{option} {path}: is a directory")


def write_rendered(outputs: Sequence[tuple[str, str, str | bytes]]) -> None:
    """Write ``(option, path, content)`` each whole (see :func:`formats.atomic.write_atomic`).

    Raises
    ------
    UsageError
        When a file cannot be written, naming the option and the path.
    """
    import sys

    from streams_assign.formats.atomic import write_atomic

    for option, path, content in outputs:
        try:
            write_atomic(path, content)
        except OSError as exc:
            raise UsageError(f"{option} {path}: cannot write: {exc.strerror or exc}") from None
        print(f"wrote {path}", file=sys.stderr)


def write_outputs(
    plan: Any, state: str | None = None, plot: str | None = None, report: str | None = None
) -> None:
    """Render the plan's next state, plot and report, then write them.

    Parameters
    ----------
    plan:
        A :class:`~streams_assign.planning.plan.Plan`.
    state, plot, report:
        Output paths, or ``None``.
    """
    outputs: list[tuple[str, str, str | bytes]] = []
    if state is not None:
        from streams_assign.formats.atomic import dumps_json
        from streams_assign.formats.cluster_state import cluster_state_to_json

        outputs.append(("--write-state", state, dumps_json(cluster_state_to_json(plan.after))))
    if plot is not None:
        from streams_assign.planning.plots import plan_figure, render

        outputs.append(("--plot", plot, render(plan_figure(plan), Path(plot).suffix)))
    if report is not None:
        from streams_assign.planning.page import plan_page

        outputs.append(("--report", report, plan_page(plan)))
    write_rendered(outputs)
