"""The pairwise-order LP of Shafiee and Ghaderi (ToN 2018).

See ``models/bound-pairwise.md``. Variables ``C_k`` and, for every pair of
coflows that share a link, ``delta_ij`` (``i`` completes before ``j``;
``delta_ji = 1 - delta_ij`` is substituted). For every coflow ``k`` and every
link ``l`` it uses:

    C_k >= v_kl + sum_{k' != k, v_k'l > 0} v_k'l delta_k'k,   C_k >= r_k + Gamma_k.

Pairs that share no link never appear and are left out, and so are the
rows of links a coflow does not use: those rows are valid too (the published
LP has them, for every port), so this is a relaxation of it, up to 0.24%
weaker on random instances (see the model page).
The rows are repeated for release thresholds ``rho``, adding ``rho`` and counting
the coflows released at or after it; by default (``carry``, coflowopt's
strengthening) also those released before it, each with what it must still send on
the link at ``rho`` (its load less the link's capacity times the time since its
release). Built at once, the matrix has
about 67k pair columns and 1.6M nonzeros for rho = 0 alone on the Facebook trace
(scipy.sparse -> HiGHS; far beyond what Pyomo builds quickly). With thresholds the
rows are generated lazily instead: the candidates of every coflow, link and
threshold stay implicit, their violations at the LP's solution are computed a link
at a time, and only the most violated rows are built (:func:`pairwise_lp`). Every
row added is a row of the full LP, so each restricted LP is a relaxation of it and
its safe dual bound is valid whenever it stops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._budget import TimeBudget, now
from ..errors import CoflowoptError
from ..instance import Instance
from ..result import Result, Status
from ._highs import LPBuilder, bound_status, csr_block, stack_rows
from .simple import completion_caps, earliest_completion

__all__ = ["pairwise_bound", "pairwise_lp"]

ASSEMBLE_CHUNK = 2_000_000
"""Matrix entries gathered as triplets before they become a CSR block: the clock is
checked between blocks (one ``csr_array`` call over 28.6 million entries took 2.1 s)."""

SEPARATION_CHUNK = 4_000_000
"""Entries (users x coflows of one link) whose row violations are computed at once."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _thresholds(release: FloatArray, count: int | str) -> FloatArray:
    vals = np.unique(release)
    vals = vals[vals > vals.min()] if vals.size else vals
    if count == "all":
        return vals
    if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 0:
        raise CoflowoptError(f"thresholds must be a non-negative integer or 'all', got {count!r}")
    if count == 0 or vals.size == 0:
        return np.zeros(0)
    q = np.quantile(vals, np.linspace(0, 1, int(count) + 2)[1:-1]) if count < vals.size else vals
    return np.unique(vals[np.searchsorted(vals, q)])


HIGHS_INFINITY = 1e20
"""HiGHS reads a bound or a coefficient of this size or more as infinite (its option
``infinite_bound``): an LP whose times reach it is not the LP that was built (a delay of
1e300 gave "optimal" without a solution)."""


def scaled_times(inst: Instance, what: str) -> tuple[float, FloatArray, FloatArray, FloatArray]:
    """``(tu, load, release, earliest completion)`` in units of the mean isolation time
    ``tu`` (the LP bounds' scaling), with each coflow's load per link over its capacity.

    Raises when the scaled times leave floating point (releases near 1e308 against
    transfers far shorter), which the LPs cannot represent.
    """
    gam = inst.gamma[inst.gamma > 0]
    tu = float(gam.mean()) if gam.size else 1.0
    with np.errstate(over="ignore"):
        v = inst.load / inst.fabric.capacity / tu
        r = inst.release / tu
        e = earliest_completion(inst) / tu
        span = float(e.max() + v.sum(axis=0).max()) if inst.num_coflows else 0.0
    if not (span < HIGHS_INFINITY and np.isfinite(r).all()):
        where = "beyond floating point" if not math.isfinite(span) else (
            f"{span:.3g} of them, where HiGHS takes {HIGHS_INFINITY:g} and more as infinite")
        raise CoflowoptError(
            f"{what} measures time in units of the mean isolation time ({tu!r}), and the "
            f"latest possible completion is {where} (releases up to "
            f"{float(inst.release.max())!r}, flows available from "
            f"{float(inst.flow_release.max())!r}); the simpler bounds (coflowopt bound "
            "--method port) do not need it")
    return tu, v, r, e


