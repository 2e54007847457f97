"""PS-P and per-resource equal sharing (dissertation §7.4.1, Appendix D.2.1-D.2.2).

*Per-resource equal sharing* (:func:`equal_share`) divides every link equally
(by weight) among the coflows that use it, irrespective of demands - the
demand-agnostic policy of App. D.2.1. It is strategy-proof but has a low
isolation guarantee, and with inelastic demands it is not even
work-conserving (Lemma D.2.1).

*PS-P* (FairCloud, :func:`psp`) keeps those per-link shares as guarantees
and is work-conserving: a coflow's unused share goes to the coflows that
want more on that link (§7.4.1: "equally divide link capacities at the
coflow level and allow work conservation for coflows with unmet demand").
We model it as per-link weighted fair queueing at the coflow level, i.e.
the equilibrium in which every coflow sends as much as it can:

- an elastic coflow is independent on each link it uses, so each link is
  shared max-min among those coflows (Figure 7.3: ``<1/2, 1/2>`` each);
- an inelastic coflow sends ``r_k d_k`` at the largest ``r_k`` its links'
  fair shares allow.

The equilibrium: every coflow has a saturated *bottleneck* link on which its
bandwidth (divided by its weight) is the largest - per-link max-min in
bandwidth, not in progress. For inelastic coflows this couples the links
and differs from DRF; it reproduces Lemma D.2.2 (truthful inelastic
coflows of Figure D.1 get 2/3, 1/3, 1/3; when C_B holds its link-2 share
with useless traffic, C_B and C_C get 3/8 and C_A 1/2). A coflow that
*reports* a larger vector sends useless traffic along it, which is how the
lie search manipulates PS-P.

The equilibrium is computed with :func:`coflowopt.alloc.max_min` only
(:func:`wfq_equilibrium`): first by iterating per-link water-filling (each
link shares its capacity among its coflows, capped by what their other
links let them send), which settles elastic problems in one round but can
cycle when links are coupled; then by damped best response (each coflow's
rate moves half-way to what it would get demanding without limit). After
every round the bottleneck structure is guessed and its linear system
solved; a candidate is accepted once :func:`wfq_violations` finds nothing.
Exact problems are then certified in ``Fraction`` arithmetic. This
modelling of PS-P (coflow-level, not VM-level weights) is ours; the
dissertation gives no formula for PS-P with correlated demands.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._budget import TimeBudget, check_time_limit, now
from .._files import natural_number
from ..alloc import max_min
from ..errors import InstanceError
from ._arith import as_float, full, rationalize
from .allocation import FairAllocation
from .problem import FairnessProblem, check_problem

__all__ = ["equal_share", "psp", "wfq_equilibrium", "wfq_violations"]

Matrix = npt.NDArray[Any]


def equal_share(problem: FairnessProblem) -> FairAllocation:
    """Per-link weighted equal division among the coflows that use the link (App. D.2.1)."""
    problem = check_problem(problem, "equal_share")
    g = _link_shares(problem)
    return FairAllocation("equal-share", problem, g, g, exact=problem.exact)


def _link_shares(problem: FairnessProblem) -> Matrix:
    present = as_float(problem.vectors) > 0
    w = problem.weights
    share = np.where(present, w[:, None], 0 * w[:, None])
    total = share.sum(axis=0)
    safe = np.where(as_float(total) > 0, total, 1)
    return share / safe[None, :]


def _sessions(problem: FairnessProblem) -> tuple[Matrix, npt.NDArray[np.float64], Matrix, Matrix,
                                                 npt.NDArray[np.int64]]:
    """Usage (as the problem's numbers, and as floats), weight, upper bound and owning
    coflow of each PS-P session.

    An elastic coflow has one single-link session per link it uses (capped at
    its bound); an inelastic coflow one session along its vector.
    """
    d = problem.vectors
    M, L = d.shape
    fd = as_float(d)
    owner: list[int] = []
    link: list[int] = []  # an elastic session's link; -1: an inelastic coflow's session
    for k in range(M):
        on = np.flatnonzero(fd[k] > 0) if problem.elastic[k] else [-1]
        owner += [k] * len(on)
        link += [int(i) for i in on]
    own = np.array(owner, dtype=np.int64)
    at = np.array(link, dtype=np.int64)
    unit = at >= 0
    fusage = np.zeros((own.size, L))
    fusage[~unit] = fd[own[~unit]]  # (floats made once: converting each Fraction is slow)
    fusage[np.flatnonzero(unit), at[unit]] = 1.0
    usage: Matrix = fusage
    if problem.exact:
        usage = full((own.size, L), 0, exact=True)
        usage[~unit] = d[own[~unit]]
        usage[np.flatnonzero(unit), at[unit]] = Fraction(1)
    return usage, fusage, problem.weights[own], problem.bounds[own], own


def psp(
    problem: FairnessProblem, *, max_rounds: int = 500, time_limit: float | None = None
) -> FairAllocation:
    """PS-P: per-link weighted fair queueing among coflows, work-conserving.

    ``info``: ``converged`` (False if ``max_rounds`` or ``time_limit`` ran
    out first; the allocation is then feasible but not an equilibrium),
    ``rounds``, ``phase``; on exact inputs the equilibrium found in floats is
    verified in fractions within the same ``time_limit``, else it stands in
    floats and ``exact`` says so.

    Elastic coflows need one water-filling; inelastic ones couple the links
    and cost more (tens of seconds for 100 coflows of the Facebook trace),
    hence the limits.
    """
    problem = check_problem(problem, "psp")
    if not natural_number(max_rounds) or max_rounds < 1:
        raise InstanceError(f"max_rounds must be an integer >= 1, got {max_rounds!r:.60}")
    if time_limit is not None:
        check_time_limit(time_limit, InstanceError)
    budget = TimeBudget(time_limit)
    usage, fusage, w, u, own = _sessions(problem)
    r, info = wfq_equilibrium(
        fusage, as_float(w), as_float(u), max_rounds=max_rounds, time_limit=time_limit
    )
    M, L = problem.vectors.shape
    a = None
    if problem.exact and info["converged"]:
        a = _exact_allocation(usage, w, u, own, r, (M, L), budget)
        if a is None and budget.expired():  # the float equilibrium stands
            info["exact"] = "not verified: the time limit ran out"
    exact = a is not None
    if a is None:
        a = np.zeros((M, L))
        np.add.at(a, own, r[:, None] * fusage)
    g = _link_shares(problem)
    if not exact:
        g = as_float(g)
    return FairAllocation("psp", problem, a, g, exact=exact, info=info)


def _exact_allocation(usage: Matrix, w: Matrix, u: Matrix, own: npt.NDArray[np.int64],
                      r: npt.NDArray[np.float64], shape: tuple[int, int],
                      budget: TimeBudget) -> Matrix | None:
    """The allocation of the float equilibrium ``r`` rationalized, if that is exactly an
    equilibrium; None if it is not, or if ``budget`` runs out first (checked link by link:
    with Fractions each of the 10^5-10^6 session-link pairs costs microseconds)."""
    cand = rationalize(r)
    checked = _exact_violations(usage, w, u, cand, 0.0, budget.expired)
    if checked is None or checked[0]:
        return None
    a = full(shape, 0, exact=True)
    for ln, band in enumerate(checked[1]):
        if budget.expired():
            return None
        for sess, b in band.items():
            a[own[sess], ln] += b
    return a


def wfq_violations(
    usage: Matrix, weights: Matrix, upper: Matrix, rates: Matrix, *, tol: float = 1e-9
) -> list[str]:
    """Why ``rates`` is not a per-link fair (WFQ) equilibrium; empty if it is.

    Conditions: links within capacity 1; every session at its upper bound or
    with a saturated link on which ``usage * rate / weight`` is the largest.
    ``tol = 0`` with Fraction inputs is an exact test.
    """
    if not any(np.asarray(x).dtype == object for x in (usage, weights, upper, rates)):
        return _wfq_violations_float(usage, weights, upper, rates, tol)
    checked = _exact_violations(usage, weights, upper, rates, tol, lambda: False)
    assert checked is not None
    return checked[0]


def _exact_violations(
    usage: Matrix, weights: Matrix, upper: Matrix, rates: Matrix, tol: float,
    expired: Callable[[], bool],
) -> tuple[list[str], list[dict[int, Any]]] | None:
    """:func:`wfq_violations` in exact arithmetic over the sessions on each link, and each
    link's bands ``{session: usage * rate}``; None once ``expired()`` (asked per link)."""
    n, L = usage.shape
    out: list[str] = []

    def le(a: Any, b: Any) -> bool:
        return bool(a <= b + tol * (1 + abs(b))) if tol else bool(a <= b)

    on = np.asarray(usage != 0, dtype=bool)
    bands: list[dict[int, Any]] = []
    for ln in range(L):
        if expired():
            return None
        bands.append({int(s): usage[s, ln] * rates[s] for s in np.flatnonzero(on[:, ln])})
    load = [sum(band.values(), 0 * rates[0]) for band in bands]
    sat = [le(1, load[ln]) for ln in range(L)]
    for ln in range(L):
        if not le(load[ln], 1):
            out.append(f"link {ln} carries {float(load[ln]):.9g} > 1")
    top = [max((b / weights[s] for s, b in band.items()), default=0) for band in bands]
    for s in range(n):
        if rates[s] < 0:
            out.append(f"session {s} has a negative rate")
            continue
        if not (isinstance(upper[s], float) and math.isinf(upper[s])) and le(upper[s], rates[s]):
            if not le(rates[s], upper[s]):
                out.append(f"session {s} exceeds its upper bound")
            continue
        if not any(sat[ln] and le(top[ln], bands[ln][s] / weights[s])
                   for ln in np.flatnonzero(on[s])):
            out.append(f"session {s} has no saturated link on which it has the largest share")
    return out, bands


def _wfq_violations_float(
    usage: Matrix, weights: Matrix, upper: Matrix, rates: Matrix, tol: float
) -> list[str]:
    """:func:`wfq_violations` vectorised for float64 (same conditions, same messages)."""
    A = np.asarray(usage, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    u = np.asarray(upper, dtype=np.float64)
    r = np.asarray(rates, dtype=np.float64)
    on = A != 0
    band = np.where(on, A * r[:, None], 0.0)
    load = band.sum(axis=0)
    out = [f"link {ln} carries {load[ln]:.9g} > 1" for ln in np.flatnonzero(load > 1 + 2 * tol)]
    sat = 1 <= load + tol * (1 + np.abs(load))
    norm = np.where(on, band / w[:, None], -1.0)  # shares are >= 0; -1 marks 'not on the link'
    top = np.maximum(norm.max(axis=0), 0.0)
    neg = r < 0
    out += [f"session {s} has a negative rate" for s in np.flatnonzero(neg)]
    capped = ~neg & np.isfinite(u) & (u <= r + tol * (1 + np.abs(r)))
    finite_u = np.where(capped, u, 0.0)  # (tol 0 times an infinite bound is nan)
    over = capped & (r > finite_u + tol * (1 + np.abs(finite_u)))
    out += [f"session {s} exceeds its upper bound" for s in np.flatnonzero(over)]
    ok = (on & sat[None, :] & (top[None, :] <= norm + tol * (1 + np.abs(norm)))).any(axis=1)
    stuck = ~neg & ~capped & ~ok
    out += [f"session {s} has no saturated link on which it has the largest share"
            for s in np.flatnonzero(stuck)]
    return out


def wfq_equilibrium(
    usage: npt.NDArray[np.float64],
    weights: npt.NDArray[np.float64],
    upper: npt.NDArray[np.float64],
    *,
    max_rounds: int = 500,
    tol: float = 1e-9,
    time_limit: float | None = None,
) -> tuple[npt.NDArray[np.float64], dict[str, Any]]:
    """Rates of the per-link fair equilibrium (see the module docstring); float64.

    Two phases, both built on :func:`coflowopt.alloc.max_min`:

    1. *level iteration* (cheap): every link water-fills its capacity among
       its sessions, each capped by what its other links' current fair
       levels let it send; the new levels feed the next round. The map is
       antitone and can cycle, so after 25 rounds we switch to
    2. *damped best response*: each session's best response is the rate it
       would get demanding without limit while the others send their current
       rates (one water-filling per (session, link) pair, all in one call);
       rates move half-way towards it. A fixed point is an equilibrium.

    After every round the bottleneck structure is guessed and its linear
    system solved; the first candidate meeting :func:`wfq_violations` is
    returned. ``info``: ``converged``, ``rounds``, ``phase``, ``stopped``.
    Every iterate is feasible, so a stopped search still returns usable rates.
    """
    t0 = now()
    A = np.asarray(usage, dtype=np.float64)
    n, L = A.shape
    w = np.asarray(weights, dtype=np.float64)
    u = np.asarray(upper, dtype=np.float64)
    on = A > 0
    ss, ll = np.nonzero(on)
    pair = sp.csr_array((np.ones(ss.size), (np.arange(ss.size), ll)), shape=(ss.size, L))
    safe = np.where(on, A, 1.0)

    def accept(r: npt.NDArray[np.float64]) -> npt.NDArray[np.float64] | None:
        if not wfq_violations(A, w, u, r, tol=tol):
            return r
        return _solve_structure(A, w, u, r, tol)

    def out_of_time() -> bool:
        return time_limit is not None and now() - t0 > time_limit

    if np.all(on.sum(axis=1) == 1):
        # single-link sessions (elastic coflows only): links are independent and
        # per-link max-min is the equilibrium, by max_min's bottleneck property
        b = max_min(pair, np.ones(L), weights=w[ss], upper=u[ss] * A[ss, ll])
        r = np.zeros(n)
        r[ss] = b / A[ss, ll]
        return r, {"converged": True, "rounds": 1, "phase": "independent links", "stopped": "converged"}

    level = np.full(L, np.inf)
    r = np.zeros(n)
    level_rounds = min(25, max_rounds)
    for rnd in range(1, level_rounds + 1):
        if rnd > 1 and out_of_time():
            return r, {"converged": False, "rounds": rnd - 1, "phase": "levels", "stopped": "time_limit"}
        allowed = np.where(on, w[:, None] * level[None, :] / safe, np.inf)
        # the rate each session's *other* links allow: smallest entry, or the
        # second smallest where the smallest is this link
        order = np.argsort(allowed, axis=1)
        first = allowed[np.arange(n), order[:, 0]]
        second = allowed[np.arange(n), order[:, 1]] if L > 1 else np.full(n, np.inf)
        other = np.where(np.arange(L)[None, :] == order[:, :1], second[:, None], first[:, None])
        cap = np.where(on, A * np.where(on, np.minimum(u[:, None], other), 0.0), 0.0)
        b = max_min(pair, np.ones(L), weights=w[ss], upper=cap[ss, ll])
        band = np.zeros((n, L))
        band[ss, ll] = b
        r = np.minimum(np.where(on, band / safe, np.inf).min(axis=1), u)
        r[~np.isfinite(r)] = 0.0  # a session on no link carries nothing
        found = accept(r)
        if found is not None:
            return found, {"converged": True, "rounds": rnd, "phase": "levels", "stopped": "converged"}
        load = band.sum(axis=0)
        norm = np.where(on, band / w[:, None], 0.0)
        level = np.where(load >= 1 - 1e-12, norm.max(axis=0), np.inf)

    respond = _best_response(A, w, u)
    for rnd in range(level_rounds + 1, max_rounds + 1):
        if out_of_time():
            return r, {"converged": False, "rounds": rnd - 1, "phase": "best_response",
                       "stopped": "time_limit"}
        g = respond(r)
        found = accept(g)
        if found is None:
            r = 0.5 * (r + g)
            found = accept(r)
        if found is not None:
            return found, {"converged": True, "rounds": rnd, "phase": "best_response",
                           "stopped": "converged"}
    return r, {"converged": False, "rounds": max_rounds, "phase": "best_response", "stopped": "max_rounds"}


def _best_response(
    A: npt.NDArray[np.float64], w: npt.NDArray[np.float64], u: npt.NDArray[np.float64]
) -> Any:
    """``G(r)``: each session's rate if it demanded without limit, others sending ``r``.

    One virtual link per (session s, link l) pair holds a copy of every
    session on ``l``: the others capped at their demand ``A_jl r_j``, ``s``
    only by its bound. One :func:`max_min` call water-fills them all.
    """
    n, L = A.shape
    on = A > 0
    ps, pl = np.nonzero(on)
    members = [np.flatnonzero(on[:, ln]) for ln in range(L)]
    rows_j = np.concatenate([members[ln] for ln in pl])
    rows_v = np.concatenate([np.full(members[ln].size, v) for v, ln in enumerate(pl)])
    rows_l = pl[rows_v]
    is_self = rows_j == ps[rows_v]
    virt = sp.csr_array(
        (np.ones(rows_j.size), (np.arange(rows_j.size), rows_v)), shape=(rows_j.size, ps.size)
    )
    coef = A[rows_j, rows_l]
    own = A[ps, pl]

    def respond(r: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        cap = coef * np.where(is_self, u[rows_j], r[rows_j])
        b = max_min(virt, np.ones(ps.size), weights=w[rows_j], upper=cap)
        out = np.full(n, np.inf)
        np.minimum.at(out, ps, b[is_self] / own)
        return np.minimum(out, u)

    return respond


def _solve_structure(
    A: npt.NDArray[np.float64],
    w: npt.NDArray[np.float64],
    u: npt.NDArray[np.float64],
    r: npt.NDArray[np.float64],
    tol: float,
) -> npt.NDArray[np.float64] | None:
    """Guess bottlenecks from ``r``, solve the levels exactly (in floats), verify."""
    n = A.shape[0]
    on = A > 0
    load = A.T @ r
    sat = load >= 1 - 1e-6
    capped = np.isfinite(u) & (r >= u * (1 - 1e-6))
    norm = A * r[:, None] / w[:, None]
    top = np.where(on, norm, -np.inf).max(axis=0)
    beta = np.full(n, -1)
    for s in range(n):
        if capped[s]:
            continue
        cand = [ln for ln in np.flatnonzero(on[s] & sat) if norm[s, ln] >= top[ln] * (1 - 1e-6)]
        if not cand:
            return None
        beta[s] = max(cand, key=lambda ln: norm[s, ln] / max(top[ln], 1e-300))
    links = sorted(set(beta[beta >= 0].tolist()))
    if not links:
        return None
    pos = {ln: j for j, ln in enumerate(links)}
    m = len(links)
    M = np.zeros((m, m))
    rhs = np.ones(m)
    for j, ln in enumerate(links):
        for q in np.flatnonzero(on[:, ln]).tolist():
            if capped[q]:
                rhs[j] -= A[q, ln] * u[q]
            else:
                b = int(beta[q])
                M[j, pos[b]] += A[q, ln] * w[q] / A[q, b]
    try:
        lam = np.linalg.solve(M, rhs)
    except np.linalg.LinAlgError:
        return None
    out = np.where(capped, u, 0.0)
    free = beta >= 0
    out[free] = w[free] * lam[[pos[b] for b in beta[free]]] / A[np.flatnonzero(free), beta[free]]
    if np.any(out < 0) or wfq_violations(A, w, u, out, tol=tol):
        return None
    return out
