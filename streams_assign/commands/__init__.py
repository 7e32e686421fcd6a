"""The subcommands of ``streams-assign``, one module each.

Every module exposes ``configure(parser)``, which adds its arguments and imports nothing heavy,
and ``run(args) -> int``, which imports what it needs, does the work and returns the exit status
(raising a :class:`~streams_assign.errors.StreamsAssignError` for bad input). ``cli.COMMANDS``
lists them; only the chosen one is imported, so ``streams-assign --help`` and the base install
(no extras) stay fast and working.
"""

__all__: list[str] = []
