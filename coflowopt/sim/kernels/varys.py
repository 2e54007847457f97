"""Varys' allocation at one decision, compiled: ordered MADD and backfilling.

The Varys family (``varys``, ``fifo``, ``scf``, ``ncf``, ``tcf``) and
``varys-deadline`` re-allocate only when coflows arrive or depart, a few
thousand decisions on a large trace, so they need no stretch kernel: the
engine already skips the flow completions in between. What costs is the
work of one decision over the admitted flows, which these functions do in
compiled code on two-link fabrics (the policies' NumPy code remains the
reference, ``simulate(..., compiled=False)``, and for other fabrics, except
proportional backfilling: :func:`proportional_backfill_csr` serves the
reference and every other fabric, on rows of the route incidence).

Inputs are the flows of the coflows concatenated in priority order (coflow
``c`` at positions ``cptr[c]:cptr[c + 1]`` of ``f``), every flow's two
links ``la`` / ``lb`` (indexed by flow) and the remaining data of each
position. MADD and greedy backfilling take every sum in the order the
reference takes it (``np.bincount`` in flow order, SciPy's sparse products
row by row), so their rates are the reference's to the last bit.
Proportional backfilling computes each group's water-filling by its own
rounds (:func:`_fill_group`) where the reference runs
:func:`coflowopt.alloc.max_min`: the same rates up to rounding (within
2e-14 relative in random checks):

- :func:`ordered_madd_rates`: :meth:`coflowopt.sim.policies.varys.OrderedMADD.allocate`
  (MADD coflow by coflow on what the earlier ones left, then backfilling);
- :func:`proportional_backfill`: :func:`coflowopt.sim.policies.varys.backfill_proportional`
  (:func:`proportional_backfill_csr` on any routes, by progressive filling);
- :func:`greedy_backfill`: :func:`coflowopt.sim.policies.varys.backfill_greedy`.

MADD and the greedy passes are :mod:`.rates`' implementations, the ones
:mod:`coflowopt.alloc` uses.
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit
from ...kernels.maxmin import fill_rows, fill_scratch
from ...kernels.rates import greedy_pairs, madd_gamma, madd_rows

__all__ = [
    "BACKFILL_COFLOWSIM",
    "BACKFILL_GREEDY",
    "BACKFILL_NONE",
    "BACKFILL_PROPORTIONAL",
    "SAT",
    "coflow_loads",
    "greedy_backfill",
    "ordered_madd_rates",
    "proportional_backfill",
    "proportional_backfill_csr",
    "workspace",
]

SAT = 1e-9
"""As :data:`coflowopt.sim.policies._common.SAT`: residuals below ``SAT`` times capacity are full."""

BACKFILL_PROPORTIONAL = 0
BACKFILL_GREEDY = 1
BACKFILL_NONE = 2
BACKFILL_COFLOWSIM = 3


def workspace(n: int, old: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scratch ``(iwork, fwork)`` for ``n`` flows: ``3 * n`` integers and floats.

    Kept across decisions by the caller and grown when too small: the kernels
    are called a thousand times on tens of thousands of flows, and fresh
    arrays that size cost page faults each time (half the backfilling's time
    on the Facebook trace).
    """
    if old is not None and old[0].size >= 3 * n:
        return old
    size = max(3 * n, 2 * old[0].size if old is not None else 0, 3 * 1024)
    return np.empty(size, np.int64), np.empty(size)


@njit
def coflow_loads(la, lb, f, rem, L):  # type: ignore[no-untyped-def]
    """A coflow's load on each link and which links its flows use first / second.

    The load is ``link_sum(f, rem)`` as the engine computes it: the sums over
    first links and over second links (each in flow order), added.
    """
    sa = np.zeros(L)
    sb = np.zeros(L)
    ua = np.zeros(L, np.bool_)
    ub = np.zeros(L, np.bool_)
    for p in range(f.size):
        j = f[p]
        sa[la[j]] += rem[p]
        sb[lb[j]] += rem[p]
        ua[la[j]] = True
        ub[lb[j]] = True
    for link in range(L):
        sa[link] += sb[link]
    return sa, ua, ub


@njit
def _take(residual, la, lb, f, pos, add):  # type: ignore[no-untyped-def]
    """``residual -= link_sum(f[pos], add)``, then clamp at 0 (the reference's order)."""
    L = residual.size
    sa = np.zeros(L)
    sb = np.zeros(L)
    for k in range(pos.size):
        j = f[pos[k]]
        sa[la[j]] += add[k]
        sb[lb[j]] += add[k]
    for link in range(L):
        v = residual[link] - (sa[link] + sb[link])
        residual[link] = 0.0 if v < 0.0 else v


