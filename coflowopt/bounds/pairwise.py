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
Optionally the rows are repeated for release thresholds ``rho``, counting
only coflows released at or after ``rho`` and adding ``rho``. The matrix is
built directly (scipy.sparse -> HiGHS); on the Facebook trace it has about
67k pair columns and 1.6M nonzeros, far beyond what Pyomo builds quickly.
"""

from __future__ import annotations

import math

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
    if not (math.isfinite(span) and np.isfinite(r).all()):
        raise CoflowoptError(
            f"{what} measures time in units of the mean isolation time ({tu!r}), and the "
            f"latest possible completion is beyond floating point in them (releases up to "
            f"{float(inst.release.max())!r}); the simpler bounds (coflowopt bound --method "
            "port) do not need it")
    return tu, v, r, e


def pairwise_lp(
    inst: Instance, *, thresholds: int | str = "auto", time_limit: float | None = None,
    solver: str = "auto", rowgen: bool | str = "auto", per_coflow: int = 3, rows: str = "used",
) -> tuple[float, FloatArray | None, dict]:
    """Solve the pairwise LP; returns ``(bound, C values or None, info)`` in instance units.

    ``thresholds="auto"`` uses up to 10 release thresholds when releases
    differ; ``solver="auto"`` picks HiGHS's interior point method (without
    crossover) for large matrices and its simplex otherwise; ``rowgen="auto"``
    adds rows lazily (most violated per coflow) when thresholds are used.
    ``rows="used"``: a coflow's rows for the links it uses, and order
    variables for the pairs that share a link; ``rows="published"``: the
    published LP, a row for every coflow and every link, and order variables
    for every pair (``models/bound-pairwise.md``).
    """
    if rows not in ("used", "published"):
        raise CoflowoptError(f"rows must be 'used' or 'published', got {rows!r}")
    if solver not in ("auto", "choose", "simplex", "ipm", "pdlp"):
        raise CoflowoptError(
            f"solver must be 'auto', 'choose', 'simplex', 'ipm' or 'pdlp', got {solver!r}")
    if rowgen not in (True, False, "auto"):
        raise CoflowoptError(f"rowgen must be true, false or 'auto', got {rowgen!r}")
    budget = TimeBudget(time_limit)  # building the matrix counts against the limit
    if thresholds == "auto":
        thresholds = 10 if np.unique(inst.release).size > 1 else 0
    K = inst.num_coflows
    tu, v, r, e = scaled_times(inst, "the pairwise LP")
    caps = completion_caps(inst) / tu
    use = sp.csc_array(v > 0)
    use.eliminate_zeros()
    published = rows == "published"
    if published:  # every pair: a coflow's rows on links it does not use pair it with their users
        pi, pj = (x.astype(np.int64) for x in np.triu_indices(K, 1))
    else:
        share = sp.triu(sp.csr_array(use.astype(np.float64))
                        @ sp.csr_array(use.T.astype(np.float64)), k=1).tocoo()
        pi, pj = np.asarray(share.row, np.int64), np.asarray(share.col, np.int64)
    pkey = pi * K + pj
    order = np.argsort(pkey)
    pkey, pi, pj = pkey[order], pi[order], pj[order]
    npair = pkey.size

    lp = LPBuilder()
    ccol = lp.add_cols(K, cost=inst.weight, lo=e, hi=caps)
    dcol = lp.add_cols(npair, lo=0.0, hi=1.0)  # delta[p] = pi[p] before pj[p]

    def out_of_time(stage: str) -> tuple[float, None, dict]:
        return math.nan, None, {"pairs": int(npair), "timed_out": True, "row_set": rows,
                                "stopped_while": stage}

    # entries for every link: rows (k, l) for members k, columns from other members k'
    rows_r: list[IntArray] = []
    rows_c: list[IntArray] = []
    rows_v: list[FloatArray] = []
    row_lo: list[FloatArray] = []
    nrow = 0
    blocks: list[sp.csr_array] = []  # rows [flushed, nrow) are still triplets
    flushed = pending = 0

    def flush() -> None:  # triplets to a CSR block, so the clock is watched while assembling
        nonlocal flushed, pending
        if nrow > flushed:
            blocks.append(csr_block(rows_r, rows_c, rows_v, (nrow - flushed, lp.num_cols),
                                    first_row=flushed))
        for part in (rows_r, rows_c, rows_v):
            part.clear()
        flushed, pending = nrow, 0

    th = _thresholds(r, thresholds)
    every = np.arange(K, dtype=np.int64)
    for rho in np.concatenate([[0.0], th]):
        for lk in range(v.shape[1]):
            if budget.expired():
                return out_of_time("building the rows")
            members = use.indices[use.indptr[lk]: use.indptr[lk + 1]].astype(np.int64)
            members = members[r[members] >= rho] if rho > 0 else members
            if members.size == 0:
                continue
            # the coflows with a row on this link: its users, or (published) every coflow
            targets = members if not published else (every[r >= rho] if rho > 0 else every)
            n = targets.size
            vl = v[members, lk]
            local = nrow + np.arange(n)
            const = rho + v[targets, lk]
            a_idx, b_idx = np.meshgrid(np.arange(members.size), np.arange(n), indexing="ij")
            ka, kb = members[a_idx.ravel()], targets[b_idx.ravel()]  # k' a user, k a target
            off = ka != kb
            a_idx, b_idx, ka, kb = a_idx.ravel()[off], b_idx.ravel()[off], ka[off], kb[off]
            if ka.size:
                lo_k, hi_k = np.minimum(ka, kb), np.maximum(ka, kb)
                p = np.searchsorted(pkey, lo_k * K + hi_k)
                # delta_{k'k} = delta[p] if k' < k else 1 - delta[p]
                sign = np.where(ka < kb, -1.0, 1.0)
                rows_r.append(local[b_idx])
                rows_c.append(dcol[p])
                rows_v.append(sign * vl[a_idx])
                const += np.bincount(b_idx, weights=np.where(ka > kb, vl[a_idx], 0.0),
                                     minlength=n)
            rows_r.append(local)
            rows_c.append(ccol[targets])
            rows_v.append(np.ones(n))
            row_lo.append(const)
            nrow += n
            pending += ka.size + n
            if pending >= ASSEMBLE_CHUNK:
                flush()
    flush()
    full = stack_rows(blocks, lp.num_cols)
    if budget.expired():
        return out_of_time("assembling the matrix")
    lo_full = np.concatenate(row_lo)
    if rowgen == "auto":
        rowgen = th.size > 0
    if solver == "auto":
        solver = "ipm" if (full.nnz > 300_000 and not rowgen) else "choose"
    row_coflow = full[:, ccol].tocoo()
    owner = np.empty(nrow, np.int64)
    owner[row_coflow.row] = row_coflow.col
    opts: dict = {} if solver == "choose" else {"solver": solver}
    if solver == "ipm":
        opts["run_crossover"] = "off"

    info: dict = {"pairs": int(npair), "rows": int(nrow), "nonzeros": int(full.nnz),
                  "row_set": rows}
    if not rowgen:
        chosen = np.arange(nrow)
    else:
        # start with each coflow's row that is largest when every delta is 1/2
        half = full[:, dcol] @ np.full(npair, 0.5)
        guess = lo_full - half
        chosen = _top_per_owner(guess, owner, K, 1)
    if budget.expired():
        return out_of_time("choosing the first rows")
    lp.add_sparse_rows(full if chosen.size == nrow else full[chosen], lo_full[chosen], math.inf)
    in_lp = np.zeros(nrow, bool)
    in_lp[chosen] = True
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
            break
        last_ok = sol
        if not rowgen:
            complete = True
            break
        viol = lo_full - full @ sol.x
        scale = np.maximum(np.abs(lo_full), 1e-9)
        viol = np.where(in_lp, -np.inf, viol / scale)
        new = _top_per_owner(viol, owner, K, per_coflow, threshold=1e-9)
        if new.size == 0:
            complete = True
            break
        in_lp[new] = True
        lp.add_sparse_rows(full[new], lo_full[new], math.inf)
    info.update({"rows_used": int(in_lp.sum()), "rounds": rounds, "complete": complete,
                 "solver": solver, "rowgen": rowgen, "timed_out": timed_out})
    if last_ok is None or last_ok.x is None:
        return math.nan, None, info
    # an LP over a subset of the rows is a relaxation too: its safe bound is valid
    return float(last_ok.bound) * tu, last_ok.x[ccol] * tu, info


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
    solver: str = "auto", rowgen: bool | str = "auto", rows: str = "used",
) -> Result:
    """The pairwise LP's optimum (safe dual bound) as a lower bound (see :func:`pairwise_lp`)."""
    start = now()
    if inst.num_coflows == 0:
        return Result(Status.BOUND, math.nan, 0.0, 0.0, "pairwise")
    bound, C, info = pairwise_lp(inst, thresholds=thresholds, time_limit=time_limit,
                                 solver=solver, rowgen=rowgen, rows=rows)
    status = bound_status(bound, info.get("timed_out", False))
    if C is not None:
        info["lp_completion"] = C
    return Result(status, math.nan, bound, now() - start, "pairwise", info=info)
