"""What the job writes and shows: :mod:`lag.outputs.tables` (lag, restore and errors tables in
Parquet, CSV or JSON Lines) and :mod:`lag.outputs.progress` (the stage lines on stderr)."""
