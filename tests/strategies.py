"""Shared hypothesis strategies that build cluster-state documents piece by piece.

Every choice (client count, capacities, which tasks are stateful, who held what, each lag, the
configs) is its own draw, so hypothesis shrinks a failing document to a small one instead of
to a smaller random seed. Import as ``tests.strategies`` (pytest puts the checkout on the path).
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import strategies as st

from streams_assign.model import LONG_MAX_VALUE

#: Lags a client may report for a stateful task: running active, unknown, caught up or behind.
LAGS = st.one_of(
    st.just(-2),
    st.just(-3),
    st.integers(min_value=0, max_value=100),
    st.integers(min_value=0, max_value=20_000),
)


@st.composite
def cluster_documents(
    draw: st.DrawFn, max_clients: int = 10, max_tasks: int = 24
) -> dict[str, Any]:
    """A cluster-state document in the format of ``docs/scenario-format.md``.

    Uneven capacities, stateful and stateless tasks over up to 4 subtopologies, previous
    actives and standbys with lags around ``acceptable.recovery.lag``, unknown lags (-3),
    small warmup budgets and 0-3 standby replicas.
    """
    num_clients = draw(st.integers(min_value=1, max_value=max_clients))
    raw_ids = draw(
        st.lists(
            st.integers(min_value=0, max_value=2**128 - 1),
            min_size=num_clients,
            max_size=num_clients,
            unique=True,
        )
    )
    ids = [str(uuid.UUID(int=n)) for n in raw_ids]
    subtopologies = draw(st.integers(min_value=1, max_value=4))
    per_subtopology = max(1, max_tasks // subtopologies)
    tasks = [
        f"{s}_{p}"
        for s in range(subtopologies)
        for p in range(draw(st.integers(min_value=1, max_value=per_subtopology)))
    ]
    stateful_flags = draw(st.lists(st.booleans(), min_size=len(tasks), max_size=len(tasks)))
    stateful = [t for t, flag in zip(tasks, stateful_flags, strict=True) if flag]
    stateless = [t for t, flag in zip(tasks, stateful_flags, strict=True) if not flag]
    clients: list[dict[str, Any]] = [
        {
            "id": pid,
            "capacity": draw(st.sampled_from([1, 2, 3, 4, 8])),
            "prev_active": [],
            "prev_standby": [],
            "task_lags": {},
        }
        for pid in ids
    ]
    for task in stateful:
        holders = draw(st.lists(st.sampled_from(range(num_clients)), unique=True))
        for rank, client in enumerate(holders):
            lag = draw(LAGS)
            entry = clients[client]
            if rank == 0 and lag == -2:
                entry["prev_active"].append(task)
            else:
                entry["prev_standby"].append(task)
                lag = 0 if lag == -2 else lag
            entry["task_lags"][task] = lag
    for task in stateless:
        owner = draw(st.none() | st.sampled_from(range(num_clients)))
        if owner is not None:
            clients[owner]["prev_active"].append(task)
    return {
        "configs": {
            "acceptable_recovery_lag": draw(
                st.sampled_from([0, 100, 1000, 10_000, LONG_MAX_VALUE])
            ),
            "max_warmup_replicas": draw(st.sampled_from([1, 2, 3, 100])),
            "num_standby_replicas": draw(st.integers(min_value=0, max_value=3)),
            "probing_rebalance_interval_ms": 600_000,
        },
        "stateful_tasks": stateful,
        "stateless_tasks": stateless,
        "clients": clients,
    }
