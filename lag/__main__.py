"""``python -m lag``: the ``streams-lag`` command (also the script to give ``spark-submit``)."""

from lag.cli import run

if __name__ == "__main__":
    run()
