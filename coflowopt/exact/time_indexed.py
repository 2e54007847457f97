"""Time-indexed MILP on a uniform grid: a feasible grid schedule and a valid lower bound.

See ``models/time-indexed.md``. Two models share the grid ``t_i = i * step``:

*Grid model* (upper bound): a flow may be served in slot ``[t_i, t_i+1)``
only if it is available at ``t_i``; rates are constant per slot; binary
``z_ki`` says coflow ``k`` is complete by ``t_{i+1}``, which is where it is
charged. Every solution is a feasible schedule.

*Relaxed model* (lower bound): a flow may be served in every slot that ends
after its release (with rows that keep work released inside a slot within
the part of the slot after its release), completion in slot ``i`` is charged
``max(t_i, r_k + Gamma_k)`` (the slot's start), and a last slot without
capacity rows absorbs anything later. The amounts of any schedule, slot by
slot, solve it with no larger cost, so its optimum and its LP relaxation
bound the continuous optimum from below. (The LP relaxation of the *grid*
model bounds only the grid optimum, so it is not used as a bound.)

As the step shrinks the grid optimum tends to the continuous optimum and so
does the relaxed MILP; the LP relaxation keeps an integrality gap
(``benchmarks/results/solvers.md`` measures both).

Time limit (building the models counts against it): the bound is computed
first, so that the grid MILP (which usually runs to the limit) cannot leave
it without time, but with at most half of the time left after the grid
model is built (a MILP's dual bound at that point is still valid), so that
an LP relaxation too large to finish cannot leave the grid MILP without
time either (30 coflows at step 0.1: the LP took the whole limit
and no schedule was found). The grid MILP gets what is left. A relaxed
model not solved in time gives way to ``sum w_k e_k`` (the isolation bound,
below every charge of the relaxed model), so a bound is always reported
unless ``lower="none"``. HiGHS cannot stop while it loads and presolves a
model, which takes about as long as building it, so neither model is
started with less time left than the grid model took to build (status
``time_limit``, lower or grid status ``not started``). HiGHS may still
overrun its share by a fraction of a second (measured: 5.6-5.9 s with a
limit of 5 s on that instance).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .._budget import now
from ..bounds._highs import LPBuilder
from ..bounds._round import rescaled, rounded_down
from ..errors import CoflowoptError
from ..instance import Instance
from ..result import Result, Status
from ._groups import Groups, build_groups, check_size, check_span, count_text, link_rows, spread
from .permutation import reject_dependencies

__all__ = ["time_indexed"]

FloatArray = npt.NDArray[np.float64]

_LOWER = ("lp", "milp", "none")

_BOUND_SHARE = 0.5
"""Share of the time left after the grid model is built that the lower bound (``"lp"`` or
``"milp"``) may use before the grid MILP starts: an LP too slow to finish in it gives way
to the isolation bound, so the grid MILP always has time to look for a schedule."""


def _grid_horizon(g: Groups) -> float:
    """Scaled time by which some grid schedule surely finishes.

    Serve nothing until the last release, then every flow at
    ``size / T`` with ``T`` the largest link load over capacity: feasible.
    """
    return float(g.release.max() + g.v.sum(axis=0).max())


def _capacity_rows(lp: LPBuilder, g: Groups, X, xg, xi, slot_len: FloatArray):
    """Rows ``sum_g use_gl x_gi <= c_l len_i`` (none for slots of infinite length).

    Returns the column, link and coefficient of every entry (for extra rows on them).
    """
    row, col, val, ri, rl = link_rows(g, xg, xi)
    finite = np.isfinite(slot_len[ri])
    hi = np.where(finite, g.cap[rl] * np.where(finite, slot_len[ri], 0.0), math.inf)
    lp.add_rows(row, X[col], val, -math.inf, hi, num=ri.size)
    return col, rl[row], val


def _amount_and_completion(lp: LPBuilder, g: Groups, xg, xi, n: int, z_cost: FloatArray,
                           complement: bool = False):
    """Columns x (amounts) and z (completion by slot), and the rows tying them.

    ``sum_i x_gi = s_g``; ``sum_{i' <= i} x_gi' >= s_g z_ki``; ``z`` monotone in
    ``i`` and ``z_k,n-1 = 1``. ``complement``: the columns are ``u = 1 - z`` (not yet
    complete by slot ``i``) with costs ``z_cost``: ``sum x_gi' + s_g u_ki >= s_g``,
    ``u`` decreasing, ``u_k,n-1 = 0``.
    """
    K = g.num_coflows
    zlo = np.zeros((K, n))
    zhi = np.ones((K, n))
    if complement:
        zhi[:, -1] = 0.0
    else:
        zlo[:, -1] = 1.0
    Z = lp.add_cols(K * n, cost=z_cost.ravel(), lo=zlo.ravel(), hi=zhi.ravel(),
                    integer=True).reshape(K, n)
    X = lp.add_cols(xg.size, lo=0.0, hi=g.size[xg])
    lp.add_rows(xg, X, 1.0, g.size, g.size, num=g.num_groups)
    # x[g, i'] enters the rows (g, i) of every i >= i'
    owner, slot = spread(xi, n - xi)
    gi_g = np.repeat(np.arange(g.num_groups), n)
    gi_i = np.tile(np.arange(n), g.num_groups)
    rows = np.concatenate([xg[owner] * n + slot, gi_g * n + gi_i])
    cols = np.concatenate([X[owner], Z[g.coflow[gi_g], gi_i]])
    sign = 1.0 if complement else -1.0
    vals = np.concatenate([np.ones(owner.size), sign * g.size[gi_g]])
    need = np.repeat(g.size, n) if complement else 0.0
    lp.add_rows(rows, cols, vals, need, math.inf, num=g.num_groups * n)
    if n > 1:
        nk = K * (n - 1)
        r = np.repeat(np.arange(nk), 2)
        cc = np.stack([Z[:, :-1].ravel(), Z[:, 1:].ravel()], axis=1).ravel()
        lo, hi = (0.0, math.inf) if complement else (-math.inf, 0.0)  # u decreasing, z rising
        lp.add_rows(r, cc, np.tile([1.0, -1.0], nk), lo, hi, num=nk)
    return X, Z


def _first_slots(g: Groups, step: float, n_slots: int) -> np.ndarray:
    """Each group's first grid slot: the first whose start is at or after its release."""
    return np.searchsorted(step * np.arange(n_slots + 1), g.release * (1 - 1e-12), side="left")


def _grid_model(g: Groups, step: float, n_slots: int):
    t = step * np.arange(n_slots + 1)
    first = _first_slots(g, step, n_slots)
    xg, xi = spread(first, n_slots - first)
    lp = LPBuilder()
    w = g.instance.weight
    # C_k = t_n - step * sum_{i < n-1} z_ki (completion charged at the slot's end)
    zc = np.zeros((g.num_coflows, n_slots))
    zc[:, :-1] = -w[:, None] * step
    X, Z = _amount_and_completion(lp, g, xg, xi, n_slots, zc)
    _capacity_rows(lp, g, X, xg, xi, np.full(n_slots, step))
    const = float(w.sum()) * t[-1]
    return lp, X, Z, xg, xi, t, const


def _relaxed_model(g: Groups, step: float, n_slots: int):
    """Valid relaxation: n_slots grid slots plus one unbounded last slot."""
    n = n_slots + 1
    t = step * np.arange(n_slots + 1)
    first = np.searchsorted(t[1:], g.release, side="right")  # first slot ending after release
    first = np.minimum(first, n - 1)
    xg, xi = spread(first, n - first)
    lp = LPBuilder()
    w = g.instance.weight
    start = np.append(t[:-1], t[-1])  # slot starts; the last slot starts at t_n
    c = np.maximum(start[None, :], g.earliest[:, None])  # charge if completing in slot i
    # sum_i c_i (z_i - z_{i-1}) = c_0 + sum_{i < last} (1 - z_i) (c_{i+1} - c_i): in the
    # complement u = 1 - z every cost is nonnegative and the constant small (as in
    # bounds.interval: c_last - sum z_i (...) cancels when a heavy coflow ends early)
    uc = np.zeros((g.num_coflows, n))
    uc[:, :-1] = w[:, None] * (c[:, 1:] - c[:, :-1])
    X, _ = _amount_and_completion(lp, g, xg, xi, n, uc, complement=True)
    slot_len = np.append(np.full(n_slots, step), np.inf)
    col, link, use = _capacity_rows(lp, g, X, xg, xi, slot_len)
    # work released inside a slot fits after its release: per (slot, link, threshold)
    inside = (g.release[xg] > t[np.minimum(xi, n_slots)]) & (xi < n_slots)
    if inside.any():
        L = g.cap.size
        rows, cols, vals, his = [], [], [], []
        nr = 0
        sel = inside[col]
        e_col, e_link, e_use = col[sel], link[sel], use[sel]
        for (slot, lk), idx in _group_by(xi[e_col], e_link, L):
            rel = g.release[xg[e_col[idx]]]
            for rho in np.unique(rel):
                late = idx[rel >= rho]
                rows.append(np.full(late.size, nr))
                cols.append(X[e_col[late]])
                vals.append(e_use[late])  # the group's use of the link (below 1 when sprayed)
                his.append(g.cap[lk] * (t[slot + 1] - rho))
                nr += 1
        if nr:
            lp.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals),
                        -math.inf, np.array(his), num=nr)
    const = float(np.dot(w, c[:, 0]))
    return lp, const