def _check_options(rows: str, solver: str, rowgen: bool | str, carry: bool) -> None:
    if rows not in ("used", "published"):
        raise CoflowoptError(f"rows must be 'used' or 'published', got {rows!r}")
    if solver not in ("auto", "choose", "simplex", "ipm", "pdlp"):
        raise CoflowoptError(
            f"solver must be 'auto', 'choose', 'simplex', 'ipm' or 'pdlp', got {solver!r}")
    if rowgen not in (True, False, "auto"):
        raise CoflowoptError(f"rowgen must be true, false or 'auto', got {rowgen!r}")
    if not isinstance(carry, (bool, np.bool_)):
        raise CoflowoptError(f"carry must be true or false, got {carry!r}")


@dataclass(slots=True)
class _Link:
    """The rows of one link, for every threshold, kept implicit.

    ``members``: the coflows using the link, latest release first; ``targets``: the
    coflows with a row on it (its users, or every coflow for the published rows);
    ``pair[a, b]``: the order column of ``(members[a], targets[b])``, -1 where they are
    one coflow. ``cand_t``: the thresholds whose rows are not implied by another of the
    same link (``cand_n``: the users released at or after each, counted whole);
    ``carry[j, a]``: what user ``members[a]``, released before ``cand_t[j]``, still has
    to send on the link then at the least (:func:`_coefficients`; empty without the
    carried work, ``carries`` false); ``in_lp[j, b]``: row ``(targets[b], this link,
    cand_t[j])`` is in the LP.
    """

    link: int
    members: IntArray
    vm: FloatArray
    rm: FloatArray
    targets: IntArray
    pair: npt.NDArray[np.integer]
    cand_t: FloatArray
    cand_n: IntArray
    carry: sp.csr_array
    carries: bool
    in_lp: npt.NDArray[np.bool_]


def _coefficients(vm: FloatArray, rm: FloatArray, t: FloatArray, carry: bool) -> FloatArray:
    """``out[i, a]``: user ``a``'s coefficient (load ``vm[a]``, release ``rm[a]``, both in
    time on the link) in a row at threshold ``t[i]``: its load when it is released at or
    after ``t[i]``; else, with ``carry``, the load it still has at ``t[i]`` at the least,
    ``max(0, vm[a] - (t[i] - rm[a]))`` (the link serves it at most at its capacity from its
    release on), and 0 without."""
    late = rm[None, :] >= t[:, None]
    if not carry:
        return np.where(late, vm[None, :], 0.0)
    left = np.maximum(vm[None, :] - (t[:, None] - rm[None, :]), 0.0)
    return np.where(late, vm[None, :], left)


