"""Score any assignment of a cluster state on the metrics the optimum is measured by.

:func:`score` puts Kafka's HA assignment, the other assignors and the CP-SAT optima side by side:
validity, load spreads, subtopology skew, unavailable actives, restore records, moves, warmups
and missing standbys. :func:`parse_assignment` reads an assignment in the output format of
``docs/scenario-format.md`` against a cluster state, naming the JSON path of anything unknown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from streams_assign.errors import InvalidAssignmentError, InvalidTaskIdError
from streams_assign.model import Assignment, ClientAssignment, ClusterState, TaskId
from streams_assign.optimal.costs import PlacementCosts

#: Metric names in the order tables and plots show them.
METRIC_NAMES = (
    "valid",
    "active_load_spread",
    "stateful_load_spread",
    "subtopology_skew",
    "unavailable_actives",
    "restore_records",
    "moves",
    "warmups",
    "standbys_missing",
)


@dataclass(frozen=True, slots=True)
class Metrics:
    """The scores of one assignment of one cluster state.

    Attributes
    ----------
    valid:
        No entry in ``violations``.
    violations:
        Each broken validity rule, one sentence naming the task or client.
    active_load_spread:
        ``max - min`` over clients of actives (stateless included) per stream thread (tasks per
        thread; Kafka's ``assertBalancedActiveAssignment`` wants <= 1).
    stateful_load_spread:
        ``max - min`` over clients of (stateful actives + standbys, warmups included) per thread
        (Kafka's ``assertBalancedStatefulAssignment`` wants <= 1).
    subtopology_skew:
        The largest, over subtopologies, of ``max - min`` of that subtopology's active tasks per
        client, over all clients (zero counts included), in tasks (Kafka's
        ``analyzeTaskAssignmentBalance``).
    unavailable_actives:
        Stateful actives on a client that is not caught up for them (tasks).
    restore_records:
        Records to restore, summed over every active and standby (warmups included) placed on a
        client that is not caught up, each costing that client's lag (see
        :class:`~streams_assign.optimal.costs.PlacementCosts`).
    active_moves, standby_moves, moves:
        Actives (stateless included) not on a client that ran the task as active before;
        standbys (warmups included) not on a client that held the task before in either role;
        and their sum (tasks). Tasks that nobody held before do not count.
    warmups:
        Standbys beyond ``min(num.standby.replicas, clients - 1)``, summed over tasks (tasks).
    standbys_missing:
        Per stateful task, ``min(num.standby.replicas, clients - 1)`` minus its standbys that are
        not labelled warmups, floored at 0, summed (tasks).
    subtopology_skews:
        Per subtopology (``"<sub>"`` or ``"<name>__<sub>"``), its skew.
    """

    valid: bool
    violations: tuple[str, ...]
    active_load_spread: Fraction
    stateful_load_spread: Fraction
    subtopology_skew: int
    unavailable_actives: int
    restore_records: int
    active_moves: int
    standby_moves: int
    warmups: int
    standbys_missing: int
    subtopology_skews: Mapping[str, int] = field(default_factory=dict)

    @property
    def moves(self) -> int:
        """Active and standby moves together (tasks)."""
        return self.active_moves + self.standby_moves

    def value(self, name: str) -> int | float | bool:
        """One metric by name, as a plain number (spreads as floats)."""
        raw = getattr(self, name)
        return float(raw) if isinstance(raw, Fraction) else raw

    def to_json(self) -> dict[str, Any]:
        """The metrics as a JSON object (spreads as floats, rounded to 6 decimals)."""
        return {
            "valid": self.valid,
            "violations": list(self.violations),
            "active_load_spread": round(float(self.active_load_spread), 6),
            "stateful_load_spread": round(float(self.stateful_load_spread), 6),
            "subtopology_skew": self.subtopology_skew,
            "unavailable_actives": self.unavailable_actives,
            "restore_records": self.restore_records,
            "moves": self.moves,
            "active_moves": self.active_moves,
            "standby_moves": self.standby_moves,
            "warmups": self.warmups,
            "standbys_missing": self.standbys_missing,
            "subtopology_skews": dict(self.subtopology_skews),
        }


def score(
    cluster: ClusterState, assignment: Assignment, costs: PlacementCosts | None = None
) -> Metrics:
    """Score an assignment of a cluster state.

    Parameters
    ----------
    cluster:
        The validated rebalance input.
    assignment:
        Any assignment of it: Kafka's, another assignor's, an optimum, or a parsed file. Clients
        it does not mention run nothing; tasks it mentions must be tasks of ``cluster`` (see
        :func:`parse_assignment`).
    costs:
        The cluster's cost table, when the caller already built it.

    Returns
    -------
    Metrics

    Raises
    ------
    InvalidAssignmentError
        When the assignment names a client or task the cluster does not have.

    Notes
    -----
    Validity follows Kafka's ``AssignmentTestUtils.assertValidAssignment``: every
    task is active on exactly one client; standbys are only of stateful tasks and never on the
    client running the task as active; each task is held by at least ``min(clients, 1 +
    standbys)`` clients (stateless: exactly 1). Kafka's check allows one extra copy per task
    while a ``max.warmup.replicas`` budget lasts; Kafka's own HA assignor can give one task two
    warmups (one from an active movement, one from a standby movement, ``TaskMovement``), so
    here the budget bounds the extra copies over all tasks instead. The spreads follow
    ``assertBalancedActiveAssignment`` / ``assertBalancedStatefulAssignment``, the skew
    ``analyzeTaskAssignmentBalance``.

    References
    ----------
    KIP-441, "Smooth Scaling Out for Kafka Streams" (warmups, caught-up clients, probing).

    Examples
    --------
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
    >>> from streams_assign.assignors import assign
    >>> cluster = parse_cluster_state({"stateful_tasks": ["0_0", "0_1"], "clients": [
    ...     {"id": "00000000-0000-0000-0000-000000000001", "capacity": 1,
    ...      "task_lags": {"0_0": -2, "0_1": 50000}},
    ...     {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1}]})
    >>> metrics = score(cluster, assign(cluster))

    Kafka runs 0_1 on the first client (lag 50000, the most caught up) and warms it up on the
    second, which has no state and costs the stand-in, the largest known lag (50000):

    >>> metrics.valid, metrics.unavailable_actives, metrics.warmups, metrics.restore_records
    (True, 1, 1, 100000)
    """
    costs = costs or PlacementCosts.of(cluster)
    index = {task: t for t, task in enumerate(costs.tasks)}
    client_index = {pid: c for c, pid in enumerate(costs.client_ids)}
    n_clients = costs.num_clients
    active: list[list[int]] = [[] for _ in range(n_clients)]
    standby: list[list[int]] = [[] for _ in range(n_clients)]
    warmup: list[set[int]] = [set() for _ in range(n_clients)]
    for pid, decided in assignment.clients.items():
        c = client_index.get(pid)
        if c is None:
            raise InvalidAssignmentError(
                f"clients.{pid}", "unknown client (not in the cluster state)"
            )
        for role, target, tasks in (
            ("active", active[c], decided.active),
            ("standby", standby[c], decided.standby),
        ):
            for i, task in enumerate(tasks):
                t = index.get(task)
                if t is None:
                    raise InvalidAssignmentError(
                        f"clients.{pid}.{role}[{i}]", f"unknown task {task}"
                    )
                target.append(t)
        for task in decided.warmup:
            if task in index:
                warmup[c].add(index[task])

    violations: list[str] = []
    _check_validity(cluster, costs, active, standby, violations)
    warmups, missing = _standby_counts(costs, standby, warmup)
    unavailable = 0
    restore = 0
    active_moves = 0
    standby_moves = 0
    for c in range(n_clients):
        for t in active[c]:
            active_moves += costs.active_move(c, t)
            restore += costs.restore[c][t]
            if costs.stateful[t] and not costs.caught_up[c][t]:
                unavailable += 1
        for t in standby[c]:
            standby_moves += costs.standby_move(c, t)
            restore += costs.restore[c][t]
    active_loads = [Fraction(len(active[c]), costs.capacities[c]) for c in range(n_clients)]
    stateful_loads = [
        Fraction(
            sum(1 for t in active[c] if costs.stateful[t]) + len(standby[c]), costs.capacities[c]
        )
        for c in range(n_clients)
    ]
    skews = _subtopology_skews(costs, active)
    return Metrics(
        valid=not violations,
        violations=tuple(violations),
        active_load_spread=max(active_loads) - min(active_loads),
        stateful_load_spread=max(stateful_loads) - min(stateful_loads),
        subtopology_skew=max(skews.values(), default=0),
        unavailable_actives=unavailable,
        restore_records=restore,
        active_moves=active_moves,
        standby_moves=standby_moves,
        warmups=warmups,
        standbys_missing=missing,
        subtopology_skews=skews,
    )


def _check_validity(
    cluster: ClusterState,
    costs: PlacementCosts,
    active: list[list[int]],
    standby: list[list[int]],
    violations: list[str],
) -> None:
    """Kafka's ``assertValidAssignment`` rules, each breach appended as a sentence."""
    tasks, ids = costs.tasks, costs.client_ids
    active_on: list[list[int]] = [[] for _ in tasks]
    holders: list[set[int]] = [set() for _ in tasks]
    for c in range(costs.num_clients):
        seen_active = Counter(active[c])
        seen_standby = Counter(standby[c])
        for t, n in sorted((seen_active + seen_standby).items()):
            if n > 1:
                violations.append(f"client {ids[c]} holds task {tasks[t]} {n} times")
        for t in sorted(seen_active):
            active_on[t].append(c)
            holders[t].add(c)
        for t in sorted(seen_standby):
            holders[t].add(c)
            if not costs.stateful[t]:
                violations.append(f"client {ids[c]} has a standby of stateless task {tasks[t]}")
    for t, clients in enumerate(active_on):
        if not clients:
            violations.append(f"task {tasks[t]} is not active on any client")
        elif len(clients) > 1:
            names = ", ".join(ids[c] for c in clients)
            violations.append(f"task {tasks[t]} is active on {len(clients)} clients: {names}")
    extra = 0
    for t, held in enumerate(holders):
        expected = min(
            costs.num_clients,
            1 + (cluster.configs.num_standby_replicas if costs.stateful[t] else 0),
        )
        if len(held) < expected or (len(held) > expected and not costs.stateful[t]):
            violations.append(
                f"task {tasks[t]} is held by {len(held)} clients, expected {expected}"
            )
        else:
            extra += len(held) - expected
    budget = cluster.configs.max_warmup_replicas
    if extra > budget:
        violations.append(f"{extra} extra copies (warmups) exceed max.warmup.replicas = {budget}")


def _standby_counts(
    costs: PlacementCosts, standby: list[list[int]], warmup: list[set[int]]
) -> tuple[int, int]:
    """(standbys beyond the configured number, configured standbys missing), over tasks."""
    placed = Counter(t for rows in standby for t in set(rows))
    labelled = Counter(t for c, rows in enumerate(standby) for t in set(rows) if t in warmup[c])
    wanted = costs.num_standbys
    extra = 0
    missing = 0
    for t in costs.stateful_indices:
        extra += max(0, placed[t] - wanted)
        missing += max(0, wanted - (placed[t] - labelled[t]))
    return extra, missing


def _subtopology_skews(costs: PlacementCosts, active: list[list[int]]) -> dict[str, int]:
    """Per subtopology, ``max - min`` of its actives per client over all clients."""
    keys = sorted({(task.topology_name or "", task.subtopology) for task in costs.tasks})
    per_client = [
        Counter((costs.tasks[t].topology_name or "", costs.tasks[t].subtopology) for t in rows)
        for rows in active
    ]
    skews: dict[str, int] = {}
    for name, sub in keys:
        counts = [per_client[c][(name, sub)] for c in range(costs.num_clients)]
        skews[f"{name}__{sub}" if name else str(sub)] = max(counts) - min(counts)
    return skews


def parse_assignment(cluster: ClusterState, document: Any, source: str = "") -> Assignment:
    """Read an assignment in the output format of ``docs/scenario-format.md``.

    Parameters
    ----------
    cluster:
        The cluster state the assignment is for.
    document:
        The parsed JSON: ``{"clients": {"<id>": {"active": [...], "standby": [...],
        "warmup": [...]}}, ...}``. Other top-level keys (``probing_rebalance_needed``,
        ``status``, ``objective``, ...) are allowed, so ``optimal --json`` output scores as is.
    source:
        A name for the document (its file name) to put in front of error paths.

    Returns
    -------
    Assignment
        Clients the document does not mention run nothing.

    Raises
    ------
    InvalidAssignmentError
        For a malformed document, an unknown client or task, a task listed twice in one list,
        or a warmup that is not among the client's standbys; the message names the JSON path.
    """
    prefix = f"{source}: " if source else ""

    def fail(path: str, message: str) -> InvalidAssignmentError:
        return InvalidAssignmentError(f"{prefix}{path}", message)

    if not isinstance(document, dict):
        raise fail("$", f"expected a JSON object, got {type(document).__name__}")
    raw_clients = document.get("clients")
    if not isinstance(raw_clients, dict):
        raise fail("clients", "must be an object mapping process ids to assignments")
    known_clients = {client.id for client in cluster.clients}
    known_tasks = set(cluster.all_tasks)
    clients: dict[str, ClientAssignment] = {}
    for pid, entry in raw_clients.items():
        if pid not in known_clients:
            raise fail(f"clients.{pid}", "unknown client (not in the cluster state)")
        if not isinstance(entry, dict):
            raise fail(f"clients.{pid}", f"must be an object, got {type(entry).__name__}")
        roles: dict[str, tuple[TaskId, ...]] = {}
        for role in ("active", "standby", "warmup"):
            raw = entry.get(role, [])
            if not isinstance(raw, list):
                raise fail(
                    f"clients.{pid}.{role}", f"must be a list of task ids, got {type(raw).__name__}"
                )
            parsed: list[TaskId] = []
            for i, text in enumerate(raw):
                path = f"clients.{pid}.{role}[{i}]"
                try:
                    task = TaskId.parse(text)
                except InvalidTaskIdError as exc:
                    raise fail(path, exc.reason) from None
                if task not in known_tasks:
                    raise fail(path, f"unknown task {task} (not in the cluster state)")
                if task in parsed:
                    raise fail(path, f"task {task} is listed twice")
                parsed.append(task)
            roles[role] = tuple(sorted(parsed))
        for i, task in enumerate(entry.get("warmup", [])):
            if TaskId.parse(task) not in roles["standby"]:
                raise fail(
                    f"clients.{pid}.warmup[{i}]",
                    f"warmup {task} is not among the client's standbys",
                )
        clients[pid] = ClientAssignment(
            active=roles["active"], standby=roles["standby"], warmup=roles["warmup"]
        )
    ordered = {client.id: clients.get(client.id, ClientAssignment()) for client in cluster.clients}
    probing = document.get("probing_rebalance_needed", False)
    if not isinstance(probing, bool):
        raise fail("probing_rebalance_needed", f"must be true or false, got {probing!r}")
    return Assignment(clients=ordered, probing_rebalance_needed=probing, assignor="file")


__all__ = [
    "METRIC_NAMES",
    "Metrics",
    "parse_assignment",
    "score",
]
