"""Linear programs that cross-check the fairness closed forms (HiGHS via scipy).

See ``models/fairness.md`` for the formulations, their sizes and why each
is exact. All work on the float64 version of the problem (vectors as
fractions of each link, so every link has capacity 1):

- :func:`max_min_progress_lp`: ``max t`` s.t. ``sum_k d^i_k p_k <= 1``,
  ``w_k t <= p_k <= bound_k``. Its optimum is the isolation guarantee of
  DRF: Eq. 7.2 for elastic demands, the first level of progressive filling
  otherwise.
- :func:`lexicographic_max_min_lp`: the same LP repeated level by level,
  fixing the coflows that cannot rise above the current level; the result
  is the lexicographically max-min progress vector, i.e. multi-round DRF.
- :func:`hug_stage2_lp`: HUG's stage 2 as the utilisation-maximising LP
  (Eq. 7.1 / D.3 with the HUG cap ``c^i_k <= P_k`` in non-cooperative mode).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._budget import check_time_limit, now
from ..errors import InstanceError
from ..result import Result, Status
from ._arith import as_float
from .guarantees import hug_caps
from .problem import FairnessProblem, check_problem

__all__ = ["hug_stage2_lp", "lexicographic_max_min_lp", "max_min_progress_lp"]

_STATUS = {0: Status.OPTIMAL, 1: Status.TIME_LIMIT, 2: Status.INFEASIBLE}


def _solve(
    c: npt.NDArray[np.float64],
    A: sp.csr_array,
    b: npt.NDArray[np.float64],
    bounds: list[tuple[float, float | None]] | npt.NDArray[np.float64],
    time_limit: float | None,
) -> Any:
    options: dict[str, Any] = {"presolve": True}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    from scipy.optimize import linprog  # (a quarter second to import: only when solved)

    return linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs", options=options)


def _bounds(lo: npt.NDArray[np.float64], hi: npt.NDArray[np.float64]) -> npt.NDArray[Any]:
    out = np.empty((lo.size, 2), dtype=object)
    out[:, 0] = lo
    out[:, 1] = [None if not np.isfinite(h) else float(h) for h in hi]
    return out


def _progress_system(problem: FairnessProblem) -> tuple[sp.csr_array, npt.NDArray[np.float64]]:
    """Rows ``sum_k d^i_k p_k <= 1`` for the links some coflow uses."""
    d = as_float(problem.vectors)
    used = d.sum(axis=0) > 0
    return sp.csr_array(d[:, used].T), np.ones(int(used.sum()))


def _level_lp(
    problem: FairnessProblem,
    free: npt.NDArray[np.bool_],
    fixed: npt.NDArray[np.float64],
    time_limit: float | None,
) -> tuple[Any, int, int]:
    """``max t`` s.t. links, ``w_k t <= p_k`` (free k), ``p_k = fixed_k`` (others)."""
    if time_limit is not None:  # (SciPy would warn, on the terminal, and ignore any other)
        check_time_limit(time_limit, InstanceError)
    M = problem.num_coflows
    w = as_float(problem.weights)
    ub = as_float(problem.bounds)
    links, rhs = _progress_system(problem)
    nf = int(free.sum())
    # variables: p_0..p_{M-1}, t
    link_rows = sp.hstack([links, sp.csr_array((links.shape[0], 1))])
    idx = np.flatnonzero(free)
    lvl = sp.csr_array(
        (np.concatenate([-np.ones(nf), w[idx]]),
         (np.concatenate([np.arange(nf), np.arange(nf)]), np.concatenate([idx, np.full(nf, M)]))),
        shape=(nf, M + 1),
    )
    A = sp.vstack([link_rows, lvl], format="csr")
    b = np.concatenate([rhs, np.zeros(nf)])
    lo = np.where(free, 0.0, fixed)
    hi = np.where(free, ub, fixed)
    bounds = _bounds(np.append(lo, 0.0), np.append(hi, np.inf))
    c = np.zeros(M + 1)
    c[M] = -1.0
    return _solve(c, A, b, bounds, time_limit), A.shape[1], A.shape[0]


def max_min_progress_lp(problem: FairnessProblem, *, time_limit: float | None = None) -> Result:
    """The max-min progress LP; ``objective`` is the optimal isolation guarantee.

    ``info``: ``progress`` (an optimal, not necessarily max-min, vector),
    ``variables``, ``constraints``.
    """
    problem = check_problem(problem, "max_min_progress_lp")
    t0 = now()
    M = problem.num_coflows
    res, nvar, ncon = _level_lp(problem, np.ones(M, bool), np.zeros(M), time_limit)
    status = _STATUS.get(res.status, Status.NO_SOLUTION)
    ok = res.x is not None and status is Status.OPTIMAL
    value = float(res.x[M]) if ok else float("nan")
    return Result(
        status,
        value,
        value,
        now() - t0,
        "lp-max-min-progress",
        objective_name="isolation_guarantee",
        sense="max",
        info={"progress": res.x[:M] if ok else None, "variables": nvar, "constraints": ncon},
    )


def lexicographic_max_min_lp(
    problem: FairnessProblem, *, tol: float = 1e-9, time_limit: float | None = None
) -> Result:
    """Lexicographic max-min progress by repeated LPs (multi-round DRF's answer).

    Each round solves the level LP, then, for every free coflow that touches
    a tight link or its bound, an LP maximising that coflow's progress with
    the others held at the level; a coflow that cannot rise is fixed. At
    most ``M`` rounds. ``info['progress']`` is the vector, ``info['lps']``
    the number of LPs solved.
    """
    problem = check_problem(problem, "lexicographic_max_min_lp")
    if time_limit is not None:
        check_time_limit(time_limit, InstanceError)
    t0 = now()
    M = problem.num_coflows
    w = as_float(problem.weights)
    ub = as_float(problem.bounds)
    d = as_float(problem.vectors)
    links, rhs = _progress_system(problem)
    free = np.ones(M, bool)
    fixed = np.zeros(M)
    lps = 0
    levels: list[float] = []
    status = Status.OPTIMAL
    while free.any():
        if time_limit is not None and now() - t0 > time_limit:
            status = Status.TIME_LIMIT
            break
        res, _, _ = _level_lp(problem, free, fixed, time_limit)
        lps += 1
        if res.status != 0:
            status = _STATUS.get(res.status, Status.NO_SOLUTION)
            break
        t = float(res.x[M])
        levels.append(t)
        p = res.x[:M]
        slack = rhs - links @ p
        tight_links = slack <= tol * 10
        touches = (d[:, d.sum(axis=0) > 0][:, tight_links] > 0).any(axis=1)
        at_bound = np.isfinite(ub) & (p >= ub - tol * np.maximum(1.0, np.where(np.isfinite(ub), ub, 1.0)))
        newly: list[int] = []
        for k in np.flatnonzero(free & (touches | at_bound)):
            # can k rise above w_k t while every other free coflow keeps w_j t?
            lo = np.where(free, w * t, fixed)
            hi = np.where(free, ub, fixed)
            c = np.zeros(M)
            c[k] = -1.0
            r = _solve(c, links, rhs, _bounds(np.minimum(lo, hi), hi), time_limit)
            lps += 1
            best = float(r.x[k]) if r.status == 0 else w[k] * t
            if best <= w[k] * t * (1 + tol) + tol:
                newly.append(int(k))
        if not newly:  # numerically stuck: fix the coflow with the least room
            newly = [int(np.flatnonzero(free)[np.argmin((p / w)[free])])]
        for j in newly:
            fixed[j] = min(w[j] * t, ub[j])
            free[j] = False
    value = float((fixed / w).min()) if status is Status.OPTIMAL else float("nan")
    return Result(
        status,
        value,
        value,
        now() - t0,
        "lp-lexicographic-max-min",
        objective_name="isolation_guarantee",
        sense="max",
        info={"progress": fixed if status is Status.OPTIMAL else None, "lps": lps, "levels": levels},
    )


def _within_capacity(
    x: npt.NDArray[np.float64], A: sp.csr_array, free: npt.NDArray[np.float64], n_pairs: int,
    pair_link: npt.NDArray[np.int64], inel_vectors: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Stage 2's extra shares scaled back onto each link's free capacity: HiGHS's feasibility
    tolerance (1e-7) let a link be allocated 1.000000006 when another coflow's entry was 6e-9.
    An elastic share is scaled by its link's factor, an inelastic coflow's extra
    progress by the smallest factor of its links."""
    used = A @ x
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(used > free, np.where(used > 0, free / used, 0.0), 1.0)
    x = x.copy()
    x[:n_pairs] *= factor[pair_link]
    for j, vec in enumerate(inel_vectors):
        x[n_pairs + j] *= factor[vec > 0].min(initial=1.0)
    return x


def hug_stage2_lp(
    problem: FairnessProblem,
    guarantee: npt.ArrayLike,
    progress: npt.ArrayLike,
    *,
    cooperative: bool = False,
    time_limit: float | None = None,
) -> Result:
    """HUG stage 2 as an LP: maximise utilisation on top of the stage-1 ``guarantee``.

    Variables: extra share ``e^i_k`` for each elastic coflow on each link it
    uses, extra progress ``f_k`` for each inelastic coflow. Maximise
    ``sum e + sum_k f_k sum_i d^i_k`` s.t. per link
    ``sum_k e^i_k + sum_k f_k d^i_k <= 1 - sum_k a^i_k`` and
    ``0 <= e^i_k <= cap_k - a^i_k``, ``0 <= f_k <= progcap_k - P_k`` (see
    :func:`coflowopt.fairness.guarantees.hug_caps`). ``objective`` is the total
    utilisation ``sum_i sum_k c^i_k``; ``info['extra']`` the extra allocation.
    """
    problem = check_problem(problem, "hug_stage2_lp")
    t0 = now()
    d = as_float(problem.vectors)
    M, L = d.shape
    g = as_float(guarantee)
    p = as_float(progress)
    if g.shape != (M, L) or p.shape != (M,):
        raise InstanceError(f"the guarantee must be coflows x links ({M} x {L}) and the progress "
                            f"one per coflow, got shapes {g.shape} and {p.shape}")
    if time_limit is not None:  # (SciPy would warn, on the terminal, and ignore any other)
        check_time_limit(time_limit, InstanceError)
    link_cap, prog_cap = (as_float(x) for x in hug_caps(problem, p, cooperative=cooperative))
    el = np.asarray(problem.elastic)
    ks, ls = np.nonzero(el[:, None] & (d > 0))
    inel = np.flatnonzero(~el & (prog_cap - p > 0))
    n_pairs = ks.size
    n = n_pairs + inel.size
    A = sp.hstack(
        [sp.csr_array((np.ones(n_pairs), (ls, np.arange(n_pairs))), shape=(L, n_pairs)),
         sp.csr_array(d[inel].T)],
        format="csr",
    )
    b = np.maximum(1.0 - g.sum(axis=0), 0.0)
    hi = np.concatenate([np.maximum(link_cap[ks] - g[ks, ls], 0.0), prog_cap[inel] - p[inel]])
    c = -np.concatenate([np.ones(n_pairs), d[inel].sum(axis=1)])
    base = float((g * (d > 0)).sum())
    if n == 0:
        return Result(Status.OPTIMAL, base, base, now() - t0, "lp-hug-stage2",
                      objective_name="utilization", sense="max",
                      info={"extra": np.zeros((M, L)), "variables": 0, "constraints": 0})
    res = _solve(c, A, b, _bounds(np.zeros(n), hi), time_limit)
    status = _STATUS.get(res.status, Status.NO_SOLUTION)
    extra = None
    value = float("nan")
    if res.x is not None and status is Status.OPTIMAL:
        x = _within_capacity(np.minimum(np.maximum(res.x, 0.0), hi), A, b, n_pairs, ls, d[inel])
        extra = np.zeros((M, L))
        extra[ks, ls] = x[:n_pairs]
        extra[inel] += x[n_pairs:, None] * d[inel]
        value = base - float(c @ x)
    return Result(
        status, value, value, now() - t0, "lp-hug-stage2",
        objective_name="utilization", sense="max",
        info={"extra": extra, "variables": n, "constraints": int(A.shape[0])},
    )

