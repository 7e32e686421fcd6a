"""Rebalances over time: Kafka's convergence harness, as a reusable simulator.

Follows ``TaskAssignorConvergenceTest``'s harness: every stateful task has a
changelog of ``end_offset_sum`` records; after each rebalance every client reports the tasks it
held in any role as fully restored (offset sum = end offset sum, lag 0) and the others as no
local state; clients join, leave and come back with the state they had on disk. The assignor runs
until it stops asking for a probing rebalance.

Two differences from Kafka's harness, both deliberate: randomness is Python's seeded
``random.Random`` (the harness is ours, so Java's ``Random`` sequence is not needed), and racks
are not modelled (rack-aware variants are tested in the rack-aware tests).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from devtools.generators.cluster_states import process_ids
from streams_assign import (
    Assignment,
    AssignmentConfigs,
    ClientState,
    ClusterState,
    TaskId,
    assign,
    process_id_sort_key,
)
from streams_assign.errors import NotConvergedError

#: Changelog size of every stateful task in Kafka's harness, in records.
HARNESS_END_OFFSET_SUM = 150_000


@dataclass
class SimulatedClient:
    """One process of the simulated cluster and what it ran after the last rebalance."""

    id: str
    capacity: int = 1
    active: set[TaskId] = field(default_factory=set)
    standby: set[TaskId] = field(default_factory=set)


class ConvergenceHarness:
    """A simulated Kafka Streams cluster that rebalances until the assignor converges.

    Parameters
    ----------
    configs:
        Assignment configs of every rebalance.
    num_stateless, num_stateful:
        Task counts. Subtopologies are numbered from 0, stateless ones first, each taking
        ``min(remaining, partitions())`` partitions (Kafka's ``initializeCluster``).
    num_clients:
        Initial number of clients, ids ``processIdForInt(0..n-1)``, capacity 1.
    partitions:
        Partitions per subtopology: an int, or a function called once per subtopology.
    assignor:
        Name of the assignor (see ``streams_assign.ASSIGNORS``).
    end_offset_sum:
        Changelog size of every stateful task, in records.
    on_rebalance:
        Called after every rebalance with the harness (clients already holding what they were
        given) and the assignment; the soak run checks the hard rules there.

    Notes
    -----
    Source: Kafka's ``TaskAssignorConvergenceTest.Harness`` (``initializeCluster``,
    ``prepareForNextRebalance``, ``addClient``, ``dropClient``, ``dropRandomClients``,
    ``addOrResurrectClientsRandomly``).
    """

    def __init__(
        self,
        configs: AssignmentConfigs,
        num_stateless: int,
        num_stateful: int,
        num_clients: int,
        partitions: int | Callable[[], int] = 1,
        assignor: str = "high_availability",
        end_offset_sum: int = HARNESS_END_OFFSET_SUM,
        on_rebalance: Callable[[ConvergenceHarness, Assignment], None] | None = None,
    ) -> None:
        supply = partitions if callable(partitions) else (lambda: partitions)
        self.configs = configs
        self.assignor = assignor
        self.end_offset_sum = end_offset_sum
        self.on_rebalance = on_rebalance
        self.stateless_tasks: list[TaskId] = []
        self.stateful_tasks: list[TaskId] = []
        subtopology = 0
        for target, count in (
            (self.stateless_tasks, num_stateless),
            (self.stateful_tasks, num_stateful),
        ):
            remaining = count
            while remaining > 0:
                size = min(remaining, supply())
                target.extend(TaskId(subtopology, p) for p in range(size))
                remaining -= size
                subtopology += 1
        self.clients: dict[str, SimulatedClient] = {}
        self.dropped: dict[str, SimulatedClient] = {}
        self.history: list[Assignment] = []
        for _ in range(num_clients):
            self.add_client()

    # -- cluster events ----------------------------------------------------------------------
    def add_client(self) -> str:
        """Add a new client with no local state; returns its id."""
        # Kafka's processIdForInt(n): the UUID (0, n).
        (client_id,) = process_ids(1, first=len(self.clients) + len(self.dropped))
        self.clients[client_id] = SimulatedClient(client_id)
        return client_id

    def drop_client(self) -> str:
        """Drop the first client in ProcessId order (Kafka's ``dropClient``); returns its id."""
        first = min(self.clients, key=process_id_sort_key)
        self.dropped[first] = self.clients.pop(first)
        return first

    def drop_random_clients(self, count: int, rng: random.Random) -> list[str]:
        """Drop ``count`` random clients; they keep their state on disk for a comeback."""
        gone = []
        for _ in range(min(count, len(self.clients))):
            victim = rng.choice(sorted(self.clients))
            self.dropped[victim] = self.clients.pop(victim)
            gone.append(victim)
        return gone

    def add_or_resurrect_clients_randomly(self, rng: random.Random, limit: int) -> None:
        """Add up to ``limit - 1`` clients, each new or a dropped one coming back at random."""
        for _ in range(rng.randrange(max(limit, 1))):
            if self.dropped and rng.random() < 0.5:
                back = rng.choice(sorted(self.dropped))
                self.clients[back] = self.dropped.pop(back)
            else:
                self.add_client()

    # -- rebalancing -------------------------------------------------------------------------
    def cluster_state(self) -> ClusterState:
        """The next rebalance's input: every task a client holds is restored (lag 0)."""
        stateful = set(self.stateful_tasks)
        clients = []
        for client in self.clients.values():
            held = (client.active | client.standby) & stateful
            clients.append(
                ClientState(
                    id=client.id,
                    capacity=client.capacity,
                    prev_active=tuple(sorted(client.active)),
                    prev_standby=tuple(sorted(client.standby)),
                    task_lags={task: 0 for task in held},
                )
            )
        clients.sort(key=lambda c: process_id_sort_key(c.id))
        return ClusterState(
            configs=self.configs,
            stateful_tasks=tuple(sorted(self.stateful_tasks)),
            stateless_tasks=tuple(sorted(self.stateless_tasks)),
            clients=tuple(clients),
            changelog_end_offset_sums={task: self.end_offset_sum for task in self.stateful_tasks},
        )

    def rebalance(self) -> Assignment:
        """Run one rebalance and let every client adopt what it was given."""
        result = assign(self.cluster_state(), assignor=self.assignor)
        for client_id, decided in result.clients.items():
            client = self.clients[client_id]
            client.active = set(decided.active)
            client.standby = set(decided.standby)
        self.history.append(result)
        if self.on_rebalance is not None:
            self.on_rebalance(self, result)
        return result

    def converge(self, iteration_limit: int) -> int:
        """Rebalance until no probing rebalance is needed; returns the iterations used.

        Raises
        ------
        NotConvergedError
            When the assignor still asks for a probing rebalance after ``iteration_limit``
            rebalances (each call of the assignor counts, the first included).
        """
        for iteration in range(1, iteration_limit + 1):
            if not self.rebalance().probing_rebalance_needed:
                return iteration
        raise NotConvergedError(
            f"not converged after {iteration_limit} rebalances ({len(self.clients)} clients, "
            f"{len(self.stateful_tasks)} stateful tasks)"
        )

    # -- checks (Kafka's AssignmentTestUtils) ------------------------------------------------
    def validity_problems(self, max_warmups: int = 0) -> list[str]:
        """Kafka's ``assertValidAssignment``: each task on ``min(C, 1 + standbys)`` clients.

        A stateless task is on exactly one client; a task may have one more copy only while the
        warmup allowance lasts. Returns the problems found (empty when valid).
        """
        problems = []
        n = len(self.clients)
        holders: dict[TaskId, int] = {}
        actives: dict[TaskId, int] = {}
        for client in self.clients.values():
            if client.active & client.standby:
                problems.append(f"{client.id} holds {sorted(client.active & client.standby)} twice")
            for task in client.active:
                actives[task] = actives.get(task, 0) + 1
            for task in client.active | client.standby:
                holders[task] = holders.get(task, 0) + 1
        stateful = set(self.stateful_tasks)
        allowance = max_warmups
        for task in self.stateless_tasks + self.stateful_tasks:
            if actives.get(task, 0) != 1:
                problems.append(f"task {task} is active on {actives.get(task, 0)} clients")
            expected = min(n, 1 + (self.configs.num_standby_replicas if task in stateful else 0))
            got = holders.get(task, 0)
            if got == expected + 1 and allowance > 0:
                allowance -= 1
            elif got != expected:
                problems.append(f"task {task} is on {got} clients, expected {expected}")
        return problems

    def balance_problems(self, skew_threshold: int = 1) -> list[str]:
        """Kafka's balance checks: active and stateful load spreads <= 1, subtopology skew.

        Active load is actives per thread; stateful load is stateful actives plus standbys per
        thread; a subtopology's skew is max - min of its actives per client over all clients.
        """
        problems = []
        stateful = set(self.stateful_tasks)
        clients = list(self.clients.values())
        active_loads = [len(c.active) / c.capacity for c in clients]
        stateful_loads = [len((c.active | c.standby) & stateful) / c.capacity for c in clients]
        if max(active_loads) - min(active_loads) > 1:
            problems.append(f"active load spread {max(active_loads) - min(active_loads):g} > 1")
        if max(stateful_loads) - min(stateful_loads) > 1:
            problems.append(
                f"stateful load spread {max(stateful_loads) - min(stateful_loads):g} > 1"
            )
        subtopologies = {t.subtopology for t in self.stateful_tasks + self.stateless_tasks}
        for sub in sorted(subtopologies):
            counts = [sum(1 for t in c.active if t.subtopology == sub) for c in clients]
            if max(counts) - min(counts) > skew_threshold:
                problems.append(
                    f"subtopology {sub} skew {max(counts) - min(counts)} > {skew_threshold}"
                )
        return problems


def run_randomized_scenario(
    seed: int,
    assignor: str = "high_availability",
    first_iteration_limit: int = 1,
    on_rebalance: Callable[[ConvergenceHarness, Assignment], None] | None = None,
) -> int:
    """Kafka's ``runRandomizedScenario``: random cluster events, converging after each.

    The same draws in the same order as Kafka's test (with Python's seeded RNG): 1-10 clients,
    stateless and stateful task counts, ``max.warmup.replicas``, ``num.standby.replicas`` and
    1-10 events, each dropping random clients or adding / resurrecting some; after each event
    the assignor runs until it stops probing, within Kafka's limit of
    ``2 * (stateful + stateful * standbys)`` rebalances.

    Parameters
    ----------
    seed:
        The RNG seed.
    assignor:
        The assignor's name (see ``streams_assign.ASSIGNORS``).
    first_iteration_limit:
        Rebalances allowed for the fresh cluster (Kafka's test allows 1 for its HA assignor).
    on_rebalance:
        Passed to :class:`ConvergenceHarness`: called after every rebalance.

    Returns
    -------
    int
        All rebalances run, the first included.

    Raises
    ------
    NotConvergedError
        When a convergence takes more than its limit, or ends in an assignment that is not
        valid and balanced (Kafka's ``assertValidAssignment`` and balance checks); the message
        gives the seed and the events so far.
    """
    rng = random.Random(seed)
    initial_clients = rng.randrange(10) + 1
    num_stateless = rng.randrange(10) + 1
    num_stateful = rng.randrange(10) + 1
    max_warmups = rng.randrange(num_stateful) + 1
    standbys = rng.randrange(initial_clients + 1)
    events = rng.randrange(10) + 1
    harness = ConvergenceHarness(
        AssignmentConfigs(100, max_warmups, standbys, 60_000),
        num_stateless=num_stateless,
        num_stateful=num_stateful,
        num_clients=initial_clients,
        partitions=lambda: rng.randrange(10) + 1,
        assignor=assignor,
        on_rebalance=on_rebalance,
    )
    history = [
        f"seed={seed} assignor={assignor} clients={initial_clients} stateless={num_stateless} "
        f"stateful={num_stateful} warmups={max_warmups} standbys={standbys}"
    ]

    def converge(limit: int) -> int:
        rounds = harness.converge(iteration_limit=limit)
        problems = harness.validity_problems() + harness.balance_problems()
        if problems:
            raise NotConvergedError(f"{'; '.join(history)}: converged to {problems}")
        return rounds

    total = converge(first_iteration_limit)
    for _ in range(events):
        if rng.randrange(2) == 0:
            history.append(
                f"drop {harness.drop_random_clients(rng.randrange(initial_clients), rng)}"
            )
        else:
            harness.add_or_resurrect_clients_randomly(rng, initial_clients)
            history.append(f"add/resurrect -> {len(harness.clients)} clients")
        if harness.clients:
            total += converge(max(2 * (num_stateful + num_stateful * standbys), 1))
    return total


__all__ = [
    "ConvergenceHarness",
    "HARNESS_END_OFFSET_SUM",
    "SimulatedClient",
    "run_randomized_scenario",
]
