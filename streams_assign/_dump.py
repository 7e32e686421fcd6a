"""The cluster-state document of a ``ClusterState`` (``scenario.cluster_state_to_json``)."""

from __future__ import annotations

from typing import Any

from streams_assign.model import ClusterState

__all__ = ["cluster_state_to_json"]


def cluster_state_to_json(state: ClusterState) -> dict[str, Any]:
    """The cluster-state document of a :class:`ClusterState` (inverse of parsing)."""
    document: dict[str, Any] = {}
    if state.name is not None:
        document["name"] = state.name
    if state.description is not None:
        document["description"] = state.description
    cfg = state.configs
    configs: dict[str, Any] = {
        "acceptable_recovery_lag": cfg.acceptable_recovery_lag,
        "max_warmup_replicas": cfg.max_warmup_replicas,
        "num_standby_replicas": cfg.num_standby_replicas,
        "probing_rebalance_interval_ms": cfg.probing_rebalance_interval_ms,
    }
    if cfg.rack_aware_assignment_tags:
        configs["rack_aware_assignment_tags"] = list(cfg.rack_aware_assignment_tags)
    if cfg.rack_aware_assignment_strategy != "none":
        configs["rack_aware_assignment_strategy"] = cfg.rack_aware_assignment_strategy
    for key in ("rack_aware_assignment_traffic_cost", "rack_aware_assignment_non_overlap_cost"):
        if getattr(cfg, key) is not None:
            configs[key] = getattr(cfg, key)
    document["configs"] = configs
    document["stateful_tasks"] = [str(t) for t in state.stateful_tasks]
    document["stateless_tasks"] = [str(t) for t in state.stateless_tasks]
    if state.changelog_end_offset_sums is not None:
        document["changelog_end_offset_sums"] = {
            str(t): v for t, v in state.changelog_end_offset_sums.items()
        }
    clients = []
    for client in state.clients:
        entry: dict[str, Any] = {
            "id": client.id,
            "capacity": client.capacity,
            "prev_active": [str(t) for t in client.prev_active],
            "prev_standby": [str(t) for t in client.prev_standby],
        }
        if client.task_offset_sums is not None:
            entry["task_offset_sums"] = {str(t): v for t, v in client.task_offset_sums.items()}
        else:
            entry["task_lags"] = {str(t): v for t, v in client.task_lags.items()}
        if client.tags:
            entry["tags"] = dict(client.tags)
        if client.rack is not None:
            entry["rack"] = client.rack
        if client.consumers is not None:
            entry["consumers"] = [
                {
                    "member_id": c.member_id,
                    "prev_active": [str(t) for t in c.prev_active],
                    "prev_standby": [str(t) for t in c.prev_standby],
                    **(
                        {"owned_partitions": [list(p) for p in c.owned_partitions]}
                        if c.owned_partitions
                        else {}
                    ),
                    **({"rack": c.rack} if c.rack is not None else {}),
                }
                for c in client.consumers
            ]
        clients.append(entry)
    document["clients"] = clients
    document.update(state.extensions)
    return document
