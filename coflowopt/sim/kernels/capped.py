"""The network's sharing under background traffic: capped coflow flows and uncapped
background flows max-min on the links' available capacity (:mod:`coflowopt.sim.background`).

At every event the network gives each coflow flow at most the rate its policy asked for
(its *cap*) and shares what the links have left max-min among those flows and the
background flows. Progressive filling over every active flow is the reference
(:func:`coflowopt.alloc.max_min` on the stacked incidence). Most of it is wasted: a link
whose flows' caps sum to no more than its capacity never saturates before each of its
flows has frozen at its cap, so it never decides a rate. :func:`capped_share` keeps only
the *binding* links (caps above the capacity by more than :data:`FIT`; every link a
background flow or a flow without a cap crosses is one), gives a flow that crosses none of
them its cap, and runs
:func:`coflowopt.kernels.maxmin.progressive_filling` on the other flows' entries on
binding links.

That filling is the reference's, step for step: each binding link holds the same rows
(every row on it is kept), in the same order, and the binding links are numbered in the
order in which they first appear among the rows, as the reference numbers them, so that
ties between links saturating at one level break the same way. The rows left out and the
links dropped only ever froze at caps and never saturated first; the one difference is a
row left out whose cap lies within the filling's relative slack (``SLACK``) above the
level at which a binding link saturates: the reference freezes that link's rows at the
cap's level, this kernel at the link's (a difference of that slack at most).

The links' loads the caller records (the background's, and the flows without a cap's)
are summed here in row order, as SciPy's ``A.T @ x`` sums them.
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit
from ...kernels.maxmin import progressive_filling

__all__ = ["FIT", "capped_share"]

FIT = 1e-12
"""Caps whose sum on a link exceeds the link's available capacity by at most this much
(relative) fit it: that excess is the rounding of a policy that fills the link exactly
(Varys's MADD and backfilling, with the capacities it knows), not a request the network
must cut. Every flow on such links gets its cap, and the link carries at most this
fraction above its capacity (the engine accepts ``1e-9``, ``check_feasible`` ``1e-6``).
Without it, a policy that plans on the true capacities sends every flow of its filled
links through the filling at every event, to move each rate by an ulp."""


@njit
def capped_share(indptr, indices, data, flows, caps, bptr, bidx, bval, avail):  # type: ignore[no-untyped-def]
    """Max-min rates of coflow flows capped at ``caps`` and uncapped background flows.

    ``flows``: rows of the route incidence ``(indptr, indices, data)``, capped at
    ``caps`` (``inf``: no cap); ``(bptr, bidx, bval)``: the background flows' rows
    (uncapped); ``avail``: every link's capacity left by the inelastic background.

    Returns ``(x, bg_load, free_load)``: the rates (the flows', then the background
    flows'), the background flows' load on every link, and the load of the flows
    without a cap.
    """
    n = flows.size
    m = bptr.size - 1
    L = avail.size
    # what the caps ask of each link; a flow without a cap asks for all of it
    ask = np.zeros(L)
    for p in range(n):
        c = caps[p]
        if not c > 0.0:
            continue
        j = flows[p]
        for e in range(indptr[j], indptr[j + 1]):
            if data[e] > 0.0:
                ask[indices[e]] += data[e] * c
    for b in range(m):
        for e in range(bptr[b], bptr[b + 1]):
            if bval[e] > 0.0:
                ask[bidx[e]] = np.inf
    binding = np.zeros(L, np.bool_)
    for k in range(L):
        binding[k] = not ask[k] <= avail[k] * (1.0 + FIT)
    # the rows that cross a binding link, with their entries on binding links only
    keep = np.zeros(n + m, np.bool_)
    nr = 0
    nnz = 0
    for p in range(n + m):
        cnt = 0
        if p < n:
            j = flows[p]
            for e in range(indptr[j], indptr[j + 1]):
                if binding[indices[e]]:
                    cnt += 1
        else:
            for e in range(bptr[p - n], bptr[p - n + 1]):
                if binding[bidx[e]]:
                    cnt += 1
        if cnt > 0:
            keep[p] = True
            nr += 1
            nnz += cnt
    rptr = np.zeros(nr + 1, np.int64)
    ridx = np.empty(nnz, np.int64)
    rval = np.empty(nnz)
    ub = np.empty(nr)
    x = np.empty(n + m)
    r = 0
    q = 0
    for p in range(n + m):
        if not keep[p]:
            c = caps[p] if p < n else np.inf
            x[p] = c if c > 0.0 else 0.0  # the reference freezes it at its cap (0 for none)
            continue
        if p < n:
            j = flows[p]
            for e in range(indptr[j], indptr[j + 1]):
                if binding[indices[e]]:
                    ridx[q] = indices[e]
                    rval[q] = data[e]
                    q += 1
            ub[r] = caps[p]
        else:
            for e in range(bptr[p - n], bptr[p - n + 1]):
                if binding[bidx[e]]:
                    ridx[q] = bidx[e]
                    rval[q] = bval[e]
                    q += 1
            ub[r] = np.inf
        r += 1
        rptr[r] = q
    if nr > 0:
        y = progressive_filling(rptr, ridx, rval, np.arange(nr, dtype=np.int64), avail,
                                np.ones(nr), ub, np.full(L, -1, np.int64))
        r = 0
        for p in range(n + m):
            if keep[p]:
                x[p] = y[r]
                r += 1
    # the loads, row by row in order (as A.T @ x)
    bg_load = np.zeros(L)
    for b in range(m):
        xb = x[n + b]
        for e in range(bptr[b], bptr[b + 1]):
            bg_load[bidx[e]] += bval[e] * xb
    free_load = np.zeros(L)
    for p in range(n):
        xf = x[p] if np.isinf(caps[p]) else 0.0
        j = flows[p]
        for e in range(indptr[j], indptr[j + 1]):
            free_load[indices[e]] += data[e] * xf
    return x, bg_load, free_load
