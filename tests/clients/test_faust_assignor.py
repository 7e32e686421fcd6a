"""The faust assignor's decisions, with faust's own assignor beside it (no broker).

Each worker is a real ``faust.App`` (not started) with a table over a 4-partition topic; the
leader's ``_perform_assignment`` and the members' ``metadata`` / ``on_assignment`` run as
aiokafka calls them during a rebalance.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import faust
import pytest
from aiokafka.coordinator.protocol import ConsumerProtocolMemberMetadata
from faust.assignor import PartitionAssignor

from streams_assign.clients.faust import LagAwareStickyPartitionAssignor, StreamsPartitionAssignor
from streams_assign.clients.faust.metadata import decode_assignment_extension
from streams_assign.clients.faust.store_offsets import store_changelog_offsets

PARTITIONS = 4
SOURCE = "orders"
CHANGELOG = "shop-counts-changelog"
TOPICS = {SOURCE, CHANGELOG}


class Cluster:
    """The leader's cluster metadata: what ``partitions_for_topic`` answers."""

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(PARTITIONS)) if topic in TOPICS else set()


class Workers:
    """faust apps of one group, by name; every store opened is closed at teardown."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.apps: dict[str, Any] = {}

    def add(self, name: str, assignor: Any, store: str = "memory://", replicas: int = 1) -> Any:
        app = faust.App(
            "shop",
            broker="kafka://127.0.0.1:1",
            datadir=str(self.root / name),
            store=store,
            web_port=6000 + len(self.apps),
            web_host=name,
            table_standby_replicas=replicas,
            PartitionAssignor=assignor,
        )
        app.topic(SOURCE, partitions=PARTITIONS)
        app.Table("counts", default=int, partitions=PARTITIONS)
        self.apps[name] = app
        return app

    def end_offsets(self, ends: dict[int, int]) -> Any:
        return lambda tps: {(t, p): ends.get(p, 0) for t, p in tps}


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    yield Workers(tmp_path)


def rebalance(
    workers: Workers, leader: str, members: list[str], metadata: dict[str, bytes] | None = None
) -> dict[str, Any]:
    """One round: every member's metadata to the leader, each answer to its member."""
    sent = {
        name: workers.apps[name].assignor.metadata(TOPICS)
        for name in members
        if name in workers.apps
    }
    for name, data in (metadata or {}).items():
        sent[name] = ConsumerProtocolMemberMetadata(4, sorted(TOPICS), data)
    answers = workers.apps[leader].assignor._perform_assignment(Cluster(), sent)
    for name, answer in answers.items():
        if name in workers.apps:
            workers.apps[name].assignor.on_assignment(answer)
    return answers


def actives(workers: Workers, name: str) -> list[int]:
    return sorted(workers.apps[name].assignor._assignment.actives.get(SOURCE, []))


def standbys(workers: Workers, name: str) -> list[int]:
    return sorted(workers.apps[name].assignor._assignment.standbys.get(CHANGELOG, []))


def test_every_partition_is_active_once_and_its_standby_elsewhere(workers: Workers) -> None:
    for name in ("w1", "w2", "w3"):
        workers.add(name, StreamsPartitionAssignor).assignor.end_offsets = workers.end_offsets({})
    rebalance(workers, "w1", ["w1", "w2", "w3"])
    owners = {p: n for n in workers.apps for p in actives(workers, n)}
    assert sorted(owners) == list(range(PARTITIONS))
    held = [(p, n) for n in workers.apps for p in standbys(workers, n)]
    assert sorted(p for p, _ in held) == list(range(PARTITIONS))
    assert all(owners[p] != n for p, n in held)


def test_the_changelog_partition_follows_its_active_in_the_protocol_assignment(
    workers: Workers,
) -> None:
    for name in ("w1", "w2"):
        workers.add(name, StreamsPartitionAssignor).assignor.end_offsets = workers.end_offsets({})
    answers = rebalance(workers, "w1", ["w1", "w2"])
    for name, answer in answers.items():
        protocol = dict(answer.assignment)
        assert protocol[SOURCE] == actives(workers, name)
        assert sorted(protocol[CHANGELOG]) == sorted(
            actives(workers, name) + standbys(workers, name)
        )


