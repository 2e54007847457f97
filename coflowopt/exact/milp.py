"""Event-position MILP (Pyomo + HiGHS): the alternative exact model for ``sum w_k C_k``.

See ``models/exact-wcct-milp.md``. Positions ``e = 1..K+R`` hold one event
each: the completion of a coflow (``y_ke``) or the ``j``-th release
(``z_je``); ``t_e`` are event times and ``x_ge`` the data of group ``g``
served between events ``e-1`` and ``e``. With the order of events fixed by
the binaries this is the exact event LP, so the MILP is exact; big-M
constants come from an incumbent (no schedule better than it can end
later). It proves optimality much more slowly than the branch and bound of
:mod:`coflowopt.exact.wcct` (see ``benchmarks/results/solvers.md``), so
``method="exact"`` uses the branch and bound; this model is
``method="exact-milp"``.

The time limit covers everything: the heuristic incumbent, building the
Pyomo model, passing it to HiGHS (constraint blocks are handed over in
chunks, with the clock checked between them) and HiGHS itself, which gets
only what is left. The first heuristic order is always evaluated (its
permutation schedule in full, one greedy pass, and then its event LP for at least
:data:`~coflowopt.exact.wcct.FIRST_SECONDS`, as in ``method="exact"``), so every
run returns an incumbent however short the limit; when no
event LP solves in time, the incumbent is the best starting order's greedy
permutation schedule. When time runs out before HiGHS finds a solution, the
heuristic incumbent is returned with status ``TIME_LIMIT`` and the larger of
HiGHS's dual bound (if any) and the isolation bound.

HiGHS's "optimal" holds within its tolerances, which can cut off the optimum
of this valid model. Before reporting ``OPTIMAL`` the method improves HiGHS's
order by :func:`post_check` (swaps of neighbouring events, each order solved
exactly; deterministic, bounded in work) and drops a HiGHS bound that a schedule
checked here lies below (``info["refuted_bound"]``; the status is then
``FEASIBLE``). This catches a cut-off optimum that improving swaps reach from
HiGHS's order; it cannot prove HiGHS right.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._budget import now
from ..bounds._highs import lp_cost_scale, run, run_time
from ..errors import CoflowoptError, require
from ..instance import Instance
from ..result import Result, Status, proves_optimal
from ._events import EventLP, NodeLP
from ._groups import FEASIBILITY_TOL, build_groups, check_size, check_span
from ._order_eval import IMPROVES
from .permutation import reject_dependencies

__all__ = ["POST_CHECK_WORK", "PostCheck", "post_check", "solve_event_milp"]

MAX_WEIGHT_SPAN = 1e4
"""The largest ratio of coflow weights the big-M model accepts."""

MIP_TOL = FEASIBILITY_TOL
"""HiGHS's MIP and primal feasibility tolerances for the big-M model (its defaults: 1e-6)."""

RETRY_TOL = 10 * MIP_TOL
"""The tolerances of a second solve where HiGHS calls the model infeasible at :data:`MIP_TOL`
(it contains the incumbent's order, so it is not): on a 6-flow graph instance with a flow
from a host to itself, 1e-9 gave "infeasible" and 1e-8 the optimum."""

POST_CHECK_WORK = 4
"""The post-check solves at most this many event LPs per event of the order."""

_CHUNK = 1000
"""Constraints handed to HiGHS per call while loading the model (the clock is checked between)."""