@njit
def _fill_group(room, b, d, r0, r1, residual, slot, eg, dem, lam, x):  # type: ignore[no-untyped-def]
    """Water-fill one group, candidates ``r0:r1`` on one first link with ``room`` left.

    Candidate ``r`` has second link ``b[r]`` and remaining data ``d[r] > 0``.
    Every flow's rate is ``d * t`` for a common level ``t``; a flow stops
    growing when its second link is full (the group's flows on one second
    link share it), the others go on until the first link is full. Writes
    the rates to ``x[r0:r1]`` and the group's second links to ``eg[:n]``;
    returns ``n``. ``residual`` is not changed.
    """
    n = 0
    for r in range(r0, r1):
        e = b[r]
        if slot[e] < 0:
            slot[e] = n
            eg[n] = e
            dem[n] = 0.0
            n += 1
        dem[slot[e]] += d[r]
    total = 0.0
    for k in range(n):
        lam[k] = residual[eg[k]] / dem[k]
        total += dem[k]
    # the common level at which the first link is full, once the second links that
    # fill below it hold their flows at their own levels (lam); holding one raises it
    used = 0.0
    live = n
    level = room / total
    more = True
    while more:
        more = False
        for k in range(n):
            if dem[k] > 0 and lam[k] < level:
                used += residual[eg[k]]
                dem[k] = -dem[k]  # held at lam[k]
                live -= 1
                more = True
        if more:
            if live == 0:
                level = np.inf
                break
            total = 0.0
            for k in range(n):
                if dem[k] > 0:
                    total += dem[k]
            level = max((room - used) / total, 0.0)
    for k in range(n):
        if lam[k] > level:
            lam[k] = level
    for r in range(r0, r1):
        x[r] = d[r] * lam[slot[b[r]]]
    for k in range(n):
        slot[eg[k]] = -1
    return n


@njit
def proportional_backfill(la, lb, f, d, cptr, grow, residual, cap, extra, iwork, fwork):  # type: ignore[no-untyped-def]
    """Spare capacity to (coflow, first link) groups in their flows' ``d`` ratios.

    Adds each position's extra rate to ``extra``; ``residual`` loses what is
    given. Groups are served first link by first link, coflows in order
    within a link; each is water-filled (:func:`_fill_group`): its flows
    grow in ``d`` ratios, a flow stops when its second link is full, and the
    group stops when its first link is. After each group, links left with
    at most ``SAT`` of their capacity are full. Flows with nothing left, or
    a full link, get nothing; coflows with ``grow[c]`` False are known to
    have no flow with room (skipped). Returns whether any flow got capacity.
    ``iwork`` / ``fwork``: scratch of at least ``3 * f.size`` integers and
    ``2 * f.size`` floats (see :func:`workspace`).
    """
    nc = cptr.size - 1
    L = residual.size
    anyopen = False
    for link in range(L):
        if residual[link] > 0:
            anyopen = True
    if not anyopen:
        return False
    cnt = np.zeros(L + 1, np.int64)
    m = 0
    for c in range(nc):
        if not grow[c]:
            continue
        for p in range(cptr[c], cptr[c + 1]):
            j = f[p]
            if residual[la[j]] > 0 and residual[lb[j]] > 0 and d[p] > 0:
                m += 1
                cnt[la[j] + 1] += 1
    if m == 0:
        return False
    # the candidates by first link, coflows in order within a link (a stable counting
    # sort), with what the groups need side by side: position, second link, data, coflow
    for link in range(L):
        cnt[link + 1] += cnt[link]
    start = cnt[:L].copy()
    cand = iwork[:m]
    cb = iwork[m : 2 * m]
    crank = iwork[2 * m : 3 * m]
    cd = fwork[:m]
    for c in range(nc):
        if not grow[c]:
            continue
        for p in range(cptr[c], cptr[c + 1]):
            j = f[p]
            a = la[j]
            if residual[a] > 0 and residual[lb[j]] > 0 and d[p] > 0:
                k = cnt[a]
                cand[k] = p
                cb[k] = lb[j]
                cd[k] = d[p]
                crank[k] = c
                cnt[a] = k + 1
    slot = np.full(L, -1, np.int64)
    eg = np.empty(L + 1, np.int64)
    dem = np.empty(L)
    lam = np.empty(L)
    use = np.zeros(L)
    x = fwork[m : 2 * m]
    x[:] = 0.0
    for first in range(L):
        r0 = start[first]
        end = cnt[first]
        while r0 < end:
            r1 = r0 + 1
            while r1 < end and crank[r1] == crank[r0]:
                r1 += 1
            room = residual[first]
            if room > 0:
                n = _fill_group(room, cb, cd, r0, r1, residual, slot, eg, dem, lam, x)
                # the group's use of each link, summed in flow order, then taken off
                for r in range(r0, r1):
                    use[first] += x[r]
                    use[cb[r]] += x[r]
                eg[n] = first
                for q in range(n + 1):
                    link = eg[q]
                    v = residual[link] - use[link]
                    residual[link] = 0.0 if v <= SAT * cap[link] else v
                    use[link] = 0.0
            r0 = r1
    given = False
    for r in range(m):
        if x[r] > 0:
            given = True
            extra[cand[r]] += x[r]
    return given


