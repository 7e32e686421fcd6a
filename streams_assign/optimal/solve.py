"""Solve the assignment model to proven optimality, one lexicographic stage at a time.

:func:`solve_optimal` minimises the objectives of :data:`~streams_assign.optimal.model.OBJECTIVES`
in order, fixing each stage's optimum as an upper bound before the next stage runs. The
restore-records stage stops as soon as CP-SAT meets the min-cost-flow lower bound of
:mod:`~streams_assign.optimal.bounds`, which proves it optimal without CP-SAT's own proof.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ortools.sat.python import cp_model

from streams_assign.model import Assignment, ClientAssignment, ClusterState
from streams_assign.optimal.bounds import FlowBound, flow_lower_bound, min_active_spread
from streams_assign.optimal.costs import PlacementCosts
from streams_assign.optimal.face_moves import solve_moves_on_faces
from streams_assign.optimal.metrics import Metrics, score
from streams_assign.optimal.model import (
    OBJECTIVES,
    AssignmentModel,
    HallCut,
    Problem,
    special_clients,
)
from streams_assign.optimal.restore_face import restore_optimum
from streams_assign.optimal.same_rules import (
    SAME_RULES_OBJECTIVES,
    add_same_rules,
    target_hint,
    without_warmups,
    zone_violations,
)

log = logging.getLogger(__name__)

#: Default CP-SAT settings, fixed so that runs repeat (objective values, not assignments).
DEFAULT_NUM_WORKERS = 2
DEFAULT_RANDOM_SEED = 0
DEFAULT_TIME_LIMIT = 10.0
#: Hall cuts learnt before giving up aggregation (each costs a re-solve).
MAX_HALL_CUTS = 20
#: Wall seconds a stage that found nothing may still spend completing the caller's hint (its
#: hinted variables fixed), even past the time limit: propagation alone usually completes it.
HINT_FALLBACK_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class StageResult:
    """One lexicographic stage: what it minimised and how far the solver got.

    Attributes
    ----------
    name:
        The metric minimised (``restore_records``, ``moves``, ``active_load_spread``).
    status:
        ``OPTIMAL`` (proven by CP-SAT or by the flow bound), ``FEASIBLE``, ``INFEASIBLE``,
        ``UNKNOWN`` (no solution in time), or ``NOT_RUN`` (no time left to start it).
    value, bound:
        The best objective found and a proven lower bound, in the metric's unit, given the
        earlier stages' values; ``None`` when unknown.
    seconds:
        Wall time of the stage's solve.
    from_hint:
        The search found no solution in its time, and the stage's value is that of the
        caller's hint (its hinted variables fixed, the rest solved): a ``FEASIBLE`` stage.
    """

    name: str
    status: str
    value: int | Fraction | None
    bound: int | Fraction | None
    seconds: float
    from_hint: bool = False


@dataclass(frozen=True, slots=True)
class OptimalResult:
    """The outcome of :func:`solve_optimal`.

    Attributes
    ----------
    problem:
        ``target`` or ``immediate``.
    status:
        ``OPTIMAL`` (every stage proven), ``FEASIBLE`` (a solution, not proven best),
        ``INFEASIBLE`` (no assignment meets the constraints; see ``explanation``) or ``UNKNOWN``
        (the time limit ran out before any solution).
    assignment:
        The best assignment found, or ``None``.
    metrics:
        The scorer's metrics of ``assignment``.
    objective, bound:
        Per objective name, the value of ``assignment`` and a proven lower bound.
    stages:
        Each stage's details.
    solve_seconds:
        Wall time of model building, bounds and all stages.
    explanation:
        Why there is no solution (INFEASIBLE/UNKNOWN), else ``None``.
    restore_scale:
        The factor restore records were divided by inside the solver (1 = exact).
    flow_bound:
        The min-cost-flow lower bounds computed on the way.
    same_rules:
        Whether the immediate problem was solved with the assignor's hard rules
        (:mod:`~streams_assign.optimal.same_rules`).
    """

    problem: Problem
    status: str
    assignment: Assignment | None
    metrics: Metrics | None
    objective: Mapping[str, int | Fraction]
    bound: Mapping[str, int | Fraction | None]
    stages: tuple[StageResult, ...]
    solve_seconds: float
    explanation: str | None = None
    restore_scale: int = 1
    flow_bound: FlowBound | None = None
    same_rules: bool = False

    def gap(self, name: str) -> float | None:
        """Relative gap ``(value - bound) / value`` of an objective (0 when the value is 0)."""
        value, bound = self.objective.get(name), self.bound.get(name)
        if value is None or bound is None:
            return None
        if value == 0:
            return 0.0
        return float(max(Fraction(0), Fraction(value) - Fraction(bound)) / Fraction(value))

    def to_json(self) -> dict[str, Any]:
        """The assignment in the output format, plus status, objective, bound, gap and timing."""
        document: dict[str, Any] = {}
        if self.assignment is not None:
            document.update(self.assignment.to_json())
        document["problem"] = self.problem.value
        if self.same_rules:
            document["same_rules"] = True
        document["status"] = self.status
        document["objective"] = {k: json_number(v) for k, v in self.objective.items()}
        document["bound"] = {k: json_number(v) for k, v in self.bound.items()}
        document["gap"] = {k: self.gap(k) for k in self.objective}
        document["solve_seconds"] = round(self.solve_seconds, 3)
        document["stages"] = [
            {
                "objective": s.name,
                "status": s.status,
                "value": json_number(s.value),
                "bound": json_number(s.bound),
                "seconds": round(s.seconds, 3),
                **({"from_hint": True} if s.from_hint else {}),
            }
            for s in self.stages
        ]
        if self.restore_scale != 1:
            document["restore_scale"] = self.restore_scale
        if self.explanation:
            document["explanation"] = self.explanation
        return document


def json_number(value: int | Fraction | None) -> int | float | None:
    """A metric value for JSON: fractions as floats rounded to 6 decimals."""
    if isinstance(value, Fraction):
        return round(float(value), 6)
    return value


def make_solver(num_workers: int, random_seed: int, seconds: float) -> cp_model.CpSolver:
    """A CP-SAT solver with pinned workers and seed and a wall-time limit.

    Parameters
    ----------
    num_workers, random_seed:
        CP-SAT's ``num_workers`` and ``random_seed``.
    seconds:
        ``max_time_in_seconds`` (at least 0.01).

    Returns
    -------
    CpSolver
    """
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = num_workers
    solver.parameters.random_seed = random_seed
    solver.parameters.max_time_in_seconds = max(seconds, 0.01)
    # With fewer than three workers CP-SAT's portfolio has no worker that linearises the
    # at-most-one constraints, and the bound of this transportation-like model stalls far below
    # the optimum; ask for the LP-heavy worker explicitly.
    if num_workers == 1:
        solver.parameters.linearization_level = 2
    elif num_workers == 2:
        solver.parameters.subsolvers.extend(["max_lp", "default_lp"])
    return solver


class _StopAtBound(cp_model.CpSolverSolutionCallback):
    """Stop the search at a solution that meets a bound proven elsewhere (the flow bound)."""

    def __init__(self, bound: int | None) -> None:
        super().__init__()
        self.bound = bound
        self.reached = False

    def on_solution_callback(self) -> None:
        if self.bound is not None and self.objective_value <= self.bound + 0.5:
            self.reached = True
            self.stop_search()


def solve_optimal(
    cluster: ClusterState,
    problem: Problem | str = Problem.TARGET,
    time_limit: float = DEFAULT_TIME_LIMIT,
    num_workers: int = DEFAULT_NUM_WORKERS,
    random_seed: int = DEFAULT_RANDOM_SEED,
    hint: Assignment | None = None,
    costs: PlacementCosts | None = None,
    aggregate: bool = True,
    same_rules: bool = False,
    zone_rule: bool = True,
    flows: bool = True,
) -> OptimalResult:
    """Solve one problem to proven optimality (or the best found within ``time_limit``).

    Parameters
    ----------
    cluster:
        The validated rebalance input.
    problem:
        ``"target"`` (best converged assignment) or ``"immediate"`` (best next assignment under
        Kafka's availability rule).
    time_limit:
        Wall seconds for all stages together.
    num_workers, random_seed:
        CP-SAT's search workers and seed, pinned so runs repeat.
    hint:
        An assignment to start the search from (Kafka's HA, say); parts the model forbids are
        repaired by CP-SAT.
    costs:
        The cluster's cost table, when already built.
    aggregate:
        Count interchangeable clients instead of naming them (see
        :class:`~streams_assign.optimal.model.AssignmentModel`); falls back to the full model
        by itself when the count cannot be turned into names.
    same_rules:
        Immediate problem only: add the hard rules the lag-aware sticky assignor keeps (the
        converged active balance and KIP-708's zone rule, see
        :mod:`~streams_assign.optimal.same_rules`) and minimise
        :data:`~streams_assign.optimal.same_rules.SAME_RULES_OBJECTIVES` instead; every client
        is named (no aggregation).
    zone_rule:
        With ``same_rules``: also minimise zone violations first (``False``: the balance only).
    flows:
        Target only: solve the restore records by min-cost flows and the moves over the
        restore-optimal faces (:mod:`~streams_assign.optimal.restore_face`,
        :mod:`~streams_assign.optimal.face_moves`), falling back to the whole CP-SAT model when
        the flows do not apply; ``False`` (or ``aggregate=False``): the whole model, staged,
        as a cross-check. ``hint`` is not used by the flows.

    Returns
    -------
    OptimalResult
        Status, assignment, objective values and bounds per stage.

    Notes
    -----
    The immediate problem's first stage, the active-load spread, is solved exactly by
    feasibility flows (:func:`~streams_assign.optimal.bounds.min_active_spread`) and then
    bounds the later stages. Stages run in the order of
    :data:`~streams_assign.optimal.model.OBJECTIVES`; each stage's best value becomes an upper
    bound before the next stage runs, which is exact lexicographic optimisation when every
    stage is OPTIMAL. ``hint`` guides the first stage only.

    Warmups are allowed in the immediate problem (at most ``max.warmup.replicas``) but not
    modelled: a warmup is an extra standby, which changes neither the active load nor
    availability and only adds restore records and moves, so deleting every warmup of a feasible
    assignment keeps it feasible and no worse in any objective. The optimum without warmups is
    the optimum with them.

    References
    ----------
    Kafka Streams ``HighAvailabilityTaskAssignor`` and ``AssignmentTestUtils`` (balance
    checks); KIP-441, "Smooth Scaling Out for Kafka Streams".

    Examples
    --------
    >>> from streams_assign.formats.cluster_state import parse_cluster_state
    >>> cluster = parse_cluster_state({"stateful_tasks": ["0_0", "0_1"], "clients": [
    ...     {"id": "00000000-0000-0000-0000-000000000001", "capacity": 1,
    ...      "prev_active": ["0_0"], "task_lags": {"0_0": -2}},
    ...     {"id": "00000000-0000-0000-0000-000000000002", "capacity": 1,
    ...      "prev_active": ["0_1"], "task_lags": {"0_1": -2}}]})
    >>> result = solve_optimal(cluster, "target")
    >>> result.status, result.objective["restore_records"], result.objective["moves"]
    ('OPTIMAL', 0, 0)
    """
    problem = Problem(problem)
    if same_rules and problem is not Problem.IMMEDIATE:
        raise ValueError(f"same_rules applies to the immediate problem, not {problem.value}")
    objectives = SAME_RULES_OBJECTIVES if same_rules else OBJECTIVES[problem]
    aggregate = aggregate and not same_rules
    start = time.monotonic()
    deadline = start + time_limit
    costs = costs or PlacementCosts.of(cluster)
    if problem is Problem.TARGET and aggregate and flows:
        by_flows = _solve_target_by_flows(cluster, costs, start, deadline, num_workers, random_seed)
        if by_flows is not None:
            return by_flows
    flow = flow_lower_bound(cluster, problem, costs)
    spread_stage: StageResult | None = None
    active_spread = None
    if problem is Problem.IMMEDIATE and not same_rules:
        spread_stage, active_spread = _active_spread_stage(costs)
    cuts: list[HallCut] = []
    while True:
        built = AssignmentModel(
            costs, problem, aggregate=aggregate, active_spread=active_spread, cuts=cuts
        )
        _add_rules_and_hint(built, costs, hint, same_rules, zone_rule)
        kept_hint = _hint_to_keep(cluster, costs, built, hint) if same_rules else None
        stages, last_good = _run_stages(
            built,
            objectives,
            flow,
            deadline,
            num_workers,
            random_seed,
            carry_solution=same_rules,
            kept_hint=kept_hint,
        )
        if spread_stage is not None:
            stages.insert(0, spread_stage)
        if last_good is None:
            return _no_solution(
                costs, problem, flow, stages, start, time_limit, built, num_workers, random_seed
            )
        assignment = built.extract(last_good)
        if assignment is not None:
            break
        # The counted generic copies cannot be named: learn the broken Hall inequalities and
        # solve again, or, when none is found (or time is up), fall back to naming every client.
        new_cuts = [cut for cut in built.hall_cuts(last_good) if cut not in cuts]
        if not aggregate:
            raise AssertionError("the unaggregated model has no generic copies to name")
        if not new_cuts or len(cuts) >= MAX_HALL_CUTS or time.monotonic() >= deadline:
            log.info("generic copies could not be named; solving without aggregation")
            return solve_optimal(
                cluster,
                problem,
                max(deadline - time.monotonic(), 1.0),
                num_workers,
                random_seed,
                hint,
                costs,
                aggregate=False,
            )
        log.info("generic copies could not be named; adding %d Hall cut(s)", len(new_cuts))
        cuts.extend(new_cuts)
    elapsed = time.monotonic() - start
    return _optimal_result(
        cluster, costs, problem, objectives, built, assignment, stages, flow, elapsed, same_rules
    )


def _solve_target_by_flows(
    cluster: ClusterState,
    costs: PlacementCosts,
    start: float,
    deadline: float,
    num_workers: int,
    random_seed: int,
) -> OptimalResult | None:
    """The target by flows and faces, or ``None`` when they do not apply (see ``flows``).

    Restore records: the flow bound of :func:`~streams_assign.optimal.restore_face.restore_optimum`
    met by a balanced assignment (the flows' own, or any point of a face), hence optimal.
    Moves: CP-SAT over the restore-optimal faces, proven when every face is.
    """
    special = {t: special_clients(costs, t, True) for t in costs.stateful_indices}
    optimum = restore_optimum(costs, special)
    if optimum is None:
        return None
    start_point = None
    if optimum.assignment is not None:
        first = score(cluster, optimum.assignment, costs)
        if first.restore_records != optimum.records or not first.valid:
            raise AssertionError("the flows' assignment does not meet their own bound")
        start_point = (optimum.assignment, first.moves)
    moves = solve_moves_on_faces(
        costs,
        optimum.faces,
        special,
        start_point,
        deadline,
        lambda seconds: make_solver(num_workers, random_seed, seconds),
    )
    if moves is None:
        return None
    stages = [
        StageResult(
            "restore_records", "OPTIMAL", optimum.records, optimum.records, optimum.seconds
        ),
        StageResult("moves", moves.status, moves.moves, moves.bound, moves.seconds),
    ]
    flow = FlowBound(Problem.TARGET, optimum.records, None, True, optimum.windows, optimum.seconds)
    elapsed = time.monotonic() - start
    return _optimal_result(
        cluster,
        costs,
        Problem.TARGET,
        OBJECTIVES[Problem.TARGET],
        None,
        moves.assignment,
        stages,
        flow,
        elapsed,
        False,
    )


def _active_spread_stage(costs: PlacementCosts) -> tuple[StageResult, Fraction]:
    """The immediate problem's first stage, the active-load spread, solved by flows."""
    spread = min_active_spread(costs)
    stage = StageResult(
        "active_load_spread", "OPTIMAL", spread.spread, spread.spread, spread.seconds
    )
    return stage, spread.spread


def _add_rules_and_hint(
    built: AssignmentModel,
    costs: PlacementCosts,
    hint: Assignment | None,
    same_rules: bool,
    zone_rule: bool,
) -> None:
    """Add the same-rules constraints (when asked) and the caller's hint to the model."""
    if same_rules:
        add_same_rules(built, zone_rule)
    if hint is not None:
        for var, value in built.variable_values(hint).items():
            built.model.add_hint(var, value)
        if same_rules:
            target_hint(built, _stateful_actives(costs, hint))


def _optimal_result(
    cluster: ClusterState,
    costs: PlacementCosts,
    problem: Problem,
    objectives: tuple[str, ...],
    built: AssignmentModel | None,
    assignment: Assignment,
    stages: list[StageResult],
    flow: FlowBound,
    elapsed: float,
    same_rules: bool,
) -> OptimalResult:
    """The result of a solve that found an assignment: its metrics, objectives and bounds."""
    metrics = score(cluster, assignment, costs)
    assignment = Assignment(
        clients=assignment.clients,
        probing_rebalance_needed=probing_rebalance_needed(costs, assignment),
        assignor=assignment.assignor,
    )
    objective: dict[str, int | Fraction] = {}
    for name in objectives:
        if name == "zone_violations":
            if built is not None and name in built.objectives:
                objective[name] = zone_violations(cluster, assignment)
            continue
        raw_metric = getattr(metrics, name)
        objective[name] = raw_metric if isinstance(raw_metric, Fraction) else int(raw_metric)
    bound = _with_flow_bounds({stage.name: stage.bound for stage in stages}, flow)
    all_optimal = all(s.status == "OPTIMAL" for s in stages)
    return OptimalResult(
        problem=problem,
        status="OPTIMAL" if all_optimal else "FEASIBLE",
        assignment=assignment,
        metrics=metrics,
        objective=objective,
        bound=bound,
        stages=tuple(stages),
        solve_seconds=elapsed,
        restore_scale=1 if built is None else built.restore_scale,
        flow_bound=flow,
        same_rules=same_rules,
    )


def _hint_to_keep(
    cluster: ClusterState, costs: PlacementCosts, built: AssignmentModel, hint: Assignment | None
) -> tuple[dict[str, int], list[tuple[int, int]]] | None:
    """The hint's objective values (in the solver's units) and its hinted variables.

    The values are those of the hint less its warmups, as the model sees it
    (:meth:`~streams_assign.optimal.model.AssignmentModel.variable_values` drops warmups).
    """
    if hint is None or built.restore_scale != 1:
        return None
    hint = without_warmups(hint)
    metrics = score(cluster, hint, costs)
    values = {
        "zone_violations": zone_violations(cluster, hint),
        "restore_records": metrics.restore_records,
        "moves": metrics.moves,
    }
    proto = built.model.proto.solution_hint
    return values, list(zip(proto.vars, proto.values, strict=True))


def _stateful_actives(costs: PlacementCosts, assignment: Assignment) -> dict[int, int]:
    """Per stateful task index, the client index running it in ``assignment``."""
    index = {task: t for t, task in enumerate(costs.tasks)}
    found = {}
    for c, pid in enumerate(costs.client_ids):
        for task in assignment.clients.get(pid, ClientAssignment()).active:
            t = index.get(task)
            if t is not None and costs.stateful[t]:
                found[t] = c
    return found


def _run_stages(
    built: AssignmentModel,
    objectives: tuple[str, ...],
    flow: FlowBound,
    deadline: float,
    num_workers: int,
    random_seed: int,
    carry_solution: bool = False,
    kept_hint: tuple[dict[str, int], list[tuple[int, int]]] | None = None,
) -> tuple[list[StageResult], cp_model.CpSolver | None]:
    """Minimise the model's objectives in order; each optimum bounds the next stage.

    With ``carry_solution`` each stage starts from the last stage's solution, or from the
    caller's hint (``kept_hint``: its objective values and its hinted variables by proto
    index) while that hint meets every bound fixed so far.
    """
    stages: list[StageResult] = []
    last_good: cp_model.CpSolver | None = None
    for name in objectives:
        if name not in built.objectives:
            continue  # solved by flows, or not part of this cluster's model
        expression = built.objectives[name]
        remaining = deadline - time.monotonic()
        if remaining <= 0 and last_good is not None:
            stages.append(StageResult(name, "NOT_RUN", None, None, 0.0))
            continue
        built.model.minimize(expression)
        later = sum(
            1 for other in objectives[objectives.index(name) + 1 :] if other in built.objectives
        )
        if carry_solution and later:
            # A stage that cannot be proven must leave the next one time to run (s0071 of
            # kafka-diff spent all 30 s proving its restore records).
            remaining /= 2
        known = None
        if (
            name == "restore_records"
            and flow.restore_records is not None
            and built.restore_scale == 1
        ):
            known = flow.restore_records
        solved = _solve_stage(
            built, name, known, remaining, deadline, num_workers, random_seed, kept_hint
        )
        if solved.status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            stages.append(StageResult(name, solved.status_name, None, None, solved.seconds))
            break
        raw = round(solved.solver.objective_value)
        stages.append(_stage_result(built, name, raw, known, solved))
        # Not hinting the next stage with this solution is deliberate: measured, the hint
        # made the next stage slower, not faster.
        built.model.add(expression <= raw)
        built.model.clear_hints()
        if kept_hint is not None and kept_hint[0].get(name, raw + 1) > raw:
            kept_hint = None  # the caller's hint is worse than this stage's optimum
        if kept_hint is not None:
            for i, value in kept_hint[1]:
                built.model.add_hint(built.model.get_int_var_from_proto_index(i), value)
        elif carry_solution:
            # The same-rules model, with one worker, may find no solution at all in the next
            # stage's time without one to start from (p0058 of kafka-ext did not in 30 s).
            for i in range(len(built.model.proto.variables)):
                var = built.model.get_int_var_from_proto_index(i)
                built.model.add_hint(var, solved.solver.value(var))
        last_good = solved.solver
    return stages, last_good


@dataclass
class _SolvedStage:
    """What one stage's solve returned.

    ``status_name`` is the first solve's; ``from_hint`` says the solution is the caller's
    hint, completed after the first solve found none, and ``searched_bound`` is then the first
    solve's bound (in the solver's units). ``reached``: the first solve stopped at the known
    bound.
    """

    solver: cp_model.CpSolver
    status: Any
    status_name: str
    seconds: float
    reached: bool
    from_hint: bool = False
    searched_bound: float = math.nan


def _solve_stage(
    built: AssignmentModel,
    name: str,
    known: int | None,
    remaining: float,
    deadline: float,
    num_workers: int,
    random_seed: int,
    kept_hint: tuple[dict[str, int], list[tuple[int, int]]] | None,
) -> _SolvedStage:
    """Solve the stage minimising ``name``, stopping at ``known`` (a proven lower bound).

    When nothing is found in ``remaining`` seconds and the caller's hint meets every bound
    fixed so far, the hint is completed with its hinted variables fixed.
    """
    solver = make_solver(num_workers, random_seed, remaining)
    stopper = _StopAtBound(known)
    began = time.monotonic()
    status = solver.solve(built.model, stopper)
    solved = _SolvedStage(
        solver, status, solver.status_name(status), time.monotonic() - began, stopper.reached
    )
    if status == cp_model.UNKNOWN and kept_hint is not None:
        # No solution in time, but the caller's hint meets every bound fixed so far: keep
        # it (s0119-large of kafka-diff found nothing in 15 s under load with a full hint).
        solved.searched_bound = solver.best_objective_bound
        solved.solver = make_solver(
            num_workers, random_seed, max(deadline - time.monotonic(), HINT_FALLBACK_SECONDS)
        )
        solved.solver.parameters.fix_variables_to_their_hinted_value = True
        fixed_status = solved.solver.solve(built.model)
        solved.seconds = time.monotonic() - began
        if fixed_status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            solved.status, solved.from_hint = fixed_status, True
            log.info("stage %s found no solution in time; kept the hint's", name)
    return solved


def _stage_result(
    built: AssignmentModel, name: str, raw: int, known: int | None, solved: _SolvedStage
) -> StageResult:
    """A solved stage's value, bound and status: OPTIMAL when the bound meets the value."""
    value = built.objective_value(name, raw)
    status_name = solved.status_name
    if solved.from_hint:
        bound = (
            built.objective_bound(name, solved.searched_bound)
            if math.isfinite(solved.searched_bound)
            else None
        )
        status_name = "FEASIBLE"
    else:
        bound = built.objective_bound(name, solved.solver.best_objective_bound)
    if known is not None:
        bound = known if bound is None else max(bound, known)
    if solved.reached or bound == value:
        status_name = "OPTIMAL"
    if (
        name == "restore_records"
        and built.restore_scale > 1
        and bound is not None
        and bound < value
    ):
        # Optimal for the scaled costs only: not a proof for the exact records.
        status_name = "FEASIBLE"
    return StageResult(name, status_name, value, bound, solved.seconds, solved.from_hint)


def _with_flow_bounds(
    bound: dict[str, int | Fraction | None], flow: FlowBound
) -> dict[str, int | Fraction | None]:
    """Raise each stage's bound to the min-cost-flow bound where that is higher.

    The flow bounds hold for every feasible assignment, so also for the lexicographic optimum,
    whatever the earlier stages fixed.
    """
    merged = dict(bound)
    for name, value in (("restore_records", flow.restore_records), ("moves", flow.moves)):
        if value is None:
            continue
        current = merged.get(name)
        merged[name] = value if current is None else max(current, value)
    return merged


def _no_solution(
    costs: PlacementCosts,
    problem: Problem,
    flow: FlowBound,
    stages: list[StageResult],
    start: float,
    time_limit: float,
    built: AssignmentModel,
    num_workers: int,
    random_seed: int,
) -> OptimalResult:
    infeasible = bool(stages) and stages[-1].status == "INFEASIBLE"
    return OptimalResult(
        problem=problem,
        status="INFEASIBLE" if infeasible else "UNKNOWN",
        assignment=None,
        metrics=None,
        objective={},
        bound=_with_flow_bounds({s.name: s.bound for s in stages}, flow),
        stages=tuple(stages),
        solve_seconds=time.monotonic() - start,
        explanation=(
            explain_infeasibility(costs, problem, flow, num_workers, random_seed)
            if infeasible
            else f"no assignment found within the time limit of {time_limit:g} s"
        ),
        restore_scale=built.restore_scale,
        flow_bound=flow,
    )


def probing_rebalance_needed(costs: PlacementCosts, assignment: Assignment) -> bool:
    """Whether a stateful active sits where another client has strictly less to restore.

    Parameters
    ----------
    costs:
        The cluster's cost table.
    assignment:
        An assignment of the cluster (every client listed).

    Returns
    -------
    bool
        The ``probing_rebalance_needed`` of the optimum's output.

    Notes
    -----
    Kafka's ``needsMove`` check of ``TaskMovement.assignActiveTaskMovements`` applied to the
    result: such a task would be moved at a later (probing) rebalance once a better client
    caught up.
    """
    index = {task: t for t, task in enumerate(costs.tasks)}
    for c, pid in enumerate(costs.client_ids):
        for task in assignment.clients[pid].active:
            t = index[task]
            if not costs.stateful[t] or costs.caught_up[c][t]:
                continue
            here = costs.restore[c][t]
            if any(costs.restore[o][t] < here for o in range(costs.num_clients)):
                return True
    return False


def explain_infeasibility(
    costs: PlacementCosts,
    problem: Problem,
    flow: FlowBound | None = None,
    num_workers: int = DEFAULT_NUM_WORKERS,
    random_seed: int = DEFAULT_RANDOM_SEED,
) -> str:
    """One sentence on which constraint group makes ``problem`` infeasible.

    Parameters
    ----------
    costs:
        The cluster's cost table.
    problem:
        The problem found infeasible.
    flow:
        Its min-cost-flow bounds, when computed (they may already prove the culprit).
    num_workers, random_seed:
        CP-SAT settings for the relaxed re-solves.

    Returns
    -------
    str
        The explanation, naming the constraint group, the copies per task and the capacities.

    Notes
    -----
    For the target: when the min-cost flow already finds no balanced way to place every task's
    copies on distinct clients, the stateful load is to blame; otherwise the model is re-solved
    without the stateful-load, then without the active-load balance, and the group whose removal
    restores feasibility is named.
    """
    n_standbys = costs.num_standbys
    n_stateful = len(costs.stateful_indices)
    capacities = ", ".join(str(c) for c in costs.capacities)
    copies = (
        f"{1 + n_standbys} cop{'y' if n_standbys == 0 else 'ies'} (active + {n_standbys} standby)"
    )
    stateful_sentence = (
        f"no assignment keeps the stateful load (stateful actives + standbys per thread) within 1 "
        f"across clients while placing {copies} of each of {n_stateful} stateful task(s) on "
        f"distinct clients (client capacities: {capacities})"
    )
    if problem is not Problem.TARGET:
        return (
            "the immediate problem has no feasible assignment (unexpected; please report the input)"
        )
    if flow is not None and not flow.feasible:
        return stateful_sentence
    for keep_active, keep_stateful, sentence in (
        (True, False, stateful_sentence),
        (
            False,
            True,
            f"no assignment keeps the active load (actives per thread) within 1 across clients "
            f"(client capacities: {capacities})",
        ),
    ):
        relaxed = AssignmentModel(
            costs, problem, balance_active=keep_active, balance_stateful=keep_stateful
        )
        status = make_solver(num_workers, random_seed, 10.0).solve(relaxed.model)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return sentence
    return (
        "no assignment balances active load and stateful load together with "
        f"{copies} of each stateful task (client capacities: {capacities})"
    )


def model_violations(
    cluster: ClusterState, assignment: Assignment, problem: Problem | str
) -> list[str]:
    """Why ``assignment`` is not a feasible point of ``problem``'s model (empty when it is).

    Parameters
    ----------
    cluster:
        The cluster state.
    assignment:
        Any assignment of it (Kafka's HA output, typically).
    problem:
        ``target`` or ``immediate``.

    Returns
    -------
    list of str
        One sentence per broken constraint.

    Notes
    -----
    *target*: every task active once, no standby of a stateless task or on its active's client,
    exactly ``min(num.standby.replicas, clients - 1)`` standbys per stateful task (so no
    warmups), active and stateful load spreads <= 1.

    *immediate*: every task active once, no standby of a stateless task or on its active's
    client, at least that many standbys per stateful task besides warmups and at most
    ``max.warmup.replicas`` extra standbys in total (Kafka's ``assertValidAssignment`` count),
    and Kafka's availability rule. The solver drops warmups (see :func:`solve_optimal`), which
    keeps such a point feasible and no worse.
    """
    problem = Problem(problem)
    costs = PlacementCosts.of(cluster)
    metrics = score(cluster, assignment, costs)
    index = {task: t for t, task in enumerate(costs.tasks)}
    reasons = [s for s in metrics.violations if "held by" not in s and "extra copies" not in s]
    standbys: dict[int, int] = {}
    labelled: dict[int, int] = {}
    for c, pid in enumerate(costs.client_ids):
        decided = assignment.clients.get(pid, ClientAssignment())
        for task in decided.standby:
            standbys[index[task]] = standbys.get(index[task], 0) + 1
        for task in decided.warmup:
            labelled[index[task]] = labelled.get(index[task], 0) + 1
        if problem is Problem.IMMEDIATE:
            for task in decided.active:
                t = index[task]
                up = costs.caught_up_clients(t)
                if costs.stateful[t] and not costs.caught_up[c][t] and up:
                    reasons.append(
                        f"task {task} is active on {pid}, which is not caught up, although "
                        f"{len(up)} client(s) are (availability rule)"
                    )
    wanted = costs.num_standbys
    extra = 0
    for t in costs.stateful_indices:
        placed = standbys.get(t, 0)
        if problem is Problem.TARGET:
            if placed != wanted:
                task = costs.tasks[t]
                reasons.append(
                    f"task {task} has {placed} standbys, the target wants exactly {wanted}"
                )
            continue
        regular = placed - labelled.get(t, 0)
        if regular < wanted:
            reasons.append(
                f"task {costs.tasks[t]} has {regular} standbys besides warmups, fewer than {wanted}"
            )
        extra += max(0, placed - wanted)
    if problem is Problem.TARGET:
        for label, spread in (
            ("active", metrics.active_load_spread),
            ("stateful", metrics.stateful_load_spread),
        ):
            if spread > 1:
                reasons.append(f"{label} load spread {float(spread):.3g} exceeds 1 task per thread")
    elif extra > cluster.configs.max_warmup_replicas:
        reasons.append(
            f"{extra} warmups exceed max.warmup.replicas = {cluster.configs.max_warmup_replicas}"
        )
    return reasons


__all__ = [
    "DEFAULT_NUM_WORKERS",
    "DEFAULT_RANDOM_SEED",
    "DEFAULT_TIME_LIMIT",
    "MAX_HALL_CUTS",
    "OptimalResult",
    "StageResult",
    "explain_infeasibility",
    "json_number",
    "make_solver",
    "model_violations",
    "probing_rebalance_needed",
    "solve_optimal",
]
