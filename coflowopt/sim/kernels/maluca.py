"""Compiled Maluca allocation: one decision of :class:`~coflowopt.sim.policies.maluca.Maluca`.

Maluca re-allocates only when a coflow arrives or departs; between two
decisions its rates stay fixed and the engine batches the flow completions,
so a decision is the whole per-event cost. The NumPy reference
(:meth:`Maluca.decide` with ``simulate(..., compiled=False)``) loops in
Python over every (uplink, coflow) segment of the admitted flows, about 500
per decision on the Facebook trace; :func:`maluca_rates` does the same
arithmetic in compiled code, operation for operation (the same sums in the
same order, NumPy's pairwise ``.sum()`` via :func:`~.rates.pairwise_sum`, the same
comparisons), so the rates are the same to the last bit. Its cost is
``O(n + K log K + L log L + U L)`` for ``n`` admitted, unfinished flows of
``K`` coflows on ``U`` busy uplinks of ``L`` links; flows not admitted yet
or already done cost nothing.

Two shortcuts give the same rates as the reference: the reference skips a
(coflow, uplink) segment none of whose downlinks had room when the uplink's
turn began, and the kernel skips it when none has room at the segment's own
turn (downlinks only fill up during the turn, and a segment without room
gets only zero rates, which sends it to the low-priority flows either way);
the backfilling greedy runs only on the flows both of whose links have room
when it starts (the others get nothing from it and change nothing).
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit
from ...kernels.rates import greedy_pairs, pairwise_sum
from ...kernels.ties import order_with_ties

__all__ = ["maluca_rates"]


@njit
def maluca_rates(kptr, rem, up, down, cap, alpha, sat, iwork, fwork):  # type: ignore[no-untyped-def]
    """Maluca's rates for the admitted flows of ``K = kptr.size - 1`` coflows.

    Flows ``kptr[k]:kptr[k + 1]`` belong to the ``k``-th active coflow (in
    admission order, flows by increasing index); ``rem``, ``up`` and
    ``down`` are their remaining bytes, uplinks and downlinks; ``cap`` the
    link capacities, ``alpha`` the soft reservation and ``sat`` the relative
    residual below which a link counts as saturated; ``iwork`` (at least
    ``6 n`` integers) and ``fwork`` (``2 n`` floats) are scratch space kept
    by the caller across decisions (fresh arrays of this size cost more in
    page faults than the computation). Returns the rates, in the order of
    the flows given.
    """
    K = kptr.size - 1
    n = rem.size
    L = cap.size
    rates = np.zeros(n)
    if n == 0:
        return rates
    # T_k (line 9): per coflow, its link loads summed flow by flow (uplinks, then
    # downlinks) and the largest load over capacity; uload: every uplink's load, summed
    # flow by flow (Eq. 12); key: each flow's downlink and n_j^p, the number of its
    # coflow's flows into that downlink, packed for a single gather below
    T = np.zeros(K)
    key = iwork[0:n]
    load = np.zeros(L)
    cnt = np.zeros(L, np.int64)
    uload = np.zeros(L)
    ucount = np.zeros(L, np.int64)
    for k in range(K):
        lo = kptr[k]
        hi = kptr[k + 1]
        for p in range(lo, hi):
            u = up[p]
            load[u] += rem[p]
            uload[u] += rem[p]
            ucount[u] += 1
        for p in range(lo, hi):
            d = down[p]
            load[d] += rem[p]
            cnt[d] += 1
        for p in range(lo, hi):
            d = down[p]
            key[p] = (cnt[d] << 32) | d
        t = 0.0  # the links the coflow does not use count with load 0
        if 4 * (hi - lo) < L:
            for p in range(lo, hi):
                v = load[up[p]] / cap[up[p]]
                if v > t:
                    t = v
                v = load[down[p]] / cap[down[p]]
                if v > t:
                    t = v
            for p in range(lo, hi):
                load[up[p]] = 0.0
                load[down[p]] = 0.0
                cnt[down[p]] = 0
        else:
            for link in range(L):
                v = load[link] / cap[link]
                if v > t:
                    t = v
                load[link] = 0.0
                cnt[link] = 0
        T[k] = t
    korder = order_with_ties(T)  # ties: admission order
    for link in range(L):  # uplinks by decreasing load over capacity, ties by index
        uload[link] = -(uload[link] / cap[link])
    uorder = order_with_ties(uload)
    # the flows by (uplink rank, coflow rank, index): a counting sort on the uplink of the
    # flows visited coflow by coflow in rank order (one scattered array: several are slow)
    off = np.zeros(L, np.int64)
    acc = 0
    for q in range(L):
        link = uorder[q]
        off[link] = acc
        acc += ucount[link]
    order = iwork[n : 2 * n]
    for q in range(K):
        k = korder[q]
        for p in range(kptr[k], kptr[k + 1]):
            x = off[up[p]]
            off[up[p]] = x + 1
            order[x] = p
    sup = iwork[2 * n : 3 * n]
    sdown = iwork[3 * n : 4 * n]
    low = iwork[4 * n : 5 * n]
    srate = fwork[0:n]
    rbuf = fwork[n : 2 * n]
    residual = cap.copy()
    a = 0
    for qu in range(L):
        i = uorder[qu]
        b = a + ucount[i]
        if b == a:
            continue
        budget = (1.0 - alpha) * residual[i]
        nlow = 0
        s = a
        while s < b:
            # the segment of one coflow on uplink i. A segment none of whose downlinks has
            # room gets nothing below and goes to the low-priority flows, as in the
            # reference (whose check before the uplink's turn decides the same: downlinks
            # only fill up during the turn)
            k = np.searchsorted(kptr, order[s], side="right") - 1
            lo = kptr[k]
            hi = kptr[k + 1]
            e = s
            while e < b and lo <= order[e] < hi:
                e += 1
            m = e - s
            if budget <= sat * cap[i]:
                for x in range(s, e):
                    kp = key[order[x]]
                    sup[x] = i
                    sdown[x] = kp & 0xFFFFFFFF
                    low[nlow] = x
                    nlow += 1
                s = e
                continue
            # line 15: an equal share of the uplink's budget, at most an equal share of the
            # downlink among the coflow's flows into it
            share = budget / m
            nz = False
            for x in range(s, e):
                kp = key[order[x]]
                d = kp & 0xFFFFFFFF
                sup[x] = i
                sdown[x] = d
                rd = residual[d] if residual[d] > sat * cap[d] else 0.0  # rounding is no room
                r = rd / float(kp >> 32)
                if share < r:
                    r = share
                if not (r >= 0.0):
                    r = 0.0 if r < 0.0 else r  # np.maximum(r, 0): NaN stays NaN
                srate[x] = r
                if r != 0.0:
                    nz = True
            if not nz:
                for x in range(s, e):
                    low[nlow] = x
                    nlow += 1
                s = e
                continue
            tot = pairwise_sum(srate, s, m)
            budget -= tot
            residual[i] -= tot
            for x in range(s, e):
                residual[sdown[x]] -= srate[x]
            s = e
        for j in range(nlow):
            srate[low[j]] = 0.0
        if nlow > 0 and residual[i] > sat * cap[i]:
            # soft reservation: what is left of the uplink, shared equally among the flows
            # that got nothing, each limited to an equal share of its downlink's remainder
            for j in range(nlow):
                cnt[sdown[low[j]]] += 1
            share = residual[i] / nlow
            for j in range(nlow):
                x = low[j]
                d = residual[sdown[x]]
                if not d > sat * cap[sdown[x]]:
                    d = 0.0
                r = d / cnt[sdown[x]]
                if share < r:
                    r = share
                rbuf[j] = r
            for j in range(nlow):
                cnt[sdown[low[j]]] = 0
                srate[low[j]] = rbuf[j]
            residual[i] -= pairwise_sum(rbuf, 0, nlow)
            for j in range(nlow):
                residual[sdown[low[j]]] -= rbuf[j]
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
    for x in range(n):
        rates[order[x]] = srate[x]
    if some:
        # only flows both of whose links have room now can get anything (residuals only
        # fall): the greedy on them alone, in the same order, gives the same rates
        cand = iwork[5 * n : 6 * n]
        c = 0
        for x in range(n):
            if residual[sup[x]] > 0 and residual[sdown[x]] > 0:
                cand[c] = x
                c += 1
        first = np.empty(c, np.int64)
        second = np.empty(c, np.int64)
        for j in range(c):
            first[j] = sup[cand[j]]
            second[j] = sdown[cand[j]]
        extra = greedy_pairs(first, second, residual, np.arange(c), np.empty(0), False)
        for j in range(c):
            p = order[cand[j]]
            rates[p] = rates[p] + extra[j]
    return rates