def test_a_lost_worker_s_tasks_go_to_the_holders_of_their_standbys(workers: Workers) -> None:
    # Changelogs of 1000 records and an acceptable lag of 10, so that only a store at the end of
    # its changelog is caught up: the holder of the standby is then the one caught-up client,
    # whatever order the random process ids sort in (with empty changelogs every client would be
    # caught up and the task would go to the least loaded one).
    ends = {p: 1000 for p in range(PARTITIONS)}
    for name in ("w1", "w2", "w3"):
        workers.add(name, StreamsPartitionAssignor.with_settings(acceptable_recovery_lag=10))
        workers.apps[name].assignor.end_offsets = workers.end_offsets(ends)
    rebalance(workers, "w1", ["w1", "w2", "w3"])
    lost = actives(workers, "w3")
    holders = {p: n for n in ("w1", "w2") for p in standbys(workers, n)}
    assert lost
    for name in ("w1", "w2"):
        # Each survivor's standby stores are at the end of their changelogs.
        assignor = workers.apps[name].assignor
        _report_offsets(assignor, {(CHANGELOG, p): 1000 for p in standbys(workers, name)})
    rebalance(workers, "w1", ["w1", "w2"])
    for p in lost:
        assert p in actives(workers, holders[p])


def test_a_new_worker_gets_warmups_and_a_probing_deadline(workers: Workers) -> None:
    ends = {p: 1000 for p in range(PARTITIONS)}
    for name in ("w1", "w2"):
        workers.add(name, StreamsPartitionAssignor.with_settings(acceptable_recovery_lag=10))
        workers.apps[name].assignor.end_offsets = workers.end_offsets(ends)
    rebalance(workers, "w1", ["w1", "w2"])
    workers.add("w3", StreamsPartitionAssignor)
    answers = rebalance(workers, "w1", ["w1", "w2", "w3"])
    extension = decode_assignment_extension(answers["w3"].user_data)
    assert extension is not None and extension.warmups
    assert actives(workers, "w3") == []  # nothing it would have to restore moves yet
    assert set(extension.warmups[CHANGELOG]) <= set(standbys(workers, "w3"))
    assert extension.probing_deadline_ms > 0 and extension.acceptable_recovery_lag == 10
    assert workers.apps["w1"].assignor.last_decision.probing_rebalance_needed


def test_caught_up_offsets_let_the_new_worker_take_its_share(workers: Workers) -> None:
    ends = {p: 1000 for p in range(PARTITIONS)}
    for name in ("w1", "w2"):
        workers.add(name, StreamsPartitionAssignor.with_settings(acceptable_recovery_lag=10))
        workers.apps[name].assignor.end_offsets = workers.end_offsets(ends)
    rebalance(workers, "w1", ["w1", "w2"])
    workers.add("w3", StreamsPartitionAssignor)
    answers = rebalance(workers, "w1", ["w1", "w2", "w3"])
    warm = decode_assignment_extension(answers["w3"].user_data)
    assert warm is not None
    # w3 reports its warmups' stores at the end of their changelogs.
    caught_up = {(CHANGELOG, p): 1000 for p in warm.warmups[CHANGELOG]}
    w3 = workers.apps["w3"].assignor
    w3.metadata = lambda topics: _with_offsets(w3, topics, caught_up)
    rebalance(workers, "w1", ["w1", "w2", "w3"])
    assert actives(workers, "w3") and set(actives(workers, "w3")) <= set(warm.warmups[CHANGELOG])


def _report_offsets(assignor: Any, offsets: dict[tuple[str, int], int]) -> None:
    """Make the member's next metadata report ``offsets`` as its stores' positions."""
    assignor.metadata = lambda topics: _with_offsets(assignor, topics, offsets)


def _with_offsets(assignor: Any, topics: Any, offsets: dict[tuple[str, int], int]) -> Any:
    from streams_assign.clients.faust.metadata import encode_member_metadata

    data = encode_member_metadata(assignor._metadata.dumps(), assignor.process_id, offsets)
    return ConsumerProtocolMemberMetadata(4, list(topics), data)


def test_lag_aware_sticky_is_run_on_request(workers: Workers) -> None:
    for name in ("w1", "w2"):
        workers.add(
            name, LagAwareStickyPartitionAssignor
        ).assignor.end_offsets = workers.end_offsets({})
    rebalance(workers, "w1", ["w1", "w2"])
    decision = workers.apps["w1"].assignor.last_decision
    assert decision.assignment.assignor == "lag_aware_sticky"
    assert sorted(actives(workers, "w1") + actives(workers, "w2")) == list(range(PARTITIONS))


