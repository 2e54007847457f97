"""Maximum number (or weight) of coflows that meet their deadlines.

See ``models/deadlines.md``. Breakpoints are all release times and
deadlines; between two consecutive breakpoints the set of flows that may be
served (available, coflow's deadline not passed) is fixed, so constant rates
per interval lose nothing and the MILP below is exact:

    max  sum_k u_k a_k                    (u_k = 1, or w_k with weighted=True)
    s.t. sum_j x_gj = s_g a_k             every group g of a coflow k with a deadline
         sum_g use_gl x_gj <= cap_l len_j every interval j and link l
         x_gj = 0 unless r_g <= t_j and t_{j+1} <= D_k,  a_k in {0, 1}

Its LP relaxation (``a`` in [0, 1]) bounds it from above. Coflows without a
deadline are not counted. Rejected coflows (and those without a deadline)
are, by default, not served at all (``rejected="drop"``: Varys' admission
control turns them away); with ``rejected="after"`` they are served once the
admitted ones are done, by the minimum-makespan LP, so the returned schedule
is complete.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from .._budget import now
from ..bounds._highs import LPBuilder
from ..errors import CoflowoptError, InstanceError
from ..instance import Instance
from ..result import Result, Status
from ..schedule import FeasibilityReport, Schedule, check_feasible, subset_schedule
from ._groups import (
    FEASIBILITY_TOL,
    back_from_origin,
    build_groups,
    check_size,
    from_origin,
    link_rows,
    spread,
)
from .permutation import reject_dependencies

__all__ = ["check_admitted", "max_deadlines"]

DEADLINE_OPTIONS = {"mip_feasibility_tolerance": 1e-8, "primal_feasibility_tolerance": 1e-8,
                    "presolve": "off"}
"""HiGHS options of the deadlines MILP (see the comment at its solve): tighter feasibility
than the defaults and no presolve, the best of the settings measured on instances with very
short intervals; such instances can still get a wrong admission (5 of 161)."""

_REJECTED = ("drop", "after")


def max_deadlines(
    inst: Instance, *, time_limit: float = 60.0, weighted: bool = False,
    rejected: str = "drop", rel_gap: float = 1e-9,
) -> Result:
    """Admit as many coflows (or as much weight) as can all meet their deadlines.

    Solved with the first release moved to 0 (:func:`._groups.from_origin`).
    """
    moved, o = from_origin(inst)
    return back_from_origin(_max_deadlines(moved, time_limit, weighted, rejected, rel_gap), o)


def _max_deadlines(
    inst: Instance, time_limit: float, weighted: bool, rejected: str, rel_gap: float,
) -> Result:
    if rejected not in _REJECTED:
        raise CoflowoptError(f"rejected must be one of {', '.join(_REJECTED)}; got {rejected!r}")
    reject_dependencies(inst, "objective='deadlines'", instead=None)
    start = now()
    K = inst.num_coflows
    name = "weight of coflows meeting deadlines" if weighted else "coflows meeting deadlines"
    has_d = np.isfinite(inst.deadline)
    if not has_d.any():
        raise InstanceError("objective='deadlines' needs at least one coflow with a deadline "
                            "(none has one)")
    g = build_groups(inst)
    tu = g.time_unit
    dl = np.where(has_d, inst.deadline / tu, np.inf)
    pts = np.unique(np.concatenate([g.release, dl[has_d]]))
    J = pts.size - 1
    gk = g.coflow
    cand = has_d[gk]
    # intervals [pts[j], pts[j+1]] inside [release_g, deadline_k]
    j0 = np.searchsorted(pts, g.release)
    j1 = np.searchsorted(pts, dl[gk]) - 1  # last interval ending at or before the deadline
    n = np.where(cand, np.maximum(j1 - j0 + 1, 0), 0)
    check_size(int(n.sum()), "objective='deadlines'")
    xg, xj = spread(j0, n)
    ks = np.flatnonzero(has_d)
    value = inst.weight[ks] if weighted else np.ones(ks.size)
    # a coflow with data that is not there before its deadline cannot meet it (its row
    # sum x = s a_k would have no x: a tiny s met it within HiGHS's tolerance at a_k = 1),
    # nor one that alone ends after it by more than the checks' tolerance, 1e-6 of its
    # time alone (HiGHS admitted one 3% short of room, 7.3e-4 bytes in 7.0e-4 s)
    late = np.zeros(K, bool)
    late[gk[cand & (n == 0)]] = True
    release = inst.release / tu
    late |= g.earliest - dl > 1e-6 * (g.earliest - release)
    lp, A, X = _model(g, pts, xg, xj, ks, value, lo=np.zeros(ks.size),
                      hi=np.where(late[ks], 0.0, 1.0), integer=True)
    # the relaxation (a bound) with at most half of the time left, the MILP with the rest
    relax = lp.solve(relax=True, time_limit=max(time_limit - (now() - start), 0.0) / 2)
    left = max(time_limit - (now() - start), 0.01)
    # intervals far shorter than the mean transfer (a wave 1e-5 s after another against 6 s)
    # hold capacities near HiGHS's tolerances. At its defaults (1e-6) a solution 1e-6 over
    # capacity made a schedule end 5e-6 s after its deadline, and presolve dropped a coflow
    # that fits; on 161 such instances (a random search) the defaults gave 137 right answers and 26
    # late schedules, 1e-9 with presolve 0 right, 1e-9 without presolve 142, and 1e-8
    # without presolve 156 and no late schedule: DEADLINE_OPTIONS
    sol = lp.solve(time_limit=left, options={"mip_rel_gap": rel_gap, **DEADLINE_OPTIONS})
    runtime = now() - start
    lp_bound = float(relax.bound) + 0.0 if relax.ok else math.nan  # (no negative zero)
    # the smallest finite of the MILP's bound, the relaxation's and admitting everything
    # (``min`` with a nan first returned nan: no bound at a time limit)
    upper = float(min(b for b in (sol.bound, lp_bound, float(value.sum())) if math.isfinite(b)))
    if sol.x is None:
        return Result(Status.TIME_LIMIT if sol.status == "time_limit" else Status.NO_SOLUTION,
                      math.nan, upper, runtime, "exact",
                      objective_name=name, sense="max",
                      info={"lp_relaxation": lp_bound})
    admit_k = ks[sol.x[A] > 0.5]
    amounts = g.amounts(J, xj, xg, sol.x[X], keep=np.isin(gk[xg], admit_k))
    sched = g.schedule(pts, amounts) if J > 0 else Schedule.empty()

    def fitted(admit: np.ndarray) -> Schedule | None:
        """The LP of the coflows ``admit`` alone (no binaries, strict tolerances): its
        schedule if it has one, else None."""
        fixed = np.isin(ks, admit).astype(np.float64)
        again, _, X2 = _model(g, pts, xg, xj, ks, value, lo=fixed, hi=fixed, integer=False,
                              fractions=True)
        fit = again.solve(time_limit=max(time_limit - (now() - start), 0.01),
                          options={"primal_feasibility_tolerance": FEASIBILITY_TOL,
                                   "presolve": "off"})
        if fit.x is None:
            return None
        amounts = fit.x[X2] * g.size[xg]
        return g.schedule(pts, g.amounts(J, xj, xg, amounts, keep=np.isin(gk[xg], admit)))

    refit = False
    if admit_k.size and J > 0 and not _meets_deadlines(inst, sched, admit_k):
        # the MILP's amounts overfill short intervals within its tolerance, and lengthening
        # them moved deadlines' breakpoints: the admitted coflows' LP alone, solved again
        again = fitted(admit_k)
        if again is not None:
            sched = again
            refit = True
    late_k = np.zeros(0, np.int64)
    if admit_k.size and J > 0 and not _meets_deadlines(inst, sched, admit_k):
        # no LP of that set fits it (the MILP admitted it within its tolerance): the
        # coflows that end late are turned away, which leaves the others' pieces in place
        late_k = _late(inst, sched, admit_k)
        admit_k = np.setdiff1d(admit_k, late_k)
        keep = np.isin(inst.flow_coflow[sched.flow], admit_k)
        sched = Schedule(sched.flow[keep], sched.start[keep], sched.end[keep], sched.rate[keep])
    # then the coflows left out are tried one at a time, those turned away first, each group
    # the most valuable first (at most ADD_TRIES of the others): one is kept where the LP
    # of the admitted ones and it fits them all by their deadlines. A coflow that was not
    # turned away and fits shows HiGHS's "optimal" wrong (4 of 2,000 random instances):
    # its bound is then dropped
    def left_out() -> list[int]:
        out = np.setdiff1d(ks, np.concatenate([admit_k, late_k]))
        return _by_value(out[~late[out] & (value[np.searchsorted(ks, out)] > 0)], ks, value)

    readmitted: list[str] = []
    added: list[str] = []
    # first, one worth more alone than all the admitted ones together (2 coflows of 2.5
    # admitted where one of 3 fits alone) replaces them
    worth = float(value[np.isin(ks, admit_k)].sum())
    for k in [k for k in left_out() if value[np.searchsorted(ks, k)] > worth][:ADD_TRIES]:
        if J == 0 or now() - start >= time_limit:
            break
        again = fitted(np.array([k]))
        if again is not None and _meets_deadlines(inst, again, np.array([k])):
            admit_k, sched = np.array([k]), again
            added.append(inst.ids[k])
            break
    tries = [*_by_value(late_k, ks, value), *left_out()[:ADD_TRIES]]
    for k in tries if J > 0 else []:
        if now() - start >= time_limit:
            break
        trial = np.union1d(admit_k, [k])
        again = fitted(trial)
        if again is not None and _meets_deadlines(inst, again, trial):
            admit_k, sched = trial, again
            (readmitted if k in late_k else added).append(inst.ids[k])
    dropped = [inst.ids[k] for k in late_k if inst.ids[k] not in readmitted]
    if added:  # HiGHS's bound is refuted: the relaxation's and admitting everything remain
        upper = float(min(b for b in (lp_bound, float(value.sum())) if math.isfinite(b)))
    comp = np.full(K, np.inf)
    if admit_k.size:
        comp[admit_k] = sched.coflow_completion(inst)[admit_k]
    others = np.setdiff1d(np.arange(K), admit_k)
    if rejected == "after" and others.size:
        sched, comp = _serve_after(inst, sched, comp, admit_k, others)
    obj = float(value[np.isin(ks, admit_k)].sum())
    if not weighted:  # a count: no more than the whole number below the bound
        upper = math.floor(upper + 1e-6)
    bound = max(upper, obj) + 0.0  # no negative zero
    status = Status.OPTIMAL if sol.status == "optimal" else Status.TIME_LIMIT
    if status is Status.OPTIMAL and bound - obj <= rel_gap * max(1.0, abs(obj)):
        bound = obj  # (HiGHS's optimum: its dual bound within mip_rel_gap, 7.0000000017)
    if status is Status.OPTIMAL and obj < bound:
        # coflows turned away, or HiGHS's own stop: its absolute gap (1e-6) met, 2 against
        # a bound of 2.0000000021 (rel_gap 1e-9): optimal only when the bound says so
        status = Status.FEASIBLE
    return Result(
        status, obj, bound, now() - start, "exact",
        objective_name=name, sense="max", schedule=sched, completion=comp,
        info={"admitted": [inst.ids[k] for k in admit_k],
              "rejected": [inst.ids[k] for k in others],
              "lp_relaxation": lp_bound, "rejected_policy": rejected,
              "breakpoints": int(pts.size), "refit": refit, "turned_away": dropped,
              "taken_back": readmitted, "added": added},
    )


_ROW_SPREAD = 1e9
"""``fractions``: the largest coefficient of a capacity row divided by its right-hand side."""


ADD_TRIES = 16
"""The coflows the MILP left out (and did not turn away) that are tried again with the
admitted ones, at most: the most valuable first, one LP each."""


def _by_value(ks_sub: np.ndarray, ks: np.ndarray, value: np.ndarray) -> list[int]:
    """The coflows ``ks_sub`` (of those with a deadline, ``ks``) by decreasing value."""
    v = value[np.searchsorted(ks, ks_sub)]
    return [int(k) for k in ks_sub[np.argsort(-v, kind="stable")]]


def _model(g: Any, pts: np.ndarray, xg: np.ndarray, xj: np.ndarray, ks: np.ndarray,
           value: np.ndarray, *, lo: np.ndarray, hi: np.ndarray, integer: bool,
           fractions: bool = False) -> tuple[LPBuilder, np.ndarray, np.ndarray]:
    """The model of the module docstring over the groups of coflows ``ks`` (those with a
    deadline), ``a_k`` within ``lo`` and ``hi``: the builder and the columns of ``a`` and
    ``x``. ``fractions``: each ``x_gj`` is the fraction of its group's size
    (``x_gj / s_g``) and each capacity row is divided by its right-hand side, so that
    HiGHS's absolute tolerances are relative to every group and every interval (sizes over
    eleven orders of magnitude in one instance)."""
    lp = LPBuilder(sense="max")
    A = lp.add_cols(ks.size, cost=value, lo=lo, hi=hi, integer=integer)
    acol = np.full(g.num_coflows, -1)
    acol[ks] = A
    X = lp.add_cols(xg.size, lo=0.0, hi=1.0 if fractions else g.size[xg])
    # amounts: sum_j x_gj - s_g a_k = 0
    gid = np.flatnonzero(np.isin(g.coflow, ks))
    rowg = np.full(g.num_groups, -1)
    rowg[gid] = np.arange(gid.size)
    per_group = np.ones(gid.size) if fractions else g.size[gid]
    lp.add_rows(np.concatenate([rowg[xg], rowg[gid]]), np.concatenate([X, acol[g.coflow[gid]]]),
                np.concatenate([np.ones(xg.size), -per_group]), 0.0, 0.0, num=gid.size)
    # capacity
    row, col, val, rj, rl = link_rows(g, xg, xj)
    if rj.size:
        rhs = g.cap[rl] * np.diff(pts)[rj]
        if fractions:
            coef = val * g.size[xg[col]]
            # each row divided by its right-hand side, but for intervals so short that
            # their coefficients would pass 1e9 (HiGHS takes 1e15 as infinite)
            top = np.zeros(rj.size)
            np.maximum.at(top, row, coef)
            d = np.maximum(rhs, top / _ROW_SPREAD)
            lp.add_rows(row, X[col], coef / d[row], -math.inf, rhs / d, num=rj.size)
        else:
            lp.add_rows(row, X[col], val, -math.inf, rhs, num=rj.size)
    return lp, A, X


def _meets_deadlines(inst: Instance, sched: Schedule, admit: np.ndarray) -> FeasibilityReport:
    """:func:`check_feasible` with deadlines of the admitted coflows ``admit`` (sorted) and
    their pieces of ``sched``, their flows renumbered for ``inst.subset(admit)``."""
    return check_feasible(*subset_schedule(inst, sched, admit), deadlines=True)


def _late(inst: Instance, sched: Schedule, admit: np.ndarray) -> np.ndarray:
    """The coflows of ``admit`` with a flow that ``sched`` does not serve by the coflow's
    deadline, but for :func:`check_feasible`'s tolerance (1e-6 of its size): served late,
    in part or not at all."""
    f = sched.flow
    d = inst.deadline[inst.flow_coflow[f]]
    before = sched.rate * np.maximum(np.minimum(sched.end, d) - sched.start, 0.0)
    got = np.bincount(f, weights=before, minlength=inst.num_flows)
    late_f = got < (1 - 1e-6) * inst.flow_size
    return np.intersect1d(admit, inst.flow_coflow[late_f])


def check_admitted(inst: Instance, res: Result) -> FeasibilityReport:
    """:func:`check_feasible` of a deadlines result: its admitted coflows (with their flows
    renumbered) each meet its deadline, and with ``rejected="after"`` the whole schedule
    serves every coflow."""
    sched = res.schedule
    assert sched is not None
    if res.info.get("rejected_policy") == "after":
        whole = check_feasible(inst, sched)
        if not whole:
            return whole
    return _meets_deadlines(inst, sched, np.sort(np.array(
        [inst.index(k) for k in res.info["admitted"]], np.int64)))


def _serve_after(
    inst: Instance, sched: Schedule, comp: np.ndarray, admit: np.ndarray, others: np.ndarray,
) -> tuple[Schedule, np.ndarray]:
    """Serve ``others`` after the admitted coflows finish, by the minimum-makespan LP."""
    from .makespan import min_makespan

    t_end = float(comp[admit].max()) if admit.size else 0.0
    sub = inst.subset(others, drop_dependencies=True)
    # each flow from when it is there, or t_end if later (moving the coflow's release and
    # keeping its delays made a delayed flow wait its delay again after t_end)
    moved = []
    for c in sub.coflows:
        r = max(c.release, t_end)
        delay = None if c.delay is None else np.maximum(c.release + c.delay - r, 0.0)
        moved.append(replace(c, release=r, delay=delay, deadline=None))
    sub = sub.replace(coflows=tuple(moved))
    res = min_makespan(sub)
    assert res.schedule is not None and res.completion is not None
    # map the sub-instance's flows back to the instance's flow indices
    fmap = np.concatenate([np.arange(inst.ptr[k], inst.ptr[k + 1]) for k in others])
    part = Schedule(fmap[res.schedule.flow], res.schedule.start, res.schedule.end,
                    res.schedule.rate)
    comp = comp.copy()
    comp[others] = res.completion
    return Schedule.concatenate([sched, part]), comp
