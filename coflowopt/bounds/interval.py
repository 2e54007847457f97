"""Interval-indexed LP on a geometric time grid (after Qiu, Stein and Zhong, SPAA 2015).

See ``models/bound-interval.md``. Time points ``tau_1 < tau_2 < ...`` with
``tau_{i+1} = ratio * tau_i`` (``tau_1`` the earliest possible completion);
``X_ki`` is the fraction of coflow ``k`` completed by ``tau_i`` (cumulative,
so the capacity rows stay sparse):

    min  sum_k w_k sum_i c_ki (X_ki - X_k,i-1) + c_k,N+1 (1 - X_kN)
    s.t. sum_k v_kl X_ki <= tau_i                for every link l and point i
         X_k,i-1 <= X_ki,  0 <= X <= 1,  X_ki = 0 when tau_i < e_k

with ``c_ki = max(tau_{i-1}, e_k)``, a lower bound on ``C_k`` when ``k``
completes in ``(tau_{i-1}, tau_i]`` (QSZ charge ``tau_{i-1}``; taking the max
with ``e_k = r_k + Gamma_k`` is our strengthening). The last interval
``(tau_N, inf)`` has no capacity row, so no horizon assumption is needed.

Solved in the complement ``Y_ki = 1 - X_ki`` (the fraction of ``k`` not yet
completed by ``tau_i``), whose objective telescopes to
``sum_k w_k (c_k1 + sum_i (c_k,i+1 - c_ki) Y_ki)``: every cost is nonnegative
and the constant is ``sum_k w_k e_k``. The form above has the constant
``sum_k w_k c_k,N+1`` (every coflow charged the horizon) minus an LP value of
about the same size; it put the bound 2.4x above the optimum when a
heavy coflow finishing early met a long one (weights 1e6 and 2e-10: both
terms near 1e14, their difference 0.02).
With release thresholds ``rho`` the rows ``sum_{k: r_k >= rho} v_kl X_ki <=
tau_i - rho`` are added as well (work released at ``rho`` or later fits in
``[rho, tau_i]``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .._budget import TimeBudget, now
from ..errors import CoflowoptError
from ..instance import Instance
from ..result import Result, Status
from ._highs import LPBuilder, bound_status
from ._round import rescaled
from .pairwise import _thresholds, scaled_times

__all__ = ["interval_bound", "interval_lp"]

FloatArray = npt.NDArray[np.float64]


MAX_ENTRIES = 30_000_000
"""The largest LP (nonzeros) the interval bound builds (a few GiB while building); a ratio
close to 1 asks for very many time points."""


BUILD_CHUNK = 2_000_000
"""(coflow, link, point) entries built at a time, the clock checked between: the rows of
all links at once took 0.8-2 s on 1,500 coflows at ratio 1.02."""


def _too_large(entries: int, points: int, ratio: float, at_least: str = "") -> None:
    raise CoflowoptError(
        f"the interval LP would have {at_least}{entries:,} nonzeros ({points:,} time points for ratio "
        f"{ratio!r}), more than {MAX_ENTRIES:,}; use a larger ratio or fewer thresholds")


def _link_groups(links: npt.NDArray[np.int64], size: int) -> list[tuple[int, int]]:
    """``[a, b)`` spans of the sorted ``links`` that hold whole links, each about ``size``
    long (a span with one link may be longer)."""
    starts = np.flatnonzero(np.diff(links)) + 1
    spans, a = [], 0
    for b in [*starts.tolist(), links.size]:
        if b - a >= size or b == links.size:
            if b > a:
                spans.append((a, b))
            a = b
    return spans


def interval_lp(
    inst: Instance, *, ratio: float = 1.25, thresholds: int | str = "auto",
    time_limit: float | None = None,
) -> tuple[float, dict]:
    """Solve the interval-indexed LP; returns ``(bound, info)``.

    ``time_limit`` covers building the LP as well: out of time while building, the
    bound is ``nan`` and ``info["stopped_while"]`` says where it stopped.
    """
    if not (isinstance(ratio, (int, float)) and math.isfinite(ratio) and ratio > 1):
        raise CoflowoptError(f"ratio must be a number > 1, got {ratio!r}")
    budget = TimeBudget(time_limit)  # building the LP counts against the limit
    K = inst.num_coflows
    tu, v, r, e = scaled_times(inst, "the interval LP")
    w = inst.weight
    if thresholds == "auto":
        thresholds = 10 if np.unique(r).size > 1 else 0
    th = _thresholds(r, thresholds)
    t1 = float(e.min())
    horizon = float(e.max() + v.sum(axis=0).max())
    span = horizon / t1
    if not math.isfinite(span):
        raise CoflowoptError(
            f"the interval LP's time points would run from {t1 * tu!r} to {horizon * tu!r} (the "
            "earliest and latest possible completions), a ratio beyond floating point; the "
            "other bounds (coflowopt bound --method port) do not need it")
    N = max(1, math.ceil(math.log(max(span, 1.0)) / math.log(ratio)) + 1)
    kk, ll = np.nonzero(v > 0)
    if 2 * K * (N - 1) > MAX_ENTRIES:  # the monotone rows alone (before N points are made)
        _too_large(2 * K * (N - 1), N, ratio, "at least ")
    tau = t1 * ratio ** np.arange(N)  # tau_1 .. tau_N
    # nonzeros, counted before building: the monotone rows, then per threshold each (k, l)
    # at its points from the first that is allowed (tau_i >= e_k) and after rho
    first = np.searchsorted(tau, e * (1 - 1e-12), side="left")
    entries = 2 * K * (N - 1)
    for rho in np.concatenate([[0.0], th]):
        ks = kk[r[kk] >= rho] if rho > 0 else kk
        after = int(np.searchsorted(tau, rho, side="right"))
        entries += int((N - np.maximum(first[ks], after)).clip(min=0).sum())
    if entries > MAX_ENTRIES:
        _too_large(entries, N, ratio)
    tau_prev = np.concatenate([[0.0], tau])  # tau_0 .. tau_N
    # c[k, i] for i = 1..N+1 (column i-1)
    c = np.maximum(tau_prev[None, :], e[:, None])
    lp = LPBuilder()
    allowed = tau[None, :] >= e[:, None] * (1 - 1e-12)  # (K, N)
    cost = w[:, None] * (c[:, 1:] - c[:, :-1])  # coefficient of Y_ki = 1 - X_ki, i = 1..N
    Y = lp.add_cols(K * N, cost=cost.ravel(), lo=(~allowed).ravel().astype(float), hi=1.0)
    Ym = Y.reshape(K, N)
    # monotone: X_k,i-1 <= X_ki, so Y_k,i-1 >= Y_ki
    if N > 1:
        nk = K * (N - 1)
        rows = np.repeat(np.arange(nk), 2)
        cols = np.stack([Ym[:, :-1].ravel(), Ym[:, 1:].ravel()], axis=1).ravel()
        vals = np.tile([1.0, -1.0], nk)
        lp.add_rows(rows, cols, vals, 0.0, math.inf, num=nk)
    # capacity rows per (threshold, link, point)
    nrows = 0
    info: dict[str, Any] = {"ratio": ratio, "points": N, "thresholds": int(th.size),
                            "columns": int(K * N)}

    def out_of_time(stage: str) -> tuple[float, dict[str, Any]]:
        info.update(lp_status="time_limit", stopped_while=stage, capacity_rows=int(nrows))
        return math.nan, info

    for rho in np.concatenate([[0.0], th]):
        sel = r[kk] >= rho if rho > 0 else np.ones(kk.size, bool)
        order = np.argsort(ll[sel], kind="stable")  # by link, so rows split into link groups
        ks, ls = kk[sel][order], ll[sel][order]
        pts = np.flatnonzero(tau > rho)
        for a, b in _link_groups(ls, max(1, BUILD_CHUNK // max(pts.size, 1))):
            if budget.expired():
                return out_of_time("building the capacity rows")
            # entries (k, l, i) with X_ki allowed
            ent_k = np.repeat(ks[a:b], pts.size)
            ent_l = np.repeat(ls[a:b], pts.size)
            ent_i = np.tile(pts, b - a)
            ok = allowed[ent_k, ent_i]
            ent_k, ent_l, ent_i = ent_k[ok], ent_l[ok], ent_i[ok]
            key = ent_l * N + ent_i
            ukey, row = np.unique(key, return_inverse=True)
            rhs = tau[ukey % N] - rho
            vals = v[ent_k, ent_l]
            # sum v X <= rhs  <=>  sum v Y >= sum v - rhs (over the row's allowed entries)
            need = np.bincount(row, vals, minlength=ukey.size) - rhs
            lp.add_rows(row, Ym[ent_k, ent_i], vals, need, math.inf, num=ukey.size)
            nrows += ukey.size
    constant = float(np.dot(w, c[:, 0]))
    if budget.expired():
        return out_of_time("before solving (every row built)")
    sol = lp.solve(time_limit=budget.left())
    info.update(capacity_rows=int(nrows), lp_status=sol.status, lp_time_s=sol.runtime)
    if not sol.ok:
        return math.nan, info
    return rescaled(constant, float(sol.bound), tu, w.size), info


def interval_bound(
    inst: Instance, *, time_limit: float | None = None, ratio: float = 1.25,
    thresholds: int | str = "auto",
) -> Result:
    """The interval-indexed LP's optimum (safe dual bound) as a lower bound."""
    start = now()
    if inst.num_coflows == 0:
        return Result(Status.BOUND, math.nan, 0.0, 0.0, "interval")
    bound, info = interval_lp(inst, ratio=ratio, thresholds=thresholds, time_limit=time_limit)
    status = bound_status(bound, info.get("lp_status") == "time_limit")
    return Result(status, math.nan, bound, now() - start, "interval", info=info)
