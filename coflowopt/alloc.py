"""Rate allocation primitives shared by the simulator, the solvers and fairness.

Each works on a *usage matrix* ``A`` (scipy sparse, one row per flow or
coflow, one column per link): row ``j`` uses ``A[j, l]`` units of link ``l``
per unit of its rate. For flows on the big switch ``A`` is the 0/1 route
incidence (:meth:`coflowopt.Fabric.routes`); for DRF and HUG it holds the
coflows' correlation (demand) vectors.

These are the only implementations of max-min sharing, greedy priority
allocation and MADD in coflowopt; every policy and model calls them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

__all__ = ["greedy", "madd", "max_min", "max_min_bipartite_levels"]

FloatArray = npt.NDArray[np.float64]

_REL = 1e-12  # relative slack for deciding that a link or cap is reached


def _csr(usage: object) -> sp.csr_array:
    a = sp.csr_array(usage)
    if a.nnz and a.data.min() < 0:
        raise ValueError("usage must be non-negative")
    return a


def max_min(
    usage: object,
    capacity: npt.ArrayLike,
    *,
    weights: npt.ArrayLike | None = None,
    upper: npt.ArrayLike | None = None,
) -> FloatArray:
    """Weighted max-min fair rates by progressive filling (water-filling).

    Raises every row's rate ``x_j = w_j t`` together; when a link saturates
    (``A^T x = capacity`` there) the rows using it freeze, and a row also
    freezes at its ``upper`` bound. The result is the lexicographically
    max-min vector of ``x_j / w_j`` subject to ``A^T x <= capacity`` and
    ``x <= upper``. Rows that use no link and have no upper bound get
    ``inf``.

    Parameters
    ----------
    usage
        ``(n, L)`` non-negative matrix.
    capacity
        ``(L,)`` link capacities (residual capacities, in a simulator).
    weights
        ``(n,)`` positive weights (default 1).
    upper
        ``(n,)`` upper bounds on the rates (default none; ``inf`` allowed).
    """
    a = _csr(usage)
    n, L = a.shape
    cap = np.asarray(capacity, dtype=np.float64).reshape(-1)
    if cap.size != L:
        raise ValueError(f"usage has {L} links but capacity has {cap.size} entries")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.size != n or (n and w.min() <= 0):
        raise ValueError("weights must be positive, one per row")
    ub = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=np.float64).reshape(-1)
    if ub.size != n:
        raise ValueError("upper must have one entry per row")
    if n and not np.isfinite(ub).any():
        split = _bipartite_split(a)
        if split is not None:
            return _max_min_bipartite(a, cap, w, split)
    return _max_min_progressive(a, cap, w, ub)


def _max_min_progressive(
    a: sp.csr_array, cap: FloatArray, w: FloatArray, ub: FloatArray
) -> FloatArray:
    """Progressive filling, one saturation level at a time (the reference method)."""
    n = a.shape[0]
    x = np.zeros(n)
    frozen = ub <= 0
    residual = np.maximum(cap, 0.0).astype(np.float64, copy=True)
    at = a.T.tocsr()
    # rows on links without capacity cannot grow
    dead_links = residual <= 0
    if dead_links.any():
        frozen |= (a @ dead_links.astype(np.float64)) > 0
    while not frozen.all():
        active = ~frozen
        demand = at @ np.where(active, w, 0.0)
        used = demand > 0
        dt = np.inf
        if used.any():
            dt = float((residual[used] / demand[used]).min())
        room = np.where(active, (ub - x) / w, np.inf)
        dt = min(dt, float(room.min()))
        if not np.isfinite(dt):
            x[active] = np.inf
            break
        x[active] += w[active] * dt
        residual -= demand * dt
        full = used & (residual <= _REL * np.maximum(cap, 1e-300) + _REL * demand * dt)
        residual[full] = 0.0
        newly = active & (x >= ub * (1 - _REL))
        x[newly] = np.minimum(x[newly], ub[newly])
        if full.any():
            newly |= active & ((a @ full.astype(np.float64)) > 0)
        if not newly.any():  # pragma: no cover - guards against float stagnation
            newly = active & (room <= dt * (1 + _REL))
            if not newly.any():
                break
        frozen |= newly
    return x


def _bipartite_split(a: sp.csr_array) -> int | None:
    """The split point ``s`` if every row uses exactly one link below ``s`` and one above.

    That is the big switch (uplinks, then downlinks) with 0/1 usage; other
    matrices return ``None``.
    """
    n = a.shape[0]
    if a.nnz != 2 * n or not np.all(np.diff(a.indptr) == 2) or np.any(a.data != 1.0):
        return None
    first, second = a.indices[0::2], a.indices[1::2]
    lo = np.minimum(first, second)
    hi = np.maximum(first, second)
    s = int(lo.max()) + 1
    if int(hi.min()) < s:
        return None
    return s


def _max_min_bipartite(a: sp.csr_array, cap: FloatArray, w: FloatArray, s: int) -> FloatArray:
    """Weighted max-min for rows that cross one left link (< s) and one right link."""
    L = a.shape[1]
    first, second = a.indices[0::2], a.indices[1::2]
    lo = np.minimum(first, second)
    hi = np.maximum(first, second) - s
    R = L - s
    W = np.bincount(lo * R + hi, weights=w, minlength=s * R).reshape(s, R)
    lam_l, lam_r = max_min_bipartite_levels(W, cap[:s], cap[s:])
    level = np.minimum(lam_l[lo], lam_r[hi])
    return w * np.maximum(level, 0.0)


def max_min_bipartite_levels(
    W: npt.ArrayLike, cap_left: npt.ArrayLike, cap_right: npt.ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """Water levels of weighted max-min fairness on a bipartite set of links.

    ``W[i, j]`` is the total weight of the rows that cross left link ``i``
    and right link ``j`` (on the big switch: uplink ``i`` and downlink
    ``j``). Returns the level ``lam`` at which each link saturates (``inf``
    for links that never do); the max-min rate of a row of weight ``w`` on
    ``(i, j)`` is ``w * min(lam_left[i], lam_right[j])``, exactly what
    :func:`max_min` returns for the same rows (it uses this function for
    them).

    A left link whose fair share is below every right link's share
    saturates at that share no matter what happens elsewhere (the shares of
    the other links only grow as rows freeze below them), so all such left
    links freeze at once; then the right side; and so on. A round costs
    O(links) plus the rows of the links it freezes, and a few rounds
    suffice on real traffic.
    """
    W = np.asarray(W, dtype=np.float64)
    s, R = W.shape
    res_l = np.maximum(np.asarray(cap_left, dtype=np.float64), 0.0).copy()
    res_r = np.maximum(np.asarray(cap_right, dtype=np.float64), 0.0).copy()
    dem_l = W.sum(axis=1)
    dem_r = W.sum(axis=0)
    eps_l = _REL * dem_l
    eps_r = _REL * dem_r
    lam_l = np.full(s, np.inf)
    lam_r = np.full(R, np.inf)
    open_l = dem_l > 0
    open_r = dem_r > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        while True:
            t_l = np.where(open_l, res_l / np.where(open_l, dem_l, 1.0), np.inf)
            t_r = np.where(open_r, res_r / np.where(open_r, dem_r, 1.0), np.inf)
            m_l = t_l.min(initial=np.inf)
            m_r = t_r.min(initial=np.inf)
            if m_l == np.inf and m_r == np.inf:
                break
            if m_l <= m_r:
                sel = np.flatnonzero(t_l <= m_r)
                lam = t_l[sel]
                lam_l[sel] = lam
                open_l[sel] = False
                Ws = W[sel]
                res_r -= lam @ Ws
                dem_r -= Ws.sum(axis=0)
                open_r &= dem_r > eps_r
            else:
                sel = np.flatnonzero(t_r <= m_l)
                lam = t_r[sel]
                lam_r[sel] = lam
                open_r[sel] = False
                Ws = W[:, sel]
                res_l -= Ws @ lam
                dem_l -= Ws.sum(axis=1)
                open_l &= dem_l > eps_l
    return lam_l, lam_r

def greedy(
    usage: object,
    capacity: npt.ArrayLike,
    order: npt.ArrayLike,
    *,
    upper: npt.ArrayLike | None = None,
) -> FloatArray:
    """Strict-priority greedy rates: rows in ``order`` each take all they can.

    Row ``order[0]`` gets the largest rate its links (and its ``upper``
    bound) allow, then ``order[1]`` from what is left, and so on; rows not
    in ``order`` get 0. This is the order-preserving greedy allocation of
    Sincronia and the backfilling step of Varys.
    """
    a = _csr(usage)
    n, L = a.shape
    residual = np.asarray(capacity, dtype=np.float64).reshape(-1).copy()
    if residual.size != L:
        raise ValueError(f"usage has {L} links but capacity has {residual.size} entries")
    ub = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=np.float64).reshape(-1)
    return _greedy_scan(a, residual, np.asarray(order, dtype=np.int64).reshape(-1), ub)


def _greedy_rowwise(
    a: sp.csr_array, residual: FloatArray, order: npt.NDArray[np.int64], ub: FloatArray
) -> FloatArray:
    """Row by row in ``order`` (the reference method)."""
    n = a.shape[0]
    x = np.zeros(n)
    ptr, idx, val = a.indptr, a.indices, a.data
    for j in order:
        lo, hi = ptr[j], ptr[j + 1]
        links = idx[lo:hi]
        coef = val[lo:hi]
        pos = coef > 0
        r = ub[j]
        if pos.any():
            r = min(r, float((residual[links[pos]] / coef[pos]).min()))
        if not np.isfinite(r):
            raise ValueError(f"row {j} uses no link and has no upper bound")
        r = max(r, 0.0)
        x[j] = r
        residual[links] -= coef * r
        residual[links] = np.maximum(residual[links], 0.0)
    return x


def _greedy_scan(
    a: sp.csr_array, residual: FloatArray, order: npt.NDArray[np.int64], ub: FloatArray
) -> FloatArray:
    """The greedy allocation, scanning ``order`` in vectorized chunks.

    Every row that gets a positive rate fills one of its links, so once a
    link is full the rows on it get 0 without further work: each chunk
    first finds, vectorized, the rows whose links all still have room, and
    only those are served one by one (re-checked, since the chunk's earlier
    rows may have filled their links). Same results as row by row.
    """
    n = a.shape[0]
    x = np.zeros(n)
    if order.size == 0:
        return x
    ptr, idx, val = a.indptr, a.indices, a.data
    counts = np.diff(ptr)
    if np.any(val <= 0):  # zero coefficients: keep the simple loop
        return _greedy_rowwise(a, residual, order, ub)
    nolink = counts[order] == 0
    if nolink.any():
        bad = order[nolink & ~np.isfinite(ub[order])]
        if bad.size:
            raise ValueError(f"row {bad[0]} uses no link and has no upper bound")
    if a.nnz == 2 * n and np.all(counts == 2) and np.all(val == 1.0):
        return _greedy_pairs(a.indices[0::2], a.indices[1::2], residual, order, ub)
    chunk = 64
    pos = 0
    while pos < order.size:
        rows = order[pos : pos + chunk]
        pos += rows.size
        c = counts[rows]
        starts = ptr[rows]
        # room of each row: min over its links of residual / coefficient (no link: inf)
        total = int(c.sum())
        if total:
            ent = np.repeat(starts - np.cumsum(c) + c, c) + np.arange(total)
            ratio = residual[idx[ent]] / val[ent]
            nz = c > 0
            room = np.full(rows.size, np.inf)
            room[nz] = np.minimum.reduceat(ratio, (np.cumsum(c) - c)[nz])
        else:
            room = np.full(rows.size, np.inf)
        room = np.minimum(room, ub[rows])
        cand = np.flatnonzero(room > 0)
        for i in cand.tolist():
            j = rows[i]
            lo, hi = ptr[j], ptr[j + 1]
            if hi - lo == 0:
                x[j] = ub[j]
                continue
            links = idx[lo:hi]
            coef = val[lo:hi]
            r = min(float((residual[links] / coef).min()), ub[j])
            if r <= 0:
                continue
            x[j] = r
            residual[links] = np.maximum(residual[links] - coef * r, 0.0)
        if cand.size * 4 < rows.size:
            chunk = min(chunk * 4, 1 << 16)
        if not (residual > 0).any():
            rest = order[pos:]
            free = rest[counts[rest] == 0]
            x[free] = np.maximum(ub[free], 0.0)
            break
    return x

def _greedy_pairs(
    first: npt.NDArray[np.int32], second: npt.NDArray[np.int32], residual: FloatArray,
    order: npt.NDArray[np.int64], ub: FloatArray,
) -> FloatArray:
    """:func:`_greedy_scan` for rows that use two links with coefficient 1 (the big switch).

    Each chunk's rows with room are served in a plain loop over Python floats,
    which is much cheaper per row than NumPy calls on two-element slices.
    """
    n = first.size
    x = np.zeros(n)
    res = residual.tolist()
    chunk = 256
    pos = 0
    bounded = bool(np.isfinite(ub).any())
    while pos < order.size:
        rows = order[pos : pos + chunk]
        pos += rows.size
        r_np = np.asarray(res)
        fa, fb = first[rows], second[rows]
        ok = (r_np[fa] > 0) & (r_np[fb] > 0)
        if bounded:
            ok &= ub[rows] > 0
        sel = np.flatnonzero(ok)
        if sel.size:
            got = []
            ub_l = ub[rows[sel]].tolist() if bounded else None
            for i, (j, la, lb) in enumerate(
                zip(rows[sel].tolist(), fa[sel].tolist(), fb[sel].tolist(), strict=True)
            ):
                ra, rb = res[la], res[lb]
                r = ra if ra < rb else rb
                if ub_l is not None and ub_l[i] < r:
                    r = ub_l[i]
                if r <= 0:
                    continue
                res[la] = ra - r if ra - r > 0 else 0.0
                res[lb] = rb - r if rb - r > 0 else 0.0
                got.append((j, r))
            if got:
                jj, rr = zip(*got, strict=True)
                x[list(jj)] = rr
        if sel.size * 4 < rows.size:
            chunk = min(chunk * 4, 1 << 16)
        if max(res) <= 0:
            break
    residual[:] = res
    return x


def madd(usage: object, remaining: npt.ArrayLike, capacity: npt.ArrayLike) -> tuple[FloatArray, float]:
    """Minimum Allocation for Desired Duration (dissertation §4.5.3).

    Rates that finish every row's ``remaining`` data at the same time, as
    early as the ``capacity`` allows: ``Gamma = max_l (A^T remaining)_l /
    capacity_l`` and ``x_j = remaining_j / Gamma``. Returns ``(x, Gamma)``;
    ``Gamma`` is ``inf`` (and ``x`` zero) when a needed link has no capacity.
    """
    a = _csr(usage)
    rem = np.asarray(remaining, dtype=np.float64).reshape(-1)
    cap = np.asarray(capacity, dtype=np.float64).reshape(-1)
    load = a.T @ rem
    need = load > 0
    if not need.any():
        return np.zeros_like(rem), 0.0
    with np.errstate(divide="ignore"):
        gamma = float(np.max(np.where(cap[need] > 0, load[need] / np.maximum(cap[need], 1e-300), np.inf)))
    if not np.isfinite(gamma):
        return np.zeros_like(rem), float("inf")
    return rem / gamma, gamma
