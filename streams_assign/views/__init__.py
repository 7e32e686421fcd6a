"""Every printed table, figure and HTML page of ``streams-assign``; only this package and
:mod:`streams_assign.cli` import rich, matplotlib or Jinja2.

- :mod:`~streams_assign.views.tables`: rich tables of an assignment (per client, per member of a
  streams group) and of ``protocols``, ``lags``, ``simulate``, ``consumer-assign``,
  ``connect-replay`` and ``protocol-simulate``.
- :mod:`~streams_assign.views.convergence_tables`: rich tables of whole convergences (``plan``,
  and beside the optimum for ``compare``).
- :mod:`~streams_assign.views.optimal_tables`: rich tables of ``optimal``, ``score`` and
  ``compare``.
- :mod:`~streams_assign.views.plots`: matplotlib figures and their file content.
- :mod:`~streams_assign.views.page`: self-contained HTML reports (Jinja2).

Each function takes the library's results and returns or prints a view; none reads or writes a
file (the subcommands in :mod:`streams_assign.cli` do).
"""

__all__: list[str] = []