def _links(v: FloatArray, r: FloatArray, rho: FloatArray, pkey: IntArray, published: bool,
           carry: bool, budget: TimeBudget) -> list[_Link] | None:
    """Every link's implicit rows (:class:`_Link`); ``None`` when the time ran out.

    ``rho``: the thresholds, ascending, the first the earliest release. A row ``(k, l, rho)`` counts the users
    of ``l`` released at or after ``rho``; of the thresholds that count the same users and
    that ``k`` is released by, the largest gives the strongest row and implies the others
    (same left side, larger right side). That largest is the largest threshold at or below
    ``min(r_k, the earliest release among the counted users)``, so the thresholds at or
    below a release of a user or target, and largest so, are the only ones needed.

    With the carried work (``carry``) the users released before ``rho`` count too, with
    what they still have at ``rho`` at the least. A row's right side is then, as a
    function of ``rho`` between two consecutive releases of users or targets, piecewise
    linear with kinks only where a user's carried work runs out, where its slope grows:
    convex, so largest at one end. Its candidates are therefore the largest threshold at or
    below and the smallest at or above each such release (one threshold when every
    release is one).
    """
    K = r.size
    every = np.arange(K, dtype=np.int64)
    by_release = np.argsort(-r, kind="stable")
    use = sp.csc_array(v > 0)
    out: list[_Link] = []
    for lk in range(v.shape[1]):
        if budget.expired():
            return None
        members = use.indices[use.indptr[lk]: use.indptr[lk + 1]].astype(np.int64)
        if members.size == 0:
            continue
        members = by_release[np.isin(by_release, members)]  # latest release first
        targets = every if published else members
        lo_k = np.minimum(members[:, None], targets[None, :])
        hi_k = np.maximum(members[:, None], targets[None, :])
        pair: npt.NDArray[np.integer] = np.searchsorted(pkey, lo_k * K + hi_k)
        if pkey.size < 2**31 - 1:
            pair = pair.astype(np.int32)  # half the memory
        pair[lo_k == hi_k] = -1
        points = np.unique(r[np.concatenate([members, targets])])
        at = np.searchsorted(rho, points, side="right") - 1
        if carry:
            above = np.searchsorted(rho, points, side="left")
            at = np.concatenate([at, above[above < rho.size]])
        cand_t = rho[np.unique(at)]
        rm = r[members]
        cand_n = np.searchsorted(-rm, -cand_t, side="right").astype(np.int64)  # r >= t
        keep = cand_n > 0
        cand_t, cand_n = cand_t[keep], cand_n[keep]
        vm = v[members, lk]
        early = _coefficients(vm, rm, cand_t, carry)
        early[np.arange(members.size)[None, :] < cand_n[:, None]] = 0.0  # counted whole
        out.append(_Link(lk, members, vm, rm, targets, pair, cand_t, cand_n,
                         sp.csr_array(early), carry,
                         np.zeros((cand_t.size, targets.size), bool)))
    return out


def _link_rows(
    lk: _Link, v: FloatArray, rho: FloatArray, b: IntArray, dcol: IntArray, ccol: IntArray,
) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """Rows of one link: row ``i`` for coflow ``targets[b[i]]`` at threshold ``rho[i]``,
    counting its users with their coefficients there (:func:`_coefficients`).

    ``C_k - sum_{k'} a_k' delta_k'k >= rho + v_kl`` with ``delta_k'k`` the order column
    of the pair when ``k' < k``, else one minus it. Returns the triplets (local row
    numbers) and each row's lower side.
    """
    coef = _coefficients(lk.vm, lk.rm, rho, lk.carries)
    rid, a = np.nonzero(coef > 0.0)  # row by row, users in order
    bb = b[rid]
    p = lk.pair[a, bb].astype(np.int64)
    off = p >= 0
    rid, a, bb, p = rid[off], a[off], bb[off], p[off]
    ka, kb, w = lk.members[a], lk.targets[bb], coef[rid, a]
    kk = lk.targets[b]
    lo = rho + v[kk, lk.link] + np.bincount(rid, weights=np.where(ka > kb, w, 0.0),
                                           minlength=b.size)
    rows = np.concatenate([rid, np.arange(b.size)])
    cols = np.concatenate([dcol[p], ccol[kk]])
    vals = np.concatenate([np.where(ka < kb, -w, w), np.ones(b.size)])
    return rows, cols, vals, lo


