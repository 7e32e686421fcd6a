"""A JSON document read from a file, its decoding error raised as the format's own error."""

from __future__ import annotations

import json
import os
from typing import Any

from streams_assign.errors import InvalidScenarioError

__all__ = ["read_json_file"]


def read_json_file(path: str | os.PathLike[str], error: type[InvalidScenarioError]) -> Any:
    """The parsed JSON document of a file (UTF-8).

    Parameters
    ----------
    path:
        The file to read.
    error:
        The format's error class, raised with an empty JSON path when the text is not JSON.

    Returns
    -------
    Any
        The parsed document, not yet validated.

    Raises
    ------
    InvalidScenarioError
        An instance of ``error``: the text is not JSON (the decoder's message).
    OSError
        The file cannot be read.
    """
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error("", f"not JSON: {exc}") from None
