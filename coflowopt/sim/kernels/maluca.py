"""Compiled Maluca allocation: one decision of :class:`~coflowopt.sim.policies.maluca.Maluca`.

Maluca re-allocates only when a coflow arrives or departs; between two
decisions its rates stay fixed and the engine batches the flow completions,
so a decision is the whole per-event cost. The NumPy reference
(:meth:`Maluca.decide` with ``simulate(..., compiled=False)``) loops in
Python over every (uplink, coflow) segment of the admitted flows, about 500
per decision on the Facebook trace; :func:`maluca_rates` does the same
arithmetic in compiled code, operation for operation (the same sums in the
same order, NumPy's pairwise ``.sum()`` via :func:`numpy_sum`, the same
comparisons), so
the rates are the same to the last bit. Its cost is ``O(n + K log K + L log L
+ U L)`` for ``n`` admitted flows of ``K`` coflows on ``U`` busy uplinks of
``L`` links: it never looks at flows that are not admitted or already done.
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit
from .rates import greedy_pairs

__all__ = ["maluca_rates", "numpy_sum"]


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
def numpy_sum(a, lo, n):  # type: ignore[no-untyped-def]
    """``a[lo:lo + n].sum()`` exactly as NumPy computes it (float64, contiguous).

    NumPy halves a range longer than 128 (at a multiple of 8) and adds the
    two halves' sums; blocks of at most 128 use :func:`_block`. The halving
    runs on an explicit stack rather than by recursion: Numba's on-disk cache
    cannot reload a recursive function called from another cached one
    (``LLVM ERROR: Symbol not found``, a crash on the second run), which is
    why :func:`coflowopt.sim.kernels.rates.pairwise_sum` is not used here.
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
def maluca_rates(kptr, rem, up, down, cap, alpha, sat):  # type: ignore[no-untyped-def]
    """Maluca's rates for the admitted flows of ``K = kptr.size - 1`` coflows.

    Flows ``kptr[k]:kptr[k + 1]`` belong to the ``k``-th active coflow (in
    admission order, flows by increasing index); ``rem``, ``up`` and
    ``down`` are their remaining bytes, uplinks and downlinks; ``cap`` the
    link capacities, ``alpha`` the soft reservation and ``sat`` the relative
    residual below which a link counts as saturated. Returns the rates, in
    the order of the flows given.
    """
    K = kptr.size - 1
    n = rem.size
    L = cap.size
    rates = np.zeros(n)
    if n == 0:
        return rates
    # T_k (line 9): per coflow, link loads summed flow by flow (uplinks, then downlinks),
    # largest load over capacity; ndown: the coflow's flows into each downlink
    T = np.zeros(K)
    ndown = np.empty(n, np.int64)
    load = np.zeros(L)
    cnt = np.zeros(L, np.int64)
    for k in range(K):
        lo = kptr[k]
        hi = kptr[k + 1]
        for p in range(lo, hi):
            load[up[p]] += rem[p]
        for p in range(lo, hi):
            load[down[p]] += rem[p]
            cnt[down[p]] += 1
        t = 0.0
        for p in range(lo, hi):
            v = load[up[p]] / cap[up[p]]
            if v > t:
                t = v
            v = load[down[p]] / cap[down[p]]
            if v > t:
                t = v
        T[k] = t
        for p in range(lo, hi):
            ndown[p] = cnt[down[p]]
        for p in range(lo, hi):
            load[up[p]] = 0.0
            load[down[p]] = 0.0
            cnt[down[p]] = 0
    korder = np.argsort(T, kind="mergesort")  # ties: admission order
    # uplinks by decreasing load over capacity (Eq. 12), ties by index
    uload = np.zeros(L)
    for p in range(n):
        uload[up[p]] += rem[p]
    for link in range(L):
        uload[link] = -(uload[link] / cap[link])
    uorder = np.argsort(uload, kind="mergesort")
    # the flows by (uplink rank, coflow rank, index): a counting sort on the uplink of the
    # flows visited coflow by coflow in rank order
    ustart = np.zeros(L + 1, np.int64)
    for p in range(n):
        ustart[up[p] + 1] += 1
    off = np.zeros(L, np.int64)
    acc = 0
    for q in range(L):
        link = uorder[q]
        off[link] = acc
        acc += ustart[link + 1]
    order = np.empty(n, np.int64)
    for q in range(K):
        k = korder[q]
        for p in range(kptr[k], kptr[k + 1]):
            order[off[up[p]]] = p
            off[up[p]] += 1
    kof = np.empty(n, np.int64)
    for k in range(K):
        for p in range(kptr[k], kptr[k + 1]):
            kof[p] = k
    residual = cap.copy()
    rbuf = np.empty(n)
    low = np.empty(n, np.int64)
    seg_end = np.empty(n, np.int64)
    seg_room = np.zeros(n, np.bool_)
    a = 0
    while a < n:
        i = up[order[a]]
        b = a
        while b < n and up[order[b]] == i:
            b += 1
        # the segments (one per coflow) of uplink i and whether any of their downlinks has
        # room at the start of the uplink's turn
        s = a
        ns = 0
        while s < b:
            e = s
            k = kof[order[s]]
            room = False
            while e < b and kof[order[e]] == k:
                if residual[down[order[e]]] > 0:
                    room = True
                e += 1
            seg_end[ns] = e
            seg_room[ns] = room
            ns += 1
            s = e
        budget = (1.0 - alpha) * residual[i]
        nlow = 0
        s = a
        for q in range(ns):
            e = seg_end[q]
            m = e - s
            if not seg_room[q] or budget <= sat * cap[i]:
                for x in range(s, e):
                    low[nlow] = order[x]
                    nlow += 1
                s = e
                continue
            share = budget / m
            nz = False
            for x in range(s, e):
                p = order[x]
                r = residual[down[p]] / ndown[p]
                if share < r:
                    r = share
                if not (r >= 0.0):
                    r = 0.0 if r < 0.0 else r  # np.maximum(r, 0): NaN stays NaN
                rbuf[x - s] = r
                if r != 0.0:
                    nz = True
            if not nz:
                for x in range(s, e):
                    low[nlow] = order[x]
                    nlow += 1
                s = e
                continue
            for x in range(s, e):
                rates[order[x]] = rbuf[x - s]
            tot = numpy_sum(rbuf, 0, m)
            budget -= tot
            residual[i] -= tot
            for x in range(s, e):
                residual[down[order[x]]] -= rbuf[x - s]
            s = e
        if nlow > 0 and residual[i] > sat * cap[i]:
            # soft reservation: what is left of the uplink, shared equally among the flows
            # that got nothing, each limited to an equal share of its downlink's remainder
            for x in range(nlow):
                cnt[down[low[x]]] += 1
            share = residual[i] / nlow
            for x in range(nlow):
                p = low[x]
                d = residual[down[p]]
                if d < 0.0:
                    d = 0.0
                r = d / cnt[down[p]]
                if share < r:
                    r = share
                rbuf[x] = r
            for x in range(nlow):
                cnt[down[low[x]]] = 0
                rates[low[x]] = rbuf[x]
            residual[i] -= numpy_sum(rbuf, 0, nlow)
            for x in range(nlow):
                residual[down[low[x]]] -= rbuf[x]
        for link in range(L):
            if residual[link] < 0.0:
                residual[link] = 0.0
        a = b
    # backfilling (lines 18-24): flows in the same order take what both their links have left
    some = False
    for link in range(L):
        if residual[link] <= sat * cap[link]:
            residual[link] = 0.0
        elif residual[link] != 0.0:
            some = True
    if some:
        first = np.empty(n, np.int64)
        second = np.empty(n, np.int64)
        for x in range(n):
            first[x] = up[order[x]]
            second[x] = down[order[x]]
        extra = greedy_pairs(first, second, residual, np.arange(n), np.empty(0), False)
        for x in range(n):
            rates[order[x]] += extra[x]
    return rates
