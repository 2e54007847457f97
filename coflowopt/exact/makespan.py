"""Minimum makespan, maximum link utilization and the crossbar (BvN) decomposition.

See ``models/makespan.md``. With every flow available at the same time
``r0`` the minimum makespan is ``r0 + max_l load_l / capacity_l`` (serve each
flow at ``size / (T* - r0)``). With release times an LP over the intervals
between the sorted release times is exact (within an interval, the set of
available flows is fixed and averaging rates loses nothing). The maximum
link utilization of Maluca's Eq. (10) is the total load over
(total capacity x schedule length), so it is reached at the minimum makespan.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from .._budget import now
from .._text import plural
from ..bounds._highs import LPBuilder
from ..bounds.simple import makespan_bound
from ..errors import InstanceError
from ..instance import Instance
from ..metrics import utilization
from ..result import Result, Status, proves_optimal
from ..schedule import Schedule, ScheduleBuilder
from ._groups import FEASIBILITY_TOL, build_groups, check_size, from_origin, link_rows, spread
from .permutation import reject_dependencies

__all__ = ["check_crossbar", "crossbar_schedule", "min_makespan"]

FloatArray = npt.NDArray[np.float64]

PROVEN_GAP = 1e-9
"""A time-limited run's incumbent within this relative gap of its bound is optimal (the two
are computed apart and meet only to rounding)."""


def min_makespan(
    inst: Instance, *, time_limit: float | None = 60.0, crossbar: bool = False,
    closed_form: bool = True,
) -> Result:
    """The minimum makespan ``max_k C_k`` with an optimal schedule.

    ``crossbar=True`` also decomposes the schedule into matchings (each port
    serves one flow at a time, at full rate; needs equal host-link capacities and
    every flow on just its two host links, so no multi-hop paths) with the same
    makespan, returned as ``info["crossbar_schedule"]``.
    ``closed_form=False`` solves the LP even when every flow is available at
    the same time (the tests compare both).
    """
    reject_dependencies(inst, "objective='makespan'", instead=None)
    if crossbar:  # refused before solving, not after
        _check_crossbar_routes(inst)
    start = now()
    if inst.num_coflows == 0:
        return Result(Status.OPTIMAL, 0.0, 0.0, 0.0, "exact", objective_name="makespan",
                      schedule=Schedule.empty(), completion=np.zeros(0))
    rel = inst.flow_release
    if closed_form and np.all(rel == rel[0]):
        found, T, bound, how = _closed_form(inst)
    else:  # building the LP counts against the limit
        found, T, bound, how = _release_lp(inst, time_limit, start)
    sched = found
    status = Status.OPTIMAL
    info: dict = {"formulation": how}
    if sched is None and how == "time_limit":
        # the LP not solved in time: a dense schedule as the incumbent, with the cheap bound
        sched = _dense_schedule(inst)
        bound = makespan_bound(inst)
        status = Status.TIME_LIMIT
        info = {"lp_status": how, "incumbent": "pfp (greedy per flow, dense)"}
    if sched is None:  # (still with the cheap bound)
        return Result(Status.TIME_LIMIT if how == "time_limit" else Status.NO_SOLUTION,
                      math.nan, makespan_bound(inst), now() - start, "exact",
                      objective_name="makespan", info={"lp_status": how})
    comp = sched.coflow_completion(inst)
    value = float(comp.max())
    info["utilization"] = utilization(inst, comp)
    if status is Status.OPTIMAL:
        info["lp_makespan"] = T
    elif proves_optimal(value, bound, PROVEN_GAP):
        # the incumbent reaches the bound (to rounding): proven optimal after all
        status, bound = Status.OPTIMAL, min(bound, value)
    if crossbar:
        xs = crossbar_schedule(inst, sched)
        info["crossbar_schedule"] = xs
        info["crossbar_makespan"] = float(xs.coflow_completion(inst).max())
        info["crossbar_matchings"] = int(np.unique(np.concatenate([xs.start, xs.end])).size - 1)
    return Result(status, value, float(min(bound, value)), now() - start,
                  "exact", objective_name="makespan", schedule=sched, completion=comp, info=info)


def _dense_schedule(inst: Instance) -> Schedule | None:
    """The simulator's ``pfp`` schedule: greedy rates per flow, so no flow waits while both
    its links have room (a dense schedule: a flow ends by its release plus its two links'
    total loads over capacity, at most 3x the minimum makespan); on 200 coflows with 22,851
    flows 0.15 s and 2.2% above the makespan bound, where per-flow fairness took 3.3 s for 10.6
    million pieces."""
    from ..sim import SimulationError, simulate

    try:  # (times the simulator cannot resolve, or too many pieces to record: no incumbent)
        return simulate(inst, "pfp").schedule
    except SimulationError:
        return None


def _closed_form(inst: Instance) -> tuple[Schedule | None, float, float, str]:
    r0 = float(inst.flow_release[0])
    span = float((inst.load.sum(axis=0) / inst.fabric.capacity).max())
    T = r0 + span
    F = inst.num_flows
    sched = Schedule(np.arange(F), np.full(F, r0), np.full(F, T), inst.flow_size / span)
    return sched, T, T, "closed form: release + max over links of load / capacity"


def _release_lp(
    inst: Instance, time_limit: float | None, start: float
) -> tuple[Schedule | None, float, float, str]:
    inst, o = from_origin(inst)  # breakpoints' differences keep their precision
    g = build_groups(inst)
    rho = np.unique(g.release)  # scaled
    R = rho.size
    jg = np.searchsorted(rho, g.release)  # first interval in which each group is available
    n = R - jg
    check_size(int(n.sum()), "the makespan LP with release times")
    xg, xj = spread(jg, n)
    lp = LPBuilder()
    caps_T = rho[-1] + float((g.v.sum(axis=0)).max()) + 1.0
    Tcol = lp.add_cols(1, cost=1.0, lo=rho[-1], hi=caps_T)[0]
    X = lp.add_cols(xg.size, lo=0.0, hi=g.size[xg])
    lp.add_rows(xg, X, 1.0, g.size, g.size, num=g.num_groups)
    row, col, val, rj, rl = link_rows(g, xg, xj)
    length = np.append(np.diff(rho), 0.0)[rj]
    last = rj == R - 1  # the last interval ends at T: move T to the left-hand side
    rows = [row, np.flatnonzero(last)]
    cols = [X[col], np.full(int(last.sum()), Tcol)]
    vals = [val, -g.cap[rl[last]]]
    hi = np.where(last, -g.cap[rl] * rho[-1], g.cap[rl] * length)
    lp.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), -math.inf, hi,
                num=rj.size)
    left = None if time_limit is None else time_limit - (now() - start)
    sol = lp.solve(time_limit=left, options={"primal_feasibility_tolerance": FEASIBILITY_TOL})
    if not sol.ok or sol.x is None:
        return None, math.nan, math.nan, sol.status
    T = float(sol.x[Tcol])
    times = np.append(rho, T)
    sched = g.schedule(times, g.amounts(R, xj, xg, sol.x[X]))
    return (sched.shifted(o), T * g.time_unit + o, float(sol.bound) * g.time_unit + o,
            "LP over the intervals between sorted release times")


# --------------------------------------------------------------------------- crossbar


def _birkhoff(M: FloatArray, eps: float) -> list[tuple[float, npt.NDArray[np.int64]]]:
    """Birkhoff-von Neumann decomposition of a doubly stochastic matrix (up to ``eps``)."""
    P = M.shape[0]
    A = M.copy()
    out = []
    for _ in range(P * P + 1):
        support = sp.csr_array(A > eps)
        if support.nnz == 0:
            break
        match = maximum_bipartite_matching(support, perm_type="column")
        if np.any(match < 0):
            break  # only rounding noise is left
        lam = float(A[np.arange(P), match].min())
        out.append((lam, match.astype(np.int64)))
        A[np.arange(P), match] -= lam
        A[A < eps] = 0.0
    return out


def _fill(M: FloatArray) -> FloatArray:
    """Raise entries of a doubly substochastic matrix until every line sums to 1."""
    A = M.copy()
    r = 1.0 - A.sum(axis=1)
    c = 1.0 - A.sum(axis=0)
    r[r < 0] = 0.0
    c[c < 0] = 0.0
    i = j = 0
    P = A.shape[0]
    while i < P and j < P:
        d = min(r[i], c[j])
        A[i, j] += d
        r[i] -= d
        c[j] -= d
        if r[i] <= 1e-15:
            i += 1
        if c[j] <= 1e-15:
            j += 1
    return A


def _check_crossbar_routes(inst: Instance) -> None:
    """Raise unless the instance is a crossbar: every flow crosses exactly its source's
    uplink and its destination's downlink (entries 1) and those host links have equal
    capacities.

    The decomposition matches ingress to egress ports and so accounts for the host links
    only; on a multi-hop fabric two matched pairs can share a switch link (for example a
    k = 4 fat-tree under ECMP: two flows on one aggregation-core link of capacity 1, each
    at rate 1). A network whose flows all stay within one switch is a crossbar and passes.
    """
    P = inst.num_ports
    cap = inst.fabric.capacity[: 2 * P]
    if not np.all(cap == cap[0]):
        raise InstanceError("the crossbar decomposition needs equal capacities on all ports")
    A = inst.routes
    F = inst.num_flows
    if F == 0:
        return
    rows = np.repeat(np.arange(F), 2)
    cols = np.column_stack([inst.flow_src, P + inst.flow_dst]).ravel()
    host_only = sp.csr_array((np.ones(2 * F), (rows, cols)), shape=A.shape)
    bad = np.flatnonzero(abs(A - host_only).sum(axis=1) > 0)
    if bad.size:
        f = int(bad[0])
        k = int(inst.flow_coflow[f])
        links = A.indices[A.indptr[f]: A.indptr[f + 1]]
        where = ", ".join(inst.fabric.link_name(int(j)) for j in links[:6])
        raise InstanceError(
            f"the crossbar decomposition applies only where every flow crosses just its two host "
            f"links (a big switch, or a network whose flows stay within one switch); flow "
            f"{f - int(inst.ptr[k])} of coflow '{inst.coflows[k].id}' crosses "
            f"{plural(links.size, 'link')} ({where}{', ...' if links.size > 6 else ''}); "
            "no decomposition for multi-hop fabrics is implemented: solve without crossbar")


def crossbar_schedule(inst: Instance, schedule: Schedule, *, eps: float = 1e-12) -> Schedule:
    """Decompose every segment of a fluid schedule into matchings of a crossbar.

    In each segment ``[a, b)`` the data each (ingress, egress) pair receives
    is ``A_ij``; ``A / (c (b - a))`` is doubly substochastic (``c`` the common
    port capacity), is filled up to doubly stochastic and split into
    permutation matrices (Birkhoff-von Neumann). Each permutation runs for
    its share of the segment with every matched pair at full rate ``c``, and
    the flows of a pair take the pair's time one after another. The result
    serves at most one flow per ingress and per egress port at any time and
    ends each segment's data by ``b``, so the makespan is unchanged.
    """
    _check_crossbar_routes(inst)
    c = float(inst.fabric.capacity[0])
    P = inst.num_ports
    times, rates = schedule.segments()
    rates = sp.csr_array(rates)
    F = inst.num_flows
    src, dst = inst.flow_src, inst.flow_dst
    out = ScheduleBuilder()
    for s in range(times.size - 1):
        a, b = float(times[s]), float(times[s + 1])
        length = b - a
        row = rates[[s]]
        flows = row.indices[row.indices < F]
        if flows.size == 0 or length <= 0:
            continue
        amt = row.data[: flows.size] * length
        A = np.zeros((P, P))
        np.add.at(A, (src[flows], dst[flows]), amt)
        M = A / (c * length)
        scale = max(1.0, float(M.sum(axis=1).max()), float(M.sum(axis=0).max()))
        perms = _birkhoff(_fill(M / scale), eps)
        # time windows per pair, in order
        t = a
        windows: dict[tuple[int, int], list[tuple[float, float]]] = {}
        for lam, match in perms:
            # rounding must not carry a window past the segment's end
            t_next = min(t + lam * length * scale, b)
            for i in range(P):
                if A[i, match[i]] > 0 and t_next > t:
                    windows.setdefault((i, int(match[i])), []).append((t, t_next))
            t = t_next
        # serve each pair's flows one after another inside its windows
        order = np.lexsort((flows, dst[flows], src[flows]))
        for (i, j), win in windows.items():
            sel = order[(src[flows[order]] == i) & (dst[flows[order]] == j)]
            need = amt[sel] / c  # time at full rate
            total_win = sum(w1 - w0 for w0, w1 in win)
            # rounding: stretch the rate a hair if the windows are a hair short
            rate = c * max(1.0, float(need.sum()) / total_win) if total_win > 0 else c
            need = amt[sel] / rate
            wi, w0 = 0, win[0][0]
            for f_pos, dur in zip(sel, need, strict=True):
                left = float(dur)
                while left > 1e-15 * max(length, 1.0) and wi < len(win):
                    w1 = win[wi][1]
                    take = min(left, w1 - w0)
                    if take > 0:
                        out.add([flows[f_pos]], w0, min(w0 + take, w1), [rate])
                    left -= take
                    w0 = min(w0 + take, w1)
                    if w0 >= w1 - 1e-15 * max(length, 1.0):
                        wi += 1
                        if wi < len(win):
                            w0 = win[wi][0]
    return out.build()


def check_crossbar(inst: Instance, schedule: Schedule, *, tol: float = 1e-9) -> list[str]:
    """Problems with a crossbar schedule: a port serving two flows at once (empty if none).

    Written independently of :func:`crossbar_schedule`: per port, pieces
    sorted by start must not begin before every earlier piece has ended.
    """
    problems: list[str] = []
    live = (schedule.rate > 0) & (schedule.end > schedule.start)
    f, s, e = schedule.flow[live], schedule.start[live], schedule.end[live]
    if f.size == 0:
        return problems
    span = float(e.max() - s.min()) + 1.0
    slack = tol * max(1.0, float(np.abs(e).max()))
    for port_of, name in ((inst.flow_src, "ingress"), (inst.flow_dst, "egress")):
        port = port_of[f]
        order = np.lexsort((s, port))
        p, s_o, e_o, f_o = port[order], s[order], e[order], f[order]
        # shift each port's times by a multiple of the span so one running max serves all
        shift = p * 2.0 * span
        ran = np.maximum.accumulate(e_o - s.min() + shift)
        same = p[1:] == p[:-1]
        bad = same & (s_o[1:] - s.min() + shift[1:] < ran[:-1] - slack)
        for k in np.flatnonzero(bad)[:5]:
            problems.append(f"{name} port {p[k + 1]} serves flow {f_o[k + 1]} while an earlier "
                            f"piece is still running, near time {s_o[k + 1]:.9g}")
    return problems
