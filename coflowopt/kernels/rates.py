"""Compiled allocation primitives: the fast paths of :mod:`coflowopt.alloc`.

:func:`coflowopt.alloc.greedy` and :func:`coflowopt.alloc.madd` call these
for the usage matrices they cover (two links per row with coefficient 1,
or any positive coefficients for the greedy), and the simulator's compiled
policies (:mod:`coflowopt.sim.kernels.varys`, :mod:`coflowopt.sim.kernels.maluca`)
call them directly, so each computation has one implementation. They repeat the arithmetic of the NumPy
code they replace operation for operation (same sums in the same order,
same comparisons), so the results are the same to the last bit. The ``csr``
functions take rows of a CSR usage matrix by index (on a network: flows of the
route incidence), so that callers need not build the submatrix.

:func:`pairwise_sum` is NumPy's summation of a contiguous float64 array
(``a.sum()``: pairwise over blocks of 128 with eight accumulators), for
compiled code that must reproduce a policy's ``.sum()`` exactly.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = [
    "FULL", "csr_link_sum", "csr_rows", "greedy_csr", "greedy_pairs", "madd_csr", "madd_gamma", "madd_pairs",
    "madd_rows", "pairwise_sum",
]



FULL = 1e-12
"""In the greedy allocation, a link left with at most ``FULL`` times what it had
before a row took its share is full: the remainder is rounding (a capacity
one ulp above a row's share would otherwise let the next row crawl at 1e-16
and, under a policy that re-decides only on coflow events, never finish)."""

@njit
def _block(a, lo, n):  # type: ignore[no-untyped-def]
    """NumPy's sum of a block of at most 128 values: eight accumulators, then the rest."""
    if n < 8:
        s = 0.0
        for i in range(lo, lo + n):
            s += a[i]
        return s
    r0 = a[lo]
    r1 = a[lo + 1]
    r2 = a[lo + 2]
    r3 = a[lo + 3]
    r4 = a[lo + 4]
    r5 = a[lo + 5]
    r6 = a[lo + 6]
    r7 = a[lo + 7]
    m = n - n % 8
    i = 8
    while i < m:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        s += a[lo + i]
        i += 1
    return s


@njit
def pairwise_sum(a, lo, n):  # type: ignore[no-untyped-def]
    """``a[lo:lo + n].sum()`` exactly as NumPy computes it (float64, contiguous).

    NumPy halves a range longer than 128 (at a multiple of 8) and adds the
    two halves' sums; blocks of at most 128 use :func:`_block`. The halving
    runs on an explicit stack rather than by recursion: Numba's on-disk cache
    cannot reload a recursive function called from another cached one
    (``LLVM ERROR: Symbol not found``, a crash on the second run).
    """
    if n <= 128:
        return 0.0 + _block(a, lo, n)  # NumPy adds to its identity 0.0 (turns -0.0 into 0.0)
    slo = np.empty(64, np.int64)
    sn = np.empty(64, np.int64)
    phase = np.zeros(64, np.int64)  # 1: left half pending, 2: right half pending
    left = np.empty(64)
    top = 0
    slo[0] = lo
    sn[0] = n
    while True:
        m = sn[top]
        if m > 128:
            h = m // 2
            h -= h % 8
            phase[top] = 1
            top += 1
            slo[top] = slo[top - 1]
            sn[top] = h
            continue
        ret = _block(a, slo[top], m)
        top -= 1
        while top >= 0:  # hand the sum up until a right half is still to do
            if phase[top] == 1:
                left[top] = ret
                phase[top] = 2
                h = sn[top] // 2
                h -= h % 8
                top += 1
                slo[top] = slo[top - 1] + h
                sn[top] = sn[top - 1] - h
                break
            ret = left[top] + ret
            top -= 1
        if top < 0:
            return 0.0 + ret


@njit
def greedy_pairs(first, second, residual, order, ub, bounded):  # type: ignore[no-untyped-def]
    """Greedy rates for rows that use links ``first[j]`` and ``second[j]`` with coefficient 1.

    Rows in ``order`` each take ``min`` of their two links' residuals (and
    their upper bound ``ub`` when ``bounded``); ``residual`` is updated in
    place (a link left with at most :data:`FULL` of what it had becomes 0).
    A row whose links are not both positive (or whose bound is not positive)
    gets 0.
    """
    x = np.zeros(first.size)
    for p in range(order.size):
        j = order[p]
        la = first[j]
        lb = second[j]
        ra = residual[la]
        rb = residual[lb]
        if not (ra > 0 and rb > 0):
            continue
        if bounded and not (ub[j] > 0):
            continue
        r = ra if ra < rb else rb
        if bounded and ub[j] < r:
            r = ub[j]
        if r <= 0:
            continue
        residual[la] = ra - r if ra - r > FULL * ra else 0.0
        residual[lb] = rb - r if rb - r > FULL * rb else 0.0
        x[j] = r
    return x


