"""The leader's decision and the members' protocol state, without a broker."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from streams_assign.clients.codec import (
    LATEST_SUPPORTED_VERSION,
    NO_PROBING,
    decode_assignment,
)
from streams_assign.clients.core import (
    MemberState,
    MemberSubscription,
    StreamsProcess,
    StreamsSettings,
    decide,
)
from streams_assign.clients.topology import Topology, partitions_by_endpoint
from streams_assign.model import Subtopology, TaskId

TOPOLOGY = Topology(
    (
        Subtopology(0, ("orders", "payments"), ("app-totals-changelog",)),
        Subtopology(1, ("clicks",)),
    )
)
PARTITIONS = 12
COUNTS = {"orders": PARTITIONS, "payments": PARTITIONS, "clicks": 4}
END = 1_000
NOW = 1_000_000


class Group:
    """Processes with consumers and a local state per process, rebalanced by the first one."""

    def __init__(self, settings: StreamsSettings, end_offsets: object = "default") -> None:
        self.settings = settings
        self.end_offsets = (
            (lambda parts: {p: END for p in parts}) if end_offsets == "default" else end_offsets
        )
        self.members: dict[str, MemberState] = {}
        self.state: dict[str, dict[TaskId, int]] = {}  # process id -> task -> offset sum

    def add_process(self, consumers: int = 2, endpoint: str | None = None) -> StreamsProcess:
        pid = str(uuid.UUID(int=len(self.state) + 1))
        self.state[pid] = {}
        process = StreamsProcess(
            TOPOLOGY,
            self.settings,
            process_id=pid,
            offset_sums=lambda: dict(self.state[pid]),
            end_offsets=self.end_offsets,  # type: ignore[arg-type]
            endpoint=endpoint,
            clock_ms=lambda: NOW,
        )
        for i in range(consumers):
            self.members[f"{pid[-4:]}-c{i}"] = MemberState(process)
        return process

    def kill(self, process_id: str) -> None:
        self.members = {m: s for m, s in self.members.items() if s.process.process_id != process_id}

    def rebalance(self, standby_lag: int = 5) -> dict[str, object]:
        leader = next(iter(self.members.values())).process
        subs = [
            MemberSubscription(m, list(TOPOLOGY.source_topics), s.subscription_user_data())
            for m, s in self.members.items()
        ]
        decision = decide(leader, subs, COUNTS)
        for member_id, assignment in decision.items():
            state = self.members[member_id]
            state.on_assignment(assignment.user_data)
            local = self.state[state.process.process_id]
            for task in assignment.info.active:
                if task.subtopology == 0:
                    local[task] = END
            for task in (*assignment.info.standby, *assignment.info.warmup):
                local[task] = END - standby_lag
        return dict(decision)

    def owner(self, task: TaskId) -> str:
        owners = [
            s.process.process_id for s in self.members.values() if task in s.assignment.active
        ]
        assert len(owners) == 1, (task, owners)
        return owners[0]


def _actives_by_process(group: Group) -> Mapping[str, list[TaskId]]:
    result: dict[str, list[TaskId]] = {}
    for state in group.members.values():
        result.setdefault(state.process.process_id, []).extend(state.assignment.active)
    return result


def test_every_task_is_active_on_exactly_one_member_and_standbys_avoid_its_process() -> None:
    group = Group(StreamsSettings(num_standby_replicas=1))
    for _ in range(3):
        group.add_process()
    group.rebalance()
    all_tasks = [TaskId(0, p) for p in range(PARTITIONS)] + [TaskId(1, p) for p in range(4)]
    actives = sorted(t for s in group.members.values() for t in s.assignment.active)
    assert actives == sorted(all_tasks)
    for state in group.members.values():
        for task in state.assignment.standby:
            assert task.subtopology == 0  # only stateful tasks get standbys
            assert group.owner(task) != state.process.process_id
    standbys = sorted(t for s in group.members.values() for t in s.assignment.standby)
    assert standbys == [TaskId(0, p) for p in range(PARTITIONS)]
    loads = [len(tasks) for tasks in _actives_by_process(group).values()]
    assert max(loads) - min(loads) <= 1
    member_loads = [len(s.assignment.active) for s in group.members.values()]
    assert max(member_loads) - min(member_loads) <= 1


def test_member_partitions_are_the_source_partitions_of_its_actives() -> None:
    group = Group(StreamsSettings())
    group.add_process()
    decision = group.rebalance()
    for member_id, assignment in decision.items():
        active = group.members[member_id].assignment.active
        expected = sorted(p for t in active for p in TOPOLOGY.source_partitions(t))
        got = sorted((topic, p) for topic, parts in assignment.partitions for p in parts)  # type: ignore[attr-defined]
        assert got == expected


def test_killed_process_tasks_move_to_its_caught_up_standbys() -> None:
    group = Group(StreamsSettings(num_standby_replicas=1, acceptable_recovery_lag=10))
    processes = [group.add_process() for _ in range(3)]
    group.rebalance()
    group.rebalance()  # standbys now report offset sums END - 5
    victim = processes[2].process_id
    lost = [t for t in _actives_by_process(group)[victim] if t.subtopology == 0]
    standby_of = {
        t: s.process.process_id
        for s in group.members.values()
        for t in s.assignment.standby
        if s.process.process_id != victim
    }
    group.kill(victim)
    decision = group.rebalance()
    for task in lost:
        assert group.owner(task) == standby_of[task]
    assert all(a.info.warmup == () for a in decision.values())  # type: ignore[attr-defined]


def test_failed_end_offset_fetch_runs_kafkas_fallback_assignor() -> None:
    group = Group(StreamsSettings(num_standby_replicas=1), end_offsets=lambda parts: None)
    processes = [group.add_process() for _ in range(2)]
    group.rebalance()
    decision = processes[0].last_decision
    assert decision is not None and decision.assignor == "fallback_prior"
    assert decision.probing_rebalance_needed


def test_new_process_gets_warmups_and_a_probing_rebalance_is_scheduled() -> None:
    settings = StreamsSettings(
        num_standby_replicas=1,
        acceptable_recovery_lag=10,
        max_warmup_replicas=2,
        probing_rebalance_interval_ms=2_000,
    )
    group = Group(settings)
    for _ in range(3):
        group.add_process()
    group.rebalance()
    group.rebalance()
    newcomer = group.add_process()
    decision = group.rebalance(standby_lag=END)  # warmups start from nothing
    warmups = [
        t for s in group.members.values() if s.process is newcomer for t in s.assignment.warmup
    ]
    assert 1 <= len(warmups) <= settings.max_warmup_replicas
    for assignment in decision.values():
        assert assignment.info.next_probing_ms == NOW + 2_000  # type: ignore[attr-defined]
    member = next(iter(group.members.values()))
    assert not member.rejoin_due(NOW + 1_999)
    assert member.rejoin_due(NOW + 2_000)
    member.rejoin_started()
    assert not member.rejoin_due(NOW + 10_000)


def test_probing_rebalances_converge_to_balance_with_every_task_active() -> None:
    settings = StreamsSettings(
        num_standby_replicas=1, acceptable_recovery_lag=10, probing_rebalance_interval_ms=1
    )
    group = Group(settings)
    for _ in range(3):
        group.add_process()
    group.rebalance()
    group.rebalance()
    group.add_process()
    for _ in range(20):
        decision = group.rebalance(standby_lag=0)
        actives = sorted(t for s in group.members.values() for t in s.assignment.active)
        assert len(actives) == len(set(actives)) == PARTITIONS + 4
        if all(a.info.next_probing_ms == NO_PROBING for a in decision.values()):  # type: ignore[attr-defined]
            break
    else:
        raise AssertionError("no convergence within 20 probing rebalances")
    loads = [len(tasks) for tasks in _actives_by_process(group).values()]
    assert len(loads) == 4 and max(loads) - min(loads) <= 1


def test_an_older_member_makes_the_leader_encode_for_the_lowest_version() -> None:
    group = Group(StreamsSettings(num_standby_replicas=1, acceptable_recovery_lag=10))
    group.add_process()
    group.add_process()
    old = next(iter(group.members.values()))
    old.used_version = 1
    decision = group.rebalance()
    for assignment in decision.values():
        info = decode_assignment(assignment.user_data)  # type: ignore[attr-defined]
        assert (info.version, info.latest_supported_version) == (1, LATEST_SUPPORTED_VERSION)
    assert all(s.used_version == LATEST_SUPPORTED_VERSION for s in group.members.values())
    assert old.rejoin_requested  # the old member upgrades at its next join


def test_a_future_version_member_is_answered_at_the_leaders_version() -> None:
    process = StreamsProcess(TOPOLOGY, end_offsets=lambda parts: {p: END for p in parts})
    member = MemberState(process)
    future = bytes([LATEST_SUPPORTED_VERSION + 1] * 2) + uuid.uuid4().bytes + b"\x00new"
    decision = decide(
        process,
        [
            MemberSubscription("now", TOPOLOGY.source_topics, member.subscription_user_data()),
            MemberSubscription("future", TOPOLOGY.source_topics, future),
        ],
        COUNTS,
    )
    info = decode_assignment(decision["future"].user_data)
    assert (info.version, info.latest_supported_version) == (LATEST_SUPPORTED_VERSION,) * 2
    assert info.active  # the future member still works, as a process without state


def test_endpoint_map_points_each_source_partition_at_its_active_process() -> None:
    group = Group(StreamsSettings())
    group.add_process(endpoint="127.0.0.1:7001")
    group.add_process(endpoint="127.0.0.1:7002")
    group.rebalance()
    endpoint_of = {s.process.process_id: s.process.endpoint for s in group.members.values()}
    some = next(iter(group.members.values()))
    mapping = partitions_by_endpoint(TOPOLOGY, some.assignment.endpoints)
    assert len(mapping) == 2 * PARTITIONS + 4
    for (topic, partition), endpoint in mapping.items():
        task = TOPOLOGY.task_of((topic, partition))
        assert task is not None and endpoint_of[group.owner(task)] == endpoint


def _cooperative_round(
    leader: StreamsProcess, members: Mapping[str, MemberState]
) -> dict[str, object]:
    subs = []
    for member_id, state in members.items():
        owned = tuple(p for t in state.assignment.active for p in TOPOLOGY.source_partitions(t))
        subs.append(
            MemberSubscription(
                member_id, TOPOLOGY.source_topics, state.subscription_user_data(), None, owned
            )
        )
    decision = decide(leader, subs, COUNTS)
    for member_id, assignment in decision.items():
        members[member_id].on_assignment(assignment.user_data)
    return dict(decision)


def test_cooperative_withholds_tasks_still_owned_elsewhere_until_released() -> None:
    group = Group(StreamsSettings(num_standby_replicas=0))
    first = group.add_process(consumers=1)
    _cooperative_round(first, group.members)
    second = group.add_process(consumers=1)
    decision = _cooperative_round(first, group.members)
    newcomer = next(s for s in group.members.values() if s.process is second)
    newcomer_id = next(m for m, s in group.members.items() if s is newcomer)
    # Every task is still owned by the first process's member: the newcomer gets nothing yet
    # and is told to rejoin at once (Kafka's nextRebalanceMs = 0).
    assert newcomer.assignment.active == ()
    assert decision[newcomer_id].info.next_probing_ms == 0  # type: ignore[attr-defined]
    assert newcomer.rejoin_due(0)
    actives_round_2 = sorted(t for s in group.members.values() for t in s.assignment.active)
    assert len(actives_round_2) < PARTITIONS + 4  # the moving tasks were withheld
    _cooperative_round(first, group.members)  # the old owner released them
    actives = sorted(t for s in group.members.values() for t in s.assignment.active)
    assert actives == sorted(
        [TaskId(0, p) for p in range(PARTITIONS)] + [TaskId(1, p) for p in range(4)]
    )
    assert newcomer.assignment.active


def test_client_tags_put_standbys_in_another_zone() -> None:
    group = Group(StreamsSettings(num_standby_replicas=1, rack_aware_assignment_tags=("zone",)))
    zones = ["eu-1a", "eu-1a", "eu-1b", "eu-1b"]
    for zone in zones:
        group.add_process().client_tags = {"zone": zone}
    group.rebalance()
    members = list(group.members.values())
    zone_of = {s.process.process_id: s.process.client_tags["zone"] for s in members}
    standbys = [(t, s.process.process_id) for s in members for t in s.assignment.standby]
    assert len(standbys) == PARTITIONS
    for task, process in standbys:
        assert zone_of[process] != zone_of[group.owner(task)]


def test_the_leader_runs_the_assignor_named_in_the_settings() -> None:
    group = Group(StreamsSettings(assignor="sticky"))
    leader = group.add_process()
    group.add_process()
    group.rebalance()
    assert leader.last_decision is not None and leader.last_decision.assignor == "sticky"