def _group_by(a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], L: int):
    key = a * L + b
    order = np.argsort(key, kind="stable")
    ks = key[order]
    cuts = np.flatnonzero(np.diff(ks)) + 1
    for chunk in np.split(order, cuts):
        if chunk.size:
            k = int(key[chunk[0]])
            yield (k // L, k % L), chunk


def time_indexed(
    inst: Instance, *, time_limit: float = 60.0, step: float | None = None,
    slots: int | None = None, lower: str = "lp", rel_gap: float = 1e-6,
) -> Result:
    """Best schedule on a time grid (upper bound) and a valid lower bound.

    Parameters
    ----------
    step
        Grid step in the instance's time unit. Default: the horizon divided
        by ``slots`` (default 40).
    slots
        Number of slots when ``step`` is not given.
    lower
        ``"lp"``: the relaxed model's LP relaxation (cheap); ``"milp"``: the
        relaxed model solved as a MILP (tighter, slower); ``"none"``. Solved
        before the grid MILP, with at most half of the time left after the
        grid model is built (both models' build times count against
        ``time_limit``); the grid MILP gets the rest. If the bound's solve
        does not finish, the bound is the isolation bound.
    """
    reject_dependencies(inst, "method='time-indexed'")
    if lower not in _LOWER:
        raise CoflowoptError(f"lower must be one of {', '.join(_LOWER)}; got {lower!r}")
    start = now()
    K = inst.num_coflows
    if K == 0:
        return Result(Status.OPTIMAL, 0.0, 0.0, 0.0, "time-indexed", completion=np.zeros(0))
    g = build_groups(inst)
    check_span(g)
    tu = g.time_unit
    H = _grid_horizon(g)
    if step is not None and slots is not None:
        raise CoflowoptError("method 'time-indexed': give option step or option slots, not both "
                             f"(got step={step!r}, slots={slots!r})")
    if step is not None:
        if not (isinstance(step, (int, float)) and math.isfinite(step) and step > 0):
            raise CoflowoptError(f"method 'time-indexed': option step must be a finite number > 0, "
                                 f"got {step!r}")
        s = float(step) / tu
    else:
        n_req = 40 if slots is None else slots
        if not isinstance(n_req, int) or isinstance(n_req, bool) or n_req < 1:
            raise CoflowoptError(f"method 'time-indexed': option slots must be an integer >= 1, "
                                 f"got {slots!r}")
        s = H / n_req
    # enough slots for a grid schedule to exist (see _grid_horizon)
    # (the release part rounds like the grid model's availability test)
    n_slots = max(1, math.ceil(g.release.max() * (1 - 1e-12) / s)
                  + math.ceil(g.v.sum(axis=0).max() / s - 1e-9))
    what = f"method='time-indexed' with a step of {s * tu:g} ({count_text(n_slots)} slots)"
    check_size(n_slots * (g.num_groups + K), what)  # before the grid itself is built
    # each amount column x_gi enters the cumulative rows of slots i..n-1 (both models)
    free = n_slots + 1 - _first_slots(g, s, n_slots)
    check_size(0, what, nonzeros=int(np.sum(free * (free + 1) // 2)))
    lp, X, _, xg, xi, t, const = _grid_model(g, s, n_slots)
    info: dict = {"step": s * tu, "slots": n_slots}
    # the bound first, so that the grid MILP cannot use up the time it needs
    bound = -math.inf
    built = now() - start  # about what building the relaxed model takes
    if lower != "none":
        left = time_limit - built
        rsol = None
        if left > built:  # else building it alone would use up the limit
            rlp, rconst = _relaxed_model(g, s, n_slots)
            left = time_limit - (now() - start)
            rsol = rlp.solve(time_limit=max(left * _BOUND_SHARE, 1e-3), relax=(lower == "lp"))
        info["lower_status"] = "not started" if rsol is None else rsol.status
        if rsol is not None and math.isfinite(rsol.bound):
            lb = rescaled(rconst, rsol.bound, tu, inst.num_coflows)
            info[f"lower_{lower}"] = lb
            # the LP's bound is a safe dual bound, recomputed from the data; the MILP's is
            # HiGHS's branch-and-bound bound, not recomputed
            info["lower_certified"] = lower == "lp"
            bound = lb
        else:  # not solved in time: sum w_k e_k, below every charge of the relaxed model
            bound = float(np.dot(inst.weight, g.earliest)) * tu
            bound = rounded_down(bound, bound, inst.num_coflows + 3)
            info["lower_isolation"] = bound
            info["lower_certified"] = True
    left = time_limit - (now() - start)
    # HiGHS cannot stop inside loading and presolving a model, which take about as long as
    # building it: with less time left than that, the MILP is not started (200
    # coflows ran 6.6 s with a limit of 2 s)
    sol = lp.solve(time_limit=left, options={"mip_rel_gap": rel_gap}) if left > built else None
    info["grid_status"] = "not started" if sol is None else sol.status
    if sol is None or sol.x is None:
        status = (Status.TIME_LIMIT if sol is None or sol.status == "time_limit"
                  else Status.NO_SOLUTION)
        return Result(status, math.nan, bound, now() - start, "time-indexed",
                      info=info)
    info["grid_objective"] = (const + sol.objective) * tu
    info["grid_bound"] = (const + sol.bound) * tu if math.isfinite(sol.bound) else math.nan
    # (the grid LP leaves amounts of 1e-10 of a flow's size in later slots: rounding, trimmed)
    sched = g.schedule(t, g.amounts(n_slots, xi, xg, sol.x[X])).trimmed(inst)
    comp = sched.coflow_completion(inst)
    value = float(np.dot(inst.weight, comp))
    # (not clamped to the value: "lp" is proven below it, and "milp"'s HiGHS dual bound is
    # reported as HiGHS gives it, not proven: info["lower_certified"])
    gap = max(value - bound, 0.0) / value if value > 0 else 0.0
    if sol.status == "time_limit":
        status = Status.TIME_LIMIT
    else:  # (optimal only on a proven bound: HiGHS's MIP bound lay 1.4e-4 above an optimum)
        proven = info.get("lower_certified", False)
        status = Status.OPTIMAL if gap <= rel_gap and proven else Status.FEASIBLE
    return Result(status, value, float(bound), now() - start, "time-indexed",
                  schedule=sched, completion=comp, info=info)