def _most_violated(
    links: list[_Link], v: FloatArray, r: FloatArray, C: FloatArray, delta: FloatArray,
    count: int, *, relative: bool, budget: TimeBudget | None = None,
) -> tuple[FloatArray, IntArray, IntArray, IntArray, IntArray] | None:
    """Up to ``count`` rows per coflow and link not in the LP, the most violated at
    ``(C, delta)``, over every threshold: ``(violation, coflow, link index, threshold
    index, target index)``; ``relative``: violations over ``max(|lower side|, 1e-9)``.

    A link at a time, as dense ``users x targets`` arrays: the order terms of the users
    released at or after a threshold are a prefix sum over the users, latest first, and
    those of the users released before it a product with the link's (sparse) carried
    work. ``None`` when the time ran out.
    """
    parts: list[tuple[FloatArray, IntArray, IntArray, IntArray, IntArray]] = []
    delta = np.append(delta, 0.0)  # pair -1 (a coflow with itself) reads the 0 at the end
    for i, lk in enumerate(links):
        step = max(1, SEPARATION_CHUNK // lk.members.size)
        for b0 in range(0, lk.targets.size, step):  # a few million entries at a time
            if budget is not None and budget.expired():
                return None
            cols = slice(b0, b0 + step)
            tg, pair = lk.targets[cols], lk.pair[:, cols]
            d = delta[pair]
            before = lk.members[:, None] < tg[None, :]
            d = np.where(before, d, 1.0 - d)
            d[pair < 0] = 0.0
            terms = np.cumsum(lk.vm[:, None] * d, axis=0)[lk.cand_n - 1]
            if lk.carry.nnz:
                terms += lk.carry @ d
            own = v[tg, lk.link]
            viol = lk.cand_t[:, None] + own[None, :] + terms - C[tg][None, :]
            if relative:
                after = lk.members[:, None] > tg[None, :]
                later = np.cumsum(lk.vm[:, None] * after, axis=0)[lk.cand_n - 1]
                if lk.carry.nnz:
                    later += lk.carry @ after.astype(np.float64)
                viol /= np.maximum(np.abs(lk.cand_t[:, None] + own[None, :] + later), 1e-9)
            viol[(r[tg][None, :] < lk.cand_t[:, None]) | lk.in_lp[:, cols]] = -np.inf
            q = viol.shape[0]
            if q > count:
                j = np.argpartition(-viol, count - 1, axis=0)[:count]
            else:
                j = np.broadcast_to(np.arange(q)[:, None], viol.shape)
            b = np.broadcast_to(np.arange(viol.shape[1])[None, :], j.shape)
            j, b = j.ravel(), b.ravel()
            parts.append((viol[j, b], tg[b], np.full(j.size, i, np.int64),
                          j.astype(np.int64), b.astype(np.int64) + b0))
    if not parts:
        z = np.zeros(0, np.int64)
        return np.zeros(0), z, z, z, z
    s, k, li, j, b = (np.concatenate(x) for x in zip(*parts, strict=True))
    return s, k, li, j, b


def pairwise_lp(
    inst: Instance, *, thresholds: int | str = "auto", time_limit: float | None = None,
    solver: str = "auto", rowgen: bool | str = "auto", per_coflow: int = 3, rows: str = "used",
    carry: bool = True, certificate: bool = False, dual: npt.ArrayLike | None = None,
    dual_rows: npt.ArrayLike | None = None,
) -> tuple[float, FloatArray | None, dict]:
    """Solve the pairwise LP; returns ``(bound, C values or None, info)`` in instance units.

    ``thresholds``: ``0`` (only ``rho`` = the earliest release, which counts every
    coflow), a count (that many quantiles of the
    distinct release times), ``"all"`` (every distinct release time but the earliest),
    or ``"auto"``: with distinct release times, ``"all"`` when rows are generated lazily
    (the default then) and 10 when every row is built (``rowgen=False``); otherwise 0.
    With lazy rows the work per round does not grow with the thresholds (at most one
    candidate threshold per release of a coflow with a row on the link, evaluated as one
    prefix sum), which
    is why ``"auto"`` takes them all; building every row grows with them (about 27 MB
    per threshold on the Facebook trace), so there it takes 10.

    ``rowgen="auto"``: lazy rows when there are thresholds. Lazily, no row is built
    before it is needed: start with each coflow's row that is largest when every delta
    is 1/2, solve, compute every row's violation at the solution (every coflow, link and
    threshold, a link at a time: :func:`_most_violated`), add the ``per_coflow`` most
    violated rows of each coflow, and repeat until none is violated (relative
    tolerance 1e-9; ``info["complete"]``). Each added row is a row of the full LP, so
    every restricted LP is a relaxation of it (a subset of its rows) and its safe dual
    bound is a valid lower bound at every round: at the time limit the last solved round
    is returned, with ``info["complete"]`` false. ``rowgen=False`` builds every row of
    every threshold at once and solves once.

    ``solver="auto"`` picks HiGHS's interior point method (without crossover) for
    large matrices built at once and its simplex otherwise. ``rows="used"``: a
    coflow's rows for the links it uses, and order variables for the pairs that share
    a link; ``rows="published"``: the published LP, a row for every coflow and every
    link, and order variables for every pair (``models/bound-pairwise.md``).

    ``carry=True`` (coflowopt's strengthening, not in the published LP): a row at a
    threshold ``rho`` also counts the users released before ``rho``, each with the load
    it still has at ``rho`` at the least, ``max(0, v_k'l - (rho - r_k'))`` in time on the
    link; ``False``: only the users released at or after ``rho``, as before. Every row
    stays valid: a user that completes before ``k`` sends what is left of it at ``rho``
    between ``rho`` and ``C_k`` (``models/bound-pairwise.md``).

    With ``certificate=True``, ``info["row_dual"]`` holds the last solved LP's row
    multipliers: a certificate of the bound. Given back as ``dual`` (with the same
    instance and options), the LP is built but not solved, and the bound is its safe
    dual bound at them (:meth:`~coflowopt.bounds._highs.LPBuilder.bound_at`): valid for
    any multipliers, and the solve's bound again when they are its own (on the Facebook
    trace with every release at 0: 0.4 s against 47 s for the solve). With every row
    built (``rowgen=False``) the multipliers are one per row of every threshold. Lazily
    generated rows depend on the solve, so ``info["row_names"]`` names the rows the
    multipliers are for, one ``(k, l, q)`` per row: coflow ``k``'s row on link ``l`` at
    the release of coflow ``q`` (``r_q <= r_k``). Given back as ``dual_rows`` beside
    ``dual``, the LP of exactly those rows is built: a relaxation whatever rows are
    named (every such row is valid, ``models/bound-pairwise.md``).
    """
    _check_options(rows, solver, rowgen, carry)
    budget = TimeBudget(time_limit)  # building the rows counts against the limit
    if thresholds == "auto":
        distinct = np.unique(inst.release).size > 1
        thresholds = (10 if rowgen is False else "all") if distinct else 0
    K = inst.num_coflows
    tu, v, r, e = scaled_times(inst, "the pairwise LP")
    th = _thresholds(r, thresholds)
    if rowgen == "auto":
        rowgen = th.size > 0
    if dual is not None and rowgen and dual_rows is None:
        raise CoflowoptError("a dual certificate of lazily generated rows needs their names "
                             "(dual_rows: info['row_names'] of the solve)")
    if dual_rows is not None and dual is None:
        raise CoflowoptError("dual_rows names the rows of a dual certificate: give dual too")
    caps = completion_caps(inst) / tu
    published = rows == "published"
    if published:  # every pair: a coflow's rows on links it does not use pair it with their users
        pi, pj = (x.astype(np.int64) for x in np.triu_indices(K, 1))
    else:
        use = sp.csr_array((v > 0).astype(np.float64))
        share = sp.triu(use @ use.T, k=1).tocoo()
        pi, pj = np.asarray(share.row, np.int64), np.asarray(share.col, np.int64)
    pkey = np.sort(pi * K + pj)
    npair = pkey.size

    lp = LPBuilder()
    ccol = lp.add_cols(K, cost=inst.weight, lo=e, hi=caps)
    dcol = lp.add_cols(npair, lo=0.0, hi=1.0)  # delta[p]: the pair's smaller index first

    def out_of_time(stage: str) -> tuple[float, None, dict]:
        return math.nan, None, {"pairs": int(npair), "timed_out": True, "row_set": rows,
                                "stopped_while": stage}

    # the first threshold is the earliest release: every coflow counts there, and no
    # schedule serves anything before it (with every release at 0 it is 0)
    rho = np.concatenate([[r.min()], th])
    links = _links(v, r, rho, pkey, published, carry, budget)
    if links is None:
        return out_of_time("building the rows")
    info: dict = {"pairs": int(npair), "thresholds": int(th.size), "row_set": rows,
                  "rowgen": bool(rowgen), "carry": bool(carry)}
    releaser = _Releaser(r)
    if dual is not None and dual_rows is not None:
        _named_rows(lp, links, v, r, dual_rows, dcol, ccol)
        return _certified(lp, dual, tu, info)
    if not rowgen:
        built = _every_row(links, v, r, rho, dcol, ccol, lp.num_cols, budget)
        if isinstance(built, str):
            return out_of_time(built)
        full, lo_full = built
        if solver == "auto":
            solver = "ipm" if full.nnz > 300_000 else "choose"
        lp.add_sparse_rows(full, lo_full, math.inf)
        info.update(rows=int(full.shape[0]), nonzeros=int(full.nnz))
        if dual is not None:
            return _certified(lp, dual, tu, info)
    else:
        info["rows"] = int(sum(int((r[lk.targets][None, :] >= lk.cand_t[:, None]).sum())
                               for lk in links))
        # start with each coflow's row that is largest when every delta is 1/2
        first = _most_violated(links, v, r, np.zeros(K), np.full(npair, 0.5), 1,
                               relative=False, budget=budget)
        if first is None:
            return out_of_time("choosing the first rows")
        names = [_add_rows(lp, links, v, first, _top_per_owner(first[0], first[1], K, 1),
                           dcol, ccol, releaser)[1]]
        solver = "choose" if solver == "auto" else solver
    opts: dict = {} if solver == "choose" else {"solver": solver}
    if solver == "ipm":
        opts["run_crossover"] = "off"

    rounds = 0
    last_ok = None
    complete = False
    timed_out = False
    while True:
        if budget.expired():
            timed_out = True
            break
        sol = lp.solve(time_limit=budget.left(), options=opts)
        rounds += 1
        if not sol.ok or sol.x is None:
            timed_out = sol.status == "time_limit"
            info["stopped_while"] = f"solving round {rounds}: HiGHS status {sol.status}"
            break
        last_ok = sol
        if not rowgen:
            complete = True
            break
        found = _most_violated(links, v, r, sol.x[ccol], sol.x[dcol], per_coflow,
                               relative=True, budget=budget)
        if found is None:
            timed_out = True
            break
        new = _top_per_owner(found[0], found[1], K, per_coflow, threshold=1e-9)
        if new.size == 0:
            complete = True
            break
        added, named = _add_rows(lp, links, v, found, new, dcol, ccol, releaser)
        names.append(named)
        if added == 0:
            # cannot happen: the separation skips rows in the LP; stop rather than loop
            info["stopped_while"] = f"round {rounds}: no new row among the violated ones"
            break
    if rowgen:
        info["nonzeros"] = int(lp.arrays()[1].nnz)
    info.update({"rows_used": int(lp.num_rows), "rounds": rounds, "complete": complete,
                 "solver": solver, "timed_out": timed_out})
    if last_ok is None or last_ok.x is None:
        return math.nan, None, info
    if certificate and last_ok.row_dual is not None:
        info["row_dual"] = last_ok.row_dual
        if rowgen:  # (rows added after the last solve have no multiplier)
            info["row_names"] = np.concatenate(names)[:last_ok.row_dual.size]
    # an LP over a subset of the rows is a relaxation too: its safe bound is valid
    return float(last_ok.bound) * tu, last_ok.x[ccol] * tu, info


def _every_row(
    links: list[_Link], v: FloatArray, r: FloatArray, rho: FloatArray, dcol: IntArray,
    ccol: IntArray, ncol: int, budget: TimeBudget,
) -> tuple[sp.csr_array, FloatArray] | str:
    """Every row of every threshold (also those another row implies), as one matrix with
    its rows' lower sides; when the time runs out, the stage it ran out in."""
    rows_r: list[IntArray] = []
    rows_c: list[IntArray] = []
    rows_v: list[FloatArray] = []
    row_lo: list[FloatArray] = []
    blocks: list[sp.csr_array] = []  # rows [flushed, nrow) are still triplets
    nrow = flushed = pending = 0

    def flush() -> None:  # triplets to a CSR block, so the clock is watched while assembling
        nonlocal flushed, pending
        if nrow > flushed:
            blocks.append(csr_block(rows_r, rows_c, rows_v, (nrow - flushed, ncol),
                                    first_row=flushed))
        for part in (rows_r, rows_c, rows_v):
            part.clear()
        flushed, pending = nrow, 0

    for t in rho:
        for lk in links:
            if budget.expired():
                return "building the rows"
            n = int(np.searchsorted(-r[lk.members], -t, side="right"))  # users with r >= t
            b = np.flatnonzero(r[lk.targets] >= t)
            if n == 0 or b.size == 0:
                continue
            rr, cc, vv, lo = _link_rows(lk, v, np.full(b.size, t), b, dcol, ccol)
            rows_r.append(rr + nrow)
            rows_c.append(cc)
            rows_v.append(vv)
            row_lo.append(lo)
            nrow += b.size
            pending += rr.size
            if pending >= ASSEMBLE_CHUNK:
                flush()
    flush()
    full = stack_rows(blocks, ncol)
    if budget.expired():
        return "assembling the matrix"
    return full, (np.concatenate(row_lo) if row_lo else np.zeros(0))


class _Releaser:
    """The coflow whose release a threshold is (every threshold is a release)."""

    def __init__(self, r: FloatArray) -> None:
        self.order = np.argsort(r, kind="stable")
        self.sorted = r[self.order]

    def __call__(self, t: FloatArray) -> IntArray:
        at = np.minimum(np.searchsorted(self.sorted, t), self.sorted.size - 1)
        if not np.array_equal(self.sorted[at], t):  # pragma: no cover - thresholds are releases
            raise AssertionError("a threshold that is no coflow's release")
        return self.order[at].astype(np.int64)


def _add_rows(
    lp: LPBuilder, links: list[_Link], v: FloatArray,
    found: tuple[FloatArray, IntArray, IntArray, IntArray, IntArray], chosen: IntArray,
    dcol: IntArray, ccol: IntArray, releaser: _Releaser,
) -> tuple[int, IntArray]:
    """Add the rows ``chosen`` of :func:`_most_violated`'s answer ``found`` to ``lp``;
    returns how many of them were not in it yet, and the names of the rows added, in
    order (``(k, l, q)``: :func:`pairwise_lp`)."""
    _, _, li, j, b = (x[chosen] for x in found)
    parts: list[tuple[IntArray, IntArray, FloatArray, FloatArray]] = []
    names: list[IntArray] = []
    new = 0
    for i in np.unique(li):
        at = li == i
        lk = links[int(i)]
        t = lk.cand_t[j[at]]
        parts.append(_link_rows(lk, v, t, b[at], dcol, ccol))
        names.append(np.stack([lk.targets[b[at]], np.full(t.size, lk.link), releaser(t)], axis=1))
        new += int((~lk.in_lp[j[at], b[at]]).sum())
        lk.in_lp[j[at], b[at]] = True
    _add_parts(lp, parts)
    return new, (np.concatenate(names) if names else np.zeros((0, 3), np.int64))


def _add_parts(lp: LPBuilder, parts: list[tuple[IntArray, IntArray, FloatArray, FloatArray]]
               ) -> None:
    """Add rows given a link at a time (:func:`_link_rows`' triplets and lower sides)."""
    nrow = 0
    shifted = []
    for rr, cc, vv, lo in parts:
        shifted.append((rr + nrow, cc, vv, lo))
        nrow += lo.size
    if nrow:
        rr, cc, vv, lo = (np.concatenate(x) for x in zip(*shifted, strict=True))
        lp.add_rows(rr, cc, vv, lo, math.inf, num=nrow)


def _named_rows(lp: LPBuilder, links: list[_Link], v: FloatArray, r: FloatArray,
                names: npt.ArrayLike, dcol: IntArray, ccol: IntArray) -> None:
    """Add the rows ``names`` (``(k, l, q)`` each, :func:`pairwise_lp`) to ``lp``, in that
    order; raises where a name is not a row of this LP."""
    K = r.size
    try:
        nm = np.asarray(names, dtype=np.int64).reshape(-1, 3)
    except (TypeError, ValueError, OverflowError) as exc:
        raise CoflowoptError(f"dual_rows must be (k, l, q) integer triples: {exc}") from None
    by_link = {lk.link: lk for lk in links}
    parts = []
    for n, (k, link, q) in enumerate(nm):
        lk = by_link.get(int(link))
        pos = np.flatnonzero(lk.targets == k) if lk is not None else np.zeros(0, np.int64)
        if not (0 <= k < K and 0 <= q < K):
            bad = "no such coflow"
        elif lk is None:
            bad = f"link {link} carries no coflow"
        elif pos.size == 0:
            bad = f"coflow {k} has no row on link {link}"
        elif r[q] > r[k]:
            bad = f"coflow {q} is released after coflow {k}"
        else:
            parts.append(_link_rows(lk, v, r[q:q + 1], pos[:1], dcol, ccol))
            continue
        raise CoflowoptError(f"dual_rows[{n}] = ({k}, {link}, {q}) is no row of this LP: {bad}")
    _add_parts(lp, parts)


def _certified(lp: LPBuilder, dual: npt.ArrayLike, tu: float, info: dict
               ) -> tuple[float, None, dict]:
    """:func:`pairwise_lp`'s answer from a dual certificate of the LP built in ``lp``."""
    try:
        bound = lp.bound_at(dual)
    except ValueError as exc:
        raise CoflowoptError(f"the dual certificate does not fit the LP: {exc}") from None
    info.update(rows_used=int(lp.num_rows), rounds=0, complete=True, timed_out=False,
                certificate="the given row multipliers")
    return bound * tu, None, info


def _top_per_owner(
    score: FloatArray, owner: IntArray, K: int, count: int, threshold: float = -math.inf
) -> IntArray:
    """Indices of the ``count`` largest scores of each owner (above ``threshold``)."""
    ok = np.flatnonzero(score > threshold)
    if ok.size == 0:
        return ok
    order = ok[np.lexsort((-score[ok], owner[ok]))]
    first = np.searchsorted(owner[order], owner[order], side="left")
    rank = np.arange(order.size) - first
    return np.sort(order[rank < count])


def pairwise_bound(
    inst: Instance, *, time_limit: float | None = None, thresholds: int | str = "auto",
    solver: str = "auto", rowgen: bool | str = "auto", rows: str = "used", carry: bool = True,
) -> Result:
    """The pairwise LP's optimum (safe dual bound) as a lower bound (see :func:`pairwise_lp`)."""
    start = now()
    if inst.num_coflows == 0:
        return Result(Status.BOUND, math.nan, 0.0, 0.0, "pairwise")
    bound, C, info = pairwise_lp(inst, thresholds=thresholds, time_limit=time_limit,
                                 solver=solver, rowgen=rowgen, rows=rows, carry=carry)
    status = bound_status(bound, info.get("timed_out", False))
    if C is not None:
        info["lp_completion"] = C
    return Result(status, math.nan, bound, now() - start, "pairwise", info=info)
