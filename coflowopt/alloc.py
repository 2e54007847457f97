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

from .kernels.maxmin import bipartite_levels, max_min_rows
from .kernels.rates import FULL, greedy_csr, greedy_pairs, madd_csr, madd_pairs

__all__ = ["FULL", "greedy", "madd", "max_min", "max_min_bipartite_levels"]

FloatArray = npt.NDArray[np.float64]

_SPREAD = 1e6
"""Weights spread wider than this go to progressive filling, not the bipartite water-filling.

The water-filling (:func:`coflowopt.kernels.maxmin.waterfill`) closes a link
when its open weight, kept by subtraction, falls to a relative 1e-12 of
the start: with weights 1e12 apart a light row still open there would be
taken for rounding and escape that link's capacity.
"""


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
    ``inf``. Compiled: the bipartite water-filling for two links per row
    (:func:`coflowopt.kernels.maxmin.waterfill`), progressive filling
    (:func:`coflowopt.kernels.maxmin.progressive_filling`) for any other usage.

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
    if n and w.max() / _SPREAD <= w.min():  # (not _SPREAD * w.min(): 1e305 overflowed)
        split = _bipartite_split(a)
        if split is not None:
            return _max_min_bipartite(a, cap, w, ub, split)
    return _max_min_progressive(a, cap, w, ub)


def _max_min_progressive(
    a: sp.csr_array, cap: FloatArray, w: FloatArray, ub: FloatArray
) -> FloatArray:
    """Progressive filling, one saturation level at a time (the general method).

    Compiled: :func:`coflowopt.kernels.maxmin.progressive_filling`, which the
    simulator's policies also call on rows of the route incidence.
    """
    n = a.shape[0]
    return max_min_rows(
        a.indptr.astype(np.int64, copy=False), a.indices.astype(np.int64, copy=False),
        np.ascontiguousarray(a.data, dtype=np.float64), np.arange(n, dtype=np.int64),
        np.ascontiguousarray(cap), np.ascontiguousarray(w), np.ascontiguousarray(ub),
    )


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


def _max_min_bipartite(
    a: sp.csr_array, cap: FloatArray, w: FloatArray, ub: FloatArray, s: int
) -> FloatArray:
    """Weighted max-min for rows that cross one left link (< s) and one right link."""
    L = a.shape[1]
    first, second = a.indices[0::2], a.indices[1::2]
    lo = np.minimum(first, second).astype(np.int64)
    hi = (np.maximum(first, second) - s).astype(np.int64)
    R = L - s
    # rows on the same pair of links share one water level: the uncapped ones are summed per
    # pair into W; capped rows stay listed (imported here: coflowopt.sim imports this module)

    capped = np.isfinite(ub)
    free = ~capped
    W = np.bincount(lo[free] * R + hi[free], weights=w[free], minlength=s * R).reshape(s, R)
    u = ub[capped] / w[capped]
    lam_l, lam_r = bipartite_levels(
        W, lo[capped], hi[capped], w[capped], u, np.ascontiguousarray(cap[:s]),
        np.ascontiguousarray(cap[s:]),
    )
    level = np.minimum(lam_l[lo], lam_r[hi])
    level[capped] = np.minimum(level[capped], u)
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
    suffice on real traffic. Compiled: :func:`coflowopt.kernels.maxmin.waterfill`.
    """
    # the compiled water-filling (imported here: coflowopt.sim imports this module)

    W = np.ascontiguousarray(W, dtype=np.float64)
    cap_l = np.ascontiguousarray(cap_left, dtype=np.float64).reshape(-1)
    cap_r = np.ascontiguousarray(cap_right, dtype=np.float64).reshape(-1)
    none = np.zeros(0, np.int64)
    return bipartite_levels(W, none, none, np.zeros(0), np.zeros(0), cap_l, cap_r)

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
        before = residual[links]
        after = before - coef * r
        # a link left with at most FULL of what it had is full (the rest is rounding)
        residual[links] = np.where(after > FULL * before, after, 0.0)
    return x


def _greedy_scan(
    a: sp.csr_array, residual: FloatArray, order: npt.NDArray[np.int64], ub: FloatArray
) -> FloatArray:
    """The greedy allocation in compiled code (rows with positive coefficients).

    Same results as row by row: a row whose links have no room gets 0, the
    others take what their links (and bounds) allow. Rows that use two links
    with coefficient 1 (the big switch) take a simpler kernel. Compiled:
    :func:`coflowopt.kernels.rates.greedy_pairs` and
    :func:`~coflowopt.kernels.rates.greedy_csr`.
    """

    n = a.shape[0]
    if order.size == 0:
        return np.zeros(n)
    order = np.ascontiguousarray(order)
    ub = np.ascontiguousarray(ub)
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
        pairs = idx.astype(np.int64)
        return greedy_pairs(
            np.ascontiguousarray(pairs[0::2]), np.ascontiguousarray(pairs[1::2]), residual, order,
            ub, bool(np.isfinite(ub).any()),
        )
    return greedy_csr(
        ptr.astype(np.int64), idx.astype(np.int64), np.ascontiguousarray(val, dtype=np.float64),
        residual, order, ub,
    )


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
    n = a.shape[0]
    pairs_ok = n and rem.size == n and cap.size == a.shape[1] and a.nnz == 2 * n
    if pairs_ok and np.all(np.diff(a.indptr) == 2) and np.all(a.data == 1.0):
        # two links per row (the big switch): compiled, the same sums in the same order

        pairs = a.indices.astype(np.int64)
        x, gamma = madd_pairs(
            np.ascontiguousarray(pairs[0::2]), np.ascontiguousarray(pairs[1::2]), rem, cap
        )
        return x, float(gamma)
    if rem.size != n or cap.size != a.shape[1]:
        raise ValueError("remaining must have one entry per row and capacity one per link")
    x = np.empty(n)
    gamma = madd_csr(
        a.indptr.astype(np.int64, copy=False), a.indices.astype(np.int64, copy=False),
        np.ascontiguousarray(a.data, dtype=np.float64), np.arange(n, dtype=np.int64),
        np.ascontiguousarray(rem), np.ascontiguousarray(cap), x,
    )
    return x, float(gamma)