def solve_event_milp(inst: Instance, *, time_limit: float = 60.0, rel_gap: float = 1e-6) -> Result:
    """Solve the event-position MILP with HiGHS through Pyomo.

    At ``time_limit`` seconds (model building included) returns the best
    schedule found (the MILP's or the heuristic incumbent's) and the best
    bound with status ``TIME_LIMIT``.
    """
    start = now()  # (importing Pyomo the first time takes about a second)
    reject_dependencies(inst, "method='exact-milp'")
    pyo = require("pyomo.environ", "pyomo", "method='exact-milp'")
    from ..bounds.simple import isolation_bound
    from ._events import EventLP
    from .wcct import (
        FIRST_SECONDS,
        _heuristic_orders,
        _node_schedule,
        event_sequence,
        solve_event_sequence,
        starting_orders,
        starting_schedule,
    )

    deadline = start + time_limit

    def left() -> float:
        return deadline - now()

    K = inst.num_coflows
    if K == 0:
        return Result(Status.OPTIMAL, 0.0, 0.0, 0.0, "exact-milp", completion=np.zeros(0))
    g = build_groups(inst)
    check_span(g)
    tu = g.time_unit
    w = inst.weight
    e_k = g.earliest
    elp = EventLP(g)
    check_size((K + elp.R) * (g.num_groups + K + elp.R), "method='exact-milp'")
    if w.max() / w.min() > MAX_WEIGHT_SPAN:
        # its big-M grows with 1 / min weight: HiGHS could report "optimal" 33% above the
        # optimum with weights 1e-6 and 1e6
        raise CoflowoptError(
            f"method='exact-milp' is numerically unreliable when weights span more than "
            f"{MAX_WEIGHT_SPAN:g}x (here {w.max() / w.min():.3g}x); use method='exact'")
    appsi = require("pyomo.contrib.appsi.solvers", "pyomo", "method='exact-milp'")
    solver = appsi.Highs()
    if not solver.available():  # pragma: no cover - depends on the installation
        raise CoflowoptError("method='exact-milp' needs Pyomo's appsi_highs interface (highspy)")
    iso = isolation_bound(inst).bound  # cheap and always valid

    # incumbent and big-M from the heuristic orders
    best = math.inf
    best_node = None
    greedy: tuple[float, Any] | None = None  # the best order's value and the order
    for order, comp, first in starting_orders(inst, _heuristic_orders(inst), left):
        gval = float(np.dot(w, comp))
        if greedy is None or gval < greedy[0]:
            greedy = (gval, order)
        node = solve_event_sequence(elp, event_sequence(elp, comp / tu),
                                    time_limit=max(left(), FIRST_SECONDS if first else 1e-3))
        if node is not None and node.solution is not None and node.solution.objective < best:
            best, best_node = node.solution.objective, node
    if greedy is not None and (best_node is None or greedy[0] / tu < best):
        best = greedy[0] / tu  # no event LP in time (or rounding): the permutation schedule

    def conclude(node: NodeLP | None, lb: float, info: dict[str, Any], timed: bool) -> Result:
        """The better of ``node``'s schedule, after the post-check, and the heuristic
        incumbent, with the best valid bound; ``lb``: HiGHS's dual bound (``nan``: none);
        ``timed``: the time limit stopped HiGHS (else its verdict did).

        A bound is valid unless a schedule checked here lies below it: with its tight
        tolerances HiGHS can cut off the optimum of this (valid) model
        (instances/optima/exact_milp_bound_above_optimum.json: bound 739, a schedule of
        624), and then its bound is worth nothing, so it is dropped (``refuted_bound``),
        not clamped to the value. Its "optimal" holds within its tolerances too: a
        neighbouring order can be better (instances/optima/
        exact_milp_optimal_above_feasible.json: "optimal" 1884 with bound 1884, a
        swap of two completions 1875), so ``node``'s order is improved by
        :func:`post_check` first. ``OPTIMAL`` needs a valid bound within ``rel_gap`` and
        a post-check that ran to its end (else HiGHS's bound is unchecked:
        ``TIME_LIMIT``), or the isolation bound within ``rel_gap``.
        """
        assert greedy is not None
        sched, comp, value, _ = starting_schedule(inst, elp, best_node, greedy, verify=False)
        cut = False
        if node is not None and node.solution is not None:
            check = post_check(elp, node, expired=lambda: left() <= 0,
                               left=lambda: max(left(), 1e-3))
            cut = check.expired
            info["post_check"] = {"lps": check.lps, "local_optimum": check.local_optimum,
                                  "stopped_by_time": check.expired}
            if check.improved:
                info["post_check"]["from_lp_value"] = float(node.solution.objective) * tu
            if check.node is not best_node:  # (else starting_schedule has weighed it)
                own = _node_schedule(elp, check.node)
                own_comp = own.coflow_completion(inst)
                own_value = float(np.dot(w, own_comp))
                # a MILP solution (early, or "optimal" within tolerances) can be worse
                if own_value <= value:
                    sched, comp, value = own, own_comp, own_value
        refuted = math.isfinite(lb) and lb > value and not proves_optimal(value, lb, 0.0)
        if refuted:
            info["refuted_bound"] = lb
        bound = iso if refuted or not math.isfinite(lb) else max(lb, iso)
        if proves_optimal(value, bound, rel_gap) and not (
                cut and not proves_optimal(value, iso, rel_gap)):
            status = Status.OPTIMAL
        else:
            status = Status.TIME_LIMIT if timed or cut else Status.FEASIBLE
        return Result(status, value, float(min(bound, value)), now() - start, "exact-milp",
                      schedule=sched, completion=comp, info=info)

    def stop(why: str, term: str = "not started", lb: float = math.nan, timed: bool = True) -> Result:
        """The heuristic incumbent (if any) and the best valid bound; ``timed``: stopped by
        the time limit (else by HiGHS's verdict, e.g. "infeasible" through rounding: the
        incumbent is then ``FEASIBLE``, not ``TIME_LIMIT``, unless a valid bound proves it
        optimal: HiGHS's verdict proves nothing, the bound does)."""
        info: dict[str, Any] = {"termination": term, "stopped": why}
        if greedy is None:
            return Result(Status.TIME_LIMIT, math.nan, max(iso, lb) if math.isfinite(lb) else iso,
                          now() - start, "exact-milp", info=info)
        return conclude(best_node, lb, info, timed)

    if greedy is None:
        return stop("no heuristic order evaluated within the time limit")
    if left() <= 0:
        return stop("time limit reached by the heuristic incumbent")

    base = float(np.dot(w, e_k))
    M = float(((best - base + w * e_k) / w).max()) * (1 + 1e-6) + 1e-6
    m = _build_model(pyo, g, elp, M, expired=lambda: left() <= 0)
    if m is None:
        return stop("time limit reached while building the model")
    loading = now()
    if not _load(pyo, solver, m, expired=lambda: left() <= 0):
        return stop("time limit reached while passing the model to HiGHS")
    loading = now() - loading
    remaining = left()
    if remaining <= 0:
        return stop("time limit reached while passing the model to HiGHS")
    # (HiGHS ran 8.6 s on a limit of 7.2 s after a 1.6 s load)
    solver.config.time_limit = run_time(remaining, loading)
    solver.config.mip_gap = rel_gap
    # only the relative gap (tiny weights); tight feasibility: a binary 1e-6 from integral
    # relaxes a big-M row by 1e-6 M (an instance with capacities 1e-3 and M = 24,068 time
    # units: "optimal" 0.2% above the optimum, its bound above a feasible schedule); no
    # presolve: with it, intervals of 1e-8 time units made HiGHS call a schedule 4-7% above
    # the optimum optimal, with its bound (a random search)
    solver.config.load_solution = False
    for tol in (MIP_TOL, RETRY_TOL):
        solver.highs_options = {"mip_abs_gap": 0.0, "mip_feasibility_tolerance": tol,
                                "primal_feasibility_tolerance": tol, "presolve": "off"}
        res = solver.solve(m)
        # the model is feasible (the incumbent's order is in it, every time below M):
        # "infeasible" is HiGHS's tolerance speaking, and a looser one may find the order
        if "infeasible" not in str(res.termination_condition).lower() or left() <= 0:
            break
        solver.config.time_limit = run_time(left(), 0.0)
    lb = res.best_objective_bound  # (in the model's units: time and weight scaled)
    lb = float(lb) * tu * m.weight_scale if lb is not None and math.isfinite(lb) else math.nan
    term = str(res.termination_condition)
    optimal = "optimal" in term.lower()
    has = res.best_feasible_objective is not None and math.isfinite(res.best_feasible_objective)
    if not has:
        return stop("HiGHS found no solution", term, lb, timed="time" in term.lower())
    res.solution_loader.load_vars()
    # read the event order and re-solve its exact LP for a clean schedule
    E = K + elp.R
    seq = []
    for e in range(1, E + 1):
        k = [k for k in range(K) if pyo.value(m.y[k, e]) > 0.5]
        if k:
            seq.append(k[0])
        else:
            j = [j for j in range(elp.R) if pyo.value(m.z[j, e]) > 0.5]
            seq.append(-(j[0] + 1))
    node = solve_event_sequence(elp, seq, time_limit=max(left(), FIRST_SECONDS))
    if node is None:
        # the MILP's order, solved exactly, fails (it met its constraints only within
        # HiGHS's tolerances; a random search with extreme numbers found it) or ran out of
        # time: keep the heuristic incumbent and HiGHS's bound
        why = ("time limit reached while solving the MILP's event order exactly" if left() <= 0
               else "the MILP's event order failed its exact LP (numerical trouble)")
        return stop(why, term, lb, timed=left() <= 0)
    return conclude(node, lb, {"termination": term, "big_m": M * tu}, timed=not optimal)


