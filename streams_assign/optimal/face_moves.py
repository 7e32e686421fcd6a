"""The target's second objective, moves, over the restore-optimal faces, by CP-SAT.

:func:`~streams_assign.optimal.restore_face.restore_optimum` describes every assignment with
the least restore records as the union of a few *faces* (per stateful balance window: which
clients may and which must hold each task, how many copies go to clients without state, each
client's count). Moves are minimised over each face by a CP-SAT model that names only those
candidates: one boolean per (task, candidate client, role), the active-load balance of
:func:`~streams_assign.optimal.model.add_balance`, the stateless tasks counted per client and
per group of previous owners as in :class:`~streams_assign.optimal.model.AssignmentModel`.
No restore-records constraint is needed: every assignment of a face restores the optimum.
The best face's optimum is the target's lexicographic optimum, proven when CP-SAT proves every
face (``OPTIMAL``, ``INFEASIBLE``, or a bound no better than the best value found).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from streams_assign.model import Assignment, ClientAssignment
from streams_assign.optimal.costs import PlacementCosts
from streams_assign.optimal.model import add_balance, deal_stateless
from streams_assign.optimal.restore_face import RestoreFace, assignment_of

#: A face with more (task, client) candidates than this is left to the whole model.
MAX_FACE_PAIRS = 400_000
#: A face with more than this many strangers per named candidate is left to the whole model.
MAX_STRANGERS_PER_NAMED = 4


@dataclass(frozen=True, slots=True)
class FaceMoves:
    """The fewest moves over the restore-optimal faces.

    Attributes
    ----------
    assignment:
        The best assignment found (restore records optimal, balanced).
    moves:
        Its moves.
    bound:
        A proven lower bound on the moves of every restore-optimal balanced assignment.
    status:
        ``OPTIMAL`` when ``bound == moves``, else ``FEASIBLE``.
    seconds:
        Wall time of the CP-SAT solves.
    """

    assignment: Assignment
    moves: int
    bound: int
    status: str
    seconds: float


class FaceModel:
    """The CP-SAT model of moves over one face (see the module docstring).

    Parameters
    ----------
    costs:
        The cluster's cost table.
    face:
        The face: candidates, forced holders, client counts.
    special:
        Per stateful task, its clients with state or history (the others are *generic*).

    Attributes
    ----------
    model:
        The ``CpModel``, its objective (moves) set.
    active, standby:
        ``(client, task) -> BoolVar`` per candidate pair.
    pairs:
        Number of candidate pairs.
    moves:
        The objective: moves (actives not on a previous active owner, standbys not on a
        previous holder, stateless tasks that ran elsewhere), a linear expression.
    """

    def __init__(
        self, costs: PlacementCosts, face: RestoreFace, special: dict[int, tuple[int, ...]]
    ) -> None:
        self.costs = costs
        self.model = cp_model.CpModel()
        self.active: dict[tuple[int, int], Any] = {}
        self.standby: dict[tuple[int, int], Any] = {}
        model, n_clients = self.model, costs.num_clients
        copies_of: list[list[Any]] = [[] for _ in range(n_clients)]
        actives_of: list[list[Any]] = [[] for _ in range(n_clients)]
        generic_of: list[list[Any]] = [[] for _ in range(n_clients)]
        moves: list[Any] = []
        move_weights: list[int] = []
        for t in costs.stateful_indices:
            taken = set(special[t])
            strangers = [c for c in face.generic_clients if c not in taken]
            if face.generic_range[t][1] == 0:
                strangers = []
            task_actives, task_standbys, task_generic = [], [], []
            for c in list(face.allowed[t]) + strangers:
                act = model.new_bool_var(f"active_{c}_{t}")
                sby = model.new_bool_var(f"standby_{c}_{t}")
                self.active[c, t], self.standby[c, t] = act, sby
                if c in face.forced[t]:
                    model.add_exactly_one(act, sby)
                else:
                    model.add_at_most_one(act, sby)
                task_actives.append(act)
                task_standbys.append(sby)
                copies_of[c] += [act, sby]
                actives_of[c].append(act)
                if c not in taken:
                    task_generic += [act, sby]
                    generic_of[c] += [act, sby]
                moves += [act, sby]
                move_weights += [costs.active_move(c, t), costs.standby_move(c, t)]
            model.add_exactly_one(task_actives)
            model.add(cp_model.LinearExpr.sum(task_standbys) == costs.num_standbys)
            least, most = face.generic_range[t]
            if task_generic:
                model.add_linear_constraint(cp_model.LinearExpr.sum(task_generic), least, most)
            elif least:
                model.add_bool_or([])  # a face never forces copies onto no client
        for c in range(n_clients):
            model.add_linear_constraint(
                cp_model.LinearExpr.sum(copies_of[c]), face.low[c], face.high[c]
            )
            if c in face.generic_exact:
                model.add(cp_model.LinearExpr.sum(generic_of[c]) == face.generic_exact[c])
        self.pairs = len(self.active)
        stays, had_owner = self._add_stateless_tasks(actives_of)
        active_counts = [cp_model.LinearExpr.sum(v) for v in actives_of]
        self.balance = add_balance(
            model, active_counts, costs.capacities, len(costs.tasks), "active"
        )
        self.moves = (
            cp_model.LinearExpr.weighted_sum(moves, move_weights)
            - cp_model.LinearExpr.sum(stays)
            + had_owner
        )
        model.minimize(self.moves)

    def _add_stateless_tasks(self, actives_of: list[list[Any]]) -> tuple[list[Any], int]:
        """Per client its stateless actives, per (owner, group) how many stay; the stays and
        the number of stateless tasks that ran before (each is a move unless it stays)."""
        model, costs = self.model, self.costs
        n_stateless = len(costs.stateless_indices)
        groups: dict[tuple[int, ...], list[int]] = {}
        for t in costs.stateless_indices:
            groups.setdefault(tuple(sorted(costs.prev_active[t])), []).append(t)
        self.groups = sorted(groups.items())
        self.count = [
            model.new_int_var(0, n_stateless, f"stateless_{c}") for c in range(costs.num_clients)
        ]
        model.add(cp_model.LinearExpr.sum(self.count) == n_stateless)
        self.stay: dict[tuple[int, int], Any] = {}
        stays_of: list[list[Any]] = [[] for _ in range(costs.num_clients)]
        for g, (owners, members) in enumerate(self.groups):
            group_stays = []
            for c in owners:
                var = model.new_int_var(0, len(members), f"stay_{c}_g{g}")
                self.stay[c, g] = var
                group_stays.append(var)
                stays_of[c].append(var)
            model.add(cp_model.LinearExpr.sum(group_stays) <= len(members))
        for c, count in enumerate(self.count):
            model.add(cp_model.LinearExpr.sum(stays_of[c]) <= count)
            actives_of[c].append(count)
        had_owner = sum(len(members) for owners, members in self.groups if owners)
        return list(self.stay.values()), had_owner

    def add_hint(self, assignment: Assignment) -> None:
        """Hint the model with ``assignment`` (pairs it does not name are hinted 0)."""
        costs, model = self.costs, self.model
        index = {task: t for t, task in enumerate(costs.tasks)}
        group_of = {t: g for g, (_, members) in enumerate(self.groups) for t in members}
        hinted: dict[Any, int] = {}
        stays = dict.fromkeys(self.stay, 0)
        active_counts = []
        for c, pid in enumerate(costs.client_ids):
            decided = assignment.clients.get(pid, ClientAssignment())
            active_counts.append(len(decided.active))
            stateless = 0
            for task in decided.active:
                t = index[task]
                if not costs.stateful[t]:
                    stateless += 1
                    if (c, group_of[t]) in stays:
                        stays[c, group_of[t]] += 1
                elif (c, t) in self.active:
                    hinted[self.active[c, t]] = 1
            for task in decided.standby:
                if (c, index[task]) in self.standby:
                    hinted[self.standby[c, index[task]]] = 1
            model.add_hint(self.count[c], stateless)
        for var in list(self.active.values()) + list(self.standby.values()):
            model.add_hint(var, hinted.get(var, 0))
        for key, var in self.stay.items():
            model.add_hint(var, stays[key])
        self.balance.hint(model, active_counts, costs.capacities)

    def extract(self, solver: cp_model.CpSolver) -> Assignment:
        """The solver's solution as an :class:`Assignment`."""
        costs, n_clients = self.costs, self.costs.num_clients
        active: list[list[int]] = [[] for _ in range(n_clients)]
        standby: list[list[int]] = [[] for _ in range(n_clients)]
        for (c, t), var in self.active.items():
            if solver.boolean_value(var):
                active[c].append(t)
        for (c, t), var in self.standby.items():
            if solver.boolean_value(var):
                standby[c].append(t)
        deal_stateless(
            self.groups,
            lambda c, g: int(solver.value(self.stay[c, g])),
            [int(solver.value(v)) for v in self.count],
            active,
        )
        return assignment_of(costs, active, standby, "optimal_target")


