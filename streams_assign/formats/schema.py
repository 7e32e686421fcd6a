"""The JSON Schema of the cluster-state format: the shipped file and the models it comes from.

The schema ships as ``streams_assign/data/cluster-state.schema.json``; :func:`load_schema` reads
it without pydantic. :func:`cluster_state_schema` generates it from pydantic models of the
document (the ``schema`` extra); a test checks the shipped file is current. Regenerate it with
``python -m streams_assign.formats.schema`` after changing the format.

Editors and CI can validate a state file against the schema before running anything. The
validation that counts stays :func:`streams_assign.formats.cluster_state.parse_cluster_state`,
which also checks the cross-field rules the schema cannot express (lags of known tasks only,
consumers matching capacity, Kafka's ranges). The task-id pattern and Java's ``Long.MAX_VALUE``
come from :mod:`streams_assign.model`, the process-id pattern from the format's parser.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from streams_assign.formats.atomic import dumps_json, write_atomic
from streams_assign.formats.cluster_state import KAFKA_CONFIG_NAMES
from streams_assign.formats.cluster_state_clients import PROCESS_ID_RE
from streams_assign.model import LONG_MAX_VALUE, TASK_ID_RE

__all__ = ["SCHEMA_FILE", "cluster_state_schema", "load_schema"]

#: The shipped schema's file name inside ``streams_assign/data``.
SCHEMA_FILE = "cluster-state.schema.json"

#: The model's task-id pattern without Python's group names, anchored as JSON Schema wants it.
_TASK = "^" + re.sub(r"\(\?P<\w+>", "(", TASK_ID_RE.pattern) + "$"
_UUID = f"^{PROCESS_ID_RE.pattern}$"


def load_schema() -> dict[str, Any]:
    """The shipped JSON Schema of the cluster-state document (no pydantic needed)."""
    text = resources.files("streams_assign").joinpath("data", SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _document_models() -> dict[str, Any]:
    """The pydantic models of the cluster-state document, by class name.

    Built on first use, so that :func:`load_schema` works without pydantic (the ``schema``
    extra).
    """
    from pydantic import BaseModel, ConfigDict, Field

    class _Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")

    class ConfigsDocument(_Strict):
        """``configs``: Kafka Streams' assignment configs, dots written as underscores."""

        acceptable_recovery_lag: int = Field(
            10_000,
            ge=0,
            le=LONG_MAX_VALUE,
            description="acceptable.recovery.lag in records; 9223372036854775807 = unbounded",
        )
        max_warmup_replicas: int = Field(
            2, ge=1, le=2**31 - 1, description="max.warmup.replicas per rebalance"
        )
        num_standby_replicas: int = Field(0, ge=0, le=2**31 - 1, description="num.standby.replicas")
        probing_rebalance_interval_ms: int = Field(
            600_000, ge=60_000, le=LONG_MAX_VALUE, description="probing.rebalance.interval.ms"
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

    return {
        "ClientDocument": ClientDocument,
        "ClusterStateDocument": ClusterStateDocument,
        "ConfigsDocument": ConfigsDocument,
        "ConsumerDocument": ConsumerDocument,
    }


def cluster_state_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the cluster-state document.

    Kafka's dotted config names (``num.standby.replicas``) are listed as aliases of ours, as
    :data:`~streams_assign.formats.cluster_state.KAFKA_CONFIG_NAMES` accepts them; task ids in
    lists follow ``<subtopology>_<partition>``.
    """
    schema = _document_models()["ClusterStateDocument"].model_json_schema()
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


if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "data" / SCHEMA_FILE
    write_atomic(target, dumps_json(cluster_state_schema()))
    print(f"wrote {target}")