@njit
def proportional_backfill_csr(indptr, indices, data, f, d, cptr, residual, cap, extra):  # type: ignore[no-untyped-def]
    """:func:`proportional_backfill` on any routes: rows of the incidence ``(indptr,
    indices, data)`` by flow.

    Groups are (coflow, first link of the route) among the flows with ``d > 0`` and
    no link without room at the start, served first link by first link, coflows in
    order within a link; each group's rates are the weighted max-min rates of its
    flows with weights ``d`` on what is left
    (:func:`coflowopt.kernels.maxmin.progressive_filling`, by its kernel
    :func:`~coflowopt.kernels.maxmin.fill_rows` on scratch kept for the decision), and
    are added to ``extra``. After each group the links left with at most ``SAT`` of
    their capacity are full and residuals are clamped at 0 (every link after the first
    group; the links the group uses after the others, as the rest are unchanged).

    Most candidates cross a link that an earlier group has filled by the time their
    group comes (on the Facebook trace on spine-leaf, their leaf's uplinks): each
    carries its route's last two links, and one of them full leaves it out without
    reading its route; the filling sees only a group's open rows (and all of them where
    links tie).
    """
    L = residual.size
    n = f.size
    anyopen = False
    for link in range(L):
        if residual[link] > 0:
            anyopen = True
            break
    if not anyopen:
        return
    dead = np.empty(L, np.bool_)
    for link in range(L):
        dead[link] = residual[link] <= 0
    cand = np.empty(n, np.int64)
    first = np.empty(n, np.int64)
    key = np.empty(n, np.int64)
    cnt = np.zeros(L + 1, np.int64)
    m = 0
    for c in range(cptr.size - 1):
        for p in range(cptr[c], cptr[c + 1]):
            j = f[p]
            if not d[p] > 0:
                continue
            ok = True
            for e in range(indptr[j], indptr[j + 1]):
                if data[e] > 0 and dead[indices[e]]:
                    ok = False
                    break
            if ok:
                cand[m] = p
                a = indices[indptr[j]]
                first[m] = a
                # the row's last two links (on spine-leaf and fat-tree fabrics those
                # between switches, the likeliest to be full when its group comes),
                # tested before the whole row
                e1 = indptr[j + 1] - 1
                e0 = max(e1 - 1, indptr[j])
                key[m] = ((np.int64(indices[e1]) << 32) | np.int64(indices[e0])
                          if data[e1] > 0 and data[e0] > 0 else -1)
                cnt[a + 1] += 1
                m += 1
    if m == 0:
        return
    # the candidates by first link, coflows in order within a link (a stable counting sort)
    for link in range(L):
        cnt[link + 1] += cnt[link]
    spos = np.empty(m, np.int64)
    skey = np.empty(m, np.int64)
    for r in range(m):
        a = first[r]
        t = cnt[a]
        spos[t] = cand[r]
        skey[t] = key[r]
        cnt[a] = t + 1
    # the filling's scratch, once per decision (its entries grow with the groups)
    (slot, links, lstart, lcnt, num, kof, stack, hk, frozen, dem, fresh, lev, hval, state, bl, bu,
     adj, coef) = fill_scratch(np.full(L, -1, np.int64), L, m, 64)
    x = np.empty(m)
    use = np.zeros(L)
    rows = np.empty(m, np.int64)
    lpos = np.empty(m, np.int64)
    w = np.empty(m)
    ub = np.full(m, np.inf)
    swept = False
    r0 = 0
    for link in range(L):
        end = cnt[link]  # the end of the link's candidates (the start of the next link's)
        while r0 < end and residual[link] > 0:
            # a group: the link's candidates of one coflow (positions rise within a link)
            hi = cptr[np.searchsorted(cptr, spos[r0], side="right")]
            r1 = r0 + 1
            while r1 < end and spos[r1] < hi:
                r1 += 1
            # the group's rows that cross no link left without room (the others get
            # nothing: progressive filling freezes them at 0)
            nopen = 0
            nnz = 0
            for r in range(r0, r1):
                kk = skey[r]
                if kk >= 0 and not (residual[kk >> 32] > 0 and residual[kk & 0xFFFFFFFF] > 0):
                    continue
                q = spos[r]
                j = f[q]
                ok = True
                for e in range(indptr[j], indptr[j + 1]):
                    if not residual[indices[e]] > 0 and data[e] > 0:
                        ok = False
                        break
                if ok:
                    rows[nopen] = j
                    w[nopen] = d[q]
                    lpos[nopen] = q
                    nopen += 1
                    nnz += indptr[j + 1] - indptr[j]
            if nopen > 0:
                if adj.size < nnz:
                    adj = np.empty(2 * nnz, np.int64)
                    coef = np.empty(2 * nnz)
                nl = fill_rows(indptr, indices, data, rows[:nopen], residual, w[:nopen],
                               ub[:nopen], x, f, spos[r0:r1], slot, links, lstart, lcnt, num,
                               kof, stack, hk, frozen, dem, fresh, lev, hval, state, bl, bu, adj,
                               coef)
                # the group's use of each link, summed in flow order
                for r in range(nopen):
                    if x[r] > 0.0:
                        extra[lpos[r]] += x[r]
                        j = rows[r]
                        for e in range(indptr[j], indptr[j + 1]):
                            use[indices[e]] += data[e] * x[r]
            # then taken off: every link after the first group, the links the group's
            # open rows use after the others (the rest are unchanged, and so are the
            # links only its other rows use: 0 or more than SAT of their capacity)
            if not swept:
                for lk in range(L):
                    _settle(lk, residual, use, cap)
                swept = True
            elif nopen > 0:
                for t in range(nl):
                    _settle(links[t], residual, use, cap)
            r0 = r1
        r0 = end