@dataclass(frozen=True, slots=True)
class PostCheck:
    """What :func:`post_check` found: the best event order's solved LP and the work done."""

    node: NodeLP
    """The best order's event LP (the given one when no neighbour is better)."""
    improved: bool
    """A neighbouring order's LP is better than the given one's by more than rounding."""
    lps: int
    """Event LPs solved."""
    local_optimum: bool
    """No swap of two neighbouring events improves ``node``'s order (else the work bound or
    ``expired`` stopped the search)."""
    expired: bool
    """``expired()`` stopped the search."""


def post_check(elp: EventLP, node: NodeLP, *, max_lps: int | None = None,
               expired: Callable[[], bool] = lambda: False,
               left: Callable[[], float | None] = lambda: None) -> PostCheck:
    """Improve a solved event order by swapping neighbouring events, each order solved exactly.

    The check exact-milp runs on HiGHS's answer before calling it optimal: a
    deterministic first-improvement search over the orders that swap two
    events next to each other (two completions, or a completion and a
    release; never two releases), or two completions with only releases
    between them, each solved by its exact event LP
    (:func:`~coflowopt.exact.wcct.solve_event_sequence`). A swap is taken when
    its LP is lower by more than rounding (``IMPROVES``). Bounded in work, not
    by the clock: at most ``max_lps`` LPs (default ``POST_CHECK_WORK`` per
    event). ``expired`` (checked before each LP) and ``left`` (each LP's time
    limit) are the caller's time limit.

    What it guarantees: the returned order's LP is no worse than ``node``'s, and
    with ``local_optimum`` no single swap of the neighbourhood improves it. It
    finds a better order when a chain of improving swaps leads there from
    ``node``'s; it does not prove ``node``'s order (or HiGHS's bound) right.
    """
    from .wcct import solve_event_sequence

    assert node.solution is not None and node.is_leaf
    seq = [int(e) for e in node.events]
    E = len(seq)
    budget = POST_CHECK_WORK * E if max_lps is None else max_lps
    best, value = node, float(node.solution.objective)
    lps = 0
    improved = False

    def allowed(cand: Sequence[int], i: int, j: int) -> bool:
        # the prefixes before i and from j + 1 on hold the same events as the current order's
        for p in range(i, j + 1):
            ready, nxt = elp.ready(cand[:p])
            e = cand[p]
            if (e >= 0 and e not in ready) or (e < 0 and -e - 1 != nxt):
                return False
        return True

    while True:
        changed = False
        for i in range(E - 1):
            j = i + 1
            if seq[i] >= 0:  # the next completion, across releases
                while j < E - 1 and seq[j] < 0:
                    j += 1
            pairs = [(i, i + 1)] + ([(i, j)] if j > i + 1 and seq[j] >= 0 else [])
            for a, b in pairs:
                if seq[a] < 0 and seq[b] < 0:
                    continue
                cand = list(seq)
                cand[a], cand[b] = cand[b], cand[a]
                if not allowed(cand, a, b):
                    continue
                if lps >= budget or expired():
                    return PostCheck(best, improved, lps, False, lps < budget)
                lps += 1
                nd = solve_event_sequence(elp, cand, time_limit=left())
                if nd is None or nd.solution is None:
                    continue
                v = float(nd.solution.objective)
                if v < value * (1 - IMPROVES):
                    best, value, seq, improved, changed = nd, v, cand, True, True
                    break
        if not changed:
            return PostCheck(best, improved, lps, True, False)