def test_a_worker_on_fausts_own_assignor_is_served_by_our_leader(workers: Workers) -> None:
    """Rolling upgrade, new leader: the old worker's metadata has no extension; faust's own
    ``on_assignment`` (which asserts the protocol assignment and its URL) accepts the answer,
    and its running actives stay where they are."""
    workers.add("new", StreamsPartitionAssignor).assignor.end_offsets = workers.end_offsets({})
    workers.add("old", PartitionAssignor)
    rebalance(workers, "new", ["new", "old"])
    before = actives(workers, "old")
    assert before and sorted(before + actives(workers, "new")) == list(range(PARTITIONS))
    rebalance(workers, "new", ["new", "old"])
    assert actives(workers, "old") == before


def test_fausts_own_leader_serves_our_workers(workers: Workers) -> None:
    """Rolling upgrade, old leader: it reads our metadata, ignores the extension, and our
    workers accept its answer (no warmups, no probing)."""
    workers.add("old", PartitionAssignor)
    workers.add("new", StreamsPartitionAssignor)
    rebalance(workers, "old", ["old", "new"])
    assert sorted(actives(workers, "old") + actives(workers, "new")) == list(range(PARTITIONS))
    assert workers.apps["new"].assignor.extension is None


def test_undecodable_metadata_never_crashes_the_leader(workers: Workers) -> None:
    for name in ("w1", "w2"):
        workers.add(name, StreamsPartitionAssignor).assignor.end_offsets = workers.end_offsets({})
    answers = rebalance(workers, "w1", ["w1", "w2"], metadata={"intruder": b"\xff\x00not json"})
    assert answers["intruder"].assignment == []
    assert sorted(actives(workers, "w1") + actives(workers, "w2")) == list(range(PARTITIONS))


def test_a_failed_end_offset_fetch_runs_the_fallback_assignor(workers: Workers) -> None:
    def broken(tps: Any) -> None:
        raise OSError("broker down")

    for name in ("w1", "w2"):
        workers.add(name, StreamsPartitionAssignor).assignor.end_offsets = broken
    rebalance(workers, "w1", ["w1", "w2"])
    decision = workers.apps["w1"].assignor.last_decision
    assert decision.assignment.assignor == "fallback_prior"
    assert sorted(actives(workers, "w1") + actives(workers, "w2")) == list(range(PARTITIONS))


def test_rocksdb_offsets_are_read_from_open_and_closed_stores(workers: Workers) -> None:
    app = workers.add("w1", StreamsPartitionAssignor, store="rocksdb://")
    table = app.tables["counts"]
    store = table.data
    store.set_persisted_offset(faust.types.TP(CHANGELOG, 1), 41)
    store.set_persisted_offset(faust.types.TP(CHANGELOG, 3), 6)
    closed = store._dbs.pop(3)
    closed.close()
    assert store_changelog_offsets(app.tables.values()) == {(CHANGELOG, 1): 42, (CHANGELOG, 3): 7}
    store._dbs.pop(1).close()


def test_the_in_memory_store_reports_no_offsets(workers: Workers) -> None:
    app = workers.add("w1", StreamsPartitionAssignor)
    assert store_changelog_offsets(app.tables.values()) == {}


def test_the_process_id_survives_a_restart_on_the_same_state(workers: Workers) -> None:
    first = workers.add("w1", StreamsPartitionAssignor).assignor.process_id
    workers.apps.pop("w1")
    assert workers.add("w1", StreamsPartitionAssignor).assignor.process_id == first


def test_a_leader_missing_a_subscribed_topic_refreshes_its_metadata(workers: Workers) -> None:
    """aiokafka reassigns when the leader's metadata changes; the leader asks for it at once."""
    import asyncio

    class Client:
        def __init__(self) -> None:
            self.refreshes = 0
            self.cluster = self

        async def force_metadata_update(self) -> bool:
            self.refreshes += 1
            return True

        def partitions_for_topic(self, topic: str) -> set[int] | None:
            return {0} if self.refreshes >= 2 else None

    client = Client()
    app = workers.add("w1", StreamsPartitionAssignor)
    app.assignor.end_offsets = workers.end_offsets({})
    consumer = type("Consumer", (), {"_client": client})()
    thread = type("Thread", (), {"_ensure_consumer": lambda self: consumer})()
    app.consumer._thread = thread
    missing = type("Cluster", (), {"partitions_for_topic": lambda self, t: set()})()
    metadata = {"w1": app.assignor.metadata(TOPICS)}

    async def rebalance_and_wait() -> None:
        app.assignor._perform_assignment(missing, metadata)
        await asyncio.wait_for(app.assignor._refresh, 10)

    asyncio.run(rebalance_and_wait())
    assert client.refreshes == 2