@njit
def _settle(link, residual, use, cap):  # type: ignore[no-untyped-def]
    """``residual -= use`` on ``link`` (``use`` back to 0); full below ``SAT``; at least 0."""
    v = residual[link] - use[link]
    use[link] = 0.0
    if v <= SAT * cap[link]:
        v = 0.0
    residual[link] = v if not v < 0.0 else 0.0


@njit
def greedy_backfill(la, lb, f, cptr, corder, grow, residual, extra, iwork):  # type: ignore[no-untyped-def]
    """Flows coflow by coflow (coflows in ``corder``) each take what their links have.

    Adds each position's extra rate to ``extra``; ``residual`` loses what is
    given. Coflows with ``grow[c]`` False are known to have no flow with room.
    ``iwork``: scratch of at least ``f.size`` integers.
    """
    L = residual.size
    anyopen = False
    for link in range(L):
        if residual[link] > 0:
            anyopen = True
    if not anyopen or corder.size == 0:
        return
    cand = iwork[: f.size]
    m = 0
    for i in range(corder.size):
        c = corder[i]
        if not grow[c]:
            continue
        for p in range(cptr[c], cptr[c + 1]):
            j = f[p]
            if residual[la[j]] > 0 and residual[lb[j]] > 0:
                cand[m] = p
                m += 1
    if m == 0:
        return
    cand = cand[:m]
    rows = f[cand]
    x = greedy_pairs(la[rows], lb[rows], residual.copy(), np.arange(m), np.full(m, np.inf), False)
    for k in range(m):
        extra[cand[k]] += x[k]
    _take(residual, la, lb, f, cand, x)


