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

__all__ = ["greedy", "madd", "max_min"]

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
    x = np.zeros(n)
    ptr, idx, val = a.indptr, a.indices, a.data
    for j in np.asarray(order, dtype=np.int64).reshape(-1):
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
