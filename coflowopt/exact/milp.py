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
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..errors import CoflowoptError, require
from ..instance import Instance
from ..result import Result, Status
from ._groups import build_groups, check_size

__all__ = ["solve_event_milp"]


def solve_event_milp(inst: Instance, *, time_limit: float = 60.0, rel_gap: float = 1e-6) -> Result:
    """Solve the event-position MILP with HiGHS through Pyomo."""
    if inst.has_dependencies:
        raise CoflowoptError("method='exact-milp' does not support dependencies; "
                             "use method='exact'")
    pyo = require("pyomo.environ", "pyomo", "method='exact-milp'")
    from ._events import EventLP
    from .permutation import order_completion
    from .wcct import _heuristic_orders, _node_schedule, event_sequence, solve_event_sequence

    start = time.perf_counter()
    K = inst.num_coflows
    if K == 0:
        return Result(Status.OPTIMAL, 0.0, 0.0, 0.0, "exact-milp", completion=np.zeros(0))
    g = build_groups(inst)
    tu = g.time_unit
    w = inst.weight
    e_k = g.earliest
    # incumbent and big-M from the heuristic orders
    elp = EventLP(g)
    best = math.inf
    for order in _heuristic_orders(inst):
        comp = order_completion(inst, order, time_limit=time_limit)
        node = solve_event_sequence(elp, event_sequence(elp, comp / tu))
        if node is not None and node.solution is not None:
            best = min(best, node.solution.objective)
    check_size((K + elp.R) * (g.num_groups + K + elp.R), "method='exact-milp'")
    base = float(np.dot(w, e_k))
    M = float(((best - base + w * e_k) / w).max()) * (1 + 1e-6) + 1e-6
    rho = elp.rho
    R = int(rho.size)
    E = K + R
    G = g.num_groups
    gk = g.coflow
    grel = elp.g_rel
    usage = g.usage.tocsr()

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
    m.obj = pyo.Objective(expr=sum(float(w[k]) * m.C[k] for k in range(K)))

    def zsum(j, e):
        return sum(m.z[j, ee] for ee in range(1, e))

    m.one_event = pyo.Constraint(m.E, rule=lambda _m, e: sum(m.y[k, e] for k in range(K))
                                 + (sum(m.z[j, e] for j in range(R)) if R else 0) == 1)
    m.once = pyo.Constraint(m.K, rule=lambda _m, k: sum(m.y[k, e] for e in range(1, E + 1)) == 1)
    if R:
        m.rel_once = pyo.Constraint(m.J, rule=lambda _m, j: sum(m.z[j, e]
                                                                for e in range(1, E + 1)) == 1)
        m.rel_order = pyo.Constraint(
            pyo.RangeSet(0, R - 2) if R > 1 else [],
            rule=lambda _m, j: sum(e * m.z[j, e] for e in range(1, E + 1)) + 1
            <= sum(e * m.z[j + 1, e] for e in range(1, E + 1)))
        m.rel_lo = pyo.Constraint(m.J, m.E, rule=lambda _m, j, e:
                                  m.t[e] >= float(rho[j]) - M * (1 - m.z[j, e]))
        m.rel_hi = pyo.Constraint(m.J, m.E, rule=lambda _m, j, e:
                                  m.t[e] <= float(rho[j]) + M * (1 - m.z[j, e]))
    m.mono = pyo.Constraint(m.E, rule=lambda _m, e: m.t[e - 1] <= m.t[e])
    m.amount = pyo.Constraint(m.G, rule=lambda _m, gg: sum(m.x[gg, e] for e in range(1, E + 1))
                              == float(g.size[gg]))

    def avail(_m, gg, e):
        if grel[gg] < 0:
            return pyo.Constraint.Skip
        return m.x[gg, e] <= float(g.size[gg]) * zsum(int(grel[gg]), e)

    m.avail = pyo.Constraint(m.G, m.E, rule=avail)
    m.before_done = pyo.Constraint(m.G, m.E, rule=lambda _m, gg, e: m.x[gg, e] <= float(
        g.size[gg]) * sum(m.y[int(gk[gg]), ee] for ee in range(e, E + 1)))
    links = sorted({int(lk) for lk in usage.indices})
    on_link: dict[int, list[tuple[int, float]]] = {lk: [] for lk in links}
    for gg in range(G):
        for p in range(usage.indptr[gg], usage.indptr[gg + 1]):
            on_link[int(usage.indices[p])].append((gg, float(usage.data[p])))
    m.L = pyo.Set(initialize=links)
    m.cap = pyo.Constraint(m.L, m.E, rule=lambda _m, lk, e: sum(a * m.x[gg, e] for gg, a in on_link[lk])
                           <= float(g.cap[lk]) * (m.t[e] - m.t[e - 1]))
    m.comp = pyo.Constraint(m.K, m.E, rule=lambda _m, k, e: m.C[k] >= m.t[e] - M * (1 - m.y[k, e]))

    appsi = require("pyomo.contrib.appsi.solvers", "pyomo", "method='exact-milp'")
    solver = appsi.Highs()
    if not solver.available():  # pragma: no cover - depends on the installation
        raise CoflowoptError("method='exact-milp' needs Pyomo's appsi_highs interface (highspy)")
    left = max(time_limit - (time.perf_counter() - start), 1.0)
    solver.config.time_limit = left
    solver.config.mip_gap = rel_gap
    solver.config.load_solution = False
    res = solver.solve(m)
    runtime = time.perf_counter() - start
    lb = res.best_objective_bound
    lb = float(lb) * tu if lb is not None and math.isfinite(lb) else math.nan
    has = res.best_feasible_objective is not None and math.isfinite(res.best_feasible_objective)
    if not has:
        return Result(Status.TIME_LIMIT, math.nan, lb, runtime, "exact-milp",
                      info={"termination": str(res.termination_condition)})
    res.solution_loader.load_vars()
    # read the event order and re-solve its exact LP for a clean schedule
    seq = []
    for e in range(1, E + 1):
        k = [k for k in range(K) if pyo.value(m.y[k, e]) > 0.5]
        if k:
            seq.append(k[0])
        else:
            j = [j for j in range(R) if pyo.value(m.z[j, e]) > 0.5]
            seq.append(-(j[0] + 1))
    node = solve_event_sequence(elp, seq)
    assert node is not None
    sched = _node_schedule(elp, node)
    comp = sched.coflow_completion(inst)
    value = float(np.dot(w, comp))
    term = str(res.termination_condition)
    optimal = "optimal" in term.lower()
    bound = value if optimal else min(lb, value)
    status = Status.OPTIMAL if optimal else Status.TIME_LIMIT
    return Result(status, value, float(bound), time.perf_counter() - start, "exact-milp",
                  schedule=sched, completion=comp,
                  info={"termination": term, "big_m": M * tu})