def _build_model(pyo: Any, g: Any, elp: Any, M: float, *, expired: Callable[[], bool]) -> Any:
    """The Pyomo model (see the module docstring); None when ``expired()`` turns true.

    The clock is checked between components and, through the rules, for
    every constraint: once the time is up the remaining rows are skipped and
    the partial model is discarded.
    """
    K = g.num_coflows
    w = g.instance.weight
    e_k = g.earliest
    rho = elp.rho
    R = int(rho.size)
    E = K + R
    G = g.num_groups
    gk = g.coflow
    grel = elp.g_rel
    usage = g.usage.tocsr()
    skip = pyo.Constraint.Skip

    def rule(fn: Callable[..., Any]) -> Callable[..., Any]:
        def checked(*args: Any) -> Any:
            return skip if expired() else fn(*args)
        return checked

    m = pyo.ConcreteModel()
    m.E = pyo.RangeSet(1, E)
    m.K = pyo.RangeSet(0, K - 1)
    m.G = pyo.RangeSet(0, G - 1)
    m.y = pyo.Var(m.K, m.E, within=pyo.Binary)
    if R:
        m.J = pyo.RangeSet(0, R - 1)
        m.z = pyo.Var(m.J, m.E, within=pyo.Binary)
    m.t = pyo.Var(pyo.RangeSet(0, E), bounds=(0, M))
    m.t[0].fix(0.0)
    m.x = pyo.Var(m.G, m.E, bounds=lambda _m, gg, _e: (0, float(g.size[gg])))
    m.C = pyo.Var(m.K, bounds=lambda _m, k: (float(e_k[k]), M))
    # the weights divided by m.weight_scale (every weight 1e30: "no solution"; 1e-30: 6% off)
    m.weight_scale = ws = lp_cost_scale(float(w.max()))
    m.obj = pyo.Objective(expr=sum(float(w[k]) / ws * m.C[k] for k in range(K)))
    if expired():
        return None

    def zsum(j, e):
        return sum(m.z[j, ee] for ee in range(1, e))

    m.one_event = pyo.Constraint(m.E, rule=rule(lambda _m, e: sum(m.y[k, e] for k in range(K))
                                 + (sum(m.z[j, e] for j in range(R)) if R else 0) == 1))
    m.once = pyo.Constraint(m.K, rule=rule(lambda _m, k: sum(m.y[k, e]
                                                             for e in range(1, E + 1)) == 1))
    if R:
        m.rel_once = pyo.Constraint(m.J, rule=rule(lambda _m, j: sum(m.z[j, e]
                                                                     for e in range(1, E + 1)) == 1))
        m.rel_order = pyo.Constraint(
            pyo.RangeSet(0, R - 2) if R > 1 else [],
            rule=rule(lambda _m, j: sum(e * m.z[j, e] for e in range(1, E + 1)) + 1
                      <= sum(e * m.z[j + 1, e] for e in range(1, E + 1))))
        m.rel_lo = pyo.Constraint(m.J, m.E, rule=rule(lambda _m, j, e:
                                  m.t[e] >= float(rho[j]) - M * (1 - m.z[j, e])))
        m.rel_hi = pyo.Constraint(m.J, m.E, rule=rule(lambda _m, j, e:
                                  m.t[e] <= float(rho[j]) + M * (1 - m.z[j, e])))
    m.mono = pyo.Constraint(m.E, rule=rule(lambda _m, e: m.t[e - 1] <= m.t[e]))
    m.amount = pyo.Constraint(m.G, rule=rule(lambda _m, gg: sum(m.x[gg, e] for e in range(1, E + 1))
                                             == float(g.size[gg])))
    if expired():
        return None

    def avail(_m, gg, e):
        if grel[gg] < 0:
            return skip
        return m.x[gg, e] <= float(g.size[gg]) * zsum(int(grel[gg]), e)

    m.avail = pyo.Constraint(m.G, m.E, rule=rule(avail))
    if expired():
        return None
    m.before_done = pyo.Constraint(m.G, m.E, rule=rule(lambda _m, gg, e: m.x[gg, e] <= float(
        g.size[gg]) * sum(m.y[int(gk[gg]), ee] for ee in range(e, E + 1))))
    if expired():
        return None
    links = sorted({int(lk) for lk in usage.indices})
    on_link: dict[int, list[tuple[int, float]]] = {lk: [] for lk in links}
    for gg in range(G):
        for p in range(usage.indptr[gg], usage.indptr[gg + 1]):
            on_link[int(usage.indices[p])].append((gg, float(usage.data[p])))
    m.L = pyo.Set(initialize=links)
    m.cap = pyo.Constraint(m.L, m.E, rule=rule(lambda _m, lk, e: sum(
        a * m.x[gg, e] for gg, a in on_link[lk]) <= float(g.cap[lk]) * (m.t[e] - m.t[e - 1])))
    m.comp = pyo.Constraint(m.K, m.E, rule=rule(lambda _m, k, e:
                                                m.C[k] >= m.t[e] - M * (1 - m.y[k, e])))
    return None if expired() else m


