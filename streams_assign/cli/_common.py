"""Helpers shared by the subcommands: reading inputs with the file name in every message, and
writing outputs whole after checking their names before any work."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streams_assign.errors import StreamsAssignError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from streams_assign.model import ClusterState

__all__ = [
    "TABLE_WIDTH",
    "check_output",
    "console",
    "load_cluster",
    "load_input",
    "load_json",
    "naming",
    "output_dir",
    "write_rendered",
]

#: The widest a printed table gets, in columns (rich wraps cells to fit).
TABLE_WIDTH = 100


def load_cluster(path: str | Path) -> ClusterState:
    """Read and validate a cluster-state file for a subcommand.

    Parameters
    ----------
    path:
        The cluster-state file (JSON, or YAML when PyYAML is installed).

    Returns
    -------
    ClusterState

    Raises
    ------
    UsageError
        When the file cannot be read or breaks the format; the message starts with the file
        name, then the JSON path and the value.
    """
    from streams_assign.formats.cluster_state import load_cluster_state

    try:
        return load_cluster_state(path)
    except StreamsAssignError as exc:
        raise UsageError(f"{path}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None


def load_input(path: str | Path) -> Any:
    """Read either input of ``assign``: a cluster state, or a streams-group state (KIP-1071).

    The two are told apart by their fields (``members`` and ``topology`` make a streams-group
    state; see :func:`streams_assign.formats.document.load_document`).

    Raises
    ------
    UsageError
        When the file cannot be read or breaks its format, naming the file, the JSON path and
        the value.
    """
    from streams_assign.formats.document import load_document

    try:
        return load_document(path)
    except StreamsAssignError as exc:
        raise UsageError(f"{path}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None


def load_json(path: str | Path) -> Any:
    """Read a JSON document for a subcommand.

    Raises
    ------
    UsageError
        When the file cannot be read or is not JSON, naming the file, line and column.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path}: malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None


def output_dir(path: str | Path, option: str = "--output-dir") -> Path:
    """The output folder of a batch run, created (with its parents) when missing.

    Raises
    ------
    UsageError
        When the path exists and is not a folder, or cannot be created.
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{option} {folder}: not a directory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option} {folder}: cannot create: {exc.strerror or exc}") from None
    return folder


@contextmanager
def naming(path: str | Path, *others: str | Path) -> Iterator[None]:
    """Prefix the file name to any error the block raises that names no input file yet.

    Parameters
    ----------
    path:
        The input the block works on (prefixed).
    others:
        Further inputs whose name, when an error starts with it, is prefix enough.

    Raises
    ------
    UsageError
        For a :class:`StreamsAssignError` raised inside (an assignor or solver refusing the
        state), as ``<path>: <message>``.
    """
    try:
        yield
    except StreamsAssignError as exc:
        if any(str(exc).startswith(f"{p}:") for p in (path, *others)):
            raise
        raise UsageError(f"{path}: {exc}") from None


def console() -> Console:
    """A rich console for stdout at most :data:`TABLE_WIDTH` columns wide."""
    from rich.console import Console

    out = Console()
    return out if out.width <= TABLE_WIDTH else Console(width=TABLE_WIDTH)


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
    """Write ``(option, path, content)``, each whole (see ``formats.atomic.write_atomic``).

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
