"""The assignment decision as a CP-SAT model.

Two problems over the same variables (``docs/optimal.md`` states them in full):

``target``
    The best *converged* assignment: balanced as Kafka's tests define balanced (active load and
    stateful load each within 1 task per thread across clients), exactly
    ``min(num.standby.replicas, clients - 1)`` standbys per stateful task, no warmups. Minimise
    restore records, then moves.
``immediate``
    The best assignment for *this* rebalance under Kafka's availability rule (a stateful task
    with a caught-up client is active on a caught-up client), at most ``max.warmup.replicas``
    warmups. Minimise active-load spread, then restore records, then moves.

Variables: for each stateful task, one boolean per role (active, standby) for every *special*
client (one that reported a lag for the task or held it before); the other clients are
*generic* for the task (no state, never held it), cost the same and are counted, not named: how
many generic actives (0/1) and standbys the task gets, and how many generic copies each client
takes. :func:`realize_generic` names the clients afterwards. Stateless tasks differ only in who
ran them before, and are counted per client and per group of tasks with the same previous owners.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

import numpy as np
from ortools.graph.python import max_flow, min_cost_flow
from ortools.sat.python import cp_model

from streams_assign.model import Assignment, ClientAssignment
from streams_assign.optimal.costs import PlacementCosts

#: Largest total of (scaled) restore records the model hands CP-SAT. Beyond it every cost is
#: divided by a common factor, rounding up, so sums stay far inside int64.
MAX_RESTORE_TOTAL = 2**53


class Problem(StrEnum):
    """Which optimisation problem to solve (see the module docstring)."""

    TARGET = "target"
    IMMEDIATE = "immediate"


#: The lexicographic objectives of each problem, most important first.
OBJECTIVES: dict[Problem, tuple[str, ...]] = {
    Problem.TARGET: ("restore_records", "moves"),
    Problem.IMMEDIATE: ("active_load_spread", "restore_records", "moves"),
}


class AssignmentModel:
    """The CP-SAT model of one problem over one cluster state.

    Parameters
    ----------
    costs:
        The cluster's cost table.
    problem:
        ``target`` or ``immediate``.
    aggregate:
        Count generic clients instead of naming them (see the module docstring). Exact when
        :meth:`extract` can name them, which it checks; ``False`` gives one boolean per
        (client, task, role).
    balance_active, balance_stateful:
        Keep the target's balance constraints (switched off only to explain infeasibility).
    active_spread:
        Immediate problem: bound the active-load spread by this value (its optimum, found by
        :func:`~streams_assign.optimal.bounds.min_active_spread`), for the later stages.
    cuts:
        Hall inequalities (see :func:`hall_violations`) learnt from earlier solutions whose
        generic copies could not be named.

    Attributes
    ----------
    model:
        The ``CpModel``.
    active, standby:
        ``(client, task) -> BoolVar`` for special pairs (pairs absent here and not generic are
        fixed to 0, as actives the availability rule forbids).
    generic_active, generic_standby:
        Per stateful task, its generic actives (0/1) and standbys (``IntVar``; absent when the
        task has no generic client).
    client_generic_active, client_generic_standby:
        Per client, the generic actives and standbys it takes (``IntVar``).
    stateless_count, stateless_stay:
        Per client its stateless actives; per ``(client, group)`` the stateless tasks of the
        group (same previous owners) staying on ``client``, one of their previous owners.
    objectives:
        Per objective name (``restore_records``, ``moves``), its linear expression (restore
        records divided by ``restore_scale``). The immediate problem's first objective, the
        active-load spread, is solved by flows and enters as ``active_spread``.
    target:
        ``(client, task) -> BoolVar``: where each stateful task ends once its pending move is
        done; empty unless :func:`~streams_assign.optimal.same_rules.add_same_rules` added it.
    """

    def __init__(
        self,
        costs: PlacementCosts,
        problem: Problem,
        aggregate: bool = True,
        balance_active: bool = True,
        balance_stateful: bool = True,
        active_spread: Fraction | None = None,
        cuts: Sequence[HallCut] = (),
    ) -> None:
        self.costs = costs
        self.problem = problem
        self.aggregate = aggregate
        self.model = cp_model.CpModel()
        n_clients = costs.num_clients
        stateful = costs.stateful_indices
        self.special = {t: special_clients(costs, t, aggregate) for t in stateful}
        self.generic_of = {t: n_clients - len(self.special[t]) for t in stateful}
        self.active: dict[tuple[int, int], Any] = {}
        self.standby: dict[tuple[int, int], Any] = {}
        self.generic_active: dict[int, Any] = {}
        self.generic_standby: dict[int, Any] = {}
        self._anyone_caught_up: dict[int, bool] = {}
        self._add_stateful_tasks()
        self.client_generic_active: list[Any] = []
        self.client_generic_standby: list[Any] = []
        self.generic_use: dict[int, Any] = {}
        self._add_generic_counts()
        for cut in cuts:
            self._add_hall_cut(cut)
        self.groups = _stateless_groups(costs)
        self.stateless_count: list[Any] = []
        self.stateless_stay: dict[tuple[int, int], Any] = {}
        self._add_stateless_tasks()

        actives_of: list[list[Any]] = [[] for _ in range(n_clients)]
        copies_of: list[list[Any]] = [[] for _ in range(n_clients)]
        for (c, _), var in self.active.items():
            actives_of[c].append(var)
            copies_of[c].append(var)
        for (c, _), var in self.standby.items():
            copies_of[c].append(var)
        for c in range(n_clients):
            actives_of[c].append(self.stateless_count[c])
            if self.client_generic_active:
                actives_of[c].append(self.client_generic_active[c])
                copies_of[c].append(self.client_generic_active[c])
                copies_of[c].append(self.client_generic_standby[c])
        self.active_count = [cp_model.LinearExpr.sum(v) for v in actives_of]
        self.stateful_count = [cp_model.LinearExpr.sum(v) for v in copies_of]

        n_tasks = len(costs.tasks)
        if problem is Problem.IMMEDIATE and active_spread is not None:
            self.add_balance(self.active_count, n_tasks, "active", Fraction(active_spread))
        if problem is Problem.TARGET:
            if balance_active:
                self.add_balance(self.active_count, n_tasks, "active")
            if balance_stateful:
                self.add_balance(
                    self.stateful_count, len(stateful) * (1 + costs.num_standbys), "stateful"
                )

        self.target: dict[tuple[int, int], Any] = {}
        self.restore_scale = _restore_scale(costs)
        self.objectives: dict[str, Any] = {
            "restore_records": self._restore_expression(),
            "moves": self._moves_expression(),
        }

    # -- variables and constraints ------------------------------------------------------------

    def _active_allowed(self, c: int, t: int) -> bool:
        """Kafka's availability rule (immediate only): a caught-up client when there is one."""
        if self.problem is not Problem.IMMEDIATE or self.costs.caught_up[c][t]:
            return True
        if t not in self._anyone_caught_up:
            caught_up = self.costs.caught_up
            self._anyone_caught_up[t] = any(row[t] for row in caught_up)
        return not self._anyone_caught_up[t]

    def _add_stateful_tasks(self) -> None:
        model, costs = self.model, self.costs
        n_standbys = costs.num_standbys
        for t, special in self.special.items():
            actives = []
            copies = []
            for c in special:
                if self._active_allowed(c, t):
                    var = model.new_bool_var(f"active_{c}_{t}")
                    self.active[c, t] = var
                    actives.append(var)
                if n_standbys:
                    var = model.new_bool_var(f"standby_{c}_{t}")
                    self.standby[c, t] = var
                    copies.append(var)
                    if (c, t) in self.active:
                        model.add_at_most_one(self.active[c, t], var)
            generic = self.generic_of[t]
            if generic:
                generic_client = _first_generic(special, costs.num_clients)
                if self._active_allowed(generic_client, t):
                    self.generic_active[t] = model.new_bool_var(f"generic_active_{t}")
                    actives.append(self.generic_active[t])
                if n_standbys:
                    self.generic_standby[t] = model.new_int_var(
                        0, min(n_standbys, generic), f"generic_standby_{t}"
                    )
                    copies.append(self.generic_standby[t])
                if t in self.generic_active and t in self.generic_standby:
                    model.add(self.generic_active[t] + self.generic_standby[t] <= generic)
            model.add_exactly_one(actives)
            if n_standbys:
                model.add(cp_model.LinearExpr.sum(copies) == n_standbys)

    def _add_generic_counts(self) -> None:
        """Per client, how many generic copies it takes, and what makes that nameable.

        The counts add up to the tasks' counts. A client may only take generic copies of tasks
        it is generic for, and at most one copy of each: per client ``c``, its generic actives
        are at most the generic actives of tasks ``c`` is generic for, likewise for standbys,
        and its generic copies at most the number of such tasks with any generic copy
        (``uses``). Each sum is written as the total minus the few tasks ``c`` is special for.
        These are Hall's conditions for single clients; :func:`realize_generic` checks the rest.
        """
        if not self.generic_active and not self.generic_standby:
            return
        model, n_clients = self.model, self.costs.num_clients
        n_standbys = self.costs.num_standbys
        special_tasks: list[list[int]] = [[] for _ in range(n_clients)]
        for t, special in self.special.items():
            for c in special:
                special_tasks[c].append(t)
        uses: dict[int, Any] = {}
        for t in self.special:
            if t not in self.generic_active and t not in self.generic_standby:
                continue
            use = model.new_bool_var(f"generic_use_{t}")
            uses[t] = use
            self.generic_use[t] = use
            parts = []
            if t in self.generic_active:
                model.add(self.generic_active[t] <= use)
                parts.append(self.generic_active[t])
            if t in self.generic_standby:
                model.add(self.generic_standby[t] <= n_standbys * use)
                parts.append(self.generic_standby[t])
            model.add(use <= cp_model.LinearExpr.sum(parts))
        n_tasks = len(self.special)
        total_active = model.new_int_var(0, n_tasks, "generic_active_total")
        total_standby = model.new_int_var(0, n_tasks * n_standbys, "generic_standby_total")
        total_use = model.new_int_var(0, n_tasks, "generic_use_total")
        model.add(total_active == cp_model.LinearExpr.sum(list(self.generic_active.values())))
        model.add(total_standby == cp_model.LinearExpr.sum(list(self.generic_standby.values())))
        model.add(total_use == cp_model.LinearExpr.sum(list(uses.values())))
        for c in range(n_clients):
            slots = n_tasks - len(special_tasks[c])
            active = model.new_int_var(0, slots, f"client_generic_active_{c}")
            standby = model.new_int_var(0, slots, f"client_generic_standby_{c}")
            self.client_generic_active.append(active)
            self.client_generic_standby.append(standby)
            mine_active = [
                self.generic_active[t] for t in special_tasks[c] if t in self.generic_active
            ]
            mine_standby = [
                self.generic_standby[t] for t in special_tasks[c] if t in self.generic_standby
            ]
            mine_use = [uses[t] for t in special_tasks[c] if t in uses]
            model.add(active <= total_active - cp_model.LinearExpr.sum(mine_active))
            model.add(standby <= total_standby - cp_model.LinearExpr.sum(mine_standby))
            model.add(active + standby <= total_use - cp_model.LinearExpr.sum(mine_use))
        model.add(cp_model.LinearExpr.sum(self.client_generic_active) == total_active)
        model.add(cp_model.LinearExpr.sum(self.client_generic_standby) == total_standby)

    def _add_hall_cut(self, cut: HallCut) -> None:
        """``sum_{c in K} X[c] <= sum_t min(g_t, |K \\ special(t)|)`` for one commodity.

        ``X`` is the clients' generic actives, standbys or both (``cut.kind``) and ``g_t`` the
        task's. Hall's condition for naming the copies, violated by an earlier solution.
        """
        if not self.client_generic_active:
            return
        model, n_standbys = self.model, self.costs.num_standbys
        per_task = {
            "active": (self.generic_active, None, 1),
            "standby": (None, self.generic_standby, n_standbys),
            "copies": (self.generic_active, self.generic_standby, 1 + n_standbys),
        }[cut.kind]
        actives, standbys, most = per_task
        left: list[Any] = []
        for c in sorted(cut.clients):
            if actives is not None:
                left.append(self.client_generic_active[c])
            if standbys is not None:
                left.append(self.client_generic_standby[c])
        right: list[Any] = []
        for t, special in self.special.items():
            parts = []
            if actives is not None and t in actives:
                parts.append(actives[t])
            if standbys is not None and t in standbys:
                parts.append(standbys[t])
            if not parts:
                continue
            room = len(cut.clients) - len(cut.clients.intersection(special))
            if room >= most:
                right.extend(parts)
            elif room > 0:
                share = model.new_int_var(0, room, f"hall_{t}_{len(cut.clients)}")
                model.add(share <= cp_model.LinearExpr.sum(parts))
                right.append(share)
        model.add(cp_model.LinearExpr.sum(left) <= cp_model.LinearExpr.sum(right))

    def _add_stateless_tasks(self) -> None:
        model, n_clients = self.model, self.costs.num_clients
        n_stateless = len(self.costs.stateless_indices)
        self.stateless_count = [
            model.new_int_var(0, n_stateless, f"stateless_{c}") for c in range(n_clients)
        ]
        model.add(cp_model.LinearExpr.sum(self.stateless_count) == n_stateless)
        stays_of: list[list[Any]] = [[] for _ in range(n_clients)]
        for g, (owners, members) in enumerate(self.groups):
            stays = []
            for c in owners:
                var = model.new_int_var(0, len(members), f"stay_{c}_g{g}")
                self.stateless_stay[c, g] = var
                stays.append(var)
                stays_of[c].append(var)
            if len(stays) > 1:
                model.add(cp_model.LinearExpr.sum(stays) <= len(members))
        for c in range(n_clients):
            if stays_of[c]:
                model.add(cp_model.LinearExpr.sum(stays_of[c]) <= self.stateless_count[c])

    def add_balance(
        self, counts: Sequence[Any], total: int, name: str, spread: Fraction = Fraction(1)
    ) -> None:
        """Active or stateful load spread at most ``spread`` (see :func:`add_balance`)."""
        add_balance(self.model, counts, self.costs.capacities, total, name, spread)

    # -- objectives -----------------------------------------------------------------------------

    def _generic_cost(self, t: int) -> tuple[int, int, int]:
        """(restore records, active move, standby move) of a generic client of task ``t``."""
        costs = self.costs
        c = _first_generic(self.special[t], costs.num_clients)
        return costs.restore[c][t], costs.active_move(c, t), costs.standby_move(c, t)

    def _restore_expression(self) -> Any:
        costs, scale = self.costs, self.restore_scale
        variables, coefficients = [], []
        for key, var in list(self.active.items()) + list(self.standby.items()):
            records = costs.restore[key[0]][key[1]]
            if records:
                variables.append(var)
                coefficients.append(-(-records // scale))
        for roles in (self.generic_active, self.generic_standby):
            for t, var in roles.items():
                records = self._generic_cost(t)[0]
                if records:
                    variables.append(var)
                    coefficients.append(-(-records // scale))
        return cp_model.LinearExpr.weighted_sum(variables, coefficients)

    def _moves_expression(self) -> Any:
        costs = self.costs
        variables, coefficients = [], []
        for (c, t), var in self.active.items():
            if costs.active_move(c, t):
                variables.append(var)
                coefficients.append(1)
        for (c, t), var in self.standby.items():
            if costs.standby_move(c, t):
                variables.append(var)
                coefficients.append(1)
        for t, var in self.generic_active.items():
            if self._generic_cost(t)[1]:
                variables.append(var)
                coefficients.append(1)
        for t, var in self.generic_standby.items():
            if self._generic_cost(t)[2]:
                variables.append(var)
                coefficients.append(1)
        stays = list(self.stateless_stay.values())
        variables.extend(stays)
        coefficients.extend([-1] * len(stays))
        had_owner = sum(len(members) for owners, members in self.groups if owners)
        return cp_model.LinearExpr.weighted_sum(variables, coefficients) + had_owner

    def objective_value(self, name: str, raw: int) -> int:
        """A solver objective value in the metric's unit.

        Scaled restore records come back multiplied by the scale (approximate; the solve
        result reports the exact value of the assignment).
        """
        if name == "restore_records":
            return raw * self.restore_scale
        return raw

    def objective_bound(self, name: str, raw: float) -> int:
        """A solver lower bound in the metric's unit (a valid bound on the exact metric)."""
        value = math.ceil(raw - 1e-6)
        if name == "restore_records" and self.restore_scale > 1:
            # ceil(r / k) <= r / k + 1 per placement, so r >= k * (bound - placements).
            placements = len(self.costs.stateful_indices) * (1 + self.costs.num_standbys)
            return max(0, self.restore_scale * (value - placements))
        return value

    # -- hints and solutions --------------------------------------------------------------------

    def variable_values(self, assignment: Assignment) -> dict[Any, int]:
        """The model's variables as they would be for ``assignment`` (for hints).

        Warmups are dropped (the model has none); placements the model forbids are skipped, so
        the result may be a partial or infeasible hint, which CP-SAT repairs.
        """
        costs = self.costs
        index = {task: t for t, task in enumerate(costs.tasks)}
        values: dict[Any, int] = {}
        generic_active = dict.fromkeys(self.generic_active, 0)
        generic_standby = dict.fromkeys(self.generic_standby, 0)
        client_active = [0] * costs.num_clients
        client_standby = [0] * costs.num_clients
        stateless = [0] * costs.num_clients
        stays: dict[tuple[int, int], int] = dict.fromkeys(self.stateless_stay, 0)
        group_of = {t: g for g, (_, members) in enumerate(self.groups) for t in members}
        for c, pid in enumerate(costs.client_ids):
            decided = assignment.clients.get(pid, ClientAssignment())
            warm = set(decided.warmup)
            for task in decided.active:
                t = index[task]
                if not costs.stateful[t]:
                    stateless[c] += 1
                    if (c, group_of[t]) in stays:
                        stays[c, group_of[t]] += 1
                elif (c, t) in self.active:
                    values[self.active[c, t]] = 1
                elif t in self.generic_active and c not in self.special[t]:
                    generic_active[t] += 1
                    client_active[c] += 1
            for task in decided.standby:
                t = index[task]
                if task in warm or not costs.stateful[t]:
                    continue
                if (c, t) in self.standby:
                    values[self.standby[c, t]] = 1
                elif t in self.generic_standby and c not in self.special[t]:
                    generic_standby[t] += 1
                    client_standby[c] += 1
        for var in list(self.active.values()) + list(self.standby.values()):
            values.setdefault(var, 0)
        for t, var in self.generic_active.items():
            values[var] = min(generic_active[t], 1)
        for t, var in self.generic_standby.items():
            values[var] = generic_standby[t]
        for c, var in enumerate(self.client_generic_active):
            values[var] = client_active[c]
        for c, var in enumerate(self.client_generic_standby):
            values[var] = client_standby[c]
        for c, var in enumerate(self.stateless_count):
            values[var] = stateless[c]
        for key, var in self.stateless_stay.items():
            values[var] = stays[key]
        return values

    def _generic_values(
        self, solver: cp_model.CpSolver
    ) -> tuple[dict[int, int], dict[int, int], list[int], list[int]]:
        return (
            {t: int(solver.value(v)) for t, v in self.generic_active.items()},
            {t: int(solver.value(v)) for t, v in self.generic_standby.items()},
            [int(solver.value(v)) for v in self.client_generic_active],
            [int(solver.value(v)) for v in self.client_generic_standby],
        )

    def hall_cuts(self, solver: cp_model.CpSolver) -> list[HallCut]:
        """Hall inequalities the solver's generic counts break (see :func:`hall_violations`)."""
        if not self.client_generic_active:
            return []
        return hall_violations(self.costs.num_clients, self.special, *self._generic_values(solver))

    def extract(self, solver: cp_model.CpSolver) -> Assignment | None:
        """The solver's solution as an :class:`Assignment`, or ``None`` when the generic copies
        cannot be given to named clients (then solve again with ``aggregate=False``)."""
        costs = self.costs
        n_clients = costs.num_clients
        active: list[list[int]] = [[] for _ in range(n_clients)]
        standby: list[list[int]] = [[] for _ in range(n_clients)]
        for (c, t), var in self.active.items():
            if solver.boolean_value(var):
                active[c].append(t)
        for (c, t), var in self.standby.items():
            if solver.boolean_value(var):
                standby[c].append(t)
        if self.client_generic_active:
            placed = realize_generic(n_clients, self.special, *self._generic_values(solver))
            if placed is None:
                return None
            for t, (active_client, standby_clients) in placed.items():
                if active_client is not None:
                    active[active_client].append(t)
                for c in standby_clients:
                    standby[c].append(t)
        deal_stateless(
            self.groups,
            lambda c, g: int(solver.value(self.stateless_stay[c, g])),
            [int(solver.value(v)) for v in self.stateless_count],
            active,
        )
        tasks = costs.tasks
        clients = {
            pid: ClientAssignment(
                active=tuple(tasks[t] for t in sorted(active[c])),
                standby=tuple(tasks[t] for t in sorted(standby[c])),
            )
            for c, pid in enumerate(costs.client_ids)
        }
        return Assignment(
            clients=clients,
            probing_rebalance_needed=False,
            assignor=f"optimal_{self.problem.value}",
        )


def special_clients(costs: PlacementCosts, t: int, aggregate: bool) -> tuple[int, ...]:
    """Clients that differ from a stateless stranger for task ``t`` (all of them unaggregated).

    Returns the client indices, ascending.

    A client is special when it reported a lag for the task or held it before; the others have
    no state and no history for it, so they cost the same and are interchangeable.
    """
    if not aggregate:
        return tuple(range(costs.num_clients))
    task = costs.tasks[t]
    return tuple(
        c
        for c, client in enumerate(costs.cluster.clients)
        if task in client.task_lags or c in costs.prev_holders[t]
    )


def _first_generic(special: Sequence[int], n_clients: int) -> int:
    taken = set(special)
    return next(c for c in range(n_clients) if c not in taken)


@dataclass(frozen=True, slots=True)
class HallCut:
    """A set of clients whose generic copies of one kind the tasks cannot all supply.

    Attributes
    ----------
    kind:
        ``active``, ``standby`` or ``copies`` (both roles together).
    clients:
        The client set ``K`` of the violated inequality.
    """

    kind: str
    clients: frozenset[int]


def hall_violations(
    n_clients: int,
    special: dict[int, tuple[int, ...]],
    task_active: dict[int, int],
    task_standby: dict[int, int],
    client_active: Sequence[int],
    client_standby: Sequence[int],
) -> list[HallCut]:
    """Hall inequalities the counted generic copies break, one per kind that cannot be named.

    Parameters
    ----------
    n_clients:
        Number of clients.
    special:
        Per stateful task, its special clients (which may not take a generic copy of it).
    task_active, task_standby:
        Per task, its generic actives (0/1) and standbys.
    client_active, client_standby:
        Per client, the generic actives and standbys it takes.

    Returns
    -------
    list of HallCut
        At most one per kind (``active``, ``standby``, ``copies``).

    Notes
    -----
    For each kind (actives, standbys, both) a max flow sends each task's copies to clients it
    is generic for (capacity 1) and on to the clients' counts. When it falls short, the clients
    on the sink side of the minimum cut form a set ``K`` that takes more copies than the tasks
    can give it: ``sum_{c in K} X[c] > sum_t min(g_t, |K \\ special(t)|)``. Returned as cuts
    for the next solve; empty when every kind can be named on its own.
    """
    kinds = (
        ("active", task_active, client_active),
        ("standby", task_standby, client_standby),
        (
            "copies",
            {
                t: task_active.get(t, 0) + task_standby.get(t, 0)
                for t in set(task_active) | set(task_standby)
            },
            [a + b for a, b in zip(client_active, client_standby, strict=True)],
        ),
    )
    cuts = []
    for kind, demand, counts in kinds:
        tasks = sorted(t for t, n in demand.items() if n)
        wanted = sum(counts)
        if not wanted:
            continue
        source, sink = 0, 1 + len(tasks) + n_clients
        flow = max_flow.SimpleMaxFlow()
        for i, t in enumerate(tasks):
            flow.add_arc_with_capacity(source, 1 + i, demand[t])
            taken = set(special[t])
            for c in range(n_clients):
                if c not in taken and counts[c]:
                    flow.add_arc_with_capacity(1 + i, 1 + len(tasks) + c, 1)
        for c in range(n_clients):
            if counts[c]:
                flow.add_arc_with_capacity(1 + len(tasks) + c, sink, counts[c])
        if flow.solve(source, sink) != flow.OPTIMAL or flow.optimal_flow() >= wanted:
            continue
        source_side = set(flow.get_source_side_min_cut())
        clients = frozenset(
            c for c in range(n_clients) if counts[c] and 1 + len(tasks) + c not in source_side
        )
        if clients:
            cuts.append(HallCut(kind, clients))
    return cuts


def realize_generic(
    n_clients: int,
    special: dict[int, tuple[int, ...]],
    task_active: dict[int, int],
    task_standby: dict[int, int],
    client_active: Sequence[int],
    client_standby: Sequence[int],
    seconds: float = 10.0,
) -> dict[int, tuple[int | None, list[int]]] | None:
    """Name the clients of the generic copies the aggregated model counted.

    Parameters
    ----------
    n_clients:
        Number of clients.
    special:
        Per stateful task, its special clients (which may not take a generic copy of it).
    task_active, task_standby:
        Per task, how many generic actives (0/1) and standbys it has.
    client_active, client_standby:
        Per client, how many generic actives and standbys it takes.
    seconds:
        Time limit of the exact search (step 3 below).

    Returns
    -------
    dict or None
        Per task with generic copies, ``(active client or None, standby clients)``, all distinct
        and not special; ``None`` when no naming exists (or none was found in time).

    Notes
    -----
    1. Two feasibility flows (OR-Tools ``SimpleMinCostFlow``): actives first (task -> allowed
       client, capacity 1, each client taking exactly its count), then standbys with the task's
       active client removed. 2. The same with standbys first. 3. A small CP-SAT feasibility
       model over the tasks and clients that have generic copies, which is exact.
    """
    actives = {t: n for t, n in task_active.items() if n}
    standbys = {t: n for t, n in task_standby.items() if n}
    if not actives and not standbys:
        return {}
    copies = _GenericCopies(n_clients, special, actives, standbys, client_active, client_standby)
    for actives_first in (True, False):
        named = _route_in_turn(copies, actives_first)
        if named is not None:
            return named
    return _realize_exactly(copies, seconds)


@dataclass(frozen=True)
class _GenericCopies:
    """The generic copies :func:`realize_generic` names: per task and per client, how many.

    Attributes
    ----------
    n_clients:
        Number of clients.
    special:
        Per stateful task, its special clients (which may not take a generic copy of it).
    actives, standbys:
        Per task with some, its generic actives (1) and standbys.
    client_active, client_standby:
        Per client, how many generic actives and standbys it takes.
    """

    n_clients: int
    special: dict[int, tuple[int, ...]]
    actives: dict[int, int]
    standbys: dict[int, int]
    client_active: Sequence[int]
    client_standby: Sequence[int]

    @property
    def tasks(self) -> list[int]:
        """The tasks with generic copies, in order."""
        return sorted(set(self.actives) | set(self.standbys))


def _route_in_turn(
    copies: _GenericCopies, actives_first: bool
) -> dict[int, tuple[int | None, list[int]]] | None:
    """Name the clients by two feasibility flows, one role after the other."""
    roles = [(copies.actives, copies.client_active), (copies.standbys, copies.client_standby)]
    if not actives_first:
        roles.reverse()
    (first_counts, first_caps), (second_counts, second_caps) = roles
    first = _route(copies.n_clients, first_counts, copies.special, first_caps, {})
    if first is None:
        return None
    second = _route(copies.n_clients, second_counts, copies.special, second_caps, first)
    if second is None:
        return None
    chosen_active, chosen_standby = (first, second) if actives_first else (second, first)
    return {
        t: (chosen_active[t][0] if chosen_active.get(t) else None, chosen_standby.get(t, []))
        for t in copies.tasks
    }


def _realize_exactly(
    copies: _GenericCopies, seconds: float
) -> dict[int, tuple[int | None, list[int]]] | None:
    """Name the clients with a small CP-SAT feasibility model (exact, within ``seconds``)."""
    actives, standbys = copies.actives, copies.standbys
    client_active, client_standby = copies.client_active, copies.client_standby
    model = cp_model.CpModel()
    act: dict[tuple[int, int], Any] = {}
    sby: dict[tuple[int, int], Any] = {}
    for t in copies.tasks:
        allowed = [
            c
            for c in range(copies.n_clients)
            if c not in copies.special[t] and (client_active[c] or client_standby[c])
        ]
        for c in allowed:
            if t in actives and client_active[c]:
                act[t, c] = model.new_bool_var(f"a_{t}_{c}")
            if t in standbys and client_standby[c]:
                sby[t, c] = model.new_bool_var(f"s_{t}_{c}")
            if (t, c) in act and (t, c) in sby:
                model.add_at_most_one(act[t, c], sby[t, c])
        model.add(
            cp_model.LinearExpr.sum([v for (tt, _), v in act.items() if tt == t])
            == actives.get(t, 0)
        )
        model.add(
            cp_model.LinearExpr.sum([v for (tt, _), v in sby.items() if tt == t])
            == standbys.get(t, 0)
        )
    for c in range(copies.n_clients):
        model.add(
            cp_model.LinearExpr.sum([v for (_, cc), v in act.items() if cc == c])
            == client_active[c]
        )
        model.add(
            cp_model.LinearExpr.sum([v for (_, cc), v in sby.items() if cc == c])
            == client_standby[c]
        )
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = seconds
    if solver.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    result: dict[int, tuple[int | None, list[int]]] = {}
    for t in copies.tasks:
        active_client = next(
            (c for (tt, c), v in act.items() if tt == t and solver.boolean_value(v)), None
        )
        standby_clients = sorted(
            c for (tt, c), v in sby.items() if tt == t and solver.boolean_value(v)
        )
        result[t] = (active_client, standby_clients)
    return result


def _route(
    n_clients: int,
    demand: dict[int, int],
    special: dict[int, tuple[int, ...]],
    client_counts: Sequence[int],
    banned: dict[int, list[int]],
) -> dict[int, list[int]] | None:
    """Give each task ``demand[t]`` distinct allowed clients, client ``c`` taking exactly
    ``client_counts[c]`` (a transportation feasibility flow)."""
    tasks = sorted(demand)
    if sum(demand.values()) != sum(client_counts):
        return None
    tails: list[int] = []
    heads: list[int] = []
    n_tasks = len(tasks)
    for i, t in enumerate(tasks):
        excluded = set(special[t]) | set(banned.get(t, ()))
        for c in range(n_clients):
            if c not in excluded:
                tails.append(i)
                heads.append(n_tasks + c)
    flow = min_cost_flow.SimpleMinCostFlow()
    ones = np.ones(len(tails), dtype=np.int64)
    arcs = flow.add_arcs_with_capacity_and_unit_cost(
        np.array(tails, dtype=np.int64),
        np.array(heads, dtype=np.int64),
        ones,
        np.zeros(len(tails), dtype=np.int64),
    )
    supplies = np.array([demand[t] for t in tasks] + [-n for n in client_counts], dtype=np.int64)
    flow.set_nodes_supplies(np.arange(supplies.size, dtype=np.int64), supplies)
    if flow.solve() != flow.OPTIMAL:
        return None
    routed: dict[int, list[int]] = {t: [] for t in tasks}
    used = flow.flows(arcs)
    for arc, amount in enumerate(used.tolist()):
        if amount:
            routed[tasks[tails[arc]]].append(heads[arc] - n_tasks)
    return routed


def balance_windows(
    capacities: Sequence[int], total: int, spread: Fraction | int = 1
) -> list[dict[int, tuple[int, int]]]:
    """Every way ``total`` tasks can be spread over clients with per-thread loads within ``spread``.

    Parameters
    ----------
    capacities:
        Stream threads per client.
    total:
        Tasks to spread (summed over clients).
    spread:
        The largest allowed ``max - min`` of tasks per thread (Kafka's balance checks use 1).

    Returns
    -------
    list of dict
        Windows, each mapping a capacity ``q`` to ``(low, high)``: a count vector summing to
        ``total`` has ``max_c n_c/q_c - min_c n_c/q_c <= spread`` exactly when, for some window,
        every client of capacity ``q`` has ``low <= n_c <= high``. Windows that cannot hold
        ``total`` tasks, or lie inside another window, are left out; an empty list means no
        such vector exists.

    Notes
    -----
    Let ``m`` be the smallest load of such a vector. It is some ``k/q`` (a count over a
    capacity) and lies in ``[avg - spread, avg]`` with ``avg = total / sum(capacities)``: the
    smallest load is at most the average, and the largest, at most ``m + spread``, at least it.
    Every load is then in ``[m, m + spread]``: counts in ``[ceil(q m), floor(q (m + spread))]``.
    Conversely a vector inside such a window has spread at most ``spread``. So the windows of
    the finitely many candidate ``m`` describe the condition exactly.

    Examples
    --------
    >>> balance_windows([1, 1, 1], 4)
    [{1: (1, 2)}]
    >>> balance_windows([1, 2], 6)  # only (2, 4) sums to 6 inside them
    [{1: (1, 2), 2: (2, 4)}, {1: (2, 2), 2: (3, 5)}, {1: (2, 3), 2: (4, 6)}]
    >>> balance_windows([1, 2], 6, spread=0)
    [{1: (2, 2), 2: (4, 4)}]
    """
    spread = Fraction(spread)
    distinct = sorted(set(capacities))
    if total == 0:
        return [{q: (0, 0) for q in distinct}]
    average = Fraction(total, sum(capacities))
    floor_level = max(average - spread, Fraction(0))
    candidates: set[Fraction] = set()
    for q in distinct:
        for k in range(math.floor(q * floor_level), math.ceil(q * average) + 1):
            level = Fraction(k, q)
            if floor_level <= level <= average:
                candidates.add(level)
    windows: list[dict[int, tuple[int, int]]] = []
    for level in sorted(candidates):
        window = {q: (math.ceil(q * level), math.floor(q * (level + spread))) for q in distinct}
        if any(a > b for a, b in window.values()):
            continue  # some capacity has no count with a load inside [level, level + spread]
        low = sum(window[q][0] for q in capacities)
        high = sum(window[q][1] for q in capacities)
        if low <= total <= high and window not in windows:
            windows.append(window)

    def inside(small: dict[int, tuple[int, int]], big: dict[int, tuple[int, int]]) -> bool:
        return small != big and all(
            big[q][0] <= small[q][0] and small[q][1] <= big[q][1] for q in small
        )

    return [w for w in windows if not any(inside(w, other) for other in windows)]


def add_balance(
    model: cp_model.CpModel,
    counts: Sequence[Any],
    capacities: Sequence[int],
    total: int,
    name: str,
    spread: Fraction = Fraction(1),
) -> BalanceVariables:
    """``max_c counts[c]/cap[c] - min_c counts[c]/cap[c] <= spread``, exactly, in integers.

    Parameters
    ----------
    model:
        The CP-SAT model to add to.
    counts:
        Per client, its count (a linear expression), ``len(capacities)`` of them.
    capacities:
        Stream threads per client.
    total:
        What the counts sum to (the constraint does not add that equation).
    name:
        Prefix of the new variables' names.
    spread:
        The largest allowed ``max - min`` of counts per thread.

    Returns
    -------
    BalanceVariables
        The variables added (to complete a hint with :meth:`BalanceVariables.hint`).

    Notes
    -----
    Clients are grouped by capacity; per group the largest and smallest count get a
    variable, and for every pair of groups ``(k, m)`` the cross-multiplied
    ``(hi_k * cap_m - lo_m * cap_k) * den <= num * cap_k * cap_m`` holds (``spread =
    num / den``). That alone relaxes badly, so the model also picks one of the few windows of
    :func:`balance_windows` (one boolean each) and bounds every group by it. The bounds are
    weighted by the booleans rather than enforced by them: exact for a 0/1 choice, and for a
    fractional one the convex hull of the windows' union, which keeps the linear relaxation
    close to a transportation problem's.
    """
    by_capacity: dict[int, list[int]] = {}
    for c, capacity in enumerate(capacities):
        by_capacity.setdefault(capacity, []).append(c)
    hi: dict[int, Any] = {}
    lo: dict[int, Any] = {}
    for capacity, clients in sorted(by_capacity.items()):
        hi[capacity] = model.new_int_var(0, total, f"{name}_hi_{capacity}")
        lo[capacity] = model.new_int_var(0, total, f"{name}_lo_{capacity}")
        for c in clients:
            model.add(hi[capacity] >= counts[c])
            model.add(lo[capacity] <= counts[c])
    for k in hi:
        for m in lo:
            model.add((hi[k] * m - lo[m] * k) * spread.denominator <= spread.numerator * k * m)
    windows = balance_windows(capacities, total, spread)
    if not windows:
        model.add_bool_or([])  # no balanced count vector exists
        return BalanceVariables(hi, lo, [], [])
    choices = [model.new_bool_var(f"{name}_window_{j}") for j in range(len(windows))]
    model.add_exactly_one(choices)
    for capacity in hi:
        low = [window[capacity][0] for window in windows]
        high = [window[capacity][1] for window in windows]
        model.add(lo[capacity] >= cp_model.LinearExpr.weighted_sum(choices, low))
        model.add(hi[capacity] <= cp_model.LinearExpr.weighted_sum(choices, high))
    return BalanceVariables(hi, lo, choices, windows)


@dataclass(frozen=True, slots=True)
class BalanceVariables:
    """The variables :func:`add_balance` adds.

    Attributes
    ----------
    hi, lo:
        Per capacity, the largest and smallest count of its clients.
    choices:
        One boolean per window of ``windows``, exactly one true.
    windows:
        The balance windows (see :func:`balance_windows`).
    """

    hi: dict[int, Any]
    lo: dict[int, Any]
    choices: list[Any]
    windows: list[dict[int, tuple[int, int]]]

    def hint(
        self, model: cp_model.CpModel, counts: Sequence[int], capacities: Sequence[int]
    ) -> None:
        """Hint these variables from the counts of a hinted assignment (a complete hint lets
        CP-SAT start from it). A count vector in no window hints no window."""
        by_capacity: dict[int, list[int]] = {}
        for count, capacity in zip(counts, capacities, strict=True):
            by_capacity.setdefault(capacity, []).append(count)
        for capacity, values in by_capacity.items():
            model.add_hint(self.hi[capacity], max(values))
            model.add_hint(self.lo[capacity], min(values))
        chosen = next(
            (
                j
                for j, window in enumerate(self.windows)
                if all(
                    window[q][0] <= min(v) and max(v) <= window[q][1]
                    for q, v in by_capacity.items()
                )
            ),
            None,
        )
        for j, choice in enumerate(self.choices):
            model.add_hint(choice, int(j == chosen))


def deal_stateless(
    groups: Sequence[tuple[tuple[int, ...], list[int]]],
    stays: Callable[[int, int], int],
    slots: list[int],
    active: list[list[int]],
) -> None:
    """Give the stateless tasks to clients as a solved model's counts say, in place.

    Parameters
    ----------
    groups:
        The stateless tasks grouped by their previous owners (:func:`_stateless_groups`): per
        group the owners in order and the member task indices.
    stays:
        ``stays(client, group)``: how many of the group's tasks stay on that owner (the solved
        stay variable).
    slots:
        Per client its solved number of stateless actives; consumed.
    active:
        Per client its active task indices; the stateless ones are appended.

    Each owner keeps the first of its group's tasks up to its stay count; the tasks left over
    go, in task index order, to the clients with slots left, in client order.
    """
    leftovers: list[int] = []
    for g, (owners, members) in enumerate(groups):
        queue = list(members)
        for c in owners:
            keep = stays(c, g)
            active[c].extend(queue[:keep])
            slots[c] -= keep
            queue = queue[keep:]
        leftovers.extend(queue)
    leftovers.sort()
    for c, slot in enumerate(slots):
        take, leftovers = leftovers[:slot], leftovers[slot:]
        active[c].extend(take)


def _stateless_groups(costs: PlacementCosts) -> list[tuple[tuple[int, ...], list[int]]]:
    """Stateless tasks grouped by the clients that ran them as active before (sorted)."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for t in costs.stateless_indices:
        groups.setdefault(tuple(sorted(costs.prev_active[t])), []).append(t)
    return sorted(groups.items())


def _restore_scale(costs: PlacementCosts) -> int:
    """The common divisor that keeps the largest possible restore total within int64 reach.

    Dividing every cost by the same factor and rounding up is monotone: a cheaper placement never
    becomes dearer than a costlier one, and a placement that costs something still does.
    """
    copies = 1 + costs.num_standbys
    worst = 0
    for t in costs.stateful_indices:
        worst += copies * max((costs.restore[c][t] for c in range(costs.num_clients)), default=0)
    return max(1, -(-worst // MAX_RESTORE_TOTAL))


__all__ = [
    "AssignmentModel",
    "BalanceVariables",
    "HallCut",
    "MAX_RESTORE_TOTAL",
    "OBJECTIVES",
    "Problem",
    "add_balance",
    "balance_windows",
    "hall_violations",
    "realize_generic",
    "special_clients",
]
