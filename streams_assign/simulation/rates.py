"""Restore rates from a ``streams-lag`` restore table (Parquet), for :class:`RestoreRates`.

The restore table (``lag.job``, ``--restore-table``; columns in ``docs/lag.md``) has one row per
(process, task) with ``restore_rate``: how fast the replica's offset sum grew over the rate
window, in records/s. Rows whose rate is missing, zero or negative (a replica that did not
restore during the window) give no measurement.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from streams_assign.errors import PlanInputError
from streams_assign.model import TaskId
from streams_assign.simulation.probing import RestoreRates

__all__ = ["RATE_COLUMNS", "read_restore_rates"]

#: The columns of the restore table that ``--rates`` reads.
RATE_COLUMNS = ("process_id", "task_id", "restore_rate")


def read_restore_rates(path: str | Path, default: float | None) -> RestoreRates:
    """Per-(process, task) restore rates from a restore table, records/s.

    Parameters
    ----------
    path:
        A Parquet file or folder written by ``streams-lag --restore-table``.
    default:
        Records/s for a pair the table does not measure; ``None`` takes the median of all the
        table's measured rates.

    Returns
    -------
    RestoreRates
        Measured rates per pair, the per-task medians, and the default.

    Raises
    ------
    PlanInputError
        When the file cannot be read as Parquet, lacks a column of :data:`RATE_COLUMNS`, has a
        bad task id, or measures no positive rate while ``default`` is ``None``; the message
        names the file, the column and the value.
    """
    import pyarrow.parquet as pq  # the 'lag' extra

    try:
        table = pq.read_table(str(path))
    except (OSError, ValueError) as exc:
        raise PlanInputError(f"--rates {path}: cannot read as Parquet: {exc}") from None
    missing = [c for c in RATE_COLUMNS if c not in table.column_names]
    if missing:
        raise PlanInputError(
            f"--rates {path}: no column {', '.join(missing)} (a streams-lag restore table has "
            f"{', '.join(RATE_COLUMNS)}; got {', '.join(table.column_names)})"
        )
    columns = table.select(list(RATE_COLUMNS)).to_pydict()
    measured: dict[tuple[str, TaskId], float] = {}
    for row, (pid, task_text, rate) in enumerate(
        zip(columns["process_id"], columns["task_id"], columns["restore_rate"], strict=True)
    ):
        if rate is None or not isinstance(rate, int | float) or not math.isfinite(rate):
            continue
        if rate <= 0:
            continue
        try:
            task = TaskId.parse(str(task_text))
        except ValueError:
            raise PlanInputError(
                f"--rates {path}: row {row}: task_id must be like 1_3, got {task_text!r}"
            ) from None
        measured[(str(pid).lower(), task)] = float(rate)
    by_task: dict[TaskId, list[float]] = {}
    for (_, task), rate in measured.items():
        by_task.setdefault(task, []).append(rate)
    per_task = {task: statistics.median(rates) for task, rates in by_task.items()}
    if default is None:
        if not measured:
            raise PlanInputError(
                f"--rates {path}: restore_rate has no positive value; give --restore-rate"
            )
        default = statistics.median(measured.values())
    return RestoreRates(default=default, measured=measured, per_task=per_task)