def face_pairs(
    costs: PlacementCosts, face: RestoreFace, special: dict[int, tuple[int, ...]]
) -> tuple[int, int]:
    """How many (task, client) candidates a :class:`FaceModel` of ``face`` would name: those
    with state or history for the task, and those without (*strangers*)."""
    generic = set(face.generic_clients)
    named = strangers = 0
    for t in costs.stateful_indices:
        named += len(face.allowed[t])
        if face.generic_range[t][1]:
            strangers += len(generic) - len(generic.intersection(special[t]))
    return named, strangers


def face_model_fits(
    costs: PlacementCosts, face: RestoreFace, special: dict[int, tuple[int, ...]]
) -> bool:
    """Whether a :class:`FaceModel` suits ``face``: at most :data:`MAX_FACE_PAIRS` candidates,
    and at most :data:`MAX_STRANGERS_PER_NAMED` strangers per candidate with state or history.

    Strangers of a task are interchangeable for it: naming them one by one leaves CP-SAT a
    symmetric search that the whole model, which counts them, avoids (kafka-diff ``s0023-large``,
    15 strangers per named candidate: the face model stayed at 269 moves against a bound of 251
    for 60 s, the whole model proved 251 in 11 s). The synthetic clusters of
    ``benchmarks/optimal_scale.py`` have 0.5 to 2.3 and are proven on their faces.
    """
    named, strangers = face_pairs(costs, face, special)
    return named + strangers <= MAX_FACE_PAIRS and strangers <= MAX_STRANGERS_PER_NAMED * named


