"""A one-line-per-stage progress report on stderr for long Spark runs."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


class Stages:
    """Print ``streams-lag [i/n] <stage> ... <seconds> s`` lines as the job's stages finish.

    Spark is lazy, so a stage is the span of an action (a count, a collect, a write): the line
    tells where a long run spends its time.

    Parameters
    ----------
    total:
        Number of stages announced, for the ``[i/n]`` counter.
    stream:
        Where to print (stderr by default); None prints nothing.
    """

    def __init__(self, total: int, stream: TextIO | None = sys.stderr) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time one stage and print its line when it ends (also when it fails)."""
        self.done += 1
        label = f"streams-lag [{self.done}/{max(self.total, self.done)}] {name}"
        if self.stream is not None:
            print(f"{label} ...", file=self.stream, flush=True)
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            self.timings[name] = elapsed
            if self.stream is not None:
                print(f"{label} done in {elapsed:.1f} s", file=self.stream, flush=True)
