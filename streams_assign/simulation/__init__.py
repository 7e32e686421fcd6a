"""Rebalances over time: cluster generators and a convergence simulator.

The simulator follows Kafka's ``TaskAssignorConvergenceTest`` harness: after each
rebalance every client reports the tasks it held as caught up, clients join, leave and come back,
and the assignor runs until no probing rebalance is needed.
"""

__all__: list[str] = []
