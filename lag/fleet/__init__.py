"""Synthetic fleets for tests and benchmarks (``streams-lag generate``).

- :mod:`lag.fleet.spec`: what to draw and the drawn fleet (:func:`~lag.fleet.spec.build_fleet`);
- :mod:`lag.fleet.generate`: the fleet written in the real input formats;
- :mod:`lag.fleet.history`: offset and end-offset histories as Parquet rows.
"""