def solve_moves_on_faces(
    costs: PlacementCosts,
    faces: tuple[RestoreFace, ...],
    special: dict[int, tuple[int, ...]],
    start: tuple[Assignment, int] | None,
    deadline: float,
    solver_factory: Any,
) -> FaceMoves | None:
    """Fewest moves over the restore-optimal faces (see the module docstring).

    Parameters
    ----------
    costs:
        The cluster's cost table.
    faces:
        The faces of :func:`~streams_assign.optimal.restore_face.restore_optimum`.
    special:
        Per stateful task, its clients with state or history.
    start:
        A restore-optimal balanced assignment and its moves, when one is known: the hint, and
        the answer when CP-SAT finds nothing better in time.
    deadline:
        ``time.monotonic()`` by which the solves stop (split evenly over the faces left).
    solver_factory:
        ``seconds -> CpSolver`` (workers and seed pinned by the caller).

    Returns
    -------
    FaceMoves or None
        ``None`` when a face does not suit a :class:`FaceModel` (:func:`face_model_fits`), or
        when there is no ``start`` and no face yields an assignment (every face infeasible: the
        flows' bound is then not reached; or none found in time).
    """
    if not all(face_model_fits(costs, face, special) for face in faces):
        return None
    began = time.monotonic()
    best: tuple[Assignment, int] | None = start
    bounds: list[float] = []
    for i, face in enumerate(faces):
        built = FaceModel(costs, face, special)
        if best is not None:
            built.add_hint(best[0])
        seconds = (deadline - time.monotonic()) / (len(faces) - i)
        solver = solver_factory(seconds)
        status = solver.solve(built.model)
        if status == cp_model.INFEASIBLE:
            continue
        bounds.append(
            solver.best_objective_bound if status != cp_model.OPTIMAL else solver.objective_value
        )
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            value = round(solver.objective_value)
            if best is None or value < best[1]:
                best = (built.extract(solver), value)
    if best is None:
        return None
    bound = min(min((math.ceil(b - 1e-6) for b in bounds), default=best[1]), best[1])
    return FaceMoves(
        best[0],
        best[1],
        bound,
        "OPTIMAL" if bound >= best[1] else "FEASIBLE",
        time.monotonic() - began,
    )


__all__ = [
    "MAX_FACE_PAIRS",
    "MAX_STRANGERS_PER_NAMED",
    "FaceModel",
    "FaceMoves",
    "face_model_fits",
    "face_pairs",
    "solve_moves_on_faces",
]