@njit
def greedy_csr(indptr, indices, data, residual, order, ub):  # type: ignore[no-untyped-def]
    """Greedy rates for a CSR usage matrix with positive coefficients.

    Row ``j`` takes ``min(ub[j], min_l residual[l] / data)`` over its links
    when that is positive (a row without links takes ``ub[j]`` if positive);
    ``residual`` is updated in place, and a link left with at most
    :data:`FULL` of what it had becomes 0.
    """
    x = np.zeros(indptr.size - 1)
    for p in range(order.size):
        j = order[p]
        lo = indptr[j]
        hi = indptr[j + 1]
        if hi == lo:
            if ub[j] > 0:
                x[j] = ub[j]
            continue
        room = residual[indices[lo]] / data[lo]
        for e in range(lo + 1, hi):
            v = residual[indices[e]] / data[e]
            if room == room and (v != v or v < room):
                room = v  # a NaN ratio makes the row's room NaN, as np.minimum does
        u = ub[j]
        if room == room and (u != u or u < room):
            room = u
        if not (room > 0):
            continue
        for e in range(lo, hi):
            v0 = residual[indices[e]]
            v = v0 - data[e] * room
            residual[indices[e]] = v if not (v <= FULL * v0) else 0.0
        x[j] = room
    return x


@njit
def madd_rows(first, second, rows, rem, cap, x):  # type: ignore[no-untyped-def]
    """MADD for rows ``rows[p]`` that use links ``first[j]`` and ``second[j]`` with coefficient 1.

    ``rem[p]`` is the remaining data of row ``rows[p]``; writes its rate to
    ``x[p]`` and returns ``Gamma`` (as :func:`madd_pairs`, without allocating
    per-row arrays).
    """
    n = rows.size
    load = np.zeros(cap.size)
    for p in range(n):
        j = rows[p]
        load[first[j]] += rem[p]
        load[second[j]] += rem[p]
    gamma = madd_gamma(load, cap)
    if gamma == 0.0 or gamma == np.inf:
        for p in range(n):
            x[p] = 0.0
    else:
        for p in range(n):
            x[p] = rem[p] / gamma
    return gamma


@njit
def madd_gamma(load, cap):  # type: ignore[no-untyped-def]
    """MADD's ``Gamma`` from the link loads: the largest load over capacity.

    ``inf`` when a loaded link has no capacity, 0 when nothing is loaded.
    """
    gamma = -np.inf
    need = False
    for link in range(cap.size):
        if load[link] > 0:
            need = True
            c = cap[link]
            g = load[link] / max(c, 1e-300) if c > 0 else np.inf
            if g > gamma:
                gamma = g
    if not need:
        return 0.0
    if not np.isfinite(gamma):
        return np.inf
    return gamma


@njit
def madd_pairs(first, second, rem, cap):  # type: ignore[no-untyped-def]
    """MADD for rows that use links ``first[j]`` and ``second[j]`` with coefficient 1.

    Returns ``(x, Gamma)`` as :func:`coflowopt.alloc.madd`: the link loads
    summed row by row, ``Gamma`` the largest load over capacity (``inf``
    when a loaded link has no capacity, 0 when nothing is loaded),
    ``x = rem / Gamma``.
    """
    x = np.empty(rem.size)
    gamma = madd_rows(first, second, np.arange(rem.size), rem, cap, x)
    return x, gamma


@njit
def csr_link_sum(indptr, indices, data, rows, values, L):  # type: ignore[no-untyped-def]
    """Per-link sums of ``values[p]`` times the coefficients of row ``rows[p]`` of a CSR
    usage matrix: SciPy's ``A[rows].T @ values``, the same products added in the same
    order (row by row)."""
    out = np.zeros(L)
    for p in range(rows.size):
        j = rows[p]
        v = values[p]
        for e in range(indptr[j], indptr[j + 1]):
            out[indices[e]] += data[e] * v
    return out


@njit
def madd_csr(indptr, indices, data, rows, rem, cap, x):  # type: ignore[no-untyped-def]
    """MADD for rows ``rows`` of a CSR usage matrix: :func:`madd_rows` for any routes.

    ``rem[p]`` is the remaining data of row ``rows[p]``; writes its rate to ``x[p]``
    and returns ``Gamma`` (the loads summed by :func:`csr_link_sum`).
    """
    gamma = madd_gamma(csr_link_sum(indptr, indices, data, rows, rem, cap.size), cap)
    for p in range(rows.size):
        x[p] = 0.0 if gamma == 0.0 or gamma == np.inf else rem[p] / gamma
    return gamma


@njit
def csr_rows(indptr, indices, data, rows):  # type: ignore[no-untyped-def]
    """Rows ``rows`` of a CSR matrix, in that order, as ``(indptr, indices, data)``:
    SciPy's ``A[rows]`` without its checks."""
    ptr = np.empty(rows.size + 1, np.int64)
    ptr[0] = 0
    for p in range(rows.size):
        ptr[p + 1] = ptr[p] + indptr[rows[p] + 1] - indptr[rows[p]]
    idx = np.empty(ptr[rows.size], np.int64)
    val = np.empty(ptr[rows.size])
    q = 0
    for p in range(rows.size):
        for e in range(indptr[rows[p]], indptr[rows[p] + 1]):
            idx[q] = indices[e]
            val[q] = data[e]
            q += 1
    return ptr, idx, val
