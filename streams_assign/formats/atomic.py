"""Whole-or-nothing file output.

Every file streams-assign writes goes through :func:`write_atomic`: the content is written to a
temporary file in the destination's folder, flushed, and renamed over the destination, so a reader
(or a crash) never sees half a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all.

    Parameters
    ----------
    path:
        Destination file; its parent folder must exist.
    data:
        Text (written as UTF-8) or bytes.

    Raises
    ------
    OSError
        When the folder is not writable; the destination is then left as it was.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        # mkstemp creates the file 0600; give it the mode a plain open() would (0666 & ~umask).
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def dumps_json(document: Any) -> str:
    """Serialise a JSON document the way streams-assign writes all its files (indent 1, newline)."""
    return json.dumps(document, indent=1, sort_keys=False) + "\n"


def write_json_atomic(path: str | os.PathLike[str], document: Any) -> None:
    """Write a JSON document whole or not at all (see :func:`write_atomic`)."""
    write_atomic(path, dumps_json(document))


__all__ = [
    "dumps_json",
    "write_atomic",
    "write_json_atomic",
]
