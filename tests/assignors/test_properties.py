"""Invariants of the HA assignor on random cluster states (hypothesis).

Every task active exactly once; never active and standby on one client; each stateful task has
``min(num_standby_replicas, clients - 1)`` standbys plus, over the whole assignment, at most
``max_warmup_replicas`` extra copies (Kafka's ``assertValidAssignment``); warmups are standbys;
the output does not depend on the order of the input lists; and the fast data structures give
exactly the answers of the Kafka-literal ones.
"""

from __future__ import annotations

import logging
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams_assign.assignors.high_availability import HighAvailabilityTaskAssignor
from streams_assign.formats.cluster_state import parse_cluster_state
from streams_assign.model import ClusterState
from tests.strategies import cluster_documents
from tests.tiers import examples

logging.getLogger("streams_assign").setLevel(logging.ERROR)

SETTINGS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def holders(assignment: Any, task: Any) -> int:
    return sum(task in c.active or task in c.standby for c in assignment.clients.values())


@SETTINGS
@given(cluster_documents())
def test_every_task_is_active_exactly_once(document: dict[str, Any]) -> None:
    cluster = parse_cluster_state(document)
    result = HighAvailabilityTaskAssignor().assign(cluster)
    for task in cluster.all_tasks:
        assert sum(task in c.active for c in result.clients.values()) == 1


@SETTINGS
@given(cluster_documents())
def test_standby_never_on_same_client_as_active(document: dict[str, Any]) -> None:
    result = HighAvailabilityTaskAssignor().assign(parse_cluster_state(document))
    for client in result.clients.values():
        assert not set(client.active) & set(client.standby)
        assert set(client.warmup) <= set(client.standby)


@SETTINGS
@given(cluster_documents())
def test_standby_count_is_configured_replicas_plus_at_most_max_warmups(
    document: dict[str, Any],
) -> None:
    cluster = parse_cluster_state(document)
    result = HighAvailabilityTaskAssignor().assign(cluster)
    wanted = min(cluster.configs.num_standby_replicas, len(cluster.clients) - 1)
    extra = 0
    for task in cluster.stateful_tasks:
        copies = holders(result, task) - 1
        # A task can get one warmup from the active pass and one from the standby pass.
        assert copies >= wanted, (task, copies, wanted)
        extra += copies - wanted
    for task in cluster.stateless_tasks:
        assert holders(result, task) == 1
    assert extra <= cluster.configs.max_warmup_replicas
    warmups = sum(len(c.warmup) for c in result.clients.values())
    assert warmups <= cluster.configs.max_warmup_replicas


@SETTINGS
@given(cluster_documents(), st.randoms(use_true_random=False))
def test_same_input_in_any_order_gives_the_same_output(
    document: dict[str, Any], rng: random.Random
) -> None:
    first = HighAvailabilityTaskAssignor().assign(parse_cluster_state(document)).to_json()
    shuffled = dict(document)
    shuffled["clients"] = rng.sample(document["clients"], len(document["clients"]))
    shuffled["stateful_tasks"] = rng.sample(
        document["stateful_tasks"], len(document["stateful_tasks"])
    )
    shuffled["stateless_tasks"] = rng.sample(
        document["stateless_tasks"], len(document["stateless_tasks"])
    )
    again = HighAvailabilityTaskAssignor().assign(parse_cluster_state(shuffled)).to_json()
    assert again == first


@SETTINGS
@given(cluster_documents())
def test_fast_structures_give_kafka_literal_answers(document: dict[str, Any]) -> None:
    cluster: ClusterState = parse_cluster_state(document)
    fast = HighAvailabilityTaskAssignor().assign(cluster)
    literal = HighAvailabilityTaskAssignor(literal=True).assign(cluster)
    assert fast == literal