@njit
def skipped_fair_share(la, lb, f, cptr, has, grow, residual, cap, extra):  # type: ignore[no-untyped-def]
    """coflowsim's pass for the coflows MADD skipped (``updateRatesFairShare``).

    Every flow of a coflow with ``has[c]`` False whose two links have room
    is counted on both; each then takes ``min(residual[a] / n[a],
    residual[b] / n[b])`` of the residuals as they were before the pass.
    Adds to ``extra``; ``residual`` loses what is given (links left with at
    most ``SAT`` of their capacity are full).
    """
    L = residual.size
    na = np.zeros(L, np.int64)
    for c in range(cptr.size - 1):
        if has[c] or not grow[c]:
            continue
        for p in range(cptr[c], cptr[c + 1]):
            j = f[p]
            if residual[la[j]] > 0 and residual[lb[j]] > 0:
                na[la[j]] += 1
                na[lb[j]] += 1
    used = np.zeros(L)
    for c in range(cptr.size - 1):
        if has[c] or not grow[c]:
            continue
        for p in range(cptr[c], cptr[c + 1]):
            a = la[f[p]]
            b = lb[f[p]]
            if residual[a] > 0 and residual[b] > 0:
                x = min(residual[a] / na[a], residual[b] / na[b])
                extra[p] += x
                used[a] += x
                used[b] += x
    for link in range(L):
        v = residual[link] - used[link]
        residual[link] = 0.0 if v <= SAT * cap[link] else v


@njit
def ordered_madd_rates(  # type: ignore[no-untyped-def]
    la, lb, f, rem, cptr, loads, uses_a, uses_b, cap, backfill, corder, apart, iwork, fwork
):
    """MADD coflow by coflow in priority order, then backfilling (Pseudocode 1, lines 7-16).

    ``loads[c]`` is coflow ``c``'s load per link (:func:`coflow_loads`) of the
    data ``rem``, ``uses_a[c]`` / ``uses_b[c]`` the links its flows use first / second.
    ``apart``: no link is the first link of one flow and the second of another
    (the big switch); MADD's ``Gamma`` then comes from ``loads``, which are the
    loads :func:`madd_rows` sums, bit for bit, without another pass over the flows.
    ``iwork`` / ``fwork``: scratch of at least ``3 * f.size`` integers and
    floats (:func:`workspace`).
    ``backfill``: 0 proportional, 1 greedy with coflows in the order
    ``corder``, 2 none, 3 coflowsim's (:func:`skipped_fair_share`, then greedy
    in the order ``corder``). Returns each position's rate and, per coflow,
    whether any of its flows gets a non-zero rate.
    """
    n = f.size
    nc = cptr.size - 1
    L = cap.size
    residual = cap.copy()
    rates = np.zeros(n)
    has = np.zeros(nc, np.bool_)
    capm = np.empty(L)
    for c in range(nc):
        need = False
        full = False
        for link in range(L):
            if loads[c, link] > 0:
                need = True
                if residual[link] <= SAT * cap[link]:
                    full = True
                    break
        if not need or full:
            continue  # a link it needs is full: nothing in this pass
        for link in range(L):
            r = residual[link]
            capm[link] = 0.0 if r <= SAT * cap[link] else r
        lo = cptr[c]
        hi = cptr[c + 1]
        if apart:
            gamma = madd_gamma(loads[c], capm)
            if not (np.isfinite(gamma) and gamma > 0):
                continue
            for p in range(lo, hi):
                rates[p] = rem[p] / gamma
        else:
            gamma = madd_rows(la, lb, f[lo:hi], rem[lo:hi], capm, rates[lo:hi])
            if not (np.isfinite(gamma) and gamma > 0):
                continue
        has[c] = True
        for link in range(L):
            v = residual[link] - loads[c, link] / gamma
            residual[link] = 0.0 if v < 0.0 else v
    for link in range(L):
        if residual[link] <= SAT * cap[link]:
            residual[link] = 0.0
    # which coflows may get spare capacity: some flow needs an open first and second link
    grow = np.zeros(nc, np.bool_)
    for c in range(nc):
        oa = False
        ob = False
        for link in range(L):
            if residual[link] > 0:
                oa = oa or uses_a[c, link]
                ob = ob or uses_b[c, link]
        grow[c] = oa and ob
    extra = fwork[:n]
    extra[:] = 0.0
    given = False
    if backfill == BACKFILL_PROPORTIONAL:
        given = proportional_backfill(la, lb, f, rem, cptr, grow, residual, cap, extra, iwork,
                                      fwork[n:])
    elif backfill == BACKFILL_GREEDY or backfill == BACKFILL_COFLOWSIM:
        if backfill == BACKFILL_COFLOWSIM:
            skipped_fair_share(la, lb, f, cptr, has, grow, residual, cap, extra)
        greedy_backfill(la, lb, f, cptr, corder, grow, residual, extra, iwork)
        given = True
    served = np.zeros(nc, np.bool_)
    for c in range(nc):
        if not (has[c] or (given and grow[c])):
            continue
        for p in range(cptr[c], cptr[c + 1]):
            rates[p] = rates[p] + extra[p] if has[c] else extra[p]
            if rates[p] != 0:
                served[c] = True
    return rates, served