def _load(pyo: Any, solver: Any, m: Any, *, expired: Callable[[], bool]) -> bool:
    """Pass ``m`` to the appsi HiGHS interface in chunks; False when ``expired()`` turns true.

    Gives HiGHS the same model, in the same column and row order, as
    ``solver.solve(m)`` would (``set_instance`` adds the active constraints in
    model order, their new variables as they appear, then the objective), but
    the clock is checked between chunks instead of only after the whole model.
    """
    comps = list(m.component_objects(pyo.Constraint, active=True, descend_into=True))
    for c in comps:
        c.deactivate()
    m.obj.deactivate()
    solver.set_instance(m)  # registers the model only: nothing is active
    # appsi silences HiGHS only inside its own calls: the chunks added below would print
    # HiGHS's warnings (e.g. about tiny matrix values) to standard output, into --json
    inner = getattr(solver, "_solver_model", None)
    if inner is not None:
        inner.setOptionValue("output_flag", False)
        # appsi calls run() itself, where an interrupt would wait for HiGHS's time limit
        inner.run = functools.partial(run, inner, min_nnz=0)
    for c in comps:
        c.activate()
    m.obj.activate()
    cons = list(m.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    for i in range(0, len(cons), _CHUNK):
        if expired():
            return False
        solver.add_constraints(cons[i : i + _CHUNK])
    solver.set_objective(m.obj)
    # the model is complete: solve() must not scan it again for changes
    uc = solver.update_config
    for key in ("check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
                "check_for_new_or_removed_params", "check_for_new_objective",
                "update_constraints", "update_vars", "update_params",
                "update_named_expressions", "update_objective"):
        if key in uc:
            setattr(uc, key, False)
    return True
