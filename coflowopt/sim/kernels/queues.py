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

Between decisions most groups stay as they were: a flow completion changes its own
group, an arrival or a demotion the groups from where the coflow enters or leaves.
:func:`strict_fill` resumes at a given group from an undo log of the call before (per
group, the links it changed and their residuals before it), keeping the earlier groups'
rates, which the same inputs make the same bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit
from ...kernels.maxmin import fill_rows, fill_scratch

__all__ = ["strict_fill"]


@njit
def strict_fill(  # type: ignore[no-untyped-def]
    indptr, indices, data, flows, gptr, cls, cptr, cidx, cval, cap, residual, sat, x, slot,
    count, acc, start, lptr, alv, log_k, log_r, undo_end,
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

    Resuming at group ``start`` (0: from scratch). Group ``g``'s rates depend only on its
    flows and the groups before it, so when groups ``0 .. start - 1`` are those of an earlier call (the
    same flows in the same order, the same capacities) their rates ``x[:gptr[start]]``,
    which the caller copies from it, stand, and the residual before group ``start`` is
    that call's. The undo log gives it back: group ``g`` changed links ``log_k[lptr[g]:
    lptr[g + 1]]``, whose residuals before it were ``log_r[...]``, and found ``alv[g]``
    links not saturated; ``residual`` holds what the earlier call left, whose log ended
    at ``undo_end``. The call undoes ``log_k[lptr[start]:undo_end]`` (last first), fills
    groups ``start ..`` and writes their log, ``lptr[start + 1:]`` and ``alv[start + 1:]``
    (``alv[G]``: after the last group; ``lptr[:start + 1]``, ``alv[:start + 1]`` and the
    log before ``lptr[start]``: the earlier call's). At ``start`` 0 the residual (after any
    undo) is ``cap`` and ``alv[0]`` is counted. ``log_k`` and ``log_r`` need room for
    ``lptr[start]`` entries plus one per incidence entry of the flows from ``gptr[start]``
    on.
    """
    n = flows.size
    L = cap.size
    G = gptr.size - 1
    for e in range(undo_end - 1, lptr[start] - 1, -1):
        residual[log_k[e]] = log_r[e]
    p0 = gptr[start]
    for p in range(p0, n):
        x[p] = 0.0
    if start == 0:
        alive = 0
        for k in range(L):
            if not residual[k] <= sat * cap[k]:
                alive += 1
    else:
        alive = alv[start]
    # scratch sized for the largest group: a group has at most as many classes as
    # flows, whose rows have at most as many entries as the group's flows
    m = n - p0
    nnz = 0
    for p in range(p0, n):
        nnz += indptr[flows[p] + 1] - indptr[flows[p]]
    (_, links, lstart, lcnt, num, kof, stack, hk, frozen, dem, fresh, lev, hval, state, bl, bu,
     adj, coef) = fill_scratch(slot, min(L, nnz), m, nnz)
    ok = np.empty(m, np.int64)
    act = np.empty(m, np.int64)
    w = np.empty(m)
    ub = np.full(m, np.inf)
    xc = np.empty(m)
    order = np.arange(m)
    touched = np.empty(min(L, nnz), np.int64)
    pos = lptr[start]
    for g in range(start, G):
        lptr[g] = pos
        alv[g] = alive
        g0 = gptr[g]
        g1 = gptr[g + 1]
        if g1 == g0:
            continue
        if alive == 0:
            for h in range(g + 1, G):
                lptr[h] = pos
                alv[h] = 0
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
            log_k[pos] = k
            log_r[pos] = residual[k]
            pos += 1
            was = not residual[k] <= sat * cap[k]
            v = residual[k] - acc[k]
            residual[k] = v if v > 0.0 else 0.0
            if was and residual[k] <= sat * cap[k]:
                alive -= 1
            acc[k] = 0.0
            slot[k] = -1
    lptr[G] = pos
    alv[G] = alive
