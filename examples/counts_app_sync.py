"""The counts app of ``counts_app.py`` on kafka-python 3.x: the same function, one thread per
group member (``SyncStreamsApp``). ``--assignor roundrobin`` runs kafka-python's own
``RoundRobinPartitionAssignor`` (the baseline); ``--cooperative`` the cooperative protocol.
"""

from __future__ import annotations

import sys
from typing import Any

from counts_app import config, count, setup, topology

from streams_assign.clients.runtime import SyncStreamsApp


def kafka_python_assignor(name: str) -> Any:
    if name == "roundrobin":
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        return RoundRobinPartitionAssignor
    if name == "sticky":
        from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

        return StickyPartitionAssignor
    return None


def main(argv: list[str] | None = None) -> int:
    args = setup(argv)
    app = SyncStreamsApp(config(args, kafka_python_assignor(args.assignor)), topology(args), count)
    try:
        app.run()
    except KeyboardInterrupt:
        return 0
    return 1  # a member thread died


if __name__ == "__main__":
    sys.exit(main())
