"""Registers the protocol subcommands (``group-trace``, ``protocol-simulate``) with the CLI.

Each subcommand is a module exposing ``configure(parser)`` and ``run(args)``; this registrar
only exists until the CLI's fixed table of lazily imported subcommands takes them over.
"""

from __future__ import annotations

import argparse
import importlib

SUBCOMMANDS = {
    "group-trace": (
        "streams_assign.protocol.trace_command",
        "replay classic-group request traces on Kafka's coordinator state machine",
    ),
    "protocol-simulate": (
        "streams_assign.protocol.simulate_command",
        "simulate a group's rebalances over a timeline, eager vs cooperative",
    ),
}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add each protocol subcommand to the ``streams-assign`` subparsers."""
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        parser = sub.add_parser(name, help=help_text)
        module.configure(parser)
        parser.set_defaults(handler=module.run)
