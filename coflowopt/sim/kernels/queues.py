"""Strict priority over groups of flows on a network, in one compiled call per decision.

Strict-priority queues (``aalo:sharing=strict``, coflow by coflow in queue and FIFO
order; ``creek``, queue by queue) hand out capacity group by group: each group's flows
share max-min what the groups before it left on every link
(:func:`coflowopt.sim.policies._queues._strict`, the reference). On a multi-hop fabric
the reference makes, per group, a pass over every link (which are saturated), a SciPy
product (which flows cross a saturated link), a progressive filling over the group's
route classes and a sum of the rates over the links; with hundreds of coflows active on
the k = 24 fat-tree's 20,736 links the passes over every link and the calls from Python
cost more than the fillings.

:func:`strict_fill` does the same steps in the same order with the same arithmetic: a
link counts as saturated when its residual is at most ``SAT`` of its capacity (tested on
the links a flow crosses rather than on all of them); a flow that crosses one is left at
0; the others' route classes are filled by
:func:`coflowopt.kernels.maxmin.fill_rows` in increasing class order, weighted by their
numbers of flows (so links are numbered and ties broken as in the reference's call of
:func:`~coflowopt.kernels.maxmin.progressive_filling`); each flow gets its class's rate
over its weight; the group's rates are summed per link in flow order, as
:func:`coflowopt.kernels.rates.csr_link_sum` sums them, and subtracted from the
residuals, which stop at 0. The reference passes the filling residuals with saturated
links set to 0; the filled rows cross none of them, so the filling never reads those.
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit
from ...kernels.maxmin import fill_rows, fill_scratch

__all__ = ["strict_fill"]


@njit
def strict_fill(  # type: ignore[no-untyped-def]
    indptr, indices, data, flows, gptr, cls, cptr, cidx, cval, cap, residual, sat, x, slot,
    count, acc,
):
    """Strict-priority max-min rates of groups of flows, into ``x``.

    Group ``g`` is ``flows[gptr[g]:gptr[g + 1]]``, rows of the route incidence
    ``(indptr, indices, data)``; group 0 goes first. ``cls[f]``: flow ``f``'s route class,
    whose row of ``(cptr, cidx, cval)`` is the flow's own route. ``cap``: every link's
    capacity (a link is saturated when its residual is at most ``sat`` times it);
    ``residual``: what is left of every link, updated in place. ``x[p]``: the rate of
    ``flows[p]``. Once every link is saturated the groups left get 0.

    Scratch kept by the caller: ``slot`` (one ``-1`` per link), ``count`` (one ``0.0`` per
    class) and ``acc`` (one ``0.0`` per link), restored on return.
    """
    n = flows.size
    L = cap.size
    for p in range(n):
        x[p] = 0.0
    alive = 0
    for k in range(L):
        if not residual[k] <= sat * cap[k]:
            alive += 1
    # scratch sized for the largest group: a group has at most n classes, whose rows
    # have at most as many entries as the group's flows
    nnz = 0
    for p in range(n):
        nnz += indptr[flows[p] + 1] - indptr[flows[p]]
    (_, links, lstart, lcnt, num, kof, stack, hk, frozen, dem, fresh, lev, hval, state, bl, bu,
     adj, coef) = fill_scratch(slot, min(L, nnz), n, nnz)
    ok = np.empty(n, np.int64)
    act = np.empty(n, np.int64)
    w = np.empty(n)
    ub = np.full(n, np.inf)
    xc = np.empty(n)
    order = np.arange(n)
    touched = np.empty(min(L, nnz), np.int64)
    for g in range(gptr.size - 1):
        g0 = gptr[g]
        g1 = gptr[g + 1]
        if g1 == g0:
            continue
        if alive == 0:
            break
        # the group's flows that cross no saturated link
        nu = 0
        for p in range(g0, g1):
            f = flows[p]
            usable = True
            for e in range(indptr[f], indptr[f + 1]):
                k = indices[e]
                if data[e] != 0.0 and residual[k] <= sat * cap[k]:
                    usable = False
                    break
            if usable:
                ok[nu] = p
                nu += 1
        if nu == 0:
            continue
        # their route classes, in increasing order, weighted by their numbers of flows
        nc = 0
        for i in range(nu):
            c = cls[flows[ok[i]]]
            if count[c] == 0.0:
                act[nc] = c
                nc += 1
            count[c] += 1.0
        act[:nc].sort()
        for i in range(nc):
            w[i] = count[act[i]]
        fill_rows(cptr, cidx, cval, act[:nc], residual, w[:nc], ub[:nc], xc, act[:nc],
                  order[:nc], slot, links, lstart, lcnt, num, kof, stack, hk, frozen, dem,
                  fresh, lev, hval, state, bl, bu, adj, coef)
        for i in range(nc):
            count[act[i]] = xc[i] / w[i]  # the class's rate per flow
        # rates, and their sums per link in flow order
        nt = 0
        for i in range(nu):
            p = ok[i]
            f = flows[p]
            r = count[cls[f]]
            x[p] = r
            for e in range(indptr[f], indptr[f + 1]):
                k = indices[e]
                if slot[k] < 0:
                    slot[k] = 0
                    touched[nt] = k
                    nt += 1
                acc[k] += data[e] * r
        for i in range(nc):
            count[act[i]] = 0.0
        for i in range(nt):
            k = touched[i]
            was = not residual[k] <= sat * cap[k]
            v = residual[k] - acc[k]
            residual[k] = v if v > 0.0 else 0.0
            if was and residual[k] <= sat * cap[k]:
                alive -= 1
            acc[k] = 0.0
            slot[k] = -1
