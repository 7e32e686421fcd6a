"""``python -m streams_assign.cli``: the ``streams-assign`` command."""

from __future__ import annotations

from streams_assign.cli import run

__all__: list[str] = []

if __name__ == "__main__":
    run()
