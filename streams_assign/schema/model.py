"""The cluster-state format as pydantic models, from which the JSON Schema is generated.

These models describe the document (``../shared/scenario-format.md``, ``docs/formats.md``); the
validation that counts stays :func:`streams_assign.scenario.parse_cluster_state` (cross-field
rules such as lags of known tasks only, consumers matching capacity, Kafka's ranges). Regenerate
the shipped schema with ``python -m streams_assign.schema`` after changing the format.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ClientDocument", "ClusterStateDocument", "ConfigsDocument", "ConsumerDocument"]

_TASK = r"^(?:(?:(?!__).)+__)?[0-9]+_[0-9]+$"
_UUID = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
_LONG_MAX = 9_223_372_036_854_775_807

TaskIdText = Field(pattern=_TASK)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConfigsDocument(_Strict):
    """``configs``: Kafka Streams' assignment configs, dots written as underscores."""

    acceptable_recovery_lag: int = Field(
        10_000,
        ge=0,
        le=_LONG_MAX,
        description="acceptable.recovery.lag in records; 9223372036854775807 = unbounded",
    )
    max_warmup_replicas: int = Field(
        2, ge=1, le=2**31 - 1, description="max.warmup.replicas per rebalance"
    )
    num_standby_replicas: int = Field(0, ge=0, le=2**31 - 1, description="num.standby.replicas")
    probing_rebalance_interval_ms: int = Field(
        600_000, ge=60_000, le=_LONG_MAX, description="probing.rebalance.interval.ms"
    )
    rack_aware_assignment_tags: list[str] = Field(
        default_factory=list, max_length=5, description="rack.aware.assignment.tags (KIP-708)"
    )
    rack_aware_assignment_strategy: str = Field(
        "none",
        pattern="^(none|min_traffic|balance_subtopology)$",
        description="rack.aware.assignment.strategy (KIP-925)",
    )
    rack_aware_assignment_traffic_cost: int | None = Field(
        None, ge=-(2**31), le=2**31 - 1, description="rack.aware.assignment.traffic_cost"
    )
    rack_aware_assignment_non_overlap_cost: int | None = Field(
        None, ge=-(2**31), le=2**31 - 1, description="rack.aware.assignment.non_overlap_cost"
    )


class ConsumerDocument(_Strict):
    """``clients[].consumers[]``: one stream thread (group member) of the client."""

    member_id: str = Field(description="the group member id")
    prev_active: list[str] = Field(default_factory=list, description="task ids, e.g. 1_3")
    prev_standby: list[str] = Field(default_factory=list, description="task ids, e.g. 1_3")
    owned_partitions: list[tuple[str, int]] = Field(
        default_factory=list, description="[topic, partition] pairs (cooperative)"
    )
    rack: str | None = Field(None, description="client.rack of the consumer")


class ClientDocument(_Strict):
    """``clients[]``: one Kafka Streams process."""

    id: str = Field(pattern=_UUID, description="process id (UUID)")
    capacity: int = Field(ge=1, description="stream threads")
    prev_active: list[str] = Field(default_factory=list, description="task ids, e.g. 1_3")
    prev_standby: list[str] = Field(default_factory=list, description="task ids, e.g. 1_3")
    task_lags: dict[str, int] = Field(
        default_factory=dict,
        description="lag in records per stateful task with local state; -2 = running active, "
        "-3 = unknown offset sum",
    )
    task_offset_sums: dict[str, int] | None = Field(
        None, description="offset sums as Kafka reports them (instead of task_lags)"
    )
    tags: dict[str, str] = Field(default_factory=dict, description="client.tag.* values")
    consumers: list[ConsumerDocument] | None = Field(None, description="the stream threads")
    rack: str | None = Field(None, description="client.rack (KIP-925)")


class ClusterStateDocument(_Strict):
    """What the group leader knows at a rebalance (the input of streams-assign)."""

    name: str | None = None
    description: str | None = None
    # mypy runs without pydantic's plugin, so it does not see the fields' defaults.
    configs: ConfigsDocument = Field(default_factory=lambda: ConfigsDocument())  # type: ignore[call-arg]
    stateful_tasks: list[str] = Field(default_factory=list, description="task ids, e.g. 0_1")
    stateless_tasks: list[str] = Field(default_factory=list, description="task ids, e.g. 2_0")
    clients: list[ClientDocument] = Field(min_length=1)
    changelog_end_offset_sums: dict[str, int] | None = Field(
        None, description="per stateful task, its changelog end offset sum in records"
    )
    leader: Any = Field(None, description="the leader's consumer (docs/zones-and-threads.md)")
    task_partitions: Any = Field(None, description="docs/rack-aware.md")
    task_changelog_partitions: Any = Field(None, description="docs/rack-aware.md")
    partition_racks: Any = Field(None, description="docs/rack-aware.md")
    client_racks: Any = Field(None, description="docs/rack-aware.md")
    now_ms: Any = Field(None, description="docs/zones-and-threads.md")


def cluster_state_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the cluster-state document.

    Kafka's dotted config names (``num.standby.replicas``) are listed as aliases of ours, as
    :data:`streams_assign.scenario.KAFKA_CONFIG_NAMES` accepts them; task ids in lists follow
    ``<subtopology>_<partition>``.
    """
    from streams_assign.scenario import KAFKA_CONFIG_NAMES

    schema = ClusterStateDocument.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://streams-assign/cluster-state.schema.json"
    configs = schema["$defs"]["ConfigsDocument"]["properties"]
    for dotted, ours in KAFKA_CONFIG_NAMES.items():
        configs[dotted] = {**configs[ours], "description": f"Kafka's name of {ours}"}
    for model in ("ClusterStateDocument", "ClientDocument", "ConsumerDocument"):
        target = schema if model == "ClusterStateDocument" else schema["$defs"][model]
        for key in ("prev_active", "prev_standby", "stateful_tasks", "stateless_tasks"):
            if key in target["properties"]:
                target["properties"][key]["items"] = {"type": "string", "pattern": _TASK}
    return schema
